"""Planning speed: what the planner costs per planned variant, against Lightning's own CLI building the same config.

A sweep, a bake (``normbench bake --dry_run`` plans every queued run) and a card plan each variant by building its
LightningCLI (parse, instantiate the model and data module) and hashing its resolved config. The baseline builds
Lightning's own ``LightningCLI`` on the same resolved configs, one per variant, and nothing else; the candidate is
``plan_runs`` of the majority task's learning-rate grid (six variants at nine rates). Ratio near 1: planning costs a
CLI build per variant and little more; normbench's CLI dumps its config as JSON, where Lightning's dumps YAML and reads
it back in pure Python, so the ratio may fall below 1.
"""

from __future__ import annotations

import warnings

import lightning as L
import yaml
from lightning.pytorch.cli import LightningCLI

from normbench.sweep.plan import plan_runs
from normbench.tasks.base import NormbenchModule

SEEDS = [100]
POINTS = 6 * 9  # six variants at nine rates


def planned_configs() -> list[dict]:
    """The resolved configs of the grid's variants, as the planner runs them."""
    _, runs = plan_runs("majority", "lr", seeds=SEEDS)
    return [run.config for run in runs]


def lightning_builds(configs: list[dict], tmp_path) -> int:  # noqa: ANN001
    warnings.filterwarnings("ignore", message="LightningCLI's args parameter")
    for config in configs:
        args = {k: v for k, v in config.items() if k in ("trainer", "model", "data", "seed_everything")}
        args["trainer"] = {**args["trainer"], "default_root_dir": str(tmp_path), "logger": False}
        LightningCLI(
            NormbenchModule,
            L.LightningDataModule,
            subclass_mode_model=True,
            subclass_mode_data=True,
            args=["--config", yaml.safe_dump(args)],
            run=False,
            auto_configure_optimizers=False,
        )
    return len(configs)


def test_lightning_cli_builds(benchmark, record_pair, tmp_path) -> None:  # noqa: ANN001
    configs = planned_configs()
    assert benchmark.pedantic(lightning_builds, args=(configs, tmp_path), rounds=3, iterations=1) == POINTS
    record_pair(
        "planning the majority lr grid (per variant)",
        "baseline",
        "reported (one LightningCLI per variant = 1)",
        per=POINTS,
    )


def test_plan_runs(benchmark, record_pair) -> None:  # noqa: ANN001
    runs = benchmark.pedantic(lambda: plan_runs("majority", "lr", seeds=SEEDS)[1], rounds=3, iterations=1)
    assert len(runs) == POINTS
    record_pair("planning the majority lr grid (per variant)", "plan_runs", per=POINTS)
