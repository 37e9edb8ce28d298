"""What a task's norm leaderboard ranks (``bench.norm_board`` of its config): a malformed ranking is one line."""

from __future__ import annotations

import pytest

from normbench.boards import norm_ranking
from normbench.boards.norm_ranking import TaskRanking


def test_a_malformed_ranking_is_one_line_naming_the_field(monkeypatch: pytest.MonkeyPatch) -> None:
    bench = {"variants": {"pre/both": {}}, "card": {"margin": 0.01}, "norm_board": {"better": "up", "metric": "x"}}
    monkeypatch.setattr(norm_ranking, "load_config", lambda task, preset=None: {"bench": bench})
    with pytest.raises(ValueError, match=r"^bench.norm_board \(task t\).better: must be higher or lower"):
        TaskRanking.of("t")
    bench["norm_board"] = {"better": "higher", "metric": "x", "norms": {"RMSNorm": "pre/nope"}}
    with pytest.raises(ValueError, match=r"norms.RMSNorm: 'pre/nope' is not a variant of task t"):
        TaskRanking.of("t")
