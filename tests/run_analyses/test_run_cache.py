"""Per-run analyses read a run's final checkpoint: a missing or broken one is one line naming it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from normbench.run_analyses.decomposition import with_decomposition
from normbench.training.run.loading import load_run
from normbench.training.run.records import read_record
from tests.tiny_runs import copy_of


def test_a_missing_final_checkpoint_is_named_not_an_empty_column(tiny_sweep: Path, tmp_path: Path) -> None:
    _, run = copy_of(tiny_sweep, tmp_path)
    record = {**read_record(run / "record.json"), "record_path": str(run / "record.json")}
    (run / "decomposition.json").unlink(missing_ok=True)
    (run / "checkpoints" / "last.ckpt").unlink()
    with pytest.raises(
        ValueError, match=r"checkpoint .*/last\.ckpt: missing \(the final checkpoint of .*record\.json\)"
    ):
        with_decomposition([record], 8)


@pytest.mark.parametrize("content", [b"", b"garbage" * 50, None])
def test_a_broken_checkpoint_is_one_line(tiny_sweep: Path, tmp_path: Path, content: bytes | None) -> None:
    """`normbench analyze decompose --ckpt ...` and every cached analysis load a run through ``load_run``."""
    _, run = copy_of(tiny_sweep, tmp_path)
    ckpt = run / "checkpoints" / "last.ckpt"
    ckpt.write_bytes(ckpt.read_bytes()[:2000] if content is None else content)
    with pytest.raises(ValueError) as err:
        load_run(ckpt)
    assert str(err.value).startswith(f"checkpoint {ckpt}: unreadable") and "\n" not in str(err.value)
    assert json.loads((run / "record.json").read_text())["status"] == "done"


def test_a_record_without_its_checkpoint_field_says_so_on_the_board(tiny_sweep: Path, tmp_path: Path) -> None:
    """A finished run whose record names no final checkpoint: its checkpoint analyses read "no final checkpoint",
    not "not logged by this variant"; a series of another kind keeps that note."""
    from normbench.boards.variants import variant_entry

    _, run = copy_of(tiny_sweep, tmp_path)
    record = {**read_record(run / "record.json"), "record_path": str(run / "record.json")}
    del record["checkpoint"]
    metrics = {
        "dec": {"series": "decomposition/output/i", "at_step": "last"},
        "other": {"series": "val/nothing", "at_step": "last"},
    }
    entry = variant_entry("pre/both", with_decomposition([record], 8), metrics)
    assert entry["metrics"]["dec"]["note"].startswith(
        "not measured: the run record of seed 0 names no final checkpoint"
    )
    assert entry["metrics"]["other"]["note"] == "not logged by this variant (no series val/nothing)"
