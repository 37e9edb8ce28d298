"""The run archive: replicates per platform, append-only, a canonical replicate, unfinished runs continued."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from normbench.archive.files.reading import ArchiveError
from normbench.archive.replicate import CHECKPOINT, FINISHED, RECORD, segment, steps_done
from normbench.archive.store import Archive
from normbench.training.run.records import read_record

CPU = {"cpu": "AMD EPYC", "cpu_capability": "AVX2", "threads": 1, "gpu": None}
INTEL = {"cpu": "Intel(R) Xeon(R) Processor", "cpu_capability": "AVX512", "threads": 1, "gpu": None}
GPU = {"cpu": "Intel(R) Xeon(R) Processor", "cpu_capability": "AVX512", "threads": 4, "gpu": "NVIDIA H200"}


def run_dir(tmp_path: Path, name: str, platform: dict, loss: float = 0.5, status: str = "done", step: int = 10) -> Path:
    """A run directory holding a minimal record of run (majority, abc123, seed 0)."""
    folder = tmp_path / name
    folder.mkdir(parents=True)
    record = {
        "task": "majority",
        "variant": "pre/both",
        "seed": 0,
        "config_hash": "abc123",
        "status": status,
        "provenance": {"git_commit": "f" * 40, "dirty": False, "threads": platform["threads"], "platform": platform},
        "series": {"train/loss_step": [[step, loss]]},
    }
    if status == "done":
        record["final_step"] = step
    (folder / "record.json").write_text(json.dumps(record))
    return folder


def test_the_first_finished_replicate_is_canonical_and_another_platform_adds_one_beside_it(tmp_path: Path) -> None:
    archive = Archive(tmp_path / "results")
    first, outcome = archive.add(run_dir(tmp_path, "a", CPU, 0.5))
    assert outcome == "added"
    second, outcome = archive.add(run_dir(tmp_path, "b", INTEL, 0.51))
    assert outcome == "added" and second.name != first.name
    assert archive.canonical("majority", "abc123", 0) == first
    assert [r.name for r in archive.replicates("majority", "abc123", 0)] == sorted([first.name, second.name])
    # a maintainer may choose another canonical replicate
    (archive.seed_dir("majority", "abc123", 0) / "canonical").write_text(second.name + "\n")
    assert archive.canonical("majority", "abc123", 0) == second


def test_the_same_numbers_again_add_nothing_and_other_numbers_never_replace_a_replicate(tmp_path: Path) -> None:
    archive = Archive(tmp_path / "results")
    first, _ = archive.add(run_dir(tmp_path, "a", CPU, 0.5))
    before = first.record_path.read_bytes()
    assert archive.add(run_dir(tmp_path, "b", CPU, 0.5))[1] == "same"
    kept, outcome = archive.add(run_dir(tmp_path, "c", CPU, 0.25))
    assert outcome == "kept" and kept.name == f"{first.name}-2"
    assert first.record_path.read_bytes() == before
    assert archive.canonical("majority", "abc123", 0) == first


def test_the_same_run_trained_again_brings_the_analyses_its_replicate_lacks_and_replaces_none(tmp_path: Path) -> None:
    archive = Archive(tmp_path / "results")
    first, _ = archive.add(run_dir(tmp_path, "a", CPU, 0.5))  # archived before its analyses were computed
    again = run_dir(tmp_path, "b", CPU, 0.5)
    (again / "key_sets.json").write_text('{"new": 1}')
    (again / "decomposition.json").write_text('{"new": 1}')
    (first.path / "decomposition.json").write_text('{"first": 1}')
    assert archive.add(again)[1] == "same"
    assert (first.path / "key_sets.json").read_text() == '{"new": 1}'
    assert (first.path / "decomposition.json").read_text() == '{"first": 1}'
    other = run_dir(tmp_path, "c", CPU, 0.25)  # other numbers: its analyses are not this replicate's
    (other / "head_keys.json").write_text("{}")
    archive.add(other)
    assert not (first.path / "head_keys.json").exists()


def test_records_are_gzipped_deterministically_and_read_as_archived(tmp_path: Path) -> None:
    one, _ = Archive(tmp_path / "r1").add(run_dir(tmp_path, "a", CPU))
    two, _ = Archive(tmp_path / "r2").add(run_dir(tmp_path, "b", CPU))
    assert one.record_path.read_bytes() == two.record_path.read_bytes()
    assert json.loads(gzip.decompress(one.record_path.read_bytes()))["seed"] == 0
    assert read_record(one.record_path)["archived"] is True


def test_a_record_without_its_identity_is_refused_in_one_line(tmp_path: Path) -> None:
    folder = run_dir(tmp_path, "a", CPU)
    record = json.loads((folder / "record.json").read_text())
    del record["config_hash"]
    (folder / "record.json").write_text(json.dumps(record))
    with pytest.raises(ArchiveError, match="lacks config_hash"):
        Archive(tmp_path / "results").add(folder)


def test_an_unfinished_run_continued_elsewhere_names_both_platforms(tmp_path: Path) -> None:
    import torch

    archive = Archive(tmp_path / "results")
    started = run_dir(tmp_path, "gpu", GPU, status="interrupted", step=120)
    (started / "checkpoints").mkdir()
    torch.save({"global_step": 100}, started / "checkpoints" / "last.ckpt")
    rep, outcome = archive.add(started, checkpoint=True)
    assert outcome == "added" and rep.checkpoint.is_file()
    assert steps_done(rep.record()) == 100  # where it continues from: its checkpoint, not its last logged point
    assert archive.in_progress("majority", "abc123", 0) == rep and archive.canonical("majority", "abc123", 0) is None
    here = tmp_path / "here"
    archive.restore(rep, here)
    assert (here / "checkpoints" / "last.ckpt").is_file()
    # the run finishes on a CPU from that checkpoint: its record replaces the unfinished one, naming both platforms
    record = json.loads((here / "record.json").read_text())
    earlier = [{**segment(record), "to_step": 100}]  # as the trainer's record names the segment it resumed
    record.update(status="done", final_step=200, provenance={**record["provenance"], "threads": 1, "platform": CPU})
    record.pop("checkpoint_step")
    record["segments"] = [*earlier, segment(record)]
    (here / "record.json").write_text(json.dumps(record))
    done, outcome = archive.add(here, checkpoint=True)
    assert outcome == "continued" and done.name == rep.name
    assert [s["platform"] for s in done.record()["segments"]] == ["gpu-nvidia-h200", "cpu-amd-epyc-avx2-t1"]
    assert not done.checkpoint.is_file()  # finished: no checkpoint kept
    assert archive.canonical("majority", "abc123", 0) == done


def test_a_run_published_before_the_archive_keeps_its_board_values_canonical(tmp_path: Path) -> None:
    archive = Archive(tmp_path / "results")
    (archive.root / "majority").mkdir(parents=True)
    (archive.root / "majority" / "published.json").write_text(json.dumps({"runs": {"abc123": [0]}}))
    rep, _ = archive.add(run_dir(tmp_path, "a", CPU))
    assert archive.published_elsewhere("majority", "abc123", 0)
    assert archive.canonical("majority", "abc123", 0) is None  # a replicate beside the published values
    (archive.seed_dir("majority", "abc123", 0) / "canonical").write_text(rep.name)
    assert archive.canonical("majority", "abc123", 0) == rep  # unless a maintainer names it


def test_every_published_run_is_listed_or_archived() -> None:
    results = Path(__file__).parents[2] / "results"
    archive = Archive(results)
    for path in results.rglob("leaderboard.json"):
        board = json.loads(path.read_text())
        for v in board.get("variants") or []:
            for seed in v.get("seeds") or []:
                known = archive.published_elsewhere(board["task"], v["config_hash"], seed)
                assert known or archive.canonical(board["task"], v["config_hash"], seed), (path, v["name"], seed)


def test_a_committed_replicate_keeps_a_checkpoint_only_while_its_run_is_unfinished() -> None:
    """A finished run's weights live on only in its analyses: a checkpoint left beside a finished record is weight
    the archive carries for nothing (and a reader could take it for a run still to continue)."""
    archive = Archive(Path(__file__).resolve().parents[2] / "results")
    stale = [
        str(ckpt.relative_to(archive.root))
        for ckpt in sorted(archive.root.glob(f"*/*/seed*/*/{CHECKPOINT}"))
        if read_record(ckpt.parent / RECORD).get("status") in FINISHED
    ]
    assert not stale, f"checkpoints beside finished records: {stale}"
