"""The numerics of every task, pinned: short runs compared bit for bit with this platform class's references.

A change that moves a number under an unchanged config must bump ``NUMERICS_VERSION``
(normbench/training/run/rundir.py), which changes every run's identity, and write the references again:
``NORMBENCH_WRITE_NUMERICS=1 python -m pytest tests/test_numerics.py`` on each platform class (this skips
where a platform class has no references yet, and says so).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import torch

from normbench.archive.numerics import WRITE_ENV, load_references, probe_series, reference_path, save_reference
from normbench.tasks import get_task
from normbench.training.fit import train
from normbench.training.run.records import read_record
from normbench.training.run.rundir import NUMERICS_VERSION
from tests.lm_corpus import write_corpus
from tests.sst2_corpus import write_sst2
from tests.tasks.test_lm_task import tiny as lm_tiny
from tests.tasks.test_sst2_task import tiny as sst2_tiny

RESULTS = Path(__file__).parents[1] / "results"
MAJORITY = [
    "data.init_args.num_sequences=600",
    "data.init_args.batch_size=64",
    "data.init_args.eval_batch_size=300",
    "trainer.max_steps=30",
    "trainer.val_check_interval=10",
    "trainer.log_every_n_steps=1",
    "trainer.enable_progress_bar=false",
    "trainer.enable_model_summary=false",
]
PROBES = {
    # task, preset, overrides (a data folder is made for the text tasks)
    "majority-quick-pre-both": ("majority", "quick", MAJORITY),
    "majority-paper-pre-paper_no_projection": (
        "majority",
        "paper",
        [*MAJORITY, "model.init_args.arch.attn_norm.component=paper_no_projection"],
    ),
    "lm-quick-pre-both": ("lm", "quick", None),
    "sst2-quick-pre-both": ("sst2", "quick", None),
}


def overrides_of(task: str, given: list[str] | None, data: Path) -> list[str]:
    if given is not None:
        return given
    if task == "lm":
        folder = data / "wikitext-2"
        write_corpus(folder, articles=30)
        return lm_tiny(folder)
    return sst2_tiny(write_sst2(data / "sst2", train=200, dev=40))


@pytest.mark.parametrize("probe", sorted(PROBES))
def test_a_short_run_trains_the_archived_numbers_of_this_platform(probe: str, tmp_path: Path) -> None:
    task, preset, given = PROBES[probe]
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # a platform class names its threads: the probes use one
    try:
        args = ["--config", str(get_task(task).config_path), "--preset", preset]
        args += [f"--{o}" for o in overrides_of(task, given, tmp_path / "data")]
        record = read_record(train([*args, f"--runs_dir={tmp_path / 'runs'}"]))
    finally:
        torch.set_num_threads(threads)
    assert record["status"] == "done"
    series, provenance = probe_series(record), record["provenance"]
    path = reference_path(RESULTS, provenance)
    if os.environ.get(WRITE_ENV) == "1":
        save_reference(path, NUMERICS_VERSION, probe, series, provenance)
        return
    refs = load_references(path)
    if refs.get("numerics_version") != NUMERICS_VERSION or probe not in refs.get("probes", {}):
        pytest.skip(f"no references of numerics version {NUMERICS_VERSION} for {path.stem}; {WRITE_ENV}=1 writes them")
    expected = refs["probes"][probe]
    assert sorted(series) == sorted(expected), "the probe logs other series than its reference"
    changed = [k for k in expected if series[k] != expected[k]]
    assert not changed, (
        f"{probe}: {len(changed)} series differ from the numerics-{NUMERICS_VERSION} references of {path.stem} "
        f"(first: {changed[0]}); a change that moves numbers bumps NUMERICS_VERSION in normbench/training/run/rundir.py "
        f"and writes the references again ({WRITE_ENV}=1)"
    )
