"""Sweep faults: a run's own broken files are redone, bad data and unwritable outputs stop the sweep before any
run starts (one line, exit status 2, nothing written), and Ctrl-C exits 130 with every run resumable, in each
backend (in this process, subprocess workers, vectorized seeds)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from normbench.sweep.backends import is_finished
from normbench.sweep.plan import plan_runs
from normbench.sweep.vectorized.seed_stack import SeedStack
from normbench.training.run.records import read_record
from tests.tiny_runs import copy_of, sweep_args, tiny_config
from tests.training.stopping.test_interrupts import EVERY_2, ctrl_c_at


def break_run(run: Path, fault: str) -> Path:
    """Damage one file of a finished run as ``fault`` says; returns the file."""
    record, ckpt = run / "record.json", run / "checkpoints" / "last.ckpt"
    data = json.loads(record.read_text())
    if fault == "truncated checkpoint":
        ckpt.write_bytes(ckpt.read_bytes()[:1000])
    elif fault == "empty checkpoint":
        ckpt.write_bytes(b"")
    elif fault == "garbage checkpoint":
        ckpt.write_bytes(b"\x00garbage" * 100)
    elif fault == "deleted checkpoint":
        ckpt.unlink()
    elif fault == "record without series":
        del data["series"]
    elif fault == "null series":
        data["series"]["test/acc"] = None
    elif fault == "edited config_hash":
        data["config_hash"] = "0123456789ab"
    record.write_text(json.dumps(data))
    return ckpt if "checkpoint" in fault else record


FAULTS = [
    "truncated checkpoint",
    "empty checkpoint",
    "garbage checkpoint",
    "deleted checkpoint",
    "record without series",
    "null series",
    "edited config_hash",
]


@pytest.mark.parametrize("fault", FAULTS)
def test_a_run_with_a_broken_file_is_not_finished(
    tiny_sweep: Path, tmp_path: Path, fault: str, capsys: pytest.CaptureFixture[str]
) -> None:
    config, run = copy_of(tiny_sweep, tmp_path)
    _, (planned,) = plan_runs(preset="quick", config_path=str(config), runs_dir=str(tmp_path / "runs"))
    assert is_finished(planned)
    broken = break_run(run, fault)
    capsys.readouterr()
    assert not is_finished(planned)
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert line.startswith("normbench: ") and str(broken) in line and line.endswith("; the run will be redone")


def test_the_sweep_redoes_a_run_whose_checkpoint_is_truncated(
    tiny_sweep: Path, tmp_path: Path, normbench_in_process
) -> None:  # noqa: ANN001
    config, run = copy_of(tiny_sweep, tmp_path)
    ckpt = break_run(run, "truncated checkpoint")
    out = normbench_in_process(*sweep_args(config, tmp_path), "--no-leaderboard", cwd=tmp_path)
    assert out.returncode == 0, out.stderr[-3000:]
    assert f"normbench: checkpoint {ckpt}: unreadable" in out.stderr and "Traceback" not in out.stderr
    record = read_record(run / "record.json")
    assert record["status"] == "done" and "resumed_from" not in record  # redone from the start
    assert ckpt.stat().st_size > 1000
    assert sorted(p.name for p in (run / "checkpoints").iterdir()) == ["last.ckpt"]


def test_missing_data_stops_the_sweep_before_any_run(tmp_path: Path, normbench_in_process) -> None:  # noqa: ANN001
    missing = tmp_path / "no-sst2"
    out = normbench_in_process(
        "sweep",
        "--config",
        "sst2",
        "--seeds",
        "0",
        "--no-progress",
        "--workers=2",
        f"--data.init_args.data_dir={missing}",
        f"--runs_dir={tmp_path / 'runs'}",
        f"--results_dir={tmp_path / 'results'}",
        cwd=tmp_path,
    )
    assert out.returncode == 2
    assert (
        out.stderr.strip()
        .splitlines()[-1]
        .startswith(f"normbench: error: data.data_dir: train.tsv, dev.tsv not found in '{missing}'")
    )
    assert sorted(p.name for p in tmp_path.iterdir()) == []  # no runs, no results, no logs


def test_a_data_fault_of_one_grid_cell_stops_the_whole_sweep(tmp_path: Path, normbench_in_process) -> None:  # noqa: ANN001
    config = tiny_config(tmp_path)
    (tmp_path / "not-a-dir").write_text("")
    out = normbench_in_process(
        *sweep_args(config, tmp_path),
        "--grid",
        f"data.cache_dir={tmp_path / 'cache'},{tmp_path / 'not-a-dir'}",
        cwd=tmp_path,
    )
    assert out.returncode == 2, out.stderr[-3000:]
    last = out.stderr.strip().splitlines()[-1]
    assert last.startswith("normbench: error: data: MajorityDataModule could not load its data") and "not-a-dir" in last
    assert not (tmp_path / "runs").exists() and not (tmp_path / "results").exists()


def test_an_unwritable_results_dir_is_found_before_training(tmp_path: Path, normbench_in_process) -> None:  # noqa: ANN001
    config = tiny_config(tmp_path)
    (tmp_path / "results").write_text("a file where the results folder goes")
    out = normbench_in_process(*sweep_args(config, tmp_path), cwd=tmp_path)
    assert out.returncode == 2
    assert out.stderr.strip().splitlines()[-1] == (
        f"normbench: error: results_dir: '{tmp_path / 'results' / 'majority' / 'tiny'}' cannot be a folder: "
        f"{tmp_path / 'results'} is a file; choose another results_dir"
    )
    assert not (tmp_path / "runs").exists()


def test_a_sweep_whose_every_run_fails_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, normbench_in_process
) -> None:  # noqa: ANN001
    """Not the misleading `no finished run records ... run normbench sweep first`: the failures are the news."""
    from tests.sweep.test_plan import FAILING_NORM

    (tmp_path / "failing_norm.py").write_text(FAILING_NORM)
    monkeypatch.syspath_prepend(str(tmp_path))
    out = normbench_in_process(
        *sweep_args(tiny_config(tmp_path), tmp_path), "--model.arch.ffn_norm.component=failing_norm:Boom", cwd=tmp_path
    )
    assert out.returncode == 1, out.stderr[-3000:]
    assert (
        out.stderr.strip().splitlines()[-1].startswith("normbench: error: runs: 1 of 1 failed; their records say why")
    )
    (record,) = map(read_record, (tmp_path / "runs").rglob("record.json"))
    assert record["status"] == "failed" and "this norm fails in training" in record["error"]


def interrupted(out: Any) -> None:
    assert out.returncode == 130, out.stderr[-3000:]
    assert out.stderr.strip().splitlines()[-1].startswith("normbench: interrupted")
    assert "Traceback" not in out.stderr


def test_ctrl_c_of_an_in_process_sweep(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, normbench_in_process) -> None:  # noqa: ANN001
    config = tiny_config(tmp_path, seeds=[0, 1])
    ctrl_c_at(monkeypatch, 4)
    interrupted(normbench_in_process(*sweep_args(config, tmp_path), EVERY_2, cwd=tmp_path))
    (record,) = map(read_record, (tmp_path / "runs").rglob("record.json"))  # the second run never started
    assert record["status"] == "interrupted" and record["seed"] == 0
    assert (tmp_path / "runs").rglob("last.ckpt")


def test_ctrl_c_of_vectorized_seeds(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, normbench_in_process) -> None:  # noqa: ANN001
    config = tiny_config(tmp_path, seeds=[0, 1])
    original = SeedStack.training_step

    def step(self: SeedStack, batch: Any, batch_idx: int) -> Any:
        if self.global_step == 3:
            raise KeyboardInterrupt
        return original(self, batch, batch_idx)

    monkeypatch.setattr(SeedStack, "training_step", step)
    interrupted(normbench_in_process(*sweep_args(config, tmp_path), "--vectorize=2", cwd=tmp_path))
    records = [read_record(p) for p in sorted((tmp_path / "runs").rglob("record.json"))]
    assert [(r["seed"], r["status"], r["final_step"]) for r in records] == [
        (0, "interrupted", 3),
        (1, "interrupted", 3),
    ]


STUB = """
import pathlib, signal, sys, time
run = pathlib.Path(sys.argv[1])
def stop(*_):
    (run / "interrupted").write_text("")
    sys.exit(130)
signal.signal(signal.SIGINT, stop)
(run / "started").write_text("")
time.sleep(900)  # until the SIGINT: far longer than any wait below, so a loaded machine cannot let a worker finish
"""


def test_ctrl_c_stops_every_worker_and_starts_no_other_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Ctrl-C of the sweep (SIGINT to it alone: the workers run in sessions of their own): each running worker gets
    one SIGINT and is waited for, the queued run never starts, ``KeyboardInterrupt`` reaches the caller."""
    from normbench.sweep import backends
    from normbench.sweep.plan import Run

    runs = [Run("v", seed, [], tmp_path / f"seed{seed}" / "record.json", "h") for seed in range(3)]
    monkeypatch.setattr(backends, "fit_command", lambda run: [sys.executable, "-c", STUB, str(run.record_path.parent)])

    def ctrl_c() -> None:
        deadline = time.monotonic() + 600  # a bound against a hang, not a timing: two workers start long before
        while len(list(tmp_path.glob("seed*/started"))) < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
        os.kill(os.getpid(), signal.SIGINT)

    # a Ctrl-C as a terminal delivers it; a test process started in the background by a shell inherits an
    # ignored SIGINT (and would then wait here for ever)
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    threading.Thread(target=ctrl_c, daemon=True).start()
    try:
        with pytest.raises(KeyboardInterrupt):
            backends.execute(runs, workers=2, progress=False, relay=0.2)
    finally:
        signal.signal(signal.SIGINT, previous)
    assert sorted(p.parent.name for p in tmp_path.glob("seed*/interrupted")) == ["seed0", "seed1"]
    assert not (tmp_path / "seed2").exists()


@pytest.mark.slow
def test_ctrl_c_of_a_sweep_with_subprocess_workers(tmp_path: Path) -> None:
    """SIGINT to the sweep's process group, as a terminal sends it: the two running workers record their runs as
    interrupted (with their checkpoints), the third run never starts, the sweep exits 130 (a minute on 2 cores)."""
    config = tiny_config(tmp_path, seeds=[0, 1, 2])
    cmd = [
        sys.executable,
        "-m",
        "normbench",
        *sweep_args(config, tmp_path),
        "--workers=2",
        "--trainer.max_steps=5000",
        "--trainer.val_check_interval=1000",
        EVERY_2.replace('"every_n_train_steps": 2', '"every_n_train_steps": 5'),
    ]
    proc = subprocess.Popen(
        cmd,
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
        env={**os.environ, "NORMBENCH_PROGRESS_SECONDS": "1"},
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )  # as from a terminal
    deadline = time.monotonic() + 300
    while len(list((tmp_path / "runs").rglob("last.ckpt"))) < 2:
        assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()[1][-3000:]
        time.sleep(0.1)
    os.killpg(proc.pid, signal.SIGINT)
    _, err = proc.communicate(timeout=120)
    interrupted(subprocess.CompletedProcess(cmd, proc.returncode, "", err))
    records = [read_record(p) for p in (tmp_path / "runs").rglob("record.json")]
    assert sorted(r["status"] for r in records) == ["interrupted", "interrupted"]
    assert all((Path(r["log_dir"]) / "checkpoints" / "last.ckpt").is_file() for r in records)


@pytest.mark.parametrize("workers", [1, pytest.param(2, marks=pytest.mark.slow)])
def test_sigterm_of_a_sweep_exits_143_and_records_interrupted_runs(tmp_path: Path, workers: int) -> None:
    """SIGTERM to the sweep alone, as ``timeout``, ``docker stop`` or SLURM's time limit send it: the running runs
    are recorded as ``interrupted`` (resumable), and the sweep says so in one line and exits 143, in this process
    (one worker) as with subprocess workers (two)."""
    config = tiny_config(tmp_path, seeds=list(range(workers)))
    cmd = [
        sys.executable,
        "-m",
        "normbench",
        *sweep_args(config, tmp_path),
        f"--workers={workers}",
        "--trainer.max_steps=5000",
        "--trainer.val_check_interval=1000",
        EVERY_2.replace('"every_n_train_steps": 2', '"every_n_train_steps": 5'),
    ]
    proc = subprocess.Popen(cmd, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 300
    while len(list((tmp_path / "runs").rglob("last.ckpt"))) < workers:
        assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()[1][-3000:]
        time.sleep(0.1)
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 143, err[-3000:]
    assert err.strip().splitlines()[-1].startswith("normbench: terminated (SIGTERM)"), err[-3000:]
    assert "Traceback" not in err
    records = [read_record(p) for p in (tmp_path / "runs").rglob("record.json")]
    assert [r["status"] for r in records] == ["interrupted"] * workers
    assert all("error" not in r for r in records)
