"""Vectorized seeds: each seed of a stack trains exactly what it trains alone."""

from __future__ import annotations

from pathlib import Path

import pytest

from normbench.sweep.vectorized.fit import train_stack
from normbench.tasks import get_task
from normbench.training.fit import train
from normbench.training.reproducibility import agrees, tolerance
from normbench.training.run.records import read_record

CONFIG = str(get_task("majority").config_path)
# 600 sequences -> 480 training rows -> 8 batches of 64: 30 steps cross three epochs
TINY = [
    "--data.init_args.num_sequences=600",
    "--data.init_args.batch_size=64",
    "--data.init_args.eval_batch_size=200",
    "--trainer.max_steps=30",
    "--trainer.max_epochs=-1",
    "--trainer.val_check_interval=10",
    "--trainer.log_every_n_steps=2",
    "--trainer.enable_progress_bar=false",
    "--trainer.enable_model_summary=false",
]


def args(runs: Path, seed: int, *extra: str) -> list[str]:
    return ["--config", CONFIG, *TINY, *extra, f"--runs_dir={runs}", f"--seed_everything={seed}"]


# the authors' protocol: every seed its own data and split (training sets of 483-490 rows at this size, so
# an epoch's last batch differs in length between the seeds and is padded in the stack)
OWN_DATA = ["--data.init_args.generator=paper", "--data.init_args.data_seed=seed", "--model.arch.init=encoder_layer"]


@pytest.mark.parametrize(
    "extra",
    [
        [],
        OWN_DATA,
        pytest.param(
            ["--model.arch.attn_norm.component=paper_no_projection", "--model.arch.placement=post"],
            marks=pytest.mark.slow,
        ),
    ],
    ids=["shared-data", "own-data", "post-no-projection"],
)
def test_each_stacked_seed_matches_the_seed_trained_alone(tmp_path: Path, extra: list[str]) -> None:
    seeds = [0, 1, 2]
    stacked = [read_record(p) for p in train_stack([args(tmp_path / "stack", s, *extra) for s in seeds])]
    for seed, rec in zip(seeds, stacked, strict=False):
        alone = read_record(train(args(tmp_path / "alone", seed, *extra)))
        assert rec["status"] == alone["status"] == "done" and rec["final_step"] == alone["final_step"] == 30
        assert rec["seed"] == seed and rec["vectorized"] == {"stack_size": 3, "seeds": seeds}
        assert rec["config_hash"] == alone["config_hash"]
        # a lone run also logs the GeometryMonitor's geometry/* series; stacks do not
        trained = {k: v for k, v in alone["series"].items() if not k.startswith("geometry/")}
        assert set(rec["series"]) == set(trained)
        for name, points in trained.items():
            steps, values = zip(*points, strict=False)
            got_steps, got_values = zip(*rec["series"][name], strict=False)
            assert got_steps == steps, name
            # another kernel order than the lone run's: within the declared cross-platform tolerance
            off = [(a, b) for a, b in zip(got_values, values, strict=False) if not agrees(name, a, b, bitwise=False)]
            assert not off, (seed, name, tolerance(name), off[:3])
    assert stacked[0]["series"]["train/loss_step"] != stacked[1]["series"]["train/loss_step"]


def test_own_data_seeds_hold_training_sets_of_different_sizes() -> None:
    """The precondition of the own-data case above: its seeds' training sets differ in size (so the last batch of
    an epoch is padded) but give the same number of batches of 64."""
    from normbench.data.majority import MajoritySpec, load_majority

    sizes = {len(load_majority(MajoritySpec(600, seed=s, generator="paper"))["train_x"]) for s in (0, 1, 2)}
    assert len(sizes) > 1 and len({-(-n // 64) for n in sizes}) == 1, sizes


def test_a_diverging_seed_stops_alone(tmp_path: Path) -> None:
    extra = ["--model.optim.lr=1e30", "--model.arch.attn_norm.component=none", "--model.arch.ffn_norm.component=none"]
    recs = [read_record(p) for p in train_stack([args(tmp_path / "stack", s, *extra) for s in (0, 1)])]
    assert all(r["status"] == "diverged" and 1 <= r["diverged_at_step"] < 30 for r in recs)
    alone = read_record(train(args(tmp_path / "alone", 1, *extra)))
    assert (alone["status"], alone["diverged_at_step"], alone["final_step"]) == (
        recs[1]["status"],
        recs[1]["diverged_at_step"],
        recs[1]["final_step"],
    )


def test_sweep_vectorize_writes_one_record_per_seed_and_skips_them_next_time(tmp_path: Path, capsys) -> None:
    import subprocess
    import sys

    from normbench.cli import main

    cmd = [
        sys.executable,
        "-m",
        "normbench",
        "sweep",
        "--config",
        CONFIG,
        "--preset",
        "quick",
        "--variants",
        "pre/both",
        "--seeds",
        "0-2",
        "--vectorize",
        "2",
        "--no-progress",
        f"--runs_dir={tmp_path / 'runs'}",
        f"--results_dir={tmp_path / 'results'}",
        "--name",
        "v",
        *(a for a in TINY if not a.startswith("--trainer.enable_model_summary")),
    ]
    first = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    assert first.returncode == 0, first.stderr[-3000:]
    # no Lightning model summary table of the stack, on the console or in the sweep's log
    logs = first.stdout + first.stderr + "".join(p.read_text() for p in (tmp_path / "runs").rglob("sweep.log"))
    assert "Total params" not in logs and "FLOPs" not in logs
    records = sorted((tmp_path / "runs").rglob("record.json"))
    assert [read_record(r)["vectorized"]["stack_size"] for r in records] == [2, 2, 1]
    capsys.readouterr()
    main(cmd[3:])  # again, in this process: every seed's record is found, nothing trains
    assert "3 of 3 runs already finished" in capsys.readouterr().err


def test_a_stacked_step_reads_nothing_from_the_device(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """As a lone run's step (tests/tasks/test_host_reads.py): from one step's start to the next, the seeds' losses
    and divergence flags stay on the device, except on the steps that log, evaluate or end an epoch."""
    import normbench.sweep.vectorized.seed_stack as seed_stack
    from tests.tasks.test_host_reads import traced_host_reads

    monkeypatch.setattr(seed_stack, "host_reads_are_free", lambda device: False)
    reads: list = []
    traced: list[int] = []
    window: list = []
    counters: set[int] = set()  # Adam's step counters: CPU tensors by design, not on the device

    def on_train_batch_start(self: seed_stack.SeedStack, batch: object, batch_idx: int) -> None:
        counters.update(id(state["step"]) for opt in self.trainer.optimizers for state in opt.state.values())
        if window:
            window.pop().__exit__(None, None, None)
        step = self.global_step
        busy = {s for s in (step + 1, step + 2) if s % 10 == 0 or s % 8 == 0}  # log, validation, epoch end
        if step >= 11 and not busy:
            traced.append(step)
            window.append(traced_host_reads(reads))
            window[-1].__enter__()

    monkeypatch.setattr(seed_stack.SeedStack, "on_train_batch_start", on_train_batch_start, raising=False)
    records = [
        read_record(p) for p in train_stack([args(tmp_path, s, "--trainer.log_every_n_steps=10") for s in (0, 1)])
    ]
    if window:
        window.pop().__exit__(None, None, None)
    assert all(r["status"] == "done" and r["final_step"] == 30 for r in records)
    assert len(traced) >= 6 and [(name, where) for name, t, where in reads if id(t) not in counters] == []


@pytest.mark.slow
def test_a_board_from_stacked_runs_equals_the_board_from_lone_runs(tmp_path: Path) -> None:
    """The same sweep trained alone and stacked: every row's metrics agree within the declared tolerance and every
    claim gets the same verdict (about two minutes on 2 CPU cores)."""
    import json

    from normbench.sweep.options import SweepOptions
    from normbench.sweep.run import run_sweep
    from tests.tiny_runs import tiny_config

    config = str(tiny_config(tmp_path, seeds=[0, 1, 2]))
    boards = {}
    for how, vectorize in (("alone", 1), ("stacked", 3)):
        options = SweepOptions(
            config,
            seeds="0-2",
            variants="pre/both,pre/paper_no_projection,pre/scale",
            vectorize=str(vectorize),
            workers=1,
            runs_dir=str(tmp_path / how / "runs"),
            results_dir=str(tmp_path / how / "results"),
            progress=False,
        )
        out = run_sweep(options, ["trainer.max_steps=60", "trainer.val_check_interval=20"])
        boards[how] = json.loads((out / "leaderboard.json").read_text())
    alone, stacked = boards["alone"], boards["stacked"]
    assert [c["verdict"] for c in stacked["claims"]] == [c["verdict"] for c in alone["claims"]]
    for a, s in zip(alone["variants"], stacked["variants"], strict=True):
        assert a["name"] == s["name"] and a["config_hash"] == s["config_hash"]
        for metric, agg in a["metrics"].items():
            for x, y in zip(s["metrics"][metric]["per_seed"], agg["per_seed"], strict=True):
                assert agrees(metric, y, x, bitwise=False) if None not in (x, y) else x == y, (a["name"], metric, x, y)
