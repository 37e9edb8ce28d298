"""The documentation site's generated pages (no torch)."""
