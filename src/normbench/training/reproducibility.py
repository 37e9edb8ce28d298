"""The reproducibility contract: which platform produced a number, and how closely another must agree.

* **Same platform** (CPU model and vector capability, threads, GPU, CUDA and cuDNN, torch, the
  deterministic flags, the ``torch.compile`` mode if any): a run retrained with the same configuration and seed gives
  the same metrics bit for bit.
* **Another platform** (another CPU vendor or vector width, a GPU, another torch, compiled or not): every metric
  agrees within the tolerance declared for its kind below, ``|a - b| <= abs + rel * |b|``. The
  tolerances sit one to two orders of magnitude below the spread over seeds of the published
  leaderboards (a test holds them to it), so a verdict never depends on the platform.
* **Chaotic tasks** (a task config's ``bench.reproducibility.chaotic``): a last-bit difference
  decides when a run leaves a plateau, so per-seed values do not travel between platforms at all;
  re-runs there are compared by their distribution over seeds, not digit by digit.

Two runs on one CPU agree bit for bit only with Intel MKL's conditional numerical reproducibility
on (``MKL_CBWR=AUTO,STRICT``, set when :mod:`normbench` is imported, before MKL's first call): without it MKL's
matrix products may take another code path for another memory alignment, and the per-batch padded
shapes of the text tasks give new alignments from run to run.
"""

from __future__ import annotations

import fnmatch
import math
import os
import platform
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import torch

from normbench.archive.documents.sections import DistributionRow, ToleranceRow
from normbench.archive.record import Platform
from normbench.io import Config

MKL_CBWR = "MKL_CBWR"  # set to AUTO,STRICT when normbench is imported, unless the user set it


def cpu_model() -> str:
    """The CPU's model name (``/proc/cpuinfo``'s ``model name``; else what :mod:`platform` says)."""
    try:
        for line in Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace").splitlines():
            key, _, value = line.partition(":")
            if key.strip() in ("model name", "Processor", "cpu model"):
                return value.strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "unknown"


def platform_info(device: torch.device | str | None = None) -> Platform:
    """What decides a run's last bits: CPU, vector capability, threads, GPU, CUDA/cuDNN, deterministic flags."""
    device = torch.device(device) if device is not None else None
    on_gpu = device is not None and device.type == "cuda"
    info: Platform = {
        "cpu": cpu_model(),
        "cpu_capability": torch.backends.cpu.get_cpu_capability(),
        "machine": platform.machine(),
        "threads": torch.get_num_threads(),
        "mkl_cbwr": os.environ.get(MKL_CBWR),
        "gpu": torch.cuda.get_device_name(device) if on_gpu else None,
        "cuda": torch.version.cuda if on_gpu else None,
        "cudnn": torch.backends.cudnn.version() if on_gpu else None,
        "deterministic_algorithms": torch.are_deterministic_algorithms_enabled(),
        "cudnn_deterministic": bool(torch.backends.cudnn.deterministic),
        "cudnn_benchmark": bool(torch.backends.cudnn.benchmark),
    }
    return info


# What must be equal for two runs to be bit-identical: the platform, and the library doing the arithmetic.
SAME_PLATFORM_KEYS = (
    "cpu",
    "cpu_capability",
    "machine",
    "threads",
    "mkl_cbwr",
    "gpu",
    "cuda",
    "cudnn",
    "deterministic_algorithms",
    "cudnn_deterministic",
)


def platform_key(provenance: Mapping[str, object]) -> tuple[object, ...] | None:
    """The part of a record's provenance that must match for bit-identical results; ``None`` where it was
    not recorded (records written before provenance named the platform)."""
    info = provenance.get("platform")
    if not isinstance(info, dict):
        return None
    return (provenance.get("torch"), provenance.get("compile"), *(info.get(k) for k in SAME_PLATFORM_KEYS))


def same_platform(a: Mapping[str, object], b: Mapping[str, object]) -> bool:
    """Whether two provenances name the same platform and torch (``False`` where either is not named)."""
    key_a, key_b = platform_key(a), platform_key(b)
    return key_a is not None and key_a == key_b


@dataclass(frozen=True)
class Tolerance:
    """``|a - b| <= abs + rel * |b|``: how far another platform's value of a metric may be from ours."""

    abs: float
    rel: float
    why: str

    def allows(self, value: float | None, reference: float | None) -> bool:
        """Whether ``value`` agrees with ``reference`` (both missing, or both infinite alike, agree)."""
        if value is None or reference is None:
            return value is None and reference is None
        if not (math.isfinite(value) and math.isfinite(reference)):
            return value == reference or (math.isnan(value) and math.isnan(reference))
        return abs(value - reference) <= self.abs + self.rel * abs(reference)

    def describe(self) -> str:
        parts = [f"{self.abs:g} absolute" if self.abs else "", f"{self.rel:g} relative" if self.rel else ""]
        return " + ".join(p for p in parts if p)


# Metric name patterns (fnmatch, first match wins) and their cross-platform tolerance, set from the drift measured
# between replicates (results/reproducibility.md): each at least 3x the largest drift measured and at most a tenth
# of the smallest seed std of every published board; a test holds every entry to that rule. float32 training that
# differs in its last bits drifts apart over thousands of steps. Counts (steps read off a series, unselectable
# keys) move in whole units or not at all.
COUNTED = ("*steps_to_*", "*unselectable*")
TOLERANCES: tuple[tuple[str, Tolerance], ...] = (
    ("lr", Tolerance(0.0, 1e-6, "a function of the step alone")),
    (
        "*steps_to_*",
        Tolerance(0.0, 0.0, "a step read off a logged series: bit-identical on every replicate measured"),
    ),
    ("*angle*", Tolerance(0.077, 0.0, "degrees")),
    (
        "*unselectable*",
        Tolerance(1e-4, 0.0, "a fraction of keys (counted): a key within rounding of its hull's boundary may flip"),
    ),
    ("*acc*", Tolerance(2.5e-4, 0.0, "a fraction of examples")),
    ("*f1*", Tolerance(2.5e-4, 0.0, "a fraction of examples")),
    ("mu_f*", Tolerance(5e-4, 0.0, "a share of the hidden state (the feed-forward term drifts the most)")),
    ("mu_h@out", Tolerance(2.5e-4, 0.0, "a share of the output hidden state (the attention term)")),
    ("mu_*", Tolerance(1e-4, 0.0, "a share of the hidden state")),
    ("*loss*", Tolerance(0.0, 1e-5, "nats")),
    ("*ppl*", Tolerance(0.0, 2e-5, "exp of a loss")),
    ("*perplexity*", Tolerance(0.0, 2e-5, "exp of a loss")),
    ("*", Tolerance(1e-6, 1e-5, "any other metric")),
)


# Metrics compared across platforms by their distribution over seeds, not by a tolerance: the drift measured
# between replicates, times 3, exceeds a tenth of the smallest seed std of some published board, so no tolerance
# satisfies both bounds of the rule (results/reproducibility.md says where; a test holds each entry to it).
BY_DISTRIBUTION: tuple[tuple[str, str], ...] = (
    ("final_train_loss", "the majority task's final training loss drifts by 1e-4 between CPUs; its seeds by 1e-3"),
    ("test_acc@5000", "at step 5000 the majority task's seeds agree within 2e-3; CPUs drift by 1e-4"),
    (
        "final_query_angle",
        "the majority task's final query angle drifts by 0.028 degrees between CPUs (Intel vs AMD); "
        "the paper protocol's seeds by 0.78",
    ),
    (
        "mu_i*",
        "the input's share of the majority task's output drifts by 8.5e-5 between CPUs (Intel vs AMD); "
        "on some boards its seeds agree within 4e-4",
    ),
)
DISTRIBUTION_WIDTH = 3.0  # a re-run agrees with the published seeds within this many of their standard deviations


def by_distribution(metric: str) -> str | None:
    """Why ``metric`` is compared across platforms by its distribution over seeds (``None``: by its tolerance)."""
    for pattern, why in BY_DISTRIBUTION:
        if fnmatch.fnmatchcase(metric, pattern) or fnmatch.fnmatchcase(metric.rpartition("/")[2], pattern):
            return why
    return None


def within_distribution(value: float | None, seeds: list[float]) -> bool:
    """Whether a re-run's ``value`` lies within :data:`DISTRIBUTION_WIDTH` seed standard deviations of the
    published seeds' mean, ``|value - mean| <= 3 std`` (two seeds at least; one: equal to it)."""
    finite = [s for s in seeds if s is not None and math.isfinite(s)]
    if value is None or not math.isfinite(value) or not finite:
        return value is None and not finite
    if len(finite) < 2:
        return value == finite[0]
    mean = sum(finite) / len(finite)
    std = math.sqrt(sum((s - mean) ** 2 for s in finite) / (len(finite) - 1))
    return abs(value - mean) <= DISTRIBUTION_WIDTH * std


def chaotic(bench: Config | None) -> str | None:
    """Why a task's per-seed values do not travel between platforms (``bench.reproducibility.chaotic``), or ``None``."""
    reason = ((bench or {}).get("reproducibility") or {}).get("chaotic")
    return str(reason) if reason else None


def tolerance(metric: str) -> Tolerance:
    """The declared cross-platform tolerance of ``metric`` (a leaderboard column or a logged series name)."""
    for pattern, tol in TOLERANCES:
        if fnmatch.fnmatchcase(metric, pattern) or fnmatch.fnmatchcase(metric.rpartition("/")[2], pattern):
            return tol
    raise AssertionError("TOLERANCES ends with '*'")


def agrees(metric: str, value: float | None, reference: float | None, bitwise: bool) -> bool:
    """Whether a re-run's ``value`` reproduces ``reference``: exactly when ``bitwise`` (same platform),
    else within :func:`tolerance`."""
    if bitwise:
        both_nan = value is not None and reference is not None and math.isnan(value) and math.isnan(reference)
        return value == reference or both_nan
    return tolerance(metric).allows(value, reference)


def distribution_table() -> list[DistributionRow]:
    """The metrics compared by distribution as rows (for leaderboards)."""
    return [{"metrics": pattern, "why": why} for pattern, why in BY_DISTRIBUTION]


def tolerance_table() -> list[ToleranceRow]:
    """The declared tolerances as rows (for leaderboards and the README)."""
    return [{"metrics": pattern, "abs": tol.abs, "rel": tol.rel, "why": tol.why} for pattern, tol in TOLERANCES]


CUBLAS_WORKSPACE_CONFIG = "CUBLAS_WORKSPACE_CONFIG"


GPU_DETERMINISM = "NORMBENCH_GPU_DETERMINISTIC"  # =0: the GPU's fastest kernels, as PyTorch picks them


def gpu_determinism_wanted() -> bool:
    """Whether a run on a GPU gets deterministic algorithms: always, unless ``NORMBENCH_GPU_DETERMINISTIC=0``.

    Lightning's ``trainer.deterministic`` stays what it is on the CPU (some task configs set it to
    ``false``, and it is part of their runs' identity); on a GPU normbench adds PyTorch's deterministic
    algorithms in warn-only mode on top (``true`` makes them strict).
    """
    return os.environ.get(GPU_DETERMINISM, "1") != "0"


def use_deterministic_gpu_algorithms() -> None:
    """GPU kernels with a fixed reduction order wherever PyTorch has one; an op without one warns.

    cuBLAS gets a fixed workspace (``CUBLAS_WORKSPACE_CONFIG=:4096:8``), cuDNN its deterministic
    algorithms without autotuning. Recorded in every run's ``provenance.platform``.
    """
    os.environ.setdefault(CUBLAS_WORKSPACE_CONFIG, ":4096:8")
    if not torch.are_deterministic_algorithms_enabled():  # trainer.deterministic: true already made them strict
        torch.use_deterministic_algorithms(True, warn_only=True)
    torch.backends.cudnn.deterministic = True
    torch.backends.cudnn.benchmark = False


def mismatches(
    actual: dict[str, float | None],
    expected: dict[str, float | None],
    bitwise: bool,
    seeds: dict[str, list[float]] | None = None,
) -> list[str]:
    """One line per metric of ``expected`` that ``actual`` does not reproduce (see :func:`agrees`); across
    platforms a metric compared by distribution (:func:`by_distribution`) is held to the published ``seeds``
    of that metric instead, where they are given."""
    out = []
    for metric, want in expected.items():
        got = actual.get(metric)
        if not bitwise and by_distribution(metric) and seeds and metric in seeds:
            if not within_distribution(got, seeds[metric]):
                out.append(f"{metric}: {got!r} outside the published seeds {seeds[metric]!r} (by distribution)")
        elif not agrees(metric, got, want, bitwise):
            rule = "bit for bit" if bitwise else f"within {tolerance(metric).describe()}"
            out.append(f"{metric}: {got!r} vs {want!r} (expected {rule})")
    return out


# On a GPU the monitor's statistics of the evaluation pass (geometry/*) were seen 1 ulp apart between a run
# and the same run resumed, while every training and evaluation series agreed bit for bit (H100, torch 2.11).
GPU_TOLERATED_SERIES = ("geometry/",)


def series_mismatches(
    got: dict[str, list[list[float]]],
    want: dict[str, list[list[float]]],
    on_gpu: bool,
    tolerated: tuple[str, ...] = GPU_TOLERATED_SERIES,
) -> list[str]:
    """How two records of the same run on the same platform differ (empty: they agree).

    Every series must have the same steps and values bit for bit; on a GPU the series named by a prefix
    in ``tolerated`` (by default the monitor's statistics) may differ within their declared tolerance.
    """
    if set(got) != set(want):
        return [f"series {sorted(set(got) ^ set(want))} in one record only"]
    out = []
    for name, points in want.items():
        if [s for s, _ in got[name]] != [s for s, _ in points]:
            out.append(f"{name}: steps differ")
            continue
        bitwise = not (on_gpu and name.startswith(tolerated))
        off = [(s, a, b) for (s, a), (_, b) in zip(got[name], points, strict=False) if not agrees(name, a, b, bitwise)]
        if off:
            out.append(f"{name}: {len(off)} of {len(points)} points differ, first {off[0]}")
    return out
