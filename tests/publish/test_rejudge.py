"""Re-judging a published board from its per-seed values gives what a build from the runs gives."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from normbench.archive import parse_board
from normbench.boards import build as builder
from normbench.publish import files as publish
from normbench.publish import leaderboard as lb
from normbench.publish import write
from normbench.publish.rejudge import changed_verdicts, check_same_runs, rejudge_board
from tests.publish.test_leaderboard import record

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
    built = builder.build("majority", "paper-1000", records(), BENCH)
    stale = built.replace(claims=tuple(dataclasses.replace(c, verdict="reproduced") for c in built.claims))
    configs = {v.name: QUICK for v in built.variants}
    new = rejudge_board(stale, BENCH, configs, {name: [0, 1, 2] for name in configs})
    assert [(c.id, c.verdict, c.rule) for c in new.claims] == [(c.id, c.verdict, c.rule) for c in built.claims]
    assert new.variants == built.variants and new.rejudged["what"]
    assert new.protocol["settings"][0] == {"setting": "batch size", "this_sweep": 256, "paper": 6000}
    assert changed_verdicts(stale, new) and not changed_verdicts(built, new)
    assert all(" -> " in line for line in changed_verdicts(stale, new))


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
    old = builder.build("majority", "paper-1000", records(), BENCH)
    lb.write(old, tmp_path, [])
    moved = [
        {
            **r,
            "config_hash": "new-" + r["config_hash"],
            "series": {**r["series"], "test/acc": [[1000, r["series"]["test/acc"][0][1] - 0.05]]},
        }
        for r in records()
    ]
    new = builder.build("majority", "paper-1000", moved, BENCH)
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


def test_the_replaced_build_shows_the_gap_now_for_rules_that_record_none(tmp_path: Path) -> None:
    """An "exists" rule records no gap to the paper; the replaced-build table computes it from the seeds."""
    import dataclasses

    from normbench.render.board_sections.superseded import render_superseded

    board = builder.build("majority", "paper-1000", records(), BENCH)
    then = {
        "id": board.claims[0].id,
        "gap_to_paper": {"with_projection": {"estimate": 0.1, "low": 0.05, "high": 0.15, "n": 3, "paper": 0.9}},
    }
    claims = tuple(dataclasses.replace(c, gap_to_paper=None) for c in board.claims)
    row = next(line for line in render_superseded({"why": "w", "claims": [then]}, claims) if "with_projection" in line)
    assert row.split("|")[4].strip() != "–"  # the gap now, computed from the claim's per-seed values

    seeds = [v for v in claims[0].per_seed["with_projection"] if v is not None]
    assert f"{sum(seeds) / len(seeds):.3f}" in row


def test_gap_closed_says_whether_the_gap_closed_or_there_was_none() -> None:
    from normbench.render.board_sections.superseded import closed_text

    zero = {"estimate": 0.0, "low": 0.0, "high": 0.0}
    off = {"estimate": 0.1, "low": 0.05, "high": 0.15}
    assert closed_text(off, zero) == "yes: the interval now contains 0"
    assert closed_text(zero, zero) == "no gap then or now: both intervals contain 0"
    assert closed_text(off, {"estimate": 0.05, "low": 0.01, "high": 0.09}).startswith("no: smaller by 0.050")
    assert closed_text(None, zero) == "–"


def test_a_failing_render_leaves_the_published_board_and_its_figures(tmp_path: Path, monkeypatch) -> None:  # noqa: ANN001
    board = builder.build("majority", "paper-1000", records(), BENCH)
    lb.write(board, tmp_path, ["loss.png"])
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir()}

    def broken(board: object) -> str:
        raise RuntimeError("render failed")

    monkeypatch.setattr(lb, "render", broken)
    with pytest.raises(RuntimeError, match="render failed"):
        lb.write(board.replace(generated_at="later"), tmp_path, ["loss.png", "accuracy.png"])
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == before


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("{", r"not JSON: Expecting property name"),
        ('{"task": "majority"}', r"board: missing key 'preset'"),
        (
            '{"task": "majority", "preset": null, "generated_at": "x", "provenance": {}, "variants": {}, "claims": []}',
            r"board\.variants: an object, not a list",
        ),
    ],
)
def test_rejudge_names_a_malformed_board_in_one_line(tmp_path: Path, text: str, message: str) -> None:
    from normbench.commands.boards import rejudge

    (tmp_path / "leaderboard.json").write_text(text, encoding="utf-8")
    with pytest.raises(ValueError, match=message) as info:
        rejudge(str(tmp_path))
    assert "\n" not in str(info.value) and "is not a leaderboard" in str(info.value)
    with pytest.raises(ValueError, match=r"^board: .* does not exist; give a folder holding a leaderboard.json$"):
        rejudge(str(tmp_path / "missing"))


def test_rejudging_a_committed_board_that_nothing_changed_leaves_it_as_it_is(tmp_path: Path, capsys) -> None:  # noqa: ANN001
    from normbench.commands.boards import rejudge

    published = Path(__file__).resolve().parents[2] / "results" / "majority"
    for name in ("leaderboard.json", "leaderboard.md"):
        (tmp_path / name).write_bytes((published / name).read_bytes())
    stamp = (tmp_path / "leaderboard.json").stat().st_mtime_ns
    rejudge(str(tmp_path))
    assert "no verdict changed; left as it is" in capsys.readouterr().out
    assert (tmp_path / "leaderboard.json").stat().st_mtime_ns == stamp
    assert (tmp_path / "leaderboard.json").read_bytes() == (published / "leaderboard.json").read_bytes()


def test_a_replaced_build_without_paper_claims_lists_its_configs_instead_of_an_empty_table() -> None:
    """A board that judged no claim against a paper value (a card's board) says so, and shows each variant's config
    then and now, rather than a gap table with no rows."""
    from normbench.render.board_sections.superseded import render_superseded

    board = builder.build("majority", "paper-1000", records(), BENCH)
    name, digest = board.variants[0].name, board.variants[0].config_hash
    then = {"why": "trained before a fix", "config_hashes": {name: "0123456789ab", "pre/gone": "ba9876543210"}}
    lines = render_superseded(then, (), board.variants)
    text = "\n".join(lines)
    assert "judged no claim against a paper value" in text and "gap closed" not in text
    assert f"| `{name}` | `0123456789ab` | `{digest}` |" in lines
    assert "| `pre/gone` | `ba9876543210` | – |" in lines


def test_a_build_that_only_adds_a_variant_replaces_no_superseded_build(tmp_path: Path) -> None:
    """Adding a variant beside runs of the same configs replaces nothing; a block a board carries passes on while its
    configs are still superseded, and is dropped once they are not."""
    old = builder.build("majority", "paper-1000", records(), BENCH)
    hashes = [v.config_hash for v in old.variants]
    extra = [
        {**r, "variant": "pre/extra", "config_hash": "extra-hash"} for r in records() if r["variant"] == "pre/both"
    ]
    wider = builder.build("majority", "paper-1000", records() + extra, BENCH)
    lb.write(old, tmp_path, [])
    bench = {**BENCH, "superseded": "every earlier build"}
    assert write.superseded_build(tmp_path / "leaderboard.json", wider, bench) is None
    block = {"why": "w", "config_hashes": {"pre/both": "0ld"}, "claims": []}
    lb.write(old.with_keys(supersedes=block), tmp_path, [])
    narrowed = {**BENCH, "superseded": {"why": "w", "configs": ["0ld"]}}
    assert write.superseded_build(tmp_path / "leaderboard.json", wider, narrowed) == block
    # the sentence the block was written with stays: today's declaration may be another board's (a card's tuned board
    # inherits its task's, which names the task's variants)
    reworded = {**BENCH, "superseded": {"why": "the task's own sentence", "configs": ["0ld"]}}
    assert write.superseded_build(tmp_path / "leaderboard.json", wider, reworded) == block
    others = {**BENCH, "superseded": {"why": "w", "configs": hashes[:1] + ["another"]}}
    assert write.superseded_build(tmp_path / "leaderboard.json", wider, others) is None


def test_rejudging_a_board_whose_choice_the_rule_now_makes_otherwise_rewrites_it(tmp_path: Path, capsys) -> None:  # noqa: ANN001
    """A grid board built under an earlier choice rule (its rows without the seeds that diverged) is rewritten with
    today's choice table, though no verdict changed."""
    import json

    from normbench.commands.boards import rejudge

    doc = json.loads(
        (Path(__file__).resolve().parents[2] / "results" / "lm" / "dyt-alpha" / "leaderboard.json").read_text()
    )
    for group in doc["choice"]["groups"]:
        group.pop("unstable", None)
        for row in group["rows"]:
            row.pop("diverged", None), row.pop("failed", None)
    doc["figure_styles"] = {"by_alpha0.png": 3}  # its grid figure drew the old choice
    (tmp_path / "leaderboard.json").write_text(json.dumps(doc), encoding="utf-8")
    rejudge(str(tmp_path))
    assert "verdicts changed: none" in capsys.readouterr().out
    rewritten = json.loads((tmp_path / "leaderboard.json").read_text())
    assert all("diverged" in row for group in rewritten["choice"]["groups"] for row in group["rows"])
    assert "| flagged |" in (tmp_path / "leaderboard.md").read_text()
    assert "figure_styles" not in rewritten  # rejudge draws no figure: the next build from the archive redraws it


def test_a_card_board_finds_the_cards_config_it_was_planned_from(tmp_path: Path) -> None:
    """A board names its sweep's config file by name only; a report card's boards (cards/<norm>/<task>[/<kind>])
    find it in queues/cards/<norm>/, and a name found nowhere is one line naming where it looked."""
    from normbench.commands.boards import config_file_of

    results = tmp_path / "results"
    (tmp_path / "queues" / "cards" / "dyt").mkdir(parents=True)
    (tmp_path / "queues" / "cards" / "dyt" / "lm.yaml").write_text("extends: lm\n", encoding="utf-8")
    for board in ("cards/dyt/lm", "cards/dyt/lm/lr", "cards/dyt/lm/tuned"):
        path = results / board / "leaderboard.json"
        assert config_file_of(path, "lm.yaml", results) == str(tmp_path / "queues" / "cards" / "dyt" / "lm.yaml")
    assert config_file_of(results / "lm" / "leaderboard.json", None, results) is None
    with pytest.raises(ValueError, match=r"sweep.config_file: 'mine.yaml' of .* is not found \(looked at"):
        config_file_of(results / "lm" / "mine" / "leaderboard.json", "mine.yaml", results)
