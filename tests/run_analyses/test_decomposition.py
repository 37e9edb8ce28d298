"""The decomposition's report on runs whose norms it cannot read."""

from __future__ import annotations

import pytest

from normbench.run_analyses.decomposition import not_shift_and_scale, with_decomposition


def test_runs_with_a_norm_not_of_shift_and_scale_form_are_skipped_with_one_line(
    capsys: pytest.CaptureFixture[str],
) -> None:
    norms = {
        "attn_norm": {"component": "dyt", "affine": False, "eps": 0.0},
        "ffn_norm": {"component": "both", "affine": True, "eps": 0.0},
    }
    records = [{"variant": "pre/dyt", "seed": s, "norms": norms, "series": {}} for s in (0, 1)]
    assert not_shift_and_scale(records[0]) == "attn_norm dyt"
    assert with_decomposition(records, sequences=4) == records  # nothing computed, nothing added
    lines = capsys.readouterr().err.strip().splitlines()
    assert lines == [
        "normbench: decomposition: variant 'pre/dyt' has attn_norm dyt, not of the shift-and-scale "
        "form N(x) = s(x) (x - m(x)); its decomposition columns stay empty"
    ]
    assert not_shift_and_scale({"norms": {"attn_norm": {"component": "scalenorm"}}}) == ""
