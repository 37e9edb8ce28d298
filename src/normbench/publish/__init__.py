"""Build, render and write a board's files (atomically, never replacing a published board with less)."""
