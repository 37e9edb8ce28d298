"""The run archive as untrusted input and as a careful writer: malformed files are one line naming the file, a link is
never followed, a full disk leaves no half-written record, the first replicate added stays canonical, a run trained
from the start claims no earlier segment, and no absolute local path is archived in an analysis."""

from __future__ import annotations

import errno
import gzip
import json
import os
from pathlib import Path

import pytest

from normbench.archive import maintain
from normbench.archive.files.reading import MAX_DEPTH, ArchiveError, Unreadable, read_json
from normbench.archive.record import load_record
from normbench.archive.replicate import RECORD, segment
from normbench.archive.store import CANONICAL, Archive
from tests.archive.test_store import CPU, GPU, INTEL, run_dir

AVX512 = {**CPU, "cpu_capability": "AVX512"}  # cpu-amd-epyc-avx512-t1, which sorts after cpu-amd-epyc-avx2-t1


def archived(tmp_path: Path, platform: dict = CPU, **kwargs) -> tuple[Archive, Path]:
    """An archive holding one finished replicate of run (majority, abc123, seed 0); its record's path."""
    archive = Archive(tmp_path / "results")
    rep, _ = archive.add(run_dir(tmp_path, f"run-{platform['cpu_capability']}", platform, **kwargs))
    return archive, rep.record_path


def one_line_naming(exc: pytest.ExceptionInfo, path: Path) -> str:
    message = str(exc.value)
    assert "\n" not in message and str(path) in message, message
    return message


# malformed files


def test_a_truncated_record_is_one_line_naming_it(tmp_path: Path) -> None:
    archive, path = archived(tmp_path)
    path.write_bytes(path.read_bytes()[:-20])
    for read in (lambda: archive.canonical("majority", "abc123", 0).record(), lambda: load_record(path)):
        with pytest.raises(ArchiveError) as info:
            read()
        assert "truncated" in one_line_naming(info, path)


@pytest.mark.parametrize("depth", [MAX_DEPTH + 1, 200_000])
def test_a_deeply_nested_record_or_analysis_is_one_line_naming_it(tmp_path: Path, depth: int) -> None:
    from normbench.training.run.verify import check_archived

    archive, path = archived(tmp_path)
    nested = ("[" * depth + "]" * depth).encode()
    path.write_bytes(gzip.compress(b'{"status": "done", "series": {}, "deep": ' + nested + b"}", mtime=0))
    with pytest.raises(ArchiveError) as info:
        load_record(path)
    assert "nested" in one_line_naming(info, path)
    archive, path = archived(tmp_path / "b")
    decomposition = path.parent / "decomposition.json"
    decomposition.write_bytes(nested)
    with pytest.raises(Unreadable) as info:
        read_json(decomposition)
    assert "nested" in one_line_naming(info, decomposition)
    (rep,) = archive.replicates("majority", "abc123", 0)
    with pytest.raises(ValueError) as info:  # the check a bake counts a run done by reads its analyses too
        check_archived(rep)
    one_line_naming(info, decomposition)


def test_a_record_that_decompresses_past_the_limit_is_refused_without_reading_it_all(tmp_path: Path) -> None:
    archive, path = archived(tmp_path)
    bomb = gzip.compress(b'{"status": "done", "series": {}, "x": "' + b"0" * (80 * 2**20) + b'"}', mtime=0)
    assert len(bomb) < 2**20  # a small file
    path.write_bytes(bomb)
    with pytest.raises(ArchiveError) as info:
        archive.canonical("majority", "abc123", 0).record()
    assert "decompresses to over 64 MiB" in one_line_naming(info, path)


def test_a_replicate_folder_that_links_out_of_the_archive_is_not_followed(tmp_path: Path) -> None:
    archive, path = archived(tmp_path)
    outside = tmp_path / "outside" / "cpu-elsewhere"
    outside.mkdir(parents=True)
    (outside / RECORD).write_bytes(path.read_bytes())
    link = path.parent.parent / "cpu-elsewhere"
    link.symlink_to(outside, target_is_directory=True)
    with pytest.raises(Unreadable) as info:
        archive.replicates("majority", "abc123", 0)
    assert "symbolic link" in one_line_naming(info, link)
    link.unlink()
    (path.parent.parent / CANONICAL).unlink()
    (path.parent.parent / CANONICAL).symlink_to(tmp_path / "outside" / "name")
    with pytest.raises(Unreadable, match="symbolic link"):
        archive.canonical("majority", "abc123", 0)


# a full disk


def full_disk_at(monkeypatch: pytest.MonkeyPatch, name: str) -> None:
    """Every archive write of a file called ``name`` fails with ENOSPC after writing some of it."""
    from normbench.archive.files import writing

    real = writing.atomic_write

    def write(path, fill):  # noqa: ANN001, ANN202
        if Path(path).name != name:
            return real(path, fill)

        def partial(tmp: Path) -> None:
            fill(tmp)
            with open(tmp, "r+b") as f:
                f.truncate(max(1, os.path.getsize(tmp) // 2))
            raise OSError(errno.ENOSPC, "No space left on device")

        return real(path, partial)

    monkeypatch.setattr(writing, "atomic_write", write)


def test_a_full_disk_names_the_record_and_leaves_no_half_written_replicate(tmp_path: Path, monkeypatch) -> None:  # noqa: ANN001
    folder = run_dir(tmp_path, "a", CPU)
    (folder / "decomposition.json").write_text('{"layers": {}}')
    archive = Archive(tmp_path / "results")
    full_disk_at(monkeypatch, RECORD)
    with pytest.raises(OSError) as info:
        archive.add(folder)
    target = archive.seed_dir("majority", "abc123", 0) / "cpu-amd-epyc-avx2-t1" / RECORD
    assert info.value.errno == errno.ENOSPC and info.value.filename == str(target)
    assert not target.exists() and not list(target.parent.glob(".*tmp"))
    assert archive.replicates("majority", "abc123", 0) == [] and archive.canonical("majority", "abc123", 0) is None
    monkeypatch.undo()
    rep, outcome = archive.add(folder)  # space freed: the same run is archived whole
    assert outcome == "added" and rep.record()["status"] == "done"


# canonical: the first added


def test_the_first_replicate_added_stays_canonical_whatever_its_name(tmp_path: Path) -> None:
    archive = Archive(tmp_path / "results")
    first, _ = archive.add(run_dir(tmp_path, "a", AVX512, 0.5))
    assert (archive.seed_dir("majority", "abc123", 0) / CANONICAL).read_text() == f"{first.name}\n"
    later, outcome = archive.add(run_dir(tmp_path, "b", CPU, 0.51))
    assert outcome == "added" and later.name < first.name  # avx2 sorts first
    assert Archive(tmp_path / "results").canonical("majority", "abc123", 0) == first


def test_an_unfinished_first_replicate_is_not_canonical_until_a_replicate_finishes(tmp_path: Path) -> None:
    import torch

    archive = Archive(tmp_path / "results")
    started = run_dir(tmp_path, "gpu", GPU, status="interrupted", step=120)
    (started / "checkpoints").mkdir()
    torch.save({"global_step": 100}, started / "checkpoints" / "last.ckpt")
    archive.add(started, checkpoint=True)
    assert not (archive.seed_dir("majority", "abc123", 0) / CANONICAL).exists()
    done, _ = archive.add(run_dir(tmp_path, "intel", INTEL))
    assert (archive.seed_dir("majority", "abc123", 0) / CANONICAL).read_text() == f"{done.name}\n"


def test_an_older_folder_keeps_the_replicate_it_shows_and_the_maintainer_writes_it_out(tmp_path: Path) -> None:
    archive = Archive(tmp_path / "results")
    archive.add(run_dir(tmp_path, "a", AVX512, 0.5))
    archive.add(run_dir(tmp_path, "b", INTEL, 0.51))
    seed = archive.seed_dir("majority", "abc123", 0)
    (seed / CANONICAL).unlink()  # as an archive written before the order of addition was recorded
    shown = archive.canonical("majority", "abc123", 0).name
    assert maintain.unpinned(archive) == [(seed, shown)]
    archive.add(run_dir(tmp_path, "c", CPU, 0.52))  # a later replicate that sorts first: today's choice is kept
    assert archive.canonical("majority", "abc123", 0).name == shown
    (seed / CANONICAL).unlink()
    assert maintain.pin(archive) == [seed / CANONICAL] and (seed / CANONICAL).read_text() == "cpu-amd-epyc-avx2-t1\n"
    assert maintain.unpinned(archive) == []


# segments


def restored_unfinished(tmp_path: Path, archive: Archive, platform: dict) -> Path:
    """An unfinished replicate with a checkpoint that does not load, restored into a run folder; that folder."""
    import torch

    started = run_dir(tmp_path, f"started-{platform['cpu_capability']}", platform, status="interrupted", step=120)
    (started / "checkpoints").mkdir()
    torch.save({"global_step": 100}, started / "checkpoints" / "last.ckpt")
    rep, _ = archive.add(started, checkpoint=True)
    rep.checkpoint.write_bytes(b"not a checkpoint")
    return archive.restore(rep, tmp_path / f"here-{platform['cpu_capability']}")


def trained_from_the_start(here: Path, platform: dict) -> None:
    """What the run folder holds after its sweep found the checkpoint unreadable and trained the run afresh."""
    fresh = json.loads(
        run_dir(here.parent, f"fresh-{here.name}", platform, step=200).joinpath("record.json").read_text()
    )
    (here / "record.json").write_text(json.dumps(fresh))
    (here / "checkpoints" / "last.ckpt").unlink()


@pytest.mark.parametrize(("platform", "expected"), [(CPU, "added"), (GPU, "restarted")])
def test_a_run_restarted_from_the_start_claims_no_earlier_segment(
    tmp_path: Path, platform: dict, expected: str
) -> None:
    archive = Archive(tmp_path / "results")
    here = restored_unfinished(tmp_path, archive, GPU)
    trained_from_the_start(here, platform)
    rep, outcome = archive.add(here, checkpoint=True)
    assert outcome == expected
    record = rep.record()
    assert record["status"] == "done" and record.get("segments") in (None, [segment(record)])
    assert archive.in_progress("majority", "abc123", 0) is None  # the checkpoint that did not load is gone


# local paths


def test_an_analysis_is_archived_with_no_absolute_local_path_and_old_ones_still_read(tmp_path: Path) -> None:
    from normbench.run_analyses.run_cache import read_cached

    runs = tmp_path / "bake" / "runs"
    folder = runs / "majority" / "pre-both-abc123" / "seed0"
    folder.parent.mkdir(parents=True)
    run_dir(folder.parent, "seed0", CPU)
    doc = {"run": str(folder), "checkpoint": str(folder / "checkpoints" / "last.ckpt"), "sequences_requested": 4}
    (folder / "decomposition.json").write_text(json.dumps(doc, indent=2) + "\n")
    archive = Archive(tmp_path / "results")
    rep, _ = archive.add(folder)
    kept = json.loads((rep.path / "decomposition.json").read_text())
    assert kept == {**doc, "run": "runs/majority/pre-both-abc123/seed0",
                    "checkpoint": "runs/majority/pre-both-abc123/seed0/checkpoints/last.ckpt"}  # fmt: skip
    assert str(tmp_path) not in (rep.path / "decomposition.json").read_text()
    (rep.path / "decomposition.json").write_text(json.dumps(doc))  # as archived before
    assert read_cached(rep.path / "decomposition.json", {"sequences_requested": 4}) == doc
    assert maintain.with_local_paths(archive) == [rep.path / "decomposition.json"]
    maintain.localise(archive)
    assert json.loads((rep.path / "decomposition.json").read_text()) == kept
    assert maintain.with_local_paths(archive) == []


def test_a_record_of_a_run_trained_under_an_absolute_runs_dir_is_archived_local(tmp_path: Path) -> None:
    """A record's ``log_dir``, ``checkpoint`` and ``config.runs_dir`` are where the run was trained: none is part of
    its identity, so the archive keeps them local, the maintainer rewrites an older record's, and the run keeps its
    config hash and its numbers."""
    runs = tmp_path / "bake" / "runs"
    folder = runs / "majority" / "pre-both-abc123" / "seed0"
    folder.parent.mkdir(parents=True)
    run_dir(folder.parent, "seed0", CPU)
    record = json.loads((folder / "record.json").read_text())
    record |= {"log_dir": str(folder), "checkpoint": str(folder / "checkpoints" / "last.ckpt"),
               "config": {"runs_dir": str(runs), "seed_everything": 0}}  # fmt: skip
    (folder / "record.json").write_text(json.dumps(record))
    archive = Archive(tmp_path / "results")
    rep, _ = archive.add(folder)
    assert rep.record()["log_dir"] == "runs/majority/pre-both-abc123/seed0"  # archived local: nothing to maintain
    assert maintain.records_with_local_paths(archive) == []
    from normbench.archive.files.writing import write_gzip_json

    write_gzip_json(rep.record_path, {**rep.record(), **record})  # as archived before records were made local
    published = rep.path.parent / "published-values.json"  # values a board showed for a run archived before
    published.write_text(json.dumps({"status": "done", "log_dir": str(folder)}, indent=2) + "\n")
    assert maintain.records_with_local_paths(archive) == [rep.record_path, published]
    assert maintain.localise_records(archive) == [rep.record_path, published]
    kept = rep.record()
    assert kept["log_dir"] == "runs/majority/pre-both-abc123/seed0"
    assert kept["checkpoint"] == "runs/majority/pre-both-abc123/seed0/checkpoints/last.ckpt"
    assert kept["config"] == {"runs_dir": "runs", "seed_everything": 0}
    assert (kept["config_hash"], kept["series"]) == (record["config_hash"], record["series"])
    assert json.loads(published.read_text()) == {"status": "done", "log_dir": "runs/majority/pre-both-abc123/seed0"}
    assert maintain.records_with_local_paths(archive) == []


def test_a_board_naming_its_runs_by_absolute_paths_is_rewritten_local_and_nothing_else(tmp_path: Path) -> None:
    """A board built before boards named runs as the archive does keeps its values; only ``log_dirs`` change."""
    from normbench.archive import dumps_board, load_board, parse_board
    from tests.factories import make_board, make_variant

    absolute = "/work/bake/runs/majority/pre-both-abc/seed0"
    variant = make_variant("pre/both", [0], provenance={"log_dirs": [absolute, "runs/majority/pre-both-abc/seed1"]})
    board = tmp_path / "majority" / "leaderboard.json"
    board.parent.mkdir()
    board.write_text(dumps_board(parse_board(make_board([variant]))), encoding="utf-8")
    (tmp_path / "archive").mkdir()
    assert maintain.boards_with_local_paths(tmp_path) == [board]
    before = load_board(board)
    assert maintain.localise_boards(tmp_path) == [board]
    after = load_board(board)
    assert after.variants[0].provenance["log_dirs"] == [
        "runs/majority/pre-both-abc/seed0",
        "runs/majority/pre-both-abc/seed1",
    ]
    assert after.replace(variants=before.variants) == before  # every other field as it was
    assert maintain.boards_with_local_paths(tmp_path) == []
