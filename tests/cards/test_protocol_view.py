"""A card section's protocol: each variant's norms and parameters, where a baseline mixes its block norms, and the
measured platform drift beside the margin."""

from __future__ import annotations

from normbench.cards.build import Card
from normbench.cards.protocol_view import baseline_notes, drift_text, protocol_lines
from tests.cards.test_card import PNORM


def test_the_protocol_table_gives_each_variants_norms_and_the_summary_says_where_a_baseline_mixes_them() -> None:
    def built(attn: str, ffn: str) -> dict:
        return {"placement": "pre", "parameters": 1234,
                "norms": {"attn": {"component": attn, "affine": False, "eps": 0.0, "parameters": 0},
                          "ffn": {"component": ffn, "affine": True, "eps": None, "parameters": 16}}}  # fmt: skip

    section = {"task": "majority", "label": "majority", "preset": "quick-10", "margin": 0.01, "better": "higher",
               "variants": {"new": "pre/pnorm", "layernorm": "pre/both", "rmsnorm": "pre/scale-blocks"},
               "norms": {"new": built(PNORM, PNORM), "layernorm": built("both", "both"), "rmsnorm": built("scale", "both")}}  # fmt: skip
    lines = protocol_lines(section)
    assert (
        "| rmsnorm | `pre/scale-blocks` | pre | 1,234 | `scale` (no affine, eps 0, 0 parameters) | `both` (affine, eps "
        "unused, 16 parameters) |"
    ) in lines
    assert baseline_notes(Card(PNORM, {}, [section], 0.0)) == [
        "The rmsnorm baseline on majority is the published variant: `scale` as the attention norm, `both` as the FFN "
        "norm (each section's protocol table); the new norm replaces both."
    ]


def test_the_protocol_line_sets_the_measured_platform_drift_beside_the_margin() -> None:
    def section(drift: float) -> dict:
        return {"margin": 0.02, "platform_drift": {"final_val_loss": {"drift": drift, "where": "lm pre/both seed 3"}}}

    near = drift_text(section(0.0145))
    assert (
        "`final_val_loss` ends 0.015 apart on another platform (lm pre/both seed 3), comparable to the margin" in near
    )
    assert "far below the margin" in drift_text(section(0.001))
    assert drift_text({"margin": 0.02}) == ""
