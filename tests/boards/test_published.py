"""Stand-in records: runs published before the archive kept records, shown from the boards that published them."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from types import SimpleNamespace

import pytest

from normbench.archive.store import Archive
from normbench.boards.canonical import Shown, published_variants, source_first
from normbench.boards.published import one_of, stand_in, stand_in_provenance, stand_in_wall_time, value_of

RESULTS = Path(__file__).resolve().parents[2] / "results"


def shown(board: str, seeds: list[int], metrics: dict) -> Shown:
    return Shown(board, "2026-11-01T00:00:00Z", {"seeds": seeds, "status": "done", "metrics": metrics})


def test_a_metric_the_earliest_board_lacks_is_read_from_a_later_board_of_the_same_run() -> None:
    """The earliest board that shows a run may not have run an analysis (its preset did not ask for it); the value
    a later board of the same run and seed shows is the run's, so a stand-in keeps it instead of losing it."""
    run = SimpleNamespace(variant="pre/both", seed=1, config_hash="h", config={})
    first = shown(
        "lm/width",
        [0, 1],
        {
            "loss": {"per_seed": [5.0, 5.1]},
            "mu_i@out": {"per_seed": [None, None]},
            "steps_to_0.2": {"per_seed": [None, None], "note": "not reached by step 5000"},
        },
    )
    later = shown(
        "lm",
        [1, 2],
        {
            "loss": {"per_seed": [9.9, 9.8]},
            "mu_i@out": {"per_seed": [0.3, 0.4]},
            "steps_to_0.2": {"per_seed": [None, None]},
            "heads": {"per_seed": [0.93, 0.94]},
        },
    )
    record = stand_in("lm", run, first, [later])
    assert value_of(record, "loss") == (5.1, None)  # the earliest board's value stands
    assert value_of(record, "mu_i@out") == (0.3, None)  # filled from the later board, seed 1's
    assert value_of(record, "heads") == (0.93, None)
    assert value_of(record, "steps_to_0.2") == (None, None)
    assert record["published"]["notes"] == {"steps_to_0.2": "not reached by step 5000"}
    assert record["published"]["board"] == "lm/width"
    assert value_of(stand_in("lm", run, first), "mu_i@out") == (None, None)


def test_the_recorded_source_stays_canonical_when_it_is_rebuilt_later() -> None:
    """Rebuilding the board that first published a run moves its ``generated_at`` past the boards that showed the run
    since; the source those boards recorded (``published_seeds``) still comes first, seed by seed."""
    source = Shown("lm", "2026-11-27T09:00:00Z", {"seeds": [0, 1, 2, 3], "published_seeds": {"lm": [0, 1, 2]}})
    width = Shown("lm/width", "2026-11-25T00:00:00Z", {"seeds": [0, 1, 2]})
    card = Shown("lm/card", "2026-11-26T00:00:00Z", {"seeds": [0, 1, 2], "published_seeds": {"lm": [0, 1, 2]}})
    late = Shown("lm/card2", "2026-11-28T00:00:00Z", {"seeds": [0, 1, 2], "published_seeds": {"lm/width": [0, 1, 2]}})
    by_date = [width, card, source, late]
    assert [s.board for s in source_first(by_date)] == ["lm", "lm/width", "lm/card", "lm/card2"]
    assert source_first(by_date, 1)[0] is source
    assert source_first([width, late], 1)[0] is width  # the source the earliest recorder names
    assert source_first([width], 1) == [width]  # nothing recorded: the earliest board
    per_seed = Shown("lm/card3", "2026-11-26T00:00:00Z", {"seeds": [0, 1], "published_seeds": {"a": [0], "b": [1]}})
    a, b = Shown("a", "2026-11-20T00:00:00Z", {"seeds": [0]}), Shown("b", "2026-11-21T00:00:00Z", {"seeds": [0, 1]})
    assert source_first([a, b, per_seed], 1)[0] is b and source_first([a, b, per_seed], 0)[0] is a


def test_every_committed_board_names_the_source_a_rebuild_would_take() -> None:
    """A board's stand-in seeds name the board whose values they show; a rebuild takes them from the same board."""
    shown = published_variants(RESULTS)
    wrong = []
    for (task, digest), boards in shown.items():
        for s in boards:
            for name, seeds in (s.variant.get("published_seeds") or {}).items():
                for seed in seeds:
                    showing = [o for o in boards if seed in (o.variant.get("seeds") or [])]
                    source = source_first(showing, seed)[0].board
                    if source != name:
                        wrong.append(f"{s.board}: {task} {digest} seed {seed} from {name}, a rebuild: {source}")
    assert wrong == []


def test_a_stand_in_keeps_the_wall_time_it_was_published_with() -> None:
    """results/lm/ is its own source and has grown from 3 seeds to 5: its stand-in seeds keep their share of the
    3-seed board's wall time (as lm/dyt-tuned shows it), not a fifth of today's sum, which would grow at every rebuild."""
    shown = published_variants(RESULTS)[("lm", "457fc5b2c93d")]
    source, then = shown[0], next(s for s in shown if s.board == "lm/dyt-tuned")
    assert source.board == "lm" and source.variant["seeds"] == [0, 1, 2, 3, 4] and then.variant["seeds"] == [0, 1, 2]
    wall = stand_in_wall_time("lm", "457fc5b2c93d", source.variant, Archive(RESULTS))
    assert abs(3 * wall - then.variant["provenance"]["wall_time_s"]) < 0.1


def test_a_stand_in_of_a_board_that_grew_takes_the_provenance_of_its_published_seeds() -> None:
    """results/lm/ published LayerNorm's seeds 0-2 and grew to 5 seeds from archived records: its provenance lists
    join both; the stand-ins take that of a board that showed their values alone (lm/dyt-tuned), and a join joined
    again stays as it is."""
    archive, digest = Archive(RESULTS), "457fc5b2c93d"
    showing = source_first([s for s in published_variants(RESULTS)[("lm", digest)] if 0 in s.variant["seeds"]], 0)
    assert showing[0].board == "lm"
    provenance = stand_in_provenance("lm", digest, showing, archive)
    assert provenance["git_commits"] == ["d41580d43369af194e2a128ffb03df0c0392d4e2"]
    assert one_of(["a + b", "b"]) == "a + b" and one_of(["a"]) == "a" and one_of([]) == "unknown"


def test_without_a_board_of_its_seeds_alone_a_grown_board_gives_what_its_archived_seeds_did_not_bring() -> None:
    archive, digest = Archive(RESULTS), "d17b6d5cce87"  # pre/project: no other board took results/lm/'s seeds 0-2
    showing = source_first([s for s in published_variants(RESULTS)[("lm", digest)] if 0 in s.variant["seeds"]], 0)
    provenance = stand_in_provenance("lm", digest, showing, archive)
    assert provenance["git_commits"] == ["d41580d43369af194e2a128ffb03df0c0392d4e2"]
    assert provenance["torch"] == ["2.14.1+cu130"] and provenance["devices"] == ["cpu"]  # cpu: shared, kept


def listed_runs() -> list[tuple[str, str, int]]:
    archive, out = Archive(RESULTS), []
    for path in sorted((RESULTS / "archive").glob("*/published.json")):
        runs = archive.published_runs(path.parent.name)
        out += [(path.parent.name, digest, int(seed)) for digest, seeds in runs.items() for seed in seeds]
    return out


def test_every_run_published_before_the_archive_has_its_values_kept_in_the_archive() -> None:
    archive = Archive(RESULTS)
    runs = listed_runs()
    assert len(runs) > 100
    assert [r for r in runs if archive.published_values(*r) is None] == []


def test_the_archive_never_forgets_a_run_published_before_it() -> None:
    """Append-only: every run whose published values the archive keeps stays listed in its task's published.json,
    even after its boards moved on to other runs (the superseded SST-2 matrix runs no board shows any more)."""
    kept = {
        (p.parts[-4], p.parts[-3], int(p.parts[-2].removeprefix("seed")))
        for p in (RESULTS / "archive").glob("*/*/seed*/published-values.json")
    }
    assert len(kept) > 100
    assert sorted(kept - set(listed_runs())) == []


def test_every_board_shows_the_kept_values_of_a_run_published_before_the_archive() -> None:
    """One run, one result: a board that shows such a run shows, seed by seed, the values kept for it."""
    archive, wrong = Archive(RESULTS), []
    for (task, digest), boards in published_variants(RESULTS).items():
        for shown in boards:
            seeds = list(shown.variant.get("seeds") or [])
            for i, seed in enumerate(seeds):
                kept = (
                    archive.published_values(task, digest, int(seed))
                    if archive.published_elsewhere(task, digest, int(seed))
                    else None
                )
                for metric, agg in (shown.variant.get("metrics") or {}).items() if kept else ():
                    value = (agg.get("per_seed") or [None] * len(seeds))[i]
                    was = (kept["published"]["values"].get(metric) or [None])[0]
                    if value is not None and value != was:
                        wrong.append(f"{shown.board} {digest} seed {seed} {metric}: {value} shown, {was} kept")
    assert wrong == []


def test_a_build_reads_the_kept_values_and_no_board(tmp_path: Path, monkeypatch) -> None:  # noqa: ANN001
    from normbench.boards import published

    archive = Archive(RESULTS)
    task, digest, seed = "lm", "457fc5b2c93d", 0
    monkeypatch.setattr(published, "published_variants", lambda *a: (_ for _ in ()).throw(AssertionError("read")))
    run = SimpleNamespace(variant="pre/both", seed=seed, record_path=None, config_hash=digest, config={"x": 1})
    (record,) = published.stand_ins(task, [run], archive)
    assert record["config"] == {"x": 1} and record["variant"] == "pre/both" and record["series"] == {}
    assert record["published"] == archive.published_values(task, digest, seed)["published"]
    assert record["provenance"]["git_commit"] == "d41580d43369af194e2a128ffb03df0c0392d4e2"


@pytest.mark.slow  # copies the whole run archive and the language-model boards: half a minute
def test_keeping_the_values_writes_each_listed_run_once(tmp_path: Path) -> None:
    from normbench.boards.published import keep_published_values

    cards = [p.relative_to(RESULTS).as_posix() for p in sorted((RESULTS / "cards").glob("*/lm"))]  # cards' LM boards
    for part in ("archive", "lm", *cards):  # the LM boards that published the runs, and the archive
        shutil.copytree(RESULTS / part, tmp_path / "results" / part, ignore=shutil.ignore_patterns("*.png"))
    archive = Archive(tmp_path / "results")
    for path in (tmp_path / "results" / "archive" / "lm").rglob("published-values.json"):
        path.unlink()
    written = keep_published_values("lm", archive)
    assert written and all(p.name == "published-values.json" for p in written)
    for path in written:
        relative = path.relative_to(tmp_path)
        kept, committed = json.loads(path.read_text()), json.loads((RESULTS.parent / relative).read_text())
        # the same values; a stand-in's wall time (the board's sum less its archived seeds', shared by the rest) may
        # differ in its last bit as the board's sum was taken over other seeds
        assert kept.pop("wall_time_s") == pytest.approx(committed.pop("wall_time_s"), rel=1e-12)
        # a board built since may show metrics the run never measured: they are added without a value and with a
        # note ("not measured on ..."); no value and no note of the kept file changes
        for field, unmeasured in (
            ("values", lambda v: all(x is None for x in v)),
            ("notes", lambda v: "not measured" in v),
        ):
            now, then = kept["published"].pop(field, {}), committed["published"].pop(field, {})
            assert {k: v for k, v in now.items() if k in then} == then
            assert all(unmeasured(v) for k, v in now.items() if k not in then)
        assert kept == committed
    assert keep_published_values("lm", archive) == []  # kept once
