"""The per-head view computed after the fact equals what a run's test stage logs."""

from __future__ import annotations

from pathlib import Path

import pytest

from normbench.run_analyses.head_keys import with_head_keys
from normbench.tasks import get_task
from normbench.training.fit import train
from normbench.training.run.records import read_record
from tests.lm_corpus import write_corpus
from tests.tasks.test_lm_task import tiny as tiny_lm


def test_computed_from_the_checkpoint_equals_the_test_stage(tmp_path: Path) -> None:
    write_corpus(tmp_path / "wikitext-2", articles=30)
    args = [
        "--config",
        str(get_task("lm").config_path),
        "--preset",
        "quick",
        *(f"--{o}" for o in tiny_lm(tmp_path / "wikitext-2")),
        f"--runs_dir={tmp_path / 'runs'}",
    ]
    path = train(args)
    record = read_record(path)
    logged = {k: v for k, v in record["series"].items() if k.startswith("analysis/unselectable_heads/")}
    assert len(logged) == 4
    old = {
        **record,
        "record_path": str(path),
        "series": {k: v for k, v in record["series"].items() if k not in logged},
    }  # as trained before the series
    (computed,) = with_head_keys([old])
    for name, points in logged.items():
        assert computed["series"][name][-1][1] == pytest.approx(points[-1][1], abs=1e-6)  # logged as float32
    assert (path.parent / "head_keys.json").is_file()
    (again,) = with_head_keys([record])  # a run that logged the series keeps its own values
    assert again is record
