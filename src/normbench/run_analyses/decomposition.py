"""Per-layer term shares of trained runs (Mickus et al. 2022, Figure 3) and their figures.

``decompose_run`` loads a run's checkpoint, decomposes the hidden states of held-out sequences
(the task's validation data) in float64 with :mod:`normbench.analysis.decompose`, and returns the
mean importance mu(e, t) of i, h, f and c per layer. The result is cached as
``decomposition.json`` in the run directory (keyed by the checkpoint's size and mtime), where the
leaderboard reads it as the series ``decomposition/<layer>/<term>``.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import torch  # noqa: E402

from normbench.analysis.decompose import TERMS, decompose, importance  # noqa: E402
from normbench.io import atomic_write_json  # noqa: E402
from normbench.nn.norms import get_component  # noqa: E402
from normbench.render.plots import save_png  # noqa: E402
from normbench.run_analyses.run_cache import (  # noqa: E402
    CheckpointStamp,
    RecordT,
    cached_analysis,
    checkpoint_stamp,
)
from normbench.tasks.series import decomposition_as_series  # noqa: E402
from normbench.training.run.loading import build_datamodule, load_run  # noqa: E402
from normbench.training.run.rundir import DECOMPOSITION_NAME, run_of_checkpoint  # noqa: E402

TERM_LABELS = {"i": "input i", "h": "attention h", "f": "feed-forward f", "c": "biases + norm shifts c"}


class Decomposition(CheckpointStamp):
    """A run's ``decomposition.json`` (:func:`decompose_run`; the cache adds ``sequences_requested``)."""

    task: str
    """The run's task."""
    variant: str
    """The run's variant."""
    seed: int
    """The run's seed."""
    config_hash: str
    """The run's config hash."""
    run: str
    """The run folder."""
    checkpoint: str
    """The decomposed checkpoint's resolved path."""
    sequences: int
    """The validation sequences decomposed."""
    tokens: int
    """Their (unpadded) tokens."""
    dtype: str
    """The dtype the model was decomposed in (``float64``, ...)."""
    max_abs_error: float
    """The largest amount by which i + h + f + c missed a hidden state."""
    output_layer: str
    """The layer whose terms the output is (the last of ``layers``)."""
    layers: dict[str, dict[str, float]]
    """Layer -> term (``i``, ``h``, ``f``, ``c``) -> its mean importance share over the tokens."""


def decompose_run(ckpt: Path, sequences: int = 256, dtype: torch.dtype = torch.float64) -> Decomposition:
    """Mean term shares per layer over the first ``sequences`` validation sequences of a trained run."""
    if sequences < 1:
        raise ValueError(f"sequences: must be >= 1, got {sequences}")
    record, module = load_run(ckpt)
    model = module.model.to(dtype)
    sums: dict[str, np.ndarray] = {}
    tokens, seen, error = 0, 0, 0.0
    for batch in build_datamodule(record["config"]).val_dataloader():
        if seen >= sequences:
            break
        args, padding = module.model_inputs(batch)
        take = min(len(args[0]), sequences - seen)
        args = tuple(a[:take] for a in args)
        padding = None if padding is None else padding[:take]
        dec = decompose(model, *args)
        error = max(error, dec.max_error())
        valid = torch.ones(args[0].shape[:2], dtype=torch.bool, device=args[0].device) if padding is None else ~padding
        for layer in dec.layers:
            e, terms = dec.hidden[layer], dec.terms[layer]
            mu = torch.stack([importance(e, terms[k])[valid] for k in range(len(TERMS))])  # (4, tokens)
            sums[layer] = sums.get(layer, 0.0) + mu.sum(1).numpy()
        tokens += int(valid.sum())
        seen += take
    if not tokens:
        raise ValueError(f"ckpt: the validation data of {record['log_dir']} yielded no tokens to decompose")
    if error > (1e-6 if dtype == torch.float64 else 1e-3):
        raise RuntimeError(
            f"decomposition: i + h + f + c misses the hidden state by {error:.2e}; "
            f"the model has a layer the bookkeeping does not know"
        )
    layers = {layer: dict(zip(TERMS, (v / tokens).tolist(), strict=False)) for layer, v in sums.items()}
    return {
        "task": record["task"],
        "variant": record["variant"],
        "seed": record["seed"],
        "config_hash": record["config_hash"],
        "run": str(run_of_checkpoint(ckpt)),
        "checkpoint": str(Path(ckpt).resolve()),
        **checkpoint_stamp(Path(ckpt)),
        "sequences": seen,
        "tokens": tokens,
        "dtype": str(dtype).removeprefix("torch."),
        "max_abs_error": error,
        "output_layer": list(layers)[-1],
        "layers": layers,
    }


def cached_decomposition(record: Mapping[str, Any], sequences: int) -> Decomposition | None:
    """The run's ``decomposition.json``, computed first when missing or older than its checkpoint."""
    return cached_analysis(
        record, DECOMPOSITION_NAME, {"sequences_requested": sequences}, lambda ckpt: decompose_run(ckpt, sequences)
    )


def finite_band(values: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Mean, min and max over the rows (runs) of ``values`` per column, each over its finite
    entries only (NaN where a column has none)."""
    ok = np.isfinite(values)
    count = ok.sum(0)
    mean = np.where(ok, values, 0.0).sum(0) / np.maximum(count, 1)
    lo, hi = np.where(ok, values, np.inf).min(0), np.where(ok, values, -np.inf).max(0)
    empty = count == 0
    return np.where(empty, np.nan, mean), np.where(empty, np.nan, lo), np.where(empty, np.nan, hi)


def plot_decomposition(panels: Mapping[str, Sequence[Decomposition]], path: str | Path, title: str = "") -> Path:
    """One panel per entry (a variant, or one run): mu of i, h, f, c per layer, mean and min-max over runs."""
    n = len(panels)
    cols = min(n, 3)
    rows = math.ceil(n / cols)
    fig, axes = plt.subplots(
        rows, cols, figsize=(max(6.0, 4.2 * cols), 3.4 * rows), dpi=120, squeeze=False, sharey=True
    )
    for ax, (name, runs) in zip(axes.flat, panels.items(), strict=False):
        layers = list(runs[0]["layers"])
        x = np.arange(len(layers))
        finite_runs = 0
        for term in TERMS:
            values = np.array(
                [[np.nan if (v := r["layers"][layer].get(term)) is None else v for layer in layers] for r in runs],
                dtype=float,
            )
            mean, lo, hi = finite_band(values)
            finite_runs = max(finite_runs, int(np.isfinite(values).any(1).sum()))
            (line,) = ax.plot(x, mean, marker="o", ms=3, lw=1.5, label=TERM_LABELS[term])
            if len(runs) > 1:
                ax.fill_between(x, lo, hi, color=line.get_color(), alpha=0.2, lw=0)
        ax.axhline(0, color="k", lw=0.5)
        ax.set_xticks(x, layers, fontsize=8)
        ax.set_title(f"{name} (n={finite_runs}{'' if finite_runs else ': no finite values'})", fontsize=9)
        ax.grid(alpha=0.3)
    for ax in axes.flat[n:]:
        ax.axis("off")
    axes[0, 0].set_ylabel("importance  e·t / |e|²")
    axes[0, 0].legend(fontsize=7)
    if title:
        fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    return save_png(fig, path)


def not_shift_and_scale(record: Mapping[str, Any]) -> str:
    """``""``, or which norms of a run record (``attn_norm dyt``) the decomposition cannot read."""
    found = [
        f"{name} {spec['component']}"
        for name, spec in (record.get("norms") or {}).items()
        if ":" in spec["component"]  # an import path: a plug-in module, never of that form (nor imported here)
        or get_component(spec["component"]).shift_and_scale is None
    ]
    return ", ".join(found)


def with_decomposition(records: list[RecordT], sequences: int) -> list[RecordT]:
    """Each record with its run's decomposition shares added as series (computed once per checkpoint).

    A diverged run is left as it is: its weights are not finite, so there is nothing to decompose.
    """
    out, refused = [], set()
    for record in records:
        if record.get("status") == "diverged":
            out.append(record)
            continue
        other = not_shift_and_scale(record)
        if other:
            if record["variant"] not in refused:
                refused.add(record["variant"])
                print(
                    f"normbench: decomposition: variant {record['variant']!r} has {other}, not of the shift-and-scale "
                    f"form N(x) = s(x) (x - m(x)); its decomposition columns stay empty",
                    file=sys.stderr,
                )
            out.append(record)
            continue
        dec = cached_decomposition(record, sequences)
        if dec is not None:
            record = {
                **record,
                "series": {**record["series"], **decomposition_as_series(dec, int(record.get("final_step") or 0))},
                "decomposition": dec,
            }
        out.append(record)
    return out


def decompose_checkpoint(ckpt: str, sequences: int = 256, out: str | None = None) -> Path:
    """Write ``decomposition.json`` and ``decomposition.png`` for one checkpoint into ``out`` (default: its run)."""
    result = decompose_run(Path(ckpt), sequences)
    folder = Path(out) if out else Path(result["run"])
    plot_decomposition(
        {f"{result['variant']} seed {result['seed']}": [result]},
        folder / "decomposition.png",
        title=f"{result['task']}: importance of each term per layer (Mickus et al. Fig. 3)",
    )
    # last: the cache the leaderboard reads
    atomic_write_json(folder / DECOMPOSITION_NAME, {**result, "sequences_requested": sequences})
    return folder
