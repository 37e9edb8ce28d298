"""One definition and one verdict per claim; protocols a claim can name and runs can meet."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from normbench.judge import stats
from normbench.judge.claims import judge, load_claims, load_protocols, protocol_check
from normbench.sweep.plan import plan_runs
from normbench.tasks import get_task, task_names


def claims_files_of(task: str) -> list[str]:
    """The claims files a task's bench and presets judge."""
    config = yaml.safe_load(get_task(task).config_path.read_text(encoding="utf-8"))
    files = [(config.get("bench") or {}).get("claims")]
    files += [((p or {}).get("bench") or {}).get("claims") for p in (config.get("presets") or {}).values()]
    return sorted({f for f in files if f})


def synthetic_variants(claims: list[dict]) -> dict[str, dict]:
    """Every variant and metric the claims read, with three seeds of made-up values (a fixed pattern)."""
    variants: dict[str, dict] = {}
    for claim in claims:
        for i, (role, name) in enumerate((claim.get("variants") or {}).items()):
            metric = (claim.get("metrics") or {}).get(role, claim["metric"])
            entry = variants.setdefault(name, {"name": name, "seeds": [0, 1, 2], "metrics": {}})
            base = 0.5 + 0.1 * (len(name) % 5) + 0.01 * i
            entry["metrics"][metric] = stats.aggregate([base, base + 0.01, base + 0.02], [None] * 3)
    return variants


@pytest.mark.parametrize("task", task_names())
def test_the_same_runs_get_one_verdict_on_every_board_of_a_task(task: str) -> None:
    """A claim id judged by several boards of one task is defined once: fed the same runs through each
    board's claims, it gets the same entry (verdict, rule and all)."""
    by_id: dict[str, list[tuple[str, dict]]] = {}
    for name in claims_files_of(task):
        for claim in load_claims(name):
            by_id.setdefault(claim["id"], []).append((name, claim))
    shared = {cid: entries for cid, entries in by_id.items() if len(entries) > 1}
    for cid, entries in shared.items():
        claims = [c for _, c in entries if c["rule"]["kind"] not in ("attention_feed", "all_zero")]
        if not claims:
            continue
        variants = synthetic_variants(claims)
        judged = {json.dumps(judge(c, variants), sort_keys=True, default=str) for c in claims}
        assert len(judged) == 1, f"{task}: claim {cid} is judged differently by {[n for n, _ in entries]}"
    if task == "majority":
        assert {"brody2023.fig3.acc@5000", "brody2023.fig3.acc@1000"} <= set(shared)


def test_no_claim_file_uses_within_spread_and_every_equivalence_declares_its_margin() -> None:
    folder = Path(load_claims.__globals__["resources"].files("normbench.judge") / "claims")
    for path in folder.glob("*.yaml"):
        assert "within_spread" not in path.read_text(encoding="utf-8"), path.name
        if path.stem == "protocols":
            continue
        for claim in load_claims(path.stem):
            if claim["rule"]["kind"] == "equivalence":
                assert claim["rule"]["margin"] > 0 and claim["rule"]["margin_why"], claim["id"]


def test_a_use_entry_must_name_a_defined_claim(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from normbench.judge import claims as claims_module

    files = {"a": {"claims": [{"id": "x", "use": "b"}]}, "b": {"claims": [{"id": "y", "owner": "paper"}]}}
    monkeypatch.setattr(claims_module, "claims_file", lambda name: files[name])
    with pytest.raises(ValueError, match=r"^claim 'x': `use: b` must name a claim that b.yaml defines"):
        claims_module.load_claims("a")


def planned_config(preset: str) -> dict:
    _, runs = plan_runs("majority", preset, seeds=[0], variants=["pre/both"])
    return runs[0].config


@pytest.mark.parametrize(
    ("preset", "met"),
    [
        ("paper", {"brody2023-majority", "brody2023-majority-full"}),
        ("paper-1000", {"brody2023-majority"}),
        ("quick", set()),
        ("quick-paper-data", set()),
        ("quick-10", set()),
    ],
)
def test_the_paper_presets_meet_the_protocols_their_claims_name(preset: str, met: set[str]) -> None:
    """The protocols are read from real planned configs: the paper preset meets the paper's protocol, quick does not."""
    config = planned_config(preset)
    for name in load_protocols():
        if not name.startswith("brody2023-majority"):
            continue
        check = protocol_check({"protocol": name}, config)
        assert check["met"] == (name in met), (preset, name, check["differences"])


def test_a_geometry_claim_shows_the_mean_of_the_seeds_it_counts() -> None:
    """A collapsed seed feeds no geometry claim: the claim's measured mean is that of the seeds it judges, not the
    board's mean over every seed (which keeps the collapsed one)."""
    from normbench.judge.claims import judge_runs
    from tests.factories import positive_zero_claim

    def variant(values: list[float], collapsed: list[str]) -> dict:
        mean = sum(values) / len(values)
        return {
            "seeds": list(range(len(values))),
            "collapsed": collapsed,
            "metrics": {"unselectable_L1": {"mean": mean, "per_seed": values}},
        }

    claim = positive_zero_claim("unselectable_L1", "none/none", "post/both")
    variants = {"none/none": variant([0.0, 0.02, 0.04], ["0"]), "post/both": variant([0.0, 0.0, 0.0], [])}
    judged = judge_runs(claim, variants)
    assert judged["per_seed"] == {"without": [0.02, 0.04], "with": [0.0, 0.0, 0.0]}
    assert judged["measured"] == {"without": pytest.approx(0.03), "with": 0.0}
    assert judged["counted"] == [
        "none/none: 2 of 3 seeds; seed 0 collapsed (a collapsed model feeds no geometry claim)"
    ]


def test_a_claims_measured_mean_follows_the_boards_rule_for_missing_values() -> None:
    """A counted seed without a value leaves no mean (as the board's aggregate does), and per-seed values that do not
    line up with the seeds keep the board's mean."""
    from normbench.judge.claims import judge_runs
    from tests.factories import positive_zero_claim

    claim = positive_zero_claim("unselectable_L1", "none/none", "post/both")

    def measured(values: list[float | None], collapsed: list[str]) -> float | None:
        left = {"seeds": list(range(len(values))), "collapsed": collapsed, "metrics": {"unselectable_L1": {}}}
        left["metrics"]["unselectable_L1"] = {"mean": None, "per_seed": values}
        zero = {"seeds": [0, 1], "metrics": {"unselectable_L1": {"mean": 0.0, "per_seed": [0.0, 0.0]}}}
        return judge_runs(claim, {"none/none": left, "post/both": zero})["measured"]["without"]

    assert measured([0.0, 0.02, None], ["0"]) is None and measured([0.01], ["0"]) is None
    assert measured([0.0, 0.02, 0.04], ["0"]) == pytest.approx(0.03)
    unaligned = {"seeds": [0, 1, 2], "collapsed": ["0"], "metrics": {"unselectable_L1": {"mean": 7.0, "per_seed": []}}}
    zero = {"seeds": [0, 1], "metrics": {"unselectable_L1": {"mean": 0.0, "per_seed": [0.0, 0.0]}}}
    assert judge_runs(claim, {"none/none": unaligned, "post/both": zero})["measured"]["without"] == 7.0
