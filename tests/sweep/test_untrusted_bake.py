"""A bake counts a run done only when its archived record reads back and passes the check a leaderboard makes of it;
a full disk while it archives is one line naming the file, and the next bake archives the run; a run its bake trained
from the start (its archived checkpoint did not load) claims no earlier segment."""

from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path

import pytest

from normbench.archive.replicate import RECORD
from normbench.archive.store import Archive
from normbench.sweep.bake import bake
from normbench.sweep.baking.queue import load_queue, survey
from normbench.sweep.options import BakeOptions
from tests.archive.test_untrusted_archive import full_disk_at
from tests.sweep.test_bake import queue_file
from tests.tiny_runs import sweep_args, tiny_config


@pytest.fixture(scope="module")
def baked(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder whose tiny queue (one run) a bake trained into ``results/archive``; tests copy it."""
    root = tmp_path_factory.mktemp("baked")
    queue = queue_file(root, tiny_config(root), seeds="0")
    bake(
        str(queue),
        BakeOptions(
            workers=1, nice=0, runs_dir=str(root / "runs"), results_dir=str(root / "results"), uncommitted=True
        ),
    )
    return root


def copied(baked: Path, tmp_path: Path) -> tuple[Path, Path]:
    """The baked folder's queue and results, copied under ``tmp_path`` (its runs left behind)."""
    shutil.copytree(baked / "results", tmp_path / "results")
    queue = queue_file(tmp_path, tiny_config(tmp_path), seeds="0")
    return queue, tmp_path / "results"


def test_a_record_that_no_longer_hashes_to_its_config_is_not_counted_done(baked: Path, tmp_path: Path, capsys) -> None:  # noqa: ANN001
    from normbench.boards.build import load_records

    queue, results = copied(baked, tmp_path)
    (rep,) = Archive(results).runs("majority")
    record = json.loads(gzip.decompress(rep.record_path.read_bytes()))
    record["config"]["trainer"]["max_steps"] = 7  # edited: its config_hash field no longer its config's
    rep.record_path.write_bytes(gzip.compress(json.dumps(record).encode(), mtime=0))
    with pytest.raises(ValueError, match="is not the hash of its config") as refused:
        load_records([rep.record_path], [rep.config_hash])  # what a leaderboard reads
    (slot,) = survey(load_queue(queue), Archive(results), str(tmp_path / "runs"), restore=False)
    assert slot.state == "refused"
    report = bake(
        str(queue),
        BakeOptions(workers=1, nice=0, runs_dir=str(tmp_path / "runs"), results_dir=str(results), uncommitted=True),
    )
    assert (report.finished_before, report.finished_now, report.refused) == (0, 0, 1)
    out = capsys.readouterr()
    assert str(refused.value).split(";")[0] in out.err  # the same check, the same line
    assert "0 of 1 queued runs finished (0 now), 1 archived but refused" in out.out and "queue is done" not in out.out
    assert not (tmp_path / "runs").exists()  # not trained again: the archive keeps its first replicate


def test_a_full_disk_while_archiving_is_one_line_and_the_next_bake_archives_the_run(
    tmp_path: Path, monkeypatch, normbench_in_process
) -> None:  # noqa: ANN001
    queue = queue_file(tmp_path, tiny_config(tmp_path), seeds="0")
    args = ("bake", "--queue", str(queue), "--workers", "1", "--nice", "0", "--uncommitted", "true",
            "--runs_dir", str(tmp_path / "runs"), "--results_dir", str(tmp_path / "results"))  # fmt: skip
    full_disk_at(monkeypatch, RECORD)
    out = normbench_in_process(*args, cwd=tmp_path)
    (seed,) = (tmp_path / "results" / "archive" / "majority").glob("*/seed0")
    (replicate,) = [p for p in seed.iterdir() if p.is_dir()]
    assert out.returncode == 1
    assert out.stderr.strip().splitlines()[-1] == (
        f"normbench: error: {replicate / RECORD}: No space left on device (that file is left as it was)"
    )
    assert not (replicate / RECORD).exists() and not list(replicate.glob(".*.tmp"))
    monkeypatch.undo()  # space freed
    out = normbench_in_process(*args, cwd=tmp_path)
    assert out.returncode == 0, out.stderr[-2000:]
    assert "1 of 1 queued runs finished (1 now); the queue is done" in out.stdout
    (rep,) = Archive(tmp_path / "results").runs("majority")
    assert rep.record()["status"] == "done" and rep.record_path == replicate / RECORD


def test_a_run_trained_from_the_start_after_its_checkpoint_did_not_load_claims_no_earlier_segment(
    tmp_path: Path, monkeypatch, capsys
) -> None:  # noqa: ANN001
    from normbench.cli import main
    from normbench.training.stopping.deadline import STOP_AT

    config = tiny_config(tmp_path)
    monkeypatch.setenv(STOP_AT, "0")  # stopped after its first step: interrupted, with its checkpoint
    with pytest.raises(SystemExit):
        main(sweep_args(config, tmp_path / "first"))
    monkeypatch.delenv(STOP_AT)
    (started,) = (tmp_path / "first" / "runs" / "majority").glob("*/seed0")
    archive = Archive(tmp_path / "results")
    rep, _ = archive.add(started, checkpoint=True)
    rep.checkpoint.write_bytes(b"not a checkpoint")  # it does not load: the run starts from the beginning
    queue = queue_file(tmp_path, config, seeds="0")
    report = bake(
        str(queue),
        BakeOptions(
            workers=1, nice=0, runs_dir=str(tmp_path / "runs"), results_dir=str(tmp_path / "results"), uncommitted=True
        ),
    )
    assert report.finished_now == 1 and "continued" not in report.archived, report.archived
    done = archive.canonical("majority", rep.config_hash, 0)
    record = done.record()
    assert record["status"] == "done" and len(record.get("segments") or [None]) == 1
    assert "1 continued" not in capsys.readouterr().out
