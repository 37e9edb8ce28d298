"""``--compile MODE``: the training steps run through ``torch.compile``; the run is the same run (same config hash,
same directory), its provenance names the mode, and its values agree with eager training within the declared
cross-platform tolerance (fused kernels sum in another order)."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from normbench.tasks import get_task
from normbench.training.fit import train
from normbench.training.reproducibility import agrees, same_platform
from normbench.training.run.records import read_record

TINY = [
    "--data.init_args.num_sequences=600",
    "--data.init_args.batch_size=64",
    "--data.init_args.eval_batch_size=300",
    "--trainer.max_steps=12",
    "--trainer.max_epochs=-1",
    "--trainer.val_check_interval=6",
    "--trainer.enable_progress_bar=false",
    "--trainer.enable_model_summary=false",
]


def fit(runs: Path, *extra: str) -> dict:
    return read_record(train(["--config", str(get_task("majority").config_path), *TINY, *extra, f"--runs_dir={runs}"]))


def test_a_mode_that_does_not_exist_is_one_line(tmp_path: Path) -> None:
    with pytest.raises(
        ValueError,
        match=r"^compile: 'fast' is not allowed; choose one of none, default, "
        r"reduce-overhead, max-autotune$",
    ):
        fit(tmp_path, "--compile=fast")
    assert not list(tmp_path.rglob("record.json"))


def compiled_matches_eager(tmp_path: Path, mode: str, accelerator: str) -> None:
    device = f"--trainer.accelerator={accelerator}"
    eager = fit(tmp_path / "eager", device)
    compiled = fit(tmp_path / "compiled", device, f"--compile={mode}")
    assert compiled["status"] == eager["status"] == "done"
    assert compiled["config_hash"] == eager["config_hash"]
    assert compiled["provenance"]["compile"] == mode and "compile" not in eager["provenance"]
    assert not same_platform(compiled["provenance"], eager["provenance"])  # no bit-for-bit promise between them
    for name, points in eager["series"].items():
        got = dict((step, value) for step, value in compiled["series"][name])
        off = [(s, v, got.get(s)) for s, v in points if not agrees(name, got.get(s), v, bitwise=False)]
        assert not off, (name, off[:3])


@pytest.mark.slow
def test_compiled_training_on_the_cpu_agrees_with_eager(tmp_path: Path) -> None:
    """About a minute on 2 CPU cores, most of it compiling."""
    compiled_matches_eager(tmp_path, "default", "cpu")


@pytest.mark.cuda
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
def test_cuda_graphs_agree_with_eager(tmp_path: Path) -> None:
    compiled_matches_eager(tmp_path, "reduce-overhead", "gpu")
