"""Every leaderboard column and every claim metric of each task is read from a series a run really logs.

Each task's named variants train a few steps (one seed) through the sweep and its leaderboard; a
column or claim metric whose series no run logged would show up as "not logged by this variant".
The series names themselves are declared once, in :mod:`normbench.tasks.series`.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from normbench.sweep.options import SweepOptions
from normbench.sweep.run import run_sweep
from normbench.tasks import get_task
from normbench.tasks.series import expand_layers, expand_metric_layers, series_value, smooth
from normbench.training.config import load_config
from tests.lm_corpus import write_corpus
from tests.sst2_corpus import write_sst2
from tests.tasks.test_lm_task import tiny as tiny_lm
from tests.tasks.test_sst2_task import tiny as tiny_sst2

MAJORITY = [
    "data.init_args.num_sequences=600",
    "data.init_args.batch_size=64",
    "data.init_args.eval_batch_size=200",
    "trainer.max_steps=6",
    "trainer.val_check_interval=3",
    "trainer.log_every_n_steps=1",
    "trainer.enable_progress_bar=false",
    "trainer.enable_model_summary=false",
]


def overrides(task: str, tmp: Path) -> list[str]:
    if task == "majority":
        return MAJORITY
    if task == "lm":
        corpus = tmp / "wikitext-2"
        write_corpus(corpus, articles=30)
        # held-out sequences as long as the largest key set of the key-set claims (256 keys)
        return tiny_lm(corpus) + ["data.init_args.analysis_length=256", "model.init_args.arch.max_positions=256"]
    return tiny_sst2(write_sst2(tmp / "sst2", train=200, dev=40))


@pytest.mark.parametrize("task", ["majority", pytest.param("lm", marks=pytest.mark.slow), "sst2"])  # lm: a minute
def test_every_column_and_claim_metric_is_logged(task: str, tmp_path: Path) -> None:
    config = load_config(
        str(get_task(task).config_path), load_config(str(get_task(task).config_path))["default_preset"]
    )
    bench = config["bench"]
    variants = list(bench.get("default_variants") or bench["variants"])  # the matrix cells: test_matrix_cells
    options = SweepOptions(
        task,
        seeds="0",
        variants=variants,
        runs_dir=str(tmp_path / "runs"),
        results_dir=str(tmp_path / "results"),
        progress=False,
        workers=1,
    )
    out = run_sweep(options, overrides(task, tmp_path))
    board = json.loads((out / "leaderboard.json").read_text())
    rows = {v["name"]: v for v in board["variants"]}
    assert set(rows) == set(variants)

    n_layers = config["model"]["init_args"]["arch"].get("n_layers", 1)
    columns = expand_layers(bench["columns"], n_layers)
    assert set(columns) <= set(expand_metric_layers(bench["metrics"], n_layers))
    unlogged = [
        f"{metric} of {name}"
        for name, row in rows.items()
        for metric in columns
        if "not logged" in (row["metrics"][metric].get("note") or "")
    ]
    assert not unlogged, f"leaderboard columns without a logged series: {unlogged}"

    assert board["claims"]
    for claim in board["claims"]:
        for role, variant in claim["variants"].items():
            metric = claim["metrics"][role]
            agg = rows[variant]["metrics"][metric]
            assert "not logged" not in (agg.get("note") or ""), f"{claim['id']}: {metric} of {variant}"


def test_series_value_rules() -> None:
    pts = [[1, 0.1], [2, 0.2], [4, 0.4]]
    assert series_value(pts, {"at_step": 3}) == (0.2, None)
    assert series_value(pts, {"at_step": 4}) == (0.4, None)
    assert series_value(pts, {"at_step": 5}) == (None, None)  # run ended before step 5
    assert series_value(pts, {"at_step": "last"}) == (0.4, None)
    assert series_value(pts, {"first_below": 0.2}) == (1.0, None)
    assert series_value([[1, 3.0], [6, 2.0]], {"first_below": 1.0}) == (None, 6.0)


def test_series_values_that_are_not_finite_read_as_missing() -> None:
    nan = float("nan")
    pts = [[1, 3.0], [2, None], [3, 0.5], [4, nan]]
    assert series_value(pts, {"at_step": "last"}) == (None, None)
    assert series_value(pts, {"at_step": 2}) == (None, None)
    assert series_value(pts, {"at_step": 3}) == (0.5, None)
    assert series_value(pts, {"first_below": 1.0}) == (3.0, None)  # a null is never "below"
    assert series_value([[1, None], [2, float("inf")]], {"first_below": 1.0}) == (None, 2.0)
    # a moving average is null while a null is inside its window, finite again after it
    assert smooth([[1, 1.0], [2, None], [3, 3.0], [4, 5.0]], 2) == [[1, 1.0], [2, None], [3, None], [4, 4.0]]
    assert smooth([[1, 1.0], [2, 2.0], [3, 3.0]], 2) == [[1, 1.0], [2, 1.5], [3, 2.5]]
