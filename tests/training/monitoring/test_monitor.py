"""Geometry during training (GeometryMonitor), the 3-D views, and `normbench analyze decompose`."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import lightning as L
import numpy as np
import pytest

from normbench.run_analyses.geometry import read_angle_histograms
from normbench.training.reproducibility import series_mismatches
from tests.training.test_cli import CONFIG, fit


def normbench(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "normbench", *args], cwd=cwd, capture_output=True, text=True, timeout=600
    )


def test_every_evaluation_logs_norm_inputs_unselectable_keys_and_angles(tmp_path: Path) -> None:
    rec = fit(tmp_path, "--model.arch.attn_norm.component=learned")
    series = rec["series"]
    for norm in ("L1.attn_norm", "L1.ffn_norm"):
        assert [s for s, _ in series[f"geometry/{norm}/input_mean"]] == [6, 12]
        assert all(v > 0 for _, v in series[f"geometry/{norm}/input_std"])
    # repeated tokens give identical keys (no positions): most majority keys are unselectable
    assert all(0.5 < v <= 1 for _, v in series["geometry/L1/unselectable"])
    # the learned normal starts at 1 and moves a little in 12 steps
    angles = [v for _, v in series["geometry/L1.attn_norm/normal_angle_to_ones"]]
    assert all(0 < a < 10 for a in angles)
    steps, rows = read_angle_histograms(rec["log_dir"])
    assert list(steps) == [6, 12]  # steps completed at each evaluation, as in the record
    assert np.allclose(rows.sum(1), 1.0)


def test_the_newer_norms_learned_scalars_are_followed(tmp_path: Path) -> None:
    rec = fit(
        tmp_path,
        "--model.arch.attn_norm={component: dyt, affine: false, options: {alpha: 0.7}}",
        "--model.arch.ffn_norm={component: scalenorm, affine: false, eps: 0.0}",
        "--model.arch.qk_norm=true",
    )
    series = rec["series"]
    alphas = [v for _, v in series["geometry/L1.attn_norm/alpha"]]
    assert [s for s, _ in series["geometry/L1.attn_norm/alpha"]] == [6, 12] and alphas[0] != 0.7  # it learns
    assert abs(alphas[0] - 0.7) < 0.1
    assert abs(series["geometry/L1.ffn_norm/g"][0][1] - 8**0.5) < 0.1
    assert abs(series["geometry/L1.attn/qk_temperature"][0][1] - 1.0) < 0.1


def test_monitor_does_not_change_training(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The hooks only read: every metric of a run equals the same run's without the monitor."""
    watched = fit(tmp_path / "a", "--seed_everything=4")
    monkeypatch.setattr("normbench.training.cli.GeometryMonitor", lambda: L.Callback())
    plain = fit(tmp_path / "b", "--seed_everything=4")
    assert not any(k.startswith("geometry/") for k in plain["series"])
    trained = {k: v for k, v in watched["series"].items() if not k.startswith("geometry/")}
    # Bit for bit; on a GPU (deterministic algorithms on) training is bit for bit too, but an evaluation that
    # follows the monitor's own forward pass was seen 1 ulp apart (test/loss on an H100): its declared tolerance.
    on_gpu = watched["provenance"]["platform"]["gpu"] is not None
    assert not series_mismatches(trained, plain["series"], on_gpu, tolerated=("test/", "val/"))


def test_analyze_decompose_writes_shares_and_figure(tmp_path: Path) -> None:
    rec = fit(tmp_path, "--model.arch.attn_norm.component=scale")
    result = normbench(
        "analyze",
        "decompose",
        "--ckpt",
        rec["checkpoint"],
        "--sequences",
        "50",
        "--out",
        str(tmp_path / "out"),
        cwd=tmp_path,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    doc = json.loads((tmp_path / "out" / "decomposition.json").read_text())
    assert doc["sequences"] == 50 and doc["tokens"] == 50 * 50 and doc["dtype"] == "float64"
    assert doc["max_abs_error"] < 1e-7
    assert list(doc["layers"]) == ["embed", "L1"] and doc["output_layer"] == "L1"
    assert doc["layers"]["embed"] == {"i": 1.0, "h": 0.0, "f": 0.0, "c": 0.0}
    assert sum(doc["layers"]["L1"].values()) == pytest.approx(1.0, abs=1e-9)
    assert (tmp_path / "out" / "decomposition.png").read_bytes()[:4] == b"\x89PNG"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--ckpt", "missing.ckpt"], "ckpt: missing.ckpt does not exist"),
        ([], "ckpt: --ckpt <run>/checkpoints/last.ckpt is required"),
    ],
)
def test_analyze_decompose_bad_input_is_one_line(
    tmp_path: Path, args: list[str], message: str, normbench_in_process
) -> None:  # noqa: ANN001
    result = normbench_in_process("analyze", "decompose", *args, cwd=tmp_path)
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [f"normbench: error: {message}"]


@pytest.mark.slow
def test_analyze_geometry_draws_d3_runs(tmp_path: Path) -> None:
    sweep = normbench(
        "sweep",
        "--config",
        CONFIG,
        "--preset",
        "geometry",
        "--variants",
        "pre/both,pre/learned",
        "--data.init_args.num_sequences=600",
        "--data.init_args.batch_size=64",
        "--data.init_args.eval_batch_size=200",
        "--trainer.max_steps=20",
        "--trainer.val_check_interval=10",
        f"--runs_dir={tmp_path / 'runs'}",
        "--no-leaderboard",
        "--no-progress",
        "--workers=1",
        cwd=tmp_path,
    )
    assert sweep.returncode == 0, sweep.stderr[-3000:]
    result = normbench(
        "analyze",
        "geometry",
        "--variants",
        "[pre/both, pre/learned]",
        "--data.init_args.num_sequences=600",
        "--data.init_args.batch_size=64",
        "--data.init_args.eval_batch_size=200",
        "--trainer.max_steps=20",
        "--trainer.val_check_interval=10",
        f"--runs_dir={tmp_path / 'runs'}",
        f"--results_dir={tmp_path / 'results'}",
        cwd=tmp_path,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    out = tmp_path / "results" / "majority"
    for png in ("geometry_3d.png", "query_angle_histograms.png"):
        assert (out / png).read_bytes()[:4] == b"\x89PNG"
    summary = json.loads((out / "geometry.json").read_text())
    for variant in ("pre/both", "pre/learned"):  # projection: every key on the plane orthogonal to the normal
        assert summary[variant]["max_abs_key_component_along_normal"] < 1e-5
        assert sorted(map(int, summary[variant]["eval_query_angle_mean_deg"])) == [10, 20]
    assert summary["pre/both"]["normal_angle_to_ones_deg"] == pytest.approx(0.0, abs=1e-3)
    bad = normbench("analyze", "geometry", "--preset", "quick", f"--runs_dir={tmp_path / 'runs'}", cwd=tmp_path)
    assert bad.returncode == 2 and "d_model=8" in bad.stderr and len(bad.stderr.strip().splitlines()) == 1


def test_affine_keys_lie_on_the_hyperplane_with_normal_u_over_g() -> None:
    import torch

    from normbench.analysis.angles import attention_normals
    from normbench.nn.gpt import GPTDecoder
    from normbench.nn.norms import NormSpec

    for component in ("both", "learned"):
        model = GPTDecoder(vocab_size=30, max_positions=8, d_model=8, n_layers=2, attn_norm=NormSpec(component))
        with torch.no_grad():
            for p in model.parameters():
                p.add_(0.3 * torch.randn(p.shape))
        normals = attention_normals(model)
        for i, block in enumerate(model.blocks):
            keys = block.attn_norm(torch.randn(5, 8, 8)).detach()
            offsets = (keys - block.attn_norm.bias.detach()) @ normals[f"L{i + 1}.attn"]
            assert offsets.abs().max() < 1e-5, component


def test_hooks_are_removed_when_validation_fails() -> None:
    from types import SimpleNamespace

    from normbench.tasks.majority import MajorityModule
    from normbench.training.monitoring.monitor import GeometryMonitor

    module, monitor = MajorityModule(), GeometryMonitor()
    monitor.on_validation_batch_start(SimpleNamespace(sanity_checking=False), module, None, 0)
    assert any(m._forward_pre_hooks for m in module.modules())
    monitor.on_exception(SimpleNamespace(), module, RuntimeError("boom"))
    assert not any(m._forward_pre_hooks for m in module.modules())


class TemperedRMS(__import__("torch").nn.Module):
    """A plug-in norm with a learned scalar (a temperature) and a per-feature gain of its own (frozen by the slot)."""

    def __init__(self, d: int) -> None:
        import torch

        super().__init__()
        self.temperature = torch.nn.Parameter(torch.tensor(2.0))
        self.gain = torch.nn.Parameter(torch.full((d,), 3.0))

    def forward(self, x):  # noqa: ANN001, ANN201
        return self.temperature * self.gain * x / x.pow(2).mean(-1, keepdim=True).add(1e-5).sqrt()


def test_a_norm_s_own_learned_parameters_are_the_numbers_training_logs() -> None:
    """DyT's declared alpha; a plug-in's parameters that still train (its per-feature gain is frozen: not logged)."""
    from normbench.nn.norms import NormSpec, create_norm, module_component
    from normbench.training.monitoring.monitor import learned_scalars

    dyt = create_norm(8, NormSpec(component="dyt"))
    assert set(learned_scalars(dyt)) == {"alpha"}
    plugin = module_component("tests.training.monitoring.test_monitor:TemperedRMS", TemperedRMS)(8, affine=False)
    assert learned_scalars(plugin) == {"temperature": 2.0}
