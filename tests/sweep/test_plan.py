"""`normbench sweep`: planning, grid/seed syntax, kill -9 and resume, divergence, failures, backends."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from normbench.sweep.grid import parse_grid
from normbench.sweep.plan import parse_names, parse_seeds, plan_runs
from normbench.tasks import get_task
from normbench.training.cli import NormbenchCLI
from normbench.training.reproducibility import series_mismatches
from normbench.training.run.records import read_record

CONFIG = str(get_task("majority").config_path)
TINY = [
    "--data.init_args.num_sequences=600",
    "--data.init_args.batch_size=64",
    "--data.init_args.eval_batch_size=300",
    "--trainer.max_steps=20",
    "--trainer.val_check_interval=10",
    "--trainer.log_every_n_steps=5",
]


def sweep(
    tmp_path: Path, *args: str, runs: str = "runs", **popen: object
) -> subprocess.CompletedProcess | subprocess.Popen:
    pinned = [] if any(a.startswith("--workers") for a in args) else ["--workers=1"]  # one run at a time unless asked
    cmd = [
        sys.executable,
        "-m",
        "normbench",
        "sweep",
        "--config",
        CONFIG,
        "--preset",
        "quick",
        "--no-progress",
        f"--runs_dir={tmp_path / runs}",
        f"--results_dir={tmp_path / 'results'}",
        *pinned,
        *args,
    ]
    if popen:
        return subprocess.Popen(cmd, cwd=tmp_path, **popen)
    return subprocess.run(cmd, cwd=tmp_path, capture_output=True, text=True, timeout=600)


def test_seed_and_grid_syntax() -> None:
    assert parse_seeds("0-3,7") == [0, 1, 2, 3, 7] and parse_seeds("[0, 1]") == [0, 1] and parse_seeds("5") == [5]
    for bad in ("3-1", "a", ","):
        with pytest.raises(ValueError, match="seeds:"):
            parse_seeds(bad)
    assert parse_grid(["model.optim.lr=1e-3,0.01", "model.arch.attn_norm.affine=true,false"]) == {
        "model.optim.lr": [1e-3, 0.01],
        "model.arch.attn_norm.affine": [True, False],
    }
    with pytest.raises(ValueError, match="grid: 'model.optim.lr' must look like key=value1,value2"):
        parse_grid(["model.optim.lr"])
    with pytest.raises(ValueError, match=r"^grid: 'model.arch.d_model=\[1': a value is not valid YAML \("):
        parse_grid(["model.arch.d_model=[1"])


def test_variant_lists_with_or_without_brackets() -> None:
    want = ["post/both", "none/none", "pre/both+qknorm"]
    for text in (
        "post/both,none/none,pre/both+qknorm",
        "[post/both, none/none, pre/both+qknorm]",
        "['post/both', \"none/none\", pre/both+qknorm]",
    ):
        assert parse_names(text, "variants") == want
    for bad in ("[post/both", "[]", " , "):
        with pytest.raises(ValueError, match="^variants: "):
            parse_names(bad, "variants")


def test_the_width_preset_shares_its_d8_runs_with_the_quick_bench(tmp_path: Path) -> None:
    """d_model 8 with 4 heads is the quick preset's network: the same run keys, trained once."""
    _, width = plan_runs("lm", "width", seeds=[0], variants=["pre/both", "pre/project"], runs_dir=str(tmp_path))
    _, quick = plan_runs("lm", "quick", seeds=[0], variants=["pre/both", "pre/project"], runs_dir=str(tmp_path))
    assert len(width) == 8
    assert [r.record_path for r in width if ",arch.d_model=8," in r.variant] == [r.record_path for r in quick]


def test_plan_validates_every_variant_before_anything_runs(tmp_path: Path) -> None:
    config, runs = plan_runs(
        preset="quick",
        seeds="0-2",
        grid={"model.arch.attn_norm.component": ["both", "scale"]},
        config_path=CONFIG,
        runs_dir=str(tmp_path),
        overrides=TINY,
    )
    both, scale = "arch.attn_norm.component=both", "arch.attn_norm.component=scale"
    assert [(r.variant, r.seed) for r in runs][:4] == [(both, 0), (both, 1), (both, 2), (scale, 0)]
    assert runs[0].config_hash == runs[2].config_hash != runs[3].config_hash
    folder = runs[4].record_path.parent.parent  # <label with the overrides>-<hash>/seed1/record.json
    assert runs[4].record_path == folder / "seed1" / "record.json" and folder.parent == tmp_path / "majority"
    assert folder.name.startswith("pre-attn_scale-ffn_both+affine-num_sequences=600-")
    assert folder.name.endswith(f"-log_every_n_steps=5-{runs[4].config_hash}")
    with pytest.raises(ValueError, match="MajorityModule has no argument 'norm'"):
        plan_runs(preset="quick", grid={"model.norm.component": ["both"]}, config_path=CONFIG, runs_dir=str(tmp_path))
    with pytest.raises(ValueError, match="'layer' is not allowed"):
        plan_runs(
            preset="quick",
            grid={"model.arch.attn_norm.component": ["both", "layer"]},
            config_path=CONFIG,
            runs_dir=str(tmp_path),
        )
    assert not any(tmp_path.iterdir())


@pytest.mark.slow  # end to end, about a minute: the default run keeps its cheaper twins
def test_kill_9_mid_sweep_then_resume(tmp_path: Path) -> None:
    """kill -9 while seed 1 trains; the same command skips seed 0, resumes seed 1 from its checkpoint,
    and ends with records identical to an uninterrupted sweep and one leaderboard row per seed."""
    args = [
        "--variants",
        "pre/both",
        "--seeds",
        "0-1",
        "--data.init_args.num_sequences=2000",
        "--data.init_args.batch_size=64",
        "--data.init_args.eval_batch_size=400",
        "--trainer.max_steps=300",
        "--trainer.val_check_interval=25",
        "--trainer.log_every_n_steps=5",
        "--trainer.enable_model_summary=false",
        '--trainer.callbacks=[{"class_path": "lightning.pytorch.callbacks.ModelCheckpoint", '
        '"init_args": {"save_last": true, "save_top_k": 0, "every_n_train_steps": 10}}]',
    ]
    proc = sweep(tmp_path, *args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    deadline = time.monotonic() + 300
    while not (found := list((tmp_path / "runs" / "majority").glob("*/seed1/checkpoints/last.ckpt"))):
        assert proc.poll() is None and time.monotonic() < deadline, "sweep ended before it could be killed"
        time.sleep(0.02)
    run1 = found[0].parent.parent
    time.sleep(0.1)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    assert read_record(run1 / "record.json")["status"] == "running"
    seed0 = run1.parent / "seed0" / "record.json"
    stamp = seed0.stat().st_mtime_ns

    again = sweep(tmp_path, *args, "--name", "kill")
    assert again.returncode == 0, again.stderr[-3000:]
    assert "1 of 2 runs already finished" in again.stderr
    assert f"resuming {run1}" in again.stderr
    assert seed0.stat().st_mtime_ns == stamp  # the finished run was not touched
    resumed = read_record(run1 / "record.json")
    assert resumed["status"] == "done" and resumed["final_step"] == 300 and "resumed_from" in resumed

    reference = sweep(tmp_path, *args, "--no-leaderboard", runs="reference")
    assert reference.returncode == 0, reference.stderr[-3000:]
    uninterrupted = read_record(tmp_path / "reference" / "majority" / run1.parent.name / "seed1" / "record.json")
    on_gpu = resumed["provenance"]["platform"]["gpu"] is not None
    assert not series_mismatches(resumed["series"], uninterrupted["series"], on_gpu)

    board = json.loads((tmp_path / "results" / "majority" / "kill" / "leaderboard.json").read_text())
    assert [(v["name"], v["seeds"]) for v in board["variants"]] == [("pre/both", [0, 1])]


FAILING_NORM = """
import torch
class Boom(torch.nn.Module):
    def __init__(self, d):
        super().__init__()
    def forward(self, x):
        raise RuntimeError("this norm fails in training")
"""


def test_divergence_and_failures_do_not_stop_the_sweep(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "failing_norm.py").write_text(FAILING_NORM)  # builds (planning checks it), fails in its first step
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [str(tmp_path), os.environ.get("PYTHONPATH")])))
    out = sweep(
        tmp_path,
        "--seeds",
        "0",
        *TINY,
        "--model.arch.attn_norm.component=none",
        "--grid",
        "model.optim.lr=1e30,1e-3",
        "--grid",
        "model.arch.ffn_norm.component=none,failing_norm:Boom",
        "--name",
        "faults",
    )
    assert out.returncode == 1, out.stderr[-3000:]
    assert "normbench: error: runs: 2 of 4 failed" in out.stderr
    records = {r["variant"]: r for r in map(read_record, (tmp_path / "runs").rglob("record.json"))}
    status = {name.split(",arch.ffn_norm")[0]: rec["status"] for name, rec in records.items() if "Boom" not in name}
    assert status == {"optim.lr=1e+30": "diverged", "optim.lr=0.001": "done"}
    assert all(
        rec["status"] == "failed" and "this norm fails" in rec["error"]
        for name, rec in records.items()
        if "Boom" in name
    )
    diverged = next(rec for rec in records.values() if rec["status"] == "diverged")
    assert 1 <= diverged["diverged_at_step"] < 20

    board = json.loads((tmp_path / "results" / "majority" / "faults" / "leaderboard.json").read_text())
    rows = {v["name"]: v for v in board["variants"]}
    assert set(rows) == {"optim.lr=1e+30,arch.ffn_norm.component=none", "optim.lr=0.001,arch.ffn_norm.component=none"}
    (bad,) = [v for v in rows.values() if v["status"] == "diverged"]
    assert bad["diverged_at_step"] == {"0": diverged["diverged_at_step"]}
    assert "diverged at step" in (tmp_path / "results" / "majority" / "faults" / "leaderboard.md").read_text()


@pytest.mark.slow  # end to end, about a minute: the default run keeps its cheaper twins
def test_parallel_workers_run_each_run_in_its_own_process(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NORMBENCH_PROGRESS_SECONDS", "1")
    out = sweep(tmp_path, "--variants", "pre/both,pre/none", "--seeds", "0", "--workers", "2", *TINY, "--name", "par")
    assert out.returncode == 0, out.stderr[-3000:]
    logs = sorted((tmp_path / "runs").rglob("sweep.log"))
    assert len(logs) == 2 and all("run record" in log.read_text() for log in logs)
    for variant in ("pre/both", "pre/none"):  # each worker's own progress reaches the sweep's output
        assert f"normbench: progress {variant} seed 0: step 20/20 (100%), loss " in out.stderr
    assert all(log.read_text().count("normbench: progress") <= 25 for log in logs)  # a line per second at most
    board = json.loads((tmp_path / "results" / "majority" / "par" / "leaderboard.json").read_text())
    assert [v["name"] for v in board["variants"]] == ["pre/both", "pre/none"]
    sharded = sweep(tmp_path, "--variants", "pre/both,pre/none", "--seeds", "0", "--shard", "1/2", *TINY)
    assert "1 of 1 runs already finished" in sharded.stderr and "wrote" not in sharded.stdout


def test_device_slots_split_threads_and_gpus() -> None:
    from normbench.sweep.backends import device_slots

    cpus = os.cpu_count() or 1
    assert device_slots(2, None, 1) == [{"OMP_NUM_THREADS": str(max(1, cpus // 2))}] * 2
    slots = device_slots(1, [0, 1, 2, 3], 2)
    assert [s["CUDA_VISIBLE_DEVICES"] for s in slots] == ["0,1", "2,3"]
    with pytest.raises(ValueError, match="gpus_per_run: must divide the 3 GPUs"):
        device_slots(1, [0, 1, 2], 2)


def test_the_default_number_of_workers_follows_the_machine(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from normbench.sweep import backends

    monkeypatch.setattr(backends.os, "sched_getaffinity", lambda pid: set(range(16)), raising=False)
    monkeypatch.setattr(backends.torch.cuda, "is_available", lambda: False)
    monkeypatch.setattr(backends, "CGROUP_CPU_MAX", tmp_path / "absent")
    assert backends.default_workers() == 16  # one run per available core
    assert backends.device_slots(backends.default_workers(), None, 1) == [{"OMP_NUM_THREADS": "1"}] * 16
    assert backends.default_workers([0, 1, 2, 3]) == 4  # one per GPU
    assert backends.default_workers([0, 1, 2, 3], gpus_per_run=2) == 2  # one per GPU group
    quota = tmp_path / "cpu.max"
    quota.write_text("250000 100000\n")  # a container limited to 2.5 CPUs
    assert backends.available_cpus(quota) == 3
    quota.write_text("max 100000\n")
    assert backends.available_cpus(quota) == 16
    monkeypatch.setattr(backends.torch.cuda, "is_available", lambda: True)
    assert backends.default_workers() == 1  # a GPU but no --gpus: runs would share GPU 0, one at a time
    monkeypatch.setattr(backends.os, "sched_getaffinity", lambda pid: {3}, raising=False)
    monkeypatch.setattr(backends.torch.cuda, "is_available", lambda: False)
    assert backends.default_workers() == 1


def test_fewer_runs_than_workers_train_in_this_process(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from normbench.sweep import backends

    trained: list[list[str]] = []
    monkeypatch.setattr(backends, "train", lambda args: trained.append(args))
    monkeypatch.setattr(backends, "run_subprocess", lambda run, env: pytest.fail("one run needs no subprocess"))
    _, runs = plan_runs("majority", "quick", seeds="0", variants=["pre/both"], runs_dir=str(tmp_path))
    outcome = backends.execute(runs, workers=16, progress=False)
    assert len(trained) == 1 and len(outcome.trained) == 1


def test_the_dyt_alpha_preset_sweeps_every_dyts_initial_alpha(tmp_path: Path) -> None:
    """alpha0 in {0.5, 1, 2, 5, 10, 20} for the attention, FFN and final DyT alike; 0.5 is pre/dyt of the modern bench."""
    _, runs = plan_runs("lm", "dyt-alpha", seeds=[0], runs_dir=str(tmp_path))
    _, modern = plan_runs("lm", "modern", seeds=[0], variants=["pre/dyt"], runs_dir=str(tmp_path))
    assert [r.variant for r in runs] == [f"pre/dyt,alpha0={a}" for a in ("0.5", "1.0", "2.0", "5.0", "10.0", "20.0")]
    assert runs[0].config_hash == modern[0].config_hash and len({r.config_hash for r in runs}) == 6
    cli = NormbenchCLI(args=runs[3].args)
    model = cli.model.model
    alphas = [model.blocks[0].attn_norm.alpha, model.blocks[3].ffn_norm.alpha, model.final_norm.alpha]
    assert [a.item() for a in alphas] == [5.0, 5.0, 5.0] and model.embedding_scale is None


def test_a_sweep_passes_compile_to_its_runs(tmp_path: Path) -> None:
    """``--compile`` is an option of every run (``normbench fit``), so a sweep accepts it as an override."""
    _, runs = plan_runs("majority", "quick", "0", ["pre/both"], ["--compile", "default"], str(tmp_path))
    assert "--compile=default" in runs[0].args


def test_one_point_of_a_presets_grid_is_a_variant_of_its_own() -> None:
    """``base,label=value`` names one grid point (a bake trains each run alone); a point off the grid is one line."""
    from normbench.sweep.plan import parse_names, plan_runs

    assert parse_names("pre/both,lr=0.001,pre/scale", "variants") == ["pre/both,lr=0.001", "pre/scale"]
    assert parse_names("[pre/dyt,alpha0=50.0;20.0;20.0]", "variants") == ["pre/dyt,alpha0=50.0;20.0;20.0"]
    _, runs = plan_runs("majority", "lr", seeds=[100], variants=["pre/both,lr=0.002", "pre/scale"])
    assert [r.variant for r in runs] == ["pre/both,lr=0.002"] + [f"pre/scale,lr={v}" for v in
                                                                ("0.0003", "0.0006", "0.001", "0.002", "0.003", "0.006", "0.01", "0.016", "0.025", "0.04", "0.063")]  # fmt: skip
    with pytest.raises(ValueError, match=r"'pre/both,lr=0.005' is not a point of the grid"):
        plan_runs("majority", "lr", seeds=[100], variants=["pre/both,lr=0.005"])


def test_sst2_chooses_on_held_out_sentences_and_judges_on_every_phrase_at_the_quick_boards_hash(tmp_path: Path) -> None:
    """SST-2's grid trains without 872 held-out training sentences (another config hash than the quick board's at the
    same rate); its tuned board trains on every phrase again, so its shared runs are the quick board's."""
    from normbench.archive.board import dumps_board
    from normbench.boards.build import build
    from tests.factories import make_record

    grid_config, grid = plan_runs("sst2", "lr", seeds=[100], variants=["post/both"])
    assert grid_config["data"]["init_args"]["holdout"] == 872 and grid_config["bench"]["choice"]["metric"] == "val_acc"
    _, quick = plan_runs("sst2", "quick", seeds=[0], variants=["post/both", "none/none"])
    assert grid[2].variant == "post/both,lr=0.001" and grid[2].config_hash != quick[0].config_hash
    accs = {"0.0003": 0.70, "0.0006": 0.75, "0.001": 0.80, "0.002": 0.82, "0.004": 0.78}  # the config's grid
    assert [r.variant.split("lr=")[1] for r in grid] == list(accs)
    records = [
        make_record(f"{base},lr={lr}", 100 + s, series={"val/acc": [[3000, acc + (base == "none/none") * 0.1 * s]]})
        for base in ("post/both", "none/none")
        for lr, acc in accs.items()
        for s in range(2)
    ]
    bench = {"metrics": {"val_acc": {"series": "val/acc", "at_step": "last"}}}
    bench["choice"] = {"axis": "lr", "metric": "val_acc", "goal": "max", "report": []}
    (tmp_path / "sst2" / "lr").mkdir(parents=True)
    board = build("sst2", "lr", records, bench)
    (tmp_path / "sst2" / "lr" / "leaderboard.json").write_text(dumps_board(board), encoding="utf-8")
    config, runs = plan_runs("sst2", "tuned", seeds=[0], variants=["post/both", "none/none"], results_dir=tmp_path)
    assert config["data"]["init_args"]["holdout"] == 0
    assert [r.variant for r in runs] == ["post/both,lr=0.001", "post/both,lr=0.002", "none/none,lr=0.001",
                                         "none/none,lr=0.002"]  # fmt: skip
    assert (runs[0].config_hash, runs[2].config_hash) == (quick[0].config_hash, quick[1].config_hash)


def test_the_tuned_preset_plans_each_variants_shared_and_chosen_rate(tmp_path: Path) -> None:
    """``bench.tuned``: of the lr grid, each base keeps 1e-3 and the rate the lr board chose for it; a point that is
    neither is one line; the shared runs are the quick-10 board's (the same config hash)."""
    import math

    from normbench.archive.board import dumps_board
    from normbench.boards.build import build
    from tests.factories import make_record

    _, grid = plan_runs("majority", "lr", seeds=[100], variants=["pre/both"])  # the config's whole grid
    best = {"pre/both": 0.003, "pre/scale": 0.01}
    records = [
        make_record(
            f"{base},lr={lr}", 100 + s, series={"test/acc": [[5000, 0.9 - 0.05 * abs(math.log(float(lr) / peak))]]}
        )
        for base, peak in best.items()
        for lr in (run.variant.split("lr=")[1] for run in grid)
        for s in range(2)
    ]
    bench = {"metrics": {"test_acc@5000": {"series": "test/acc", "at_step": 5000}}}
    bench["choice"] = {"axis": "lr", "metric": "test_acc@5000", "goal": "max", "report": []}
    (tmp_path / "majority" / "lr").mkdir(parents=True)
    board = build("majority", "lr", records, bench)
    (tmp_path / "majority" / "lr" / "leaderboard.json").write_text(dumps_board(board), encoding="utf-8")
    config, runs = plan_runs("majority", "tuned", seeds=[0], variants=["pre/both", "pre/scale"], results_dir=tmp_path)
    assert [r.variant for r in runs] == ["pre/both,lr=0.001", "pre/both,lr=0.003", "pre/scale,lr=0.001",
                                         "pre/scale,lr=0.01"]  # fmt: skip
    assert [row["chosen"] for row in config["bench"]["tuned"]["bases"]] == ["0.003", "0.01"]
    _, quick10 = plan_runs("majority", "quick-10", seeds=[0], variants=["pre/both"])
    assert runs[0].config_hash == quick10[0].config_hash
    with pytest.raises(ValueError, match=r"^variants: 'pre/both,lr=0.01' is neither the shared nor the tuned point"):
        plan_runs("majority", "tuned", seeds=[0], variants=["pre/both,lr=0.01"], results_dir=tmp_path)
    with pytest.raises(ValueError, match=r"^bench\.tuned\.choice: .* does not exist"):
        plan_runs("majority", "tuned", seeds=[0], variants=["pre/both"], results_dir=tmp_path / "none")
