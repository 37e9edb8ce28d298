"""The paper preset is the authors' protocol and model, and a run stopped early is exactly its first steps."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch

from normbench.training.fit import train

TINY = [
    "--config",
    "majority",
    "--preset",
    "paper",
    "--data.init_args.num_sequences",
    "600",
    "--data.init_args.batch_size",
    "64",
    "--data.init_args.eval_batch_size",
    "300",
    "--trainer.max_epochs",
    "-1",
    "--trainer.val_check_interval",
    "2",
    "--trainer.log_every_n_steps",
    "1",
    "--trainer.enable_model_summary",
    "false",
    "--trainer.enable_progress_bar",
    "false",
]


def fit(tmp_path: Path, steps: int, seed: int) -> dict:
    record = train(
        [
            *TINY,
            "--trainer.max_steps",
            str(steps),
            f"--seed_everything={seed}",
            f"--runs_dir={tmp_path / f'runs{steps}'}",
        ]
    )
    return json.loads(Path(record).read_text())


def test_a_paper_run_stopped_early_is_exactly_the_first_steps_of_a_longer_one(tmp_path: Path) -> None:
    """The schedule depends on the step and the data order on the seed and epoch, not on the planned
    length: paper-1000's runs are the first 1000 steps of the paper's, value for value."""
    short, long = fit(tmp_path, 4, 3), fit(tmp_path, 8, 3)
    per_step = ["train/loss_step", "test/acc", "test/loss", "test/query_angle"]  # per-epoch means end mid-epoch
    assert all(short["series"][name] for name in per_step)
    for name in per_step:
        assert short["series"][name] == [p for p in long["series"][name] if p[0] <= 4], name
    arch, data = (long["config"]["model"]["init_args"]["arch"], long["config"]["data"]["init_args"])
    assert arch["init"] == "encoder_layer" and data["data_seed"] == "seed" and data["generator"] == "paper"


def test_every_paper_seed_draws_its_own_data(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """As the authors' unseeded generator: two seeds, two data sets (and splits)."""
    from normbench.data.majority import MajorityDataModule

    sets = []
    for seed in (0, 1):
        monkeypatch.setenv("PL_GLOBAL_SEED", str(seed))
        dm = MajorityDataModule(num_sequences=600, data_seed="seed", generator="paper", cache_dir=str(tmp_path))
        dm.setup()
        sets.append(dm.train_set.tensors[0])
    assert not torch.equal(sets[0], sets[1])
