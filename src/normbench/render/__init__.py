"""A Board to Markdown and figures: tables, claim tables, plots."""
