"""Re-judging a published board from its per-seed values gives what a build from the runs gives."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from normbench.archive import parse_board
from normbench.reporting import leaderboard as lb
from normbench.reporting import publish, write
from normbench.reporting.rejudge import changed_verdicts, check_same_runs, rejudge_board, unchanged
from tests.reporting.test_leaderboard import record

METRICS = {"test_acc@1000": {"series": "test/acc", "at_step": 1000}}
BENCH = {
    "metrics": METRICS,
    "claims": "brody2023-majority-1000",
    "protocol": {"settings": [{"setting": "batch size", "config": "data.init_args.batch_size", "paper": 6000}]},
}
QUICK = {"data": {"init_args": {"batch_size": 256}}, "model": {"init_args": {"arch": {}}}}


def records() -> list[dict]:
    accs = {
        "pre/both": [0.78, 0.79, 0.80],
        "pre/paper_no_projection": [0.55, 0.56, 0.58],
        "pre/scale": [0.7, 0.72, 0.71],
    }
    out = []
    for variant, values in accs.items():
        for seed, acc in enumerate(values):
            r = record(variant, seed, [[1000, acc]], [[1000, 0.5]])
            out.append({**r, "config": QUICK})
    return out


def test_rejudging_a_board_gives_the_verdicts_of_a_build_from_its_runs() -> None:
    built = lb.build("majority", "paper-1000", records(), BENCH)
    stale = built.replace(claims=tuple(dataclasses.replace(c, verdict="reproduced") for c in built.claims))
    configs = {v.name: QUICK for v in built.variants}
    new = rejudge_board(stale, BENCH, configs, {name: [0, 1, 2] for name in configs})
    assert [(c.id, c.verdict, c.rule) for c in new.claims] == [(c.id, c.verdict, c.rule) for c in built.claims]
    assert new.variants == built.variants and new.rejudged["what"]
    assert new.protocol["settings"][0] == {"setting": "batch size", "this_sweep": 256, "paper": 6000}
    assert changed_verdicts(stale, new) and not changed_verdicts(built, new)
    assert not unchanged(stale, new)
    again = rejudge_board(new, BENCH, configs, {name: [0, 1, 2] for name in configs})
    assert unchanged(new, again)  # only the stamp differs: the command leaves such a board as it is


def test_a_board_is_rejudged_only_for_the_runs_it_holds() -> None:
    board = parse_board(
        {
            "task": "t",
            "preset": None,
            "generated_at": "now",
            "provenance": {},
            "claims": [],
            "variants": [
                {
                    "name": "pre/both",
                    "placement": "pre",
                    "norms": {},
                    "seeds": [0],
                    "status": "done",
                    "metrics": {},
                    "config_hash": "aaa",
                }
            ],
        }
    )
    check_same_runs(board, {"pre/both": "aaa"}, False)
    with pytest.raises(
        ValueError, match=r"^results: variant 'pre/both' was trained with config aaa, today's plan gives bbb"
    ):
        check_same_runs(board, {"pre/both": "bbb"}, False)
    check_same_runs(board, {"pre/both": "bbb"}, frozenset({"aaa"}))  # declared superseded
    with pytest.raises(ValueError, match=r"^results: variant 'pre/both' of the board is not in its sweep's plan"):
        check_same_runs(board, {}, True)


def test_superseded_configs_are_named_or_all() -> None:
    assert publish.superseded_configs({}) is False
    assert publish.superseded_configs({"superseded": "pipeline changed"}) is True
    assert publish.superseded_configs({"superseded": {"why": "w", "configs": ["a", "b"]}}) == frozenset({"a", "b"})
    with pytest.raises(ValueError, match=r"^bench.superseded: give a sentence, or \{why"):
        publish.superseded_configs({"superseded": {"configs": ["a"]}})


def test_a_superseding_build_keeps_what_the_old_board_said(tmp_path: Path) -> None:
    """The new board carries the old claims' gaps to the paper, and its Markdown says whether they closed."""
    old = lb.build("majority", "paper-1000", records(), BENCH)
    lb.write(old, tmp_path, [])
    moved = [
        {
            **r,
            "config_hash": "new-" + r["config_hash"],
            "series": {**r["series"], "test/acc": [[1000, r["series"]["test/acc"][0][1] - 0.05]]},
        }
        for r in records()
    ]
    new = lb.build("majority", "paper-1000", moved, BENCH)
    bench = {
        **BENCH,
        "superseded": {"why": "other initialisers", "configs": [v.config_hash for v in old.variants]},
    }
    kept = write.superseded_build(tmp_path / "leaderboard.json", new, bench)
    assert kept["why"] == "other initialisers" and kept["claims"][0]["id"] == "brody2023.fig3.acc@1000"
    assert kept["claims"][0]["gap_to_paper"]["with_projection"]["estimate"] == pytest.approx(0.05)
    new = new.with_keys(supersedes=kept)
    md = lb.render_markdown(new, [])
    assert "## The build this one replaces" in md and "yes: the interval now contains 0" in md
    assert json.loads(json.dumps(new.to_json()))  # strict JSON
    same = write.superseded_build(tmp_path / "leaderboard.json", old, bench)
    assert same is None  # a rebuild of the same runs replaces nothing
