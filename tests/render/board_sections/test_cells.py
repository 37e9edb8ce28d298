"""The cells of a board's tables: ``mean ± std`` over the seeds that give a value."""

from __future__ import annotations

from normbench.archive import Metric
from normbench.render.board_sections.cells import fmt_metric


def test_one_seed_has_no_spread() -> None:
    one = Metric(per_seed=(0.5,), n=1, mean=0.5, std=0.0)
    assert fmt_metric(one) == "0.500 ± –"
    two = Metric(per_seed=(0.5, None), n=1, mean=0.5, std=0.0, note="diverged")
    assert fmt_metric(two) == "0.500 ± – (n = 1 of 2 seeds)"
    assert fmt_metric(Metric(per_seed=(1.0, 3.0), n=2, mean=2.0, std=1.4142)) == "2.000 ± 1.414"
