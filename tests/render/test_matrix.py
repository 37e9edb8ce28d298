"""The placement x component matrix: cells from leaderboard entries, its Markdown and its figure,
and the claim that judges every attention input by the norm that feeds it."""

from __future__ import annotations

import pytest

from normbench.archive import JudgedClaim
from normbench.judge.claims import judge
from normbench.judge.rules.attention_feed import attention_feed
from normbench.judge.stats import aggregate
from normbench.render.board import render_incomplete
from normbench.render.board_sections.matrix_tables import render_matrix
from normbench.render.claims_view import finding
from normbench.render.matrix import build_matrix, layer_mean, plot_matrix, split_variant

BLOCK = {"component": "both", "affine": True, "eps": 1e-5}
ROLES = {"embed": "embedding", "attn": "block", "ffn": "block", "final": "final"}


def entry(
    name: str,
    per_seed: dict[str, list[float | None]],
    n_layers: int = 1,
    flagged: dict | None = None,
    norms: dict | None = None,
) -> dict:
    placement, component = split_variant(name)
    component = component.removesuffix("_nowarmup")
    if norms is None:
        norms = {} if placement == "none" else {"attn": {**BLOCK, "component": component}, "ffn": BLOCK}
    metrics = {m: aggregate(v, [None] * len(v)) for m, v in per_seed.items()}
    out = {
        "name": name,
        "placement": placement,
        "norms": norms,
        "seeds": list(range(len(next(iter(per_seed.values()))))),
        "metrics": metrics,
        "n_layers": n_layers,
        "norm_roles": ROLES,
    }
    if flagged:
        out["flagged"] = flagged
    return out


def test_cells_follow_the_names_and_keep_every_planned_variant() -> None:
    variants = [
        entry("pre/both", {"acc": [0.9, 0.8]}),
        entry("post/scale", {"acc": [0.5, 0.7]}),
        entry("post/both_nowarmup", {"acc": [0.1, 0.2]}, flagged={"1": "at chance"}),
    ]
    planned = {"pre/both": [0, 1], "post/scale": [0, 1, 2], "none/none": [0, 1], "post/both_nowarmup": [0, 1]}
    m = build_matrix({"headline": ["acc"]}, variants, planned)
    assert m["rows"] == ["pre", "post", "none"]
    assert m["columns"] == ["both", "scale", "none", "both_nowarmup"]  # registered components first, in their order
    status = {c["variant"]: c["status"] for c in m["cells"]}
    assert status == {
        "pre/both": "done",
        "post/scale": "partial: 2 of 3 seeds",
        "none/none": "not run",
        "post/both_nowarmup": "flagged",
    }
    pre_both = next(c for c in m["cells"] if c["variant"] == "pre/both")
    assert pre_both["metrics"]["acc"]["mean"] == pytest.approx(0.85)
    md = "\n".join(render_matrix(m))
    assert "0.850 ± 0.071<br>(0.900, 0.800)" in md
    assert "| `none` | – | – | not run | – |" in md
    assert "`post/scale`: partial: 2 of 3 seeds" in md and "`none/none`: not run" in md


def test_a_per_layer_metric_is_averaged_over_layers_seed_by_seed() -> None:
    v = entry("pre/project", {"u_L1": [0.2, 0.4], "u_L2": [0.0, None]}, n_layers=2)
    agg = layer_mean(v, "u_L{layer}")
    assert agg["per_seed"] == [pytest.approx(0.1), None]  # a missing layer leaves the seed without a value
    assert agg["mean"] is None
    full = layer_mean(entry("pre/project", {"u_L1": [0.2, 0.4], "u_L2": [0.0, 0.2]}, n_layers=2), "u_L{layer}")
    assert full["per_seed"] == [pytest.approx(0.1), pytest.approx(0.3)]
    # a diverged seed has no value and counts in no mean: the others' mean stands
    lost = {
        **entry("pre/project", {"u_L1": [0.2, None], "u_L2": [0.0, None]}, n_layers=2),
        "diverged_at_step": {"1": 7},
    }
    agg = layer_mean(lost, "u_L{layer}")
    assert agg["per_seed"] == [pytest.approx(0.1), None] and agg["mean"] == pytest.approx(0.1) and agg["n"] == 1


def test_a_variant_off_the_grid_is_a_one_line_error() -> None:
    with pytest.raises(ValueError, match="bench.matrix: variant 'sideways/both'"):
        build_matrix({"headline": ["acc"]}, [], {"sideways/both": [0]})
    with pytest.raises(ValueError, match="bench.matrix.headline"):
        build_matrix({"headline": []}, [], {"pre/both": [0]})


def test_the_figure_is_drawn_from_a_tiny_grid(tmp_path) -> None:
    variants = [
        entry("pre/both", {"acc": [0.9, 0.8], "u": [0.0, 0.0]}),
        entry("pre/project", {"acc": [0.7, 0.6], "u": [0.1, 0.2]}),
        entry("none/none", {"acc": [0.5, 0.4], "u": [0.3, 0.3]}),
    ]
    planned = {v["name"]: [0, 1] for v in variants} | {"post/both": [0, 1]}
    m = build_matrix({"headline": ["acc"], "unselectable": "u"}, variants, planned)
    path = plot_matrix(m, tmp_path / "matrix.png", "tiny")
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and path.stat().st_size > 5000


def test_the_norm_feeding_each_attention_follows_the_placement() -> None:
    def feed(placement: str, norms: dict, layer: int) -> str | None:
        return attention_feed({"placement": placement, "norms": norms, "norm_roles": ROLES}, layer)

    bert = {"embed": BLOCK, "attn": {**BLOCK, "component": "project"}, "ffn": BLOCK}
    assert feed("pre", bert, 2) == "project"
    assert feed("post", bert, 1) == "both"  # the embedding norm
    assert feed("post", bert, 2) == "both"  # the previous FFN norm
    gpt = {"attn": {**BLOCK, "component": "none"}, "ffn": BLOCK, "final": BLOCK}
    assert feed("pre", gpt, 1) is None  # identity norm: the raw embedding
    assert feed("pre", {**gpt, "embed": BLOCK}, 1) == "both"
    assert feed("post", gpt, 1) is None
    assert feed("none", {"embed": {**BLOCK, "component": "none"}}, 1) is None
    with pytest.raises(ValueError, match="variant 'old': its records name no norm roles"):
        attention_feed({"name": "old", "placement": "pre", "norms": bert}, 1)


def geometry_claim(expect: str) -> dict:
    return {
        "id": "g",
        "owner": "paper",
        "source": "s",
        "statement": "x",
        "metric": "u_L{layer}",
        "rule": {"kind": "attention_feed", "expect": expect},
    }


def test_the_geometry_claim_judges_every_layer_by_what_feeds_it() -> None:
    variants = {
        v["name"]: v
        for v in [
            entry("pre/both", {"u_L1": [0.0, 0.0], "u_L2": [0.0, 0.0]}, n_layers=2),
            entry("pre/project", {"u_L1": [0.1, 0.2], "u_L2": [0.3, 0.1]}, n_layers=2),
            # post: layer 1 sees the raw embedding, layer 2 the FFN norm (LayerNorm) of layer 1
            entry("post/project", {"u_L1": [0.2, 0.0], "u_L2": [0.0, 0.0]}, n_layers=2),
        ]
    }
    scaled = judge(geometry_claim("scaled"), variants)
    assert scaled["verdict"] == "reproduced" and scaled["measured"]["layers judged"] == 3
    unscaled = judge(geometry_claim("unscaled"), variants)
    assert unscaled["verdict"] == "inconclusive"  # post/project L1 is 0 in one seed
    assert "post/project L1 (no norm): 0.2 / 0" in unscaled["explanation"]
    variants["post/project"]["metrics"]["u_L1"] = aggregate([0.0, 0.0], [None, None])
    assert judge(geometry_claim("unscaled"), variants)["verdict"] == "not reproduced"
    variants["pre/both"]["metrics"]["u_L2"] = aggregate([0.0, 0.01], [None, None])
    assert judge(geometry_claim("scaled"), variants)["verdict"] == "not reproduced"
    assert judge(geometry_claim("scaled"), {})["verdict"] == "not run"
    assert "**not run**" in finding(JudgedClaim.from_json(judge(geometry_claim("scaled"), {})))


def test_a_missing_seed_leaves_the_geometry_claim_inconclusive() -> None:
    variants = {"pre/both": entry("pre/both", {"u_L1": [0.0, None]})}
    claim = judge(geometry_claim("scaled"), variants)
    assert claim["verdict"] == "inconclusive" and "pre/both L1 (both): 0 / –" in claim["explanation"]
    with pytest.raises(ValueError, match="rule.expect must be one of scaled, unscaled"):
        judge({**geometry_claim("scaled"), "rule": {"kind": "attention_feed", "expect": "scale"}}, variants)


def test_an_incomplete_sweep_says_so_above_everything() -> None:
    assert render_incomplete(27, 27) == []
    assert render_incomplete(None, None) == []  # leaderboards written before sweeps counted their runs
    line = render_incomplete(27, 9)[0]
    assert "18 of its 27 planned runs have no finished record" in line and "on the 9 finished runs only" in line
