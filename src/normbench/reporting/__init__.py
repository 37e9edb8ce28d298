"""Reporting: leaderboards, claims and verdicts, figures, the per-experiment reports, the results pipeline."""
