"""Leaderboard aggregation, claim verdicts and rendering, on synthetic run records."""

from __future__ import annotations

import dataclasses
import json

import pytest

from normbench.archive import JudgedClaim
from normbench.boards.build import build
from normbench.boards.paper import build_tables
from normbench.judge.claims import judge, load_claims
from normbench.judge.rules.ratio import judge_ratio
from normbench.judge.rules.values import judge_values
from normbench.judge.stats import aggregate
from normbench.publish import leaderboard as lb
from normbench.render.board_sections.cells import status_cell
from normbench.render.board_sections.paper import render_table
from normbench.render.claims_view import finding
from tests.factories import make_record


def record(variant: str, seed: int, acc: list[list[float]], loss: list[list[float]], status: str = "done") -> dict:
    config = {
        "model": {
            "init_args": {
                "placement": "pre",
                "attn_norm": {"component": variant.split("/")[1], "affine": False, "eps": 0.0},
            }
        }
    }
    series = {"test/acc": acc, "train/loss_epoch": loss}
    return make_record(
        variant, seed, status=status, series=series, config=config, final_step=int(acc[-1][0]), wall_time_s=10.0
    )


METRICS = {
    "acc@2": {"series": "test/acc", "at_step": 2},
    "acc@9": {"series": "test/acc", "at_step": 9},
    "final": {"series": "test/acc", "at_step": "last"},
    "to_0.5": {"series": "train/loss_epoch", "first_below": 0.5},
}


def test_aggregate_over_seeds() -> None:
    agg = aggregate([1.0, 2.0, 3.0], [None] * 3)
    assert agg["mean"] == 2.0 and agg["std"] == 1.0 and agg["n"] == 3
    partial = aggregate([100.0, None], [None, 500.0])
    assert partial["mean"] is None and partial["lower_bound"] == 300.0 and partial["n"] == 1


def test_build_and_render(tmp_path) -> None:
    records = [
        record("pre/both", 0, [[2, 0.5], [4, 0.9]], [[2, 0.8], [4, 0.3]]),
        record("pre/both", 1, [[2, 0.7], [4, 0.95]], [[2, 0.45], [4, 0.2]]),
        record("pre/none", 0, [[2, 0.2], [4, 0.3]], [[2, 2.0], [4, 1.5]], status="diverged"),
    ]
    board = build("majority", "quick", records, {"metrics": METRICS}, ["pre/none", "pre/both"])
    assert [v.name for v in board.variants] == ["pre/none", "pre/both"]
    both = board.variants[1]
    assert both.seeds == (0, 1) and both.status == "done"
    assert both.metrics["acc@2"].mean == pytest.approx(0.6)
    assert both.metrics["acc@9"].mean is None
    assert both.metrics["to_0.5"].per_seed == (4.0, 2.0)
    assert board.variants[0].status == "diverged"
    for key in ("task", "preset", "generated_at", "provenance", "variants", "claims"):
        assert key in board.to_json()
    for key in ("git_commit", "dirty", "torch", "lightning", "device", "threads", "wall_time_s"):
        assert key in board.provenance
    json_path, md_path = lb.write(board, tmp_path, ["loss.png"])
    written = json.loads(json_path.read_text())
    assert written["task"] == "majority" and written["figures"] == ["loss.png"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["leaderboard.json", "leaderboard.md"]  # no staging left
    md = md_path.read_text()
    assert "| `pre/both` |" in md and "0.600 ± 0.141" in md and "![loss](loss.png)" in md
    assert "no seed finished without diverging" in md  # pre/none's only seed diverged: in no mean


def test_inconsistent_configs_in_a_variant_are_refused() -> None:
    a = record("pre/both", 0, [[2, 0.5]], [[2, 0.5]])
    b = {**record("pre/both", 1, [[2, 0.5]], [[2, 0.5]]), "config_hash": "other"}
    with pytest.raises(ValueError, match="different configs"):
        build("majority", "quick", [a, b], {"metrics": METRICS})


def test_values_rule_reaches_every_verdict() -> None:
    rule = {"kind": "values", "higher": "w", "tolerance": 0.05}
    paper = {"w": 0.74, "wo": 0.52}
    assert judge_values(rule, paper, {"w": [0.75, 0.76, 0.77], "wo": [0.50, 0.51, 0.52]})[0] == "reproduced"
    assert judge_values(rule, paper, {"w": [0.94, 0.95, 0.96], "wo": [0.60, 0.61, 0.62]})[0] == "direction only"
    # the gap is smaller than the spread over seeds, one seed the other way: no verdict either way
    assert judge_values(rule, paper, {"w": [0.75, 0.70, 0.78], "wo": [0.74, 0.72, 0.71]})[0] == "inconclusive"
    assert judge_values(rule, paper, {"w": [0.50, 0.51, 0.52], "wo": [0.74, 0.75, 0.76]})[0] == "not reproduced"
    assert judge_values(rule, paper, {"w": [0.76, 0.77], "wo": [None, 0.5]})[0] == "not run"
    assert judge_values(rule, paper, {"w": [0.76], "wo": [0.5]})[0] == "inconclusive"  # one seed: no interval


def test_values_rule_needs_a_tost_not_a_wide_interval_around_the_paper_value() -> None:
    """A paper value inside a wide seed interval is no match: the 90% interval must lie within ± tolerance."""
    rule = {"kind": "values", "higher": "w", "tolerance": 0.05}
    paper = {"w": 0.74, "wo": 0.52}
    wide = {"w": [0.70, 0.74, 0.80], "wo": [0.50, 0.53, 0.54]}  # 0.74 inside the 95% interval of w, which is ±0.12
    verdict, _, diff, gaps = judge_values(rule, paper, wide)
    assert verdict == "direction only" and diff.excludes_zero()
    verdict, text, _, gaps = judge_values(rule, paper, {"w": [0.775, 0.78, 0.785], "wo": [0.50, 0.52, 0.51]})
    assert verdict == "reproduced" and "TOST" in text  # 90% interval of w: 0.78 ± 0.0084, inside 0.74 ± 0.05
    assert gaps["w"]["estimate"] == pytest.approx(0.04) and gaps["w"]["low"] > 0  # the gap is stated, with its interval
    assert judge_values(rule, paper, {"w": [0.79, 0.80, 0.81], "wo": [0.50, 0.52, 0.51]})[0] == "direction only"


def test_equivalence_rule_is_a_tost_with_a_declared_margin() -> None:
    from normbench.judge.rules.equivalence import judge_equivalence

    both = {"reference": "ref", "margin": 0.02, "margin_why": "m"}
    verdict, text, _, test = judge_equivalence(both, {"ref": [0.80, 0.81, 0.80], "c": [0.80, 0.81, 0.805]})
    assert verdict == "reproduced" and "margin 0.02" in text and test["sides"] == "both"
    assert judge_equivalence(both, {"ref": [0.80, 0.81, 0.80], "c": [0.70, 0.71, 0.70]})[0] == "not reproduced"
    # the old "mean within the reference's range" would call this reproduced; n = 3 cannot show it
    assert judge_equivalence(both, {"ref": [0.78, 0.84, 0.81], "c": [0.75, 0.86, 0.80]})[0] == "inconclusive"
    assert judge_equivalence(both, {"ref": [0.80, 0.81], "c": [0.80, None]})[0] == "not run"
    higher = {**both, "better": "higher"}  # "no worse than": one-sided
    assert judge_equivalence(higher, {"ref": [0.80, 0.81, 0.80], "c": [0.90, 0.91, 0.90]})[0] == "reproduced"
    assert judge_equivalence(both, {"ref": [0.80, 0.81, 0.80], "c": [0.90, 0.91, 0.90]})[0] == "not reproduced"
    assert judge_equivalence(higher, {"ref": [0.80, 0.81, 0.80], "c": [0.70, 0.71, 0.70]})[0] == "not reproduced"
    lower = {**both, "better": "lower", "margin": 0.1}
    assert judge_equivalence(lower, {"ref": [5.0, 5.1, 5.05], "c": [4.0, 4.1, 4.0]})[0] == "reproduced"
    assert judge_equivalence(higher, {"ref": [0.80], "c": [0.9]})[0] == "inconclusive"  # one seed: no test


def test_ratio_rule_reaches_every_verdict() -> None:
    rule = {"numerator": "wo", "denominator": "w", "target": 3.0, "tolerance": 1.0}
    assert judge_ratio(rule, {"w": [1000, 1050], "wo": [3100, 3000]}, {})[0] == "reproduced"
    assert judge_ratio(rule, {"w": [1000, 1050], "wo": [1500, 1550]}, {})[0] == "direction only"
    assert judge_ratio(rule, {"w": [1000, 1050], "wo": [800, 850]}, {})[0] == "not reproduced"
    assert judge_ratio(rule, {"w": [1000, 1400], "wo": [1300, 1100]}, {})[0] == "inconclusive"
    assert judge_ratio(rule, {"w": [None, 1000], "wo": [800, 900]}, {})[0] == "not run"
    # no numerator seed reached the target: the lower bounds are shown, never judged, so nothing can be said
    verdict, text, ratio, _ = judge_ratio(rule, {"w": [1000, 1100], "wo": [None, None]}, {"wo": [5000, 5000]})
    assert verdict == "inconclusive" and "lower bound" in text and ratio is None


def test_positive_zero_rule_needs_two_seeds() -> None:
    from normbench.judge.rules.positive_zero import judge_positive_zero

    rule = {"positive": "p", "zero": "z"}
    assert judge_positive_zero(rule, {"p": [0.1, 0.11, 0.12], "z": [0.0, 0.0, 0.0]})[0] == "reproduced"
    assert judge_positive_zero(rule, {"p": [0.1, 0.2], "z": [0.0, 0.0]})[0] == "inconclusive"  # not significant
    assert judge_positive_zero(rule, {"p": [0.1], "z": [0.0]})[0] == "inconclusive"
    assert judge_positive_zero(rule, {"p": [0.3, 0.31, 0.32], "z": [0.0, 0.01, 0.0]})[0] == "direction only"
    assert judge_positive_zero(rule, {"p": [0.0, 0.0, 0.0], "z": [0.1, 0.11, 0.12]})[0] == "not reproduced"


def test_all_zero_rule_checks_every_seed_and_layer() -> None:
    claim = {
        "id": "x.zero",
        "owner": "normbench",
        "source": "s",
        "metric": "u_L{layer}",
        "variants": {"a": "pre/a", "b": "pre/b"},
        "rule": {"kind": "all_zero"},
    }

    def variant(values: list[list[float | None]]) -> dict:
        return {"n_layers": len(values), "metrics": {f"u_L{i + 1}": {"per_seed": v} for i, v in enumerate(values)}}

    zero = {"pre/a": variant([[0.0, 0.0], [0.0, 0.0]]), "pre/b": variant([[0.0, 0.0], [0.0, 0.0]])}
    assert judge(claim, zero)["verdict"] == "reproduced"
    one = {**zero, "pre/b": variant([[0.0, 0.0], [0.0, 0.001]])}
    judged = judge(claim, one)
    assert judged["verdict"] == "not reproduced" and "pre/b L2: 0 / 0.001" in judged["explanation"]
    assert judge(claim, {**zero, "pre/b": variant([[0.0, None], [0.0, 0.0]])})["verdict"] == "inconclusive"
    assert judge(claim, {})["verdict"] == "not run"


def test_every_claim_says_whose_it_is_and_own_claims_carry_no_paper_numbers() -> None:
    for name in (
        "brody2023-majority",
        "brody2023-lm",
        "brody2023-sst2",
        "brody2023-sst2-tokens",
        "brody2023-unselectable",
        "modern-majority",
        "modern-lm",
        "width-lm",
    ):
        for claim in load_claims(name):
            assert claim["owner"] in {"paper", "normbench"}, claim["id"]
            if claim["owner"] == "normbench":
                assert claim["id"].startswith("normbench.") and claim.get("why") and not claim.get("paper"), claim["id"]
            else:
                assert claim["id"].split(".")[0] in {"brody2023", "zhu2025", "nguyen2019", "kim2025"}, claim["id"]


def test_majority_claims_registry_is_complete() -> None:
    claims = load_claims("brody2023-majority")
    ids = {c["id"] for c in claims}
    assert {
        "brody2023.fig2a.steps_to_loss_0.2",
        "brody2023.fig3.acc@1000",
        "brody2023.fig3.acc@5000",
        "brody2023.fig2b.query_angle",
    } <= ids
    paper = {c["id"]: c.get("paper") for c in claims}
    assert paper["brody2023.fig3.acc@1000"] == {"with_projection": 0.74, "without_projection": 0.52}
    assert paper["brody2023.fig3.acc@5000"] == {"with_projection": 0.93, "without_projection": 0.85}
    assert paper["brody2023.fig2b.query_angle"] == {"with_projection": 12.0, "without_projection": 83.0}
    variants = {
        "pre/both": {"metrics": {"test_acc@1000": metric([0.74, 0.75, 0.76])}},
        "pre/paper_no_projection": {"metrics": {"test_acc@1000": metric([0.49, 0.5, 0.51])}},
    }
    claim = next(c for c in claims if c["id"] == "brody2023.fig3.acc@1000")
    entry = judge(claim, variants, PAPER_PROTOCOL)
    assert entry["verdict"] == "reproduced" and entry["owner"] == "paper" and entry["protocol"]["met"]
    assert entry["measured"] == {"with_projection": pytest.approx(0.75), "without_projection": pytest.approx(0.5)}
    assert entry["difference"]["low"] > 0 and entry["per_seed"]["with_projection"] == [0.74, 0.75, 0.76]


def metric(per_seed: list[float]) -> dict:
    return aggregate(per_seed, [None] * len(per_seed))


PAPER_PROTOCOL = {
    "data": {"init_args": {"generator": "paper", "data_seed": "seed", "batch_size": 6000}},
    "model": {"init_args": {"arch": {"init": "encoder_layer"}, "optim": {"lr": 1e-3, "lr_decay_steps": 140000}}},
}


def test_reproduced_needs_the_protocol_the_claim_names() -> None:
    """The same values on the quick preset's settings: the board says which settings differ, direction only."""
    claim = next(c for c in load_claims("brody2023-majority") if c["id"] == "brody2023.fig3.acc@1000")
    variants = {
        "pre/both": {"metrics": {"test_acc@1000": metric([0.74, 0.75, 0.76])}},
        "pre/paper_no_projection": {"metrics": {"test_acc@1000": metric([0.49, 0.5, 0.51])}},
    }
    quick = {
        "data": {"init_args": {"generator": "uniform", "data_seed": 0, "batch_size": 256}},
        "model": {"init_args": {"arch": {}, "optim": {"lr": 1e-3, "lr_decay_steps": 50000}}},
    }
    entry = judge(claim, variants, quick)
    assert entry["verdict"] == "direction only" and not entry["protocol"]["met"]
    assert "data.init_args.batch_size: 256, protocol 6000" in entry["protocol"]["differences"]
    assert "model.init_args.arch.init: None, protocol 'encoder_layer'" in entry["protocol"]["differences"]
    assert "judged on another protocol" in entry["rule"]
    assert judge(claim, variants)["verdict"] == "direction only"  # settings unknown: no protocol is met


def test_ordering_rule_needs_a_significant_difference() -> None:
    claim = {
        "id": "c",
        "owner": "paper",
        "source": "s",
        "metric": "loss",
        "variants": {"with": "a", "without": "b"},
        "paper": {"lower": "with"},
        "rule": {"kind": "ordering", "lower": "with"},
    }

    def variants(a: list[float], b: list[float]) -> dict:
        return {"a": {"metrics": {"loss": metric(a)}}, "b": {"metrics": {"loss": metric(b)}}}

    assert judge(claim, variants([1.0, 1.1, 1.05], [1.2, 1.3, 1.25]))["verdict"] == "reproduced"
    assert judge(claim, variants([1.0, 1.4, 1.2], [1.2, 1.3, 1.25]))["verdict"] == "inconclusive"  # seed 1 reversed
    assert judge(claim, variants([1.4, 1.45, 1.5], [1.2, 1.3, 1.25]))["verdict"] == "not reproduced"
    assert judge(claim, {"a": {"metrics": {"loss": metric([1.0])}}})["verdict"] == "not run"


def test_claim_with_a_metric_per_role_reads_one_variant_twice() -> None:
    claim = {
        "id": "t2",
        "owner": "paper",
        "source": "s",
        "metric": "before",
        "metrics": {"before": "before", "after": "after"},
        "variants": {"before": "v", "after": "v"},
        "paper": {"before": 0.45, "after": 0.0},
        "rule": {"kind": "values", "higher": "before", "tolerance": 0.1},
    }
    entry = judge(claim, {"v": {"metrics": {"before": metric([0.4, 0.5, 0.45]), "after": metric([0.0, 0.0, 0.0])}}})
    assert entry["measured"] == {"before": pytest.approx(0.45), "after": 0.0}
    assert entry["verdict"] == "reproduced"


def test_tables_scale_and_pair_with_the_paper() -> None:
    spec = {
        "t1": {
            "title": "T",
            "columns": ["L1", "L2"],
            "scale": 100,
            "rows": [{"label": "x", "variant": "v", "metric": "m_{column}", "paper": [51.0, None]}],
        }
    }
    variants = {"v": {"metrics": {"m_L1": metric([0.5, 0.6]), "m_L2": metric([0.1, 0.1])}}}
    (table,) = build_tables(spec, variants)
    cells = table["rows"][0]["measured"]
    assert cells[0]["mean"] == pytest.approx(55.0) and cells[1]["std"] == pytest.approx(0.0)
    md = "\n".join(render_table(table))
    assert "55.0 ± 7.1 | 51" in md and "10.0 ± 0.0 | –" in md


def test_lm_claims_registry_matches_the_paper() -> None:
    claims = {c["id"]: c for c in load_claims("brody2023-lm")}
    assert [claims[f"brody2023.table1.L{i}"]["paper"]["without_scaling"] for i in range(1, 5)] == [
        0.51,
        0.322,
        0.347,
        0.368,
    ]
    assert [claims[f"brody2023.table2.L{i}"]["paper"]["before_norm"] for i in range(1, 5)] == [
        0.448,
        0.285,
        0.223,
        0.261,
    ]
    assert {claims[k]["rule"]["kind"] for k in ("brody2023.fig4a.train_loss", "brody2023.fig4b.val_loss")} == {
        "ordering"
    }


def test_values_rule_with_exact_zero_and_relative_tolerance() -> None:
    rule = {"kind": "values", "higher": "without", "exact": ["with"], "rel_tolerance": 0.1}
    paper = {"without": 0.4, "with": 0.0}
    assert judge_values(rule, paper, {"without": [0.40, 0.405], "with": [0.0, 0.0]})[0] == "reproduced"
    assert judge_values(rule, paper, {"without": [0.40, 0.405], "with": [0.0, 0.002]})[0] == "direction only"
    assert judge_values(rule, paper, {"without": [0.2, 0.21], "with": [0.0, 0.0]})[0] == "direction only"  # 50% off


def test_a_seed_at_chance_is_flagged_counted_and_shown_with_and_without() -> None:
    recs = [record("post/both", seed, [[5, acc]], [[5, 0.4]]) for seed, acc in enumerate([0.80, 0.509, 0.74])]
    bench = {"metrics": METRICS, "chance": {"metric": "final", "at_most": 0.55}}
    board = build("sst2", "quick", recs, bench)
    (v,) = board.variants
    assert v.flagged == {"1": "at chance (final 0.509 <= 0.55)"}
    acc = v.metrics["final"]
    assert acc.per_seed == (0.80, 0.509, 0.74) and acc.mean == pytest.approx((0.80 + 0.509 + 0.74) / 3)
    assert acc.without_flagged.mean == pytest.approx(0.77) and acc.without_flagged.n == 2
    md = lb.render_markdown(board, [])
    assert "seed 1: at chance" in md and "| `post/both` | 1 (flagged) |" in md and "0.770 ± 0.042" in md
    assert status_cell(v) == "done; at chance (seed 1)"  # not "collapsed": that is a loss at its baseline
    assert status_cell(dataclasses.replace(v, collapsed=[1])) == "done; at chance (seed 1)"  # seed as a number
    with pytest.raises(ValueError, match="bench.chance.metric: 'nope'"):
        build("sst2", "quick", recs, {"metrics": METRICS, "chance": {"metric": "nope", "at_most": 0.5}})


def test_the_protocol_table_reads_the_runs_config() -> None:
    recs = [record("pre/both", seed, [[5, 0.7]], [[5, 0.4]]) for seed in (0, 1)]
    for r in recs:
        r["config"]["data"] = {"init_args": {"batch_size": 256, "generator": "uniform"}}
    bench = {
        "metrics": METRICS,
        "protocol": {
            "paper_seeds": 10,
            "notes": ["Not the paper's protocol."],
            "settings": [
                {"setting": "batch size", "config": "data.init_args.batch_size", "paper": 6000},
                {"setting": "data generator", "config": "data.init_args.generator", "paper": "paper"},
                {"setting": "frozen", "value": "none", "paper": "none"},
            ],
        },
    }
    board = build("majority", "quick", recs, bench)
    assert board.protocol["settings"] == [
        {"setting": "batch size", "this_sweep": 256, "paper": 6000},
        {"setting": "data generator", "this_sweep": "uniform", "paper": "paper"},
        {"setting": "frozen", "this_sweep": "none", "paper": "none"},
        {"setting": "seeds per variant", "this_sweep": "2", "paper": 10},
    ]
    md = lb.render_markdown(board, [])
    assert md.index("## Protocol") < md.index("## Variants")
    assert "| batch size | 256 | 6000 |" in md and "- Not the paper's protocol." in md


def test_a_protocol_setting_that_differs_by_variant_names_every_value_not_the_first_runs() -> None:
    """A tuned board holds each variant at its own learning rate: its protocol row lists them all, in order."""
    recs = []
    for name, lr in (("pre/both,lr=0.0006", 6e-4), ("pre/both,lr=0.001", 1e-3), ("pre/scale,lr=0.0006", 6e-4)):
        for seed in (0, 1):
            r = record(name, seed, [[5, 0.7]], [[5, 0.4]])
            r["config"]["model"] = {"init_args": {"optim": {"lr": lr, "warmup_steps": 300}}}
            recs.append(r)
    settings = [
        {"setting": "learning rate", "config": "model.init_args.optim.lr", "paper": 5e-5},
        {"setting": "warm-up steps", "config": "model.init_args.optim.warmup_steps", "paper": "not stated"},
    ]
    board = build("sst2", "tuned", recs, {"metrics": METRICS, "protocol": {"settings": settings}})
    assert board.protocol["settings"] == [
        {"setting": "learning rate", "this_sweep": "0.0006 / 0.001 (differs by variant)", "paper": 5e-5},
        {"setting": "warm-up steps", "this_sweep": 300, "paper": "not stated"},
    ]


def test_each_leaderboard_carries_a_bibtex_entry_naming_its_commit(tmp_path) -> None:
    board = build("majority", "quick", [record("pre/both", 0, [[5, 0.7]], [[5, 0.4]])], {"metrics": METRICS})
    out = tmp_path / "results" / "majority" / "paper-1000"
    json_path, md_path = lb.write(board, out, [])
    entry = json.loads(json_path.read_text())["citation"]["bibtex"]
    assert entry.startswith("@misc{") and board.provenance["git_commit"] in entry
    assert "leaderboard.json" in entry and "normbench cite" in entry
    assert "## How to cite" in md_path.read_text() and entry in md_path.read_text()


def test_findings_are_generated_from_the_verdicts() -> None:
    claim = {
        "id": "x",
        "owner": "normbench",
        "statement": "LayerNorm is faster",
        "verdict": "inconclusive",
        "difference": {"of": ["a", "b"], "estimate": 0.1, "low": -0.2, "high": 0.4, "n": [3, 3], "p_value": 0.4},
        "paper": {},
        "measured": {},
        "rule": "r",
    }
    text = finding(JudgedClaim.from_json(claim))
    assert text.startswith("Our claim “LayerNorm is faster” cannot be decided here")
    assert "a − b = 0.1 [-0.2, 0.4], p = 0.4" in text
    other = JudgedClaim.from_json({**claim, "owner": "paper", "verdict": "not reproduced", "difference": None})
    assert finding(other).startswith("The paper's claim “LayerNorm is faster” does not hold here")


def test_the_difference_is_labelled_in_the_order_it_is_computed() -> None:
    claim = {
        "id": "c",
        "owner": "normbench",
        "source": "s",
        "why": "w",
        "metric": "acc",
        "variants": {"with_projection": "a", "without_projection": "b"},
        "rule": {"kind": "ordering", "lower": "without_projection"},
    }
    entry = judge(
        claim,
        {"a": {"metrics": {"acc": metric([0.8, 0.82, 0.81])}}, "b": {"metrics": {"acc": metric([0.4, 0.42, 0.41])}}},
    )
    diff = entry["difference"]
    assert diff["of"] == ["without_projection", "with_projection"] and diff["estimate"] == pytest.approx(-0.4)
    assert entry["verdict"] == "reproduced"
    from normbench.judge.verdicts.describe import describe_difference

    assert describe_difference(entry).startswith("without_projection − with_projection = -0.4")


def test_missing_seeds_are_never_dropped_silently() -> None:
    from normbench.judge.rules.ordering import judge_ordering

    rule = {"lower": "w"}
    # a seed of the lower role never reached the threshold: nothing can be said
    assert judge_ordering(rule, {"w": [100, 120, None], "wo": [300, 320, 310]})[0] == "not run"
    # the other role's missing seed counts with its lower bound (its last step)
    verdict, text, _ = judge_ordering(rule, {"w": [100, 120, 110], "wo": [300, None, 310]}, {"wo": [300, 330, 310]})
    assert verdict == "reproduced" and "lower bounds" in text
    # ratio: lower bounds that point the other way decide nothing
    ratio = {"numerator": "wo", "denominator": "w", "target": 3.0, "tolerance": 1.0}
    assert judge_ratio(ratio, {"w": [1000, 1100], "wo": [None, None]}, {"wo": [500, 520]})[0] == "inconclusive"


def test_a_qk_norm_variant_says_so_in_its_row() -> None:
    from normbench.boards.variants import variant_entry

    record = make_record(
        "pre/none+qknorm",
        0,
        config={"model": {"init_args": {"arch": {"qk_norm": True}}}},
        placement="pre",
        norms={"attn_norm": {"component": "none", "affine": False, "eps": 0.0}},
    )
    assert variant_entry("pre/none+qknorm", [record], {})["qk_norm"] is True
    assert variant_entry("pre/none", [{**record, "config": {}}], {})["qk_norm"] is False


def test_a_claims_note_travels_to_the_board_beside_its_why() -> None:
    claim = {
        "id": "c",
        "owner": "normbench",
        "source": "s",
        "why": "w",
        "note": "n",
        "statement": "all zero",
        "metric": "acc",
        "variants": {"a": "a"},
        "rule": {"kind": "all_zero"},
    }
    entry = judge(claim, {"a": {"metrics": {"acc": metric([0.0, 0.0, 0.0])}}})
    assert (entry["why"], entry["note"], entry["verdict"]) == ("w", "n", "reproduced")
    ordering = judge(
        {**claim, "note": None, "variants": {"w": "a", "wo": "b"}, "rule": {"kind": "ordering", "lower": "w"}},
        {"a": {"metrics": {"acc": metric([1.0, 1.1, 1.2])}}, "b": {"metrics": {"acc": metric([3.0, 3.1, 3.2])}}},
    )
    assert "note" not in ordering and ordering["why"] == "w"


def test_a_metric_no_run_measured_is_named_as_such_not_as_measured() -> None:
    records = [record("pre/both", s, [[2, 0.5], [4, 0.9]], [[2, 0.8], [4, 0.3]]) for s in (0, 1)]
    metrics = {**METRICS, "absent": {"series": "decomposition/output/i", "at_step": "last"}}
    board = build("majority", "quick", records, {"metrics": metrics, "columns": ["final"]}, ["pre/both"])
    md = lb.render_markdown(board, [])
    also = next(line for line in md.splitlines() if line.startswith("Also measured"))
    assert "`acc@2`" in also and "`absent`" not in also
    missing = next(
        line for line in md.splitlines() if line.startswith("Not measured by this sweep (no run has a value):")
    )
    assert "`absent`" in missing and "`acc@9`" in missing  # the 4-step runs never reach step 9 either


def test_the_board_names_its_runs_platforms_and_whether_its_task_is_chaotic() -> None:
    from normbench.training.run.records import provenance

    here = provenance()
    recs = [record("pre/both", s, [[5, 0.7]], [[5, 0.4]]) for s in (0, 1)]
    recs[0]["provenance"] = {**recs[0]["provenance"], "torch": here["torch"], "platform": here["platform"]}
    board = build("sst2", "quick", recs, {"metrics": METRICS, "reproducibility": {"chaotic": "a plateau escape"}})
    rep = board.reproducibility
    assert rep["platforms"] == [{"torch": here["torch"], **here["platform"]}] and rep["runs_without_platform"] == 0
    assert board.variants[0].provenance["platforms"] == rep["platforms"]
    text = lb.render_markdown(board, [])
    assert "## Reproducibility" in text and f"Trained on {here['platform']['cpu']}" in text
    assert "**Chaotic task**: a plateau escape" in text
    assert "within its declared tolerance" not in text and "relative" not in text  # no per-value tolerance holds
    plain = build("majority", "quick", [record("pre/both", 0, [[5, 0.7]], [[5, 0.4]])], {"metrics": METRICS})
    assert plain.reproducibility["chaotic"] is None and plain.reproducibility["runs_without_platform"] == 1
    assert "within its declared tolerance" in lb.render_markdown(plain, []) and "Chaotic" not in lb.render_markdown(
        plain, []
    )


def test_a_stack_of_seeds_counts_its_training_time_once() -> None:
    """Seeds trained stacked in one process each record the stack's whole time: the board's sum counts it once."""
    stacked = {"vectorized": {"stack_size": 2, "seeds": [0, 1]}}
    records = [
        {**record("pre/both", seed, [[2, 0.5]], [[2, 0.5]]), "wall_time_s": 30.0, **stacked} for seed in (0, 1)
    ] + [record("pre/none", 0, [[2, 0.5]], [[2, 0.5]])]  # alone: its own 10 s
    board = build("majority", "quick", records, {"metrics": METRICS}, ["pre/both", "pre/none"])
    assert [v.provenance["wall_time_s"] for v in board.variants] == [30.0, 10.0]
    assert board.provenance["wall_time_s"] == 40.0
