"""The reproducibility contract: the platform in provenance, declared tolerances, bitwise on one platform."""

from __future__ import annotations

import fnmatch
import json
import math
import os
import statistics
from pathlib import Path

import pytest

import normbench
from normbench.tasks import task_names
from normbench.training.config import load_config
from normbench.training.records import provenance
from normbench.training.reproducibility import (
    COUNTED,
    TOLERANCES,
    agrees,
    chaotic,
    mismatches,
    platform_info,
    platform_key,
    same_platform,
    tolerance,
)

RESULTS = Path(normbench.__file__).resolve().parents[2] / "results"


def test_provenance_names_the_platform() -> None:
    info = provenance()["platform"]
    for key in ("cpu", "cpu_capability", "threads", "gpu", "cuda", "cudnn", "deterministic_algorithms", "mkl_cbwr"):
        assert key in info, key
    assert info["cpu_capability"] and info["cpu"]
    assert info["mkl_cbwr"] == os.environ["MKL_CBWR"]  # normbench asks MKL for alignment-independent results


def test_same_platform_needs_a_named_platform_and_the_same_torch() -> None:
    here = provenance()
    assert same_platform(here, json.loads(json.dumps(here)))
    assert not same_platform(here, {**here, "torch": "0.0"})
    assert not same_platform(here, {**here, "platform": {**here["platform"], "cpu_capability": "AVX512x"}})
    assert platform_key({"torch": "2"}) is None and not same_platform({"torch": "2"}, {"torch": "2"})


def test_each_metric_has_a_tolerance_and_the_examples_hold() -> None:
    assert tolerance("test_acc@1000").allows(0.6842932, 0.6842872)  # AMD AVX-512 vs the published CPU
    assert tolerance("final_query_angle").allows(63.43943786, 63.43944931)
    assert not tolerance("test_acc@1000").allows(0.69, 0.68)
    assert tolerance("train/loss_step") == tolerance("final_train_loss")
    assert agrees("val_acc", None, None, bitwise=False) and not agrees("val_acc", None, 0.5, bitwise=False)
    assert agrees("x", math.nan, math.nan, bitwise=True) and not agrees("x", 1.0, 1.0 + 1e-16 * 4, bitwise=True)
    assert mismatches({"val_acc": 0.5}, {"val_acc": 0.5002}, bitwise=False) == [
        "val_acc: 0.5 vs 0.5002 (expected within 0.0001 absolute)"
    ]


def published_spreads() -> list[tuple[str, str, str, float, float, float]]:
    """(board, variant, metric, mean, std, tolerance) of every published metric with 3+ finite seeds."""
    out = []
    for board in sorted(RESULTS.rglob("leaderboard.json")):
        doc = json.loads(board.read_text())
        if doc["task"] in task_names() and chaotic(load_config(doc["task"]).get("bench")):  # by distribution
            continue
        for variant in doc.get("variants", []):
            for metric, agg in variant.get("metrics", {}).items():
                seeds = [v for v in agg.get("per_seed") or [] if isinstance(v, (int, float)) and math.isfinite(v)]
                if len(seeds) < 3:
                    continue
                mean, std = statistics.fmean(seeds), statistics.stdev(seeds)
                tol = tolerance(metric)
                out.append(
                    (str(board.relative_to(RESULTS)), variant["name"], metric, mean, std, tol.abs + tol.rel * abs(mean))
                )
    return out


def test_tolerances_are_far_below_the_seed_spread_of_every_published_board() -> None:
    """A tenth of the std over seeds at most, for every measured metric but counts (steps, keys: one unit)
    and metrics whose seeds agree to 1e-4 relative themselves (e.g. a model stuck at the unigram loss)."""
    rows = published_spreads()
    assert len(rows) > 300
    checked, too_wide = 0, []
    for board, variant, metric, mean, std, tol in rows:
        if any(fnmatch.fnmatchcase(metric, p) for p in COUNTED) or std <= 1e-4 * abs(mean) or std == 0:
            continue
        checked += 1
        if tol > std / 10:
            too_wide.append(f"{board} {variant} {metric}: tolerance {tol:.2g}, std {std:.2g}")
    assert checked > 250 and not too_wide, too_wide[:10]


def test_sst2_is_declared_chaotic_and_majority_is_not() -> None:
    assert chaotic(load_config("sst2").get("bench")) and chaotic(load_config("majority").get("bench")) is None


def test_the_tolerance_table_ends_with_a_catch_all() -> None:
    assert TOLERANCES[-1][0] == "*" and tolerance("anything/else").rel > 0
    assert platform_info()["gpu"] is None


@pytest.mark.cuda
@pytest.mark.skipif(not __import__("torch").cuda.is_available(), reason="needs a CUDA GPU")
def test_the_platform_of_a_gpu_names_it() -> None:
    info = platform_info("cuda")
    assert info["gpu"] and info["cuda"] and info["cudnn"]
