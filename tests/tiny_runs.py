"""A tiny majority sweep (one variant, one seed, 6 steps) for the fault tests: its config file and its runs."""

from __future__ import annotations

import shutil
from pathlib import Path

import yaml

from normbench.tasks import get_task
from normbench.training.config import deep_merge

TINY = {
    "trainer": {"max_steps": 6, "val_check_interval": 3, "enable_model_summary": False},
    "data": {"init_args": {"num_sequences": 600, "batch_size": 64, "eval_batch_size": 300}},
    "bench": {"seeds": [0], "default_variants": ["pre/both"]},
}


def tiny_config(folder: Path, seeds: list[int] | None = None) -> Path:
    """``folder/tiny.yaml``: the majority config whose default preset (quick) is a 6-step run on 600 sequences."""
    config = yaml.safe_load(Path(str(get_task("majority").config_path)).read_text())
    patch = deep_merge(TINY, {"bench": {"seeds": seeds}}) if seeds else TINY
    config["presets"]["quick"] = deep_merge(config["presets"]["quick"], patch)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "tiny.yaml"
    path.write_text(yaml.safe_dump(config, sort_keys=False))
    return path


def sweep_args(config: Path, root: Path) -> list[str]:
    """``normbench sweep`` arguments of the tiny sweep, its runs and results under ``root``, in this process."""
    return [
        "sweep",
        "--config",
        str(config),
        "--workers=1",
        "--no-progress",
        f"--runs_dir={root / 'runs'}",
        f"--results_dir={root / 'results'}",
    ]


def copy_of(trained: Path, root: Path) -> tuple[Path, Path]:
    """A copy of the trained tiny sweep under ``root``: (its config, its one run directory)."""
    shutil.copytree(trained, root, dirs_exist_ok=True)
    (run,) = (root / "runs" / "majority").glob("*/seed0")
    return root / "tiny.yaml", run
