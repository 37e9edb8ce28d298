"""A run's own files checked: a record is matched to its run by its recomputed config hash, its series are
well formed, and a finished run's final checkpoint is readable; each fault is one line naming the file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from normbench.sweep.grid import variant_grid
from normbench.sweep.plan import quiet_lightning
from normbench.tasks import get_task
from normbench.training.cli import NormbenchCLI
from normbench.training.config import load_config
from normbench.training.run.checkpointing import checkpoint_config_hash
from normbench.training.run.records import read_record
from normbench.training.run.rundir import record_config_hash
from normbench.training.run.verify import check_record, finished_status
from tests.tiny_runs import copy_of


@pytest.mark.parametrize(
    ("task", "preset", "variants"),
    [("majority", "matrix", None), ("lm", "quick", ["pre/both", "pre/project"]), ("sst2", "quick", None)],
)
def test_a_records_config_gives_back_the_planned_hash(
    task: str, preset: str, variants: list[str] | None, tmp_path: Path
) -> None:
    """The hash recomputed from a record's config (as written: JSON) is the hash the planner gives its run."""
    config = load_config(str(get_task(task).config_path), preset)
    base = yaml.safe_dump(config, sort_keys=False)
    with quiet_lightning():
        for name, args in variant_grid(config, variants, {}, task):
            cli = NormbenchCLI(args=["--config", base, *args, "--seed_everything=0", f"--runs_dir={tmp_path}"])
            meta = json.loads(json.dumps(cli.recorder.meta))
            assert record_config_hash(meta) == cli.config_hash == meta["config_hash"], name


def write(path: Path, record: dict) -> Path:
    path.write_text(json.dumps(record))
    return path


@pytest.mark.parametrize(
    ("series", "message"),
    [
        (None, "series missing"),
        ({"train/loss_step": None}, "series 'train/loss_step' is null, not a list of points"),
        ({"test/acc": [[5, 0.1], [10]]}, "series 'test/acc' has the point [10], not [step, value]"),
        ({"test/acc": [["5", 0.1]]}, "series 'test/acc' has the point ['5', 0.1], not [step, value]"),
        ("garbage", "series is str, not a mapping"),
    ],
)
def test_a_malformed_series_is_one_line_naming_the_record(tmp_path: Path, series: object, message: str) -> None:
    record = {"status": "done"} | ({} if series is None else {"series": series})
    path = write(tmp_path / "record.json", record)
    with pytest.raises(ValueError) as err:
        read_record(path)
    assert str(err.value) == f"run record {path}: {message}"


def test_a_non_finite_value_is_a_point() -> None:
    """Strict JSON writes a non-finite value as null; old records hold a bare NaN: both are points."""
    from normbench.training.run.records import series_problem

    assert series_problem({"train/loss_step": [[1, None], [2, float("nan")], [3, 0.5], [4, 1]]}) is None


def test_an_edited_config_hash_is_named(tiny_sweep: Path, tmp_path: Path) -> None:
    _, run = copy_of(tiny_sweep, tmp_path)
    path = run / "record.json"
    record = read_record(path)
    planned = record["config_hash"]
    check_record(record, path, planned)
    assert finished_status(path, planned) == "done"
    edited = write(path, {**record, "config_hash": "0123456789ab"})
    with pytest.raises(ValueError) as err:
        finished_status(edited, planned)
    assert (
        str(err.value) == f"run record {edited}: config_hash '0123456789ab' is not the hash of its config ({planned})"
    )
    # the config edited instead (another learning rate): the record is no longer its folder's run
    config = record["config"]
    config["model"]["init_args"]["optim"]["lr"] = 0.5
    write(path, {**record, "config": config})
    with pytest.raises(ValueError, match=r"config_hash '\w+' is not the hash of its config"):
        check_record(read_record(path), path, planned)


@pytest.mark.parametrize(
    ("fault", "message"),
    [
        ("truncated", "unreadable (truncated or not a checkpoint: File is not a zip file)"),
        ("empty", "unreadable (empty file)"),
        ("garbage", "unreadable (truncated or not a checkpoint: File is not a zip file)"),
        ("deleted", "missing"),
    ],
)
def test_a_finished_runs_broken_checkpoint_is_named(tiny_sweep: Path, tmp_path: Path, fault: str, message: str) -> None:
    _, run = copy_of(tiny_sweep, tmp_path)
    ckpt = run / "checkpoints" / "last.ckpt"
    data = ckpt.read_bytes()
    if fault == "deleted":
        ckpt.unlink()
    else:
        ckpt.write_bytes(
            {"truncated": data[: len(data) // 2], "empty": b"", "garbage": b"not a checkpoint " * 64}[fault]
        )
    record = read_record(run / "record.json")
    with pytest.raises(ValueError) as err:
        finished_status(run / "record.json", record["config_hash"])
    assert str(err.value).startswith(f"checkpoint {ckpt}: {message}")
    assert "\n" not in str(err.value)
    with pytest.raises(ValueError):
        checkpoint_config_hash(ckpt)


def rewrite_checkpoint(ckpt: Path, change: str) -> None:
    """``other``: it claims another config; ``old``: no stored hash (as written before hashes were stored);
    ``old+other``: no stored hash and another network (its saved d_model differs)."""
    import torch

    data = torch.load(ckpt, map_location="cpu", weights_only=False)
    if change == "other":
        data["normbench"]["config_hash"] = "0123456789ab"
    else:
        del data["normbench"]
        if change == "old+other":
            data["hyper_parameters"]["arch"]["d_model"] += 4
    torch.save(data, ckpt)


@pytest.mark.parametrize("change", ["other", "old", "old+other"])
def test_a_checkpoint_is_matched_to_its_record(
    tiny_sweep: Path, tmp_path: Path, change: str, normbench_in_process
) -> None:  # noqa: ANN001
    """A finished run whose checkpoint holds another config's network is refused by the sweep's check, the
    leaderboard's and every analysis (one line); an older checkpoint without a stored hash is matched by its
    saved model arguments."""
    _, run = copy_of(tiny_sweep, tmp_path)
    ckpt = run / "checkpoints" / "last.ckpt"
    rewrite_checkpoint(ckpt, change)
    record = read_record(run / "record.json")
    args = ("analyze", "decompose", "--ckpt", str(ckpt), "--sequences", "4", "--out", str(tmp_path / "out"))
    if change == "old":
        assert finished_status(run / "record.json", record["config_hash"]) == "done"
        assert normbench_in_process(*args, cwd=tmp_path).returncode == 0
        return
    with pytest.raises(ValueError) as err:
        finished_status(run / "record.json", record["config_hash"])
    assert str(err.value).startswith(f"checkpoint {ckpt} does not match the run: ")
    assert str(err.value).endswith(f"one of config {record['config_hash']}") and "\n" not in str(err.value)
    out = normbench_in_process(*args, cwd=tmp_path)
    assert out.returncode == 2 and "Traceback" not in out.stderr
    assert out.stderr.strip().splitlines()[-1].startswith(f"normbench: error: checkpoint {ckpt} does not match the run")
    assert not (tmp_path / "out").exists()
