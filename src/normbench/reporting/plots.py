"""Figures next to the leaderboards: one logged series per variant, mean and min-max band over seeds."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from normbench.io import atomic_write  # noqa: E402
from normbench.tasks.series import smooth  # noqa: E402


def seed_band(runs: list[list[list[float]]]) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Steps, mean, min and max over seeds, each seed's series interpolated on the common steps."""
    runs = [np.asarray(r, dtype=float) for r in runs if r]
    end = min(r[-1, 0] for r in runs)
    steps = np.unique(np.concatenate([r[:, 0] for r in runs]))
    steps = steps[steps <= end]
    values = np.stack([np.interp(steps, r[:, 0], r[:, 1]) for r in runs])
    return steps, values.mean(0), values.min(0), values.max(0)


def plot_series(records_by_variant: dict[str, list[dict[str, Any]]], spec: dict[str, Any], path: str | Path) -> Path:
    """Write one PNG of ``spec['series']`` for every variant (mean line, min-max band over seeds)."""
    fig, ax = plt.subplots(figsize=(7, 4.2), dpi=120)
    for name, records in records_by_variant.items():
        runs = [smooth(r["series"].get(spec["series"], []), int(spec.get("smooth", 1))) for r in records]
        if not any(runs):
            continue
        steps, mean, lo, hi = seed_band(runs)
        (line,) = ax.plot(steps, mean, label=f"{name} (n={len(records)})", lw=1.6)
        ax.fill_between(steps, lo, hi, color=line.get_color(), alpha=0.2, lw=0)
    ax.set_xlabel("training step")
    ax.set_ylabel(spec.get("ylabel", spec["series"]))
    ax.set_title(spec.get("title", spec["series"]), fontsize=10)
    if spec.get("logy"):
        ax.set_yscale("log")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    return save_png(fig, path)


def save_png(fig: Any, path: str | Path) -> Path:
    """Write ``fig`` as PNG atomically (temporary file + rename) and close it."""
    try:
        return atomic_write(path, lambda tmp: fig.savefig(tmp, format="png"))
    finally:
        plt.close(fig)
