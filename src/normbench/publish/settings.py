"""What a build of a board or report is configured by, as the task's YAML gives it.

A task config is free-form: its sections are the keyword arguments of the classes they name (the trainer's, the
model's, the data module's), and its ``bench`` block holds, besides the board's metrics, claims and plots, one
entry per report kind (:mod:`normbench.publish.report_kinds`) in whatever shape that kind reads. Neither has a fixed
set of keys, so both are JSON objects here, named for what they are; the shapes that are fixed (a token report's
spec, a board's settings) have their own types where they are read.
"""

from __future__ import annotations

from typing import Any

from normbench.io import Config as Config  # a task's resolved config, or a run's as its record keeps it

Bench = dict[str, Any]
"""A resolved config's ``bench`` block: the board's metrics, claims, plots and tables, and each report kind's spec
under its key."""
