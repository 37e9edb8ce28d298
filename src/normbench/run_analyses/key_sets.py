"""Unselectable keys as a function of the key-set size (Brody et al. 2023, Tables 1-2, measured at several n).

The fraction of keys inside the convex hull of the others grows with the number of keys n at a
fixed dimension (the paper's Figure 1c). The paper counts over whole sequences of 768-1024
tokens; the quick preset's sequences have 256. For each n of ``bench.key_sets.sizes`` this module
loads a run's final checkpoint, reads every block's keys on the held-out sequences (the task's
test data) and counts the unselectable keys among the first n of each sequence: in a causal
decoder these are exactly the keys the query at position n chooses from (a size longer than the
held-out sequences is not measured: n/a in the table). Results are cached as
``key_sets.json`` in the run folder and enter the leaderboard as the series
``analysis/keys<n>/unselectable_<where>/L<layer>``, metrics ``unselectable_<where>_k<n>_L<layer>``,
one table and the figure ``key_sets.png``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, TypedDict

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from normbench.analysis.model_keys import attention_keys, prefix_unselectable  # noqa: E402
from normbench.render.plots import save_png  # noqa: E402
from normbench.run_analyses.run_cache import RecordT, cached_analysis, with_final_values  # noqa: E402
from normbench.tasks.series import ANALYSIS_KEY_SET  # noqa: E402
from normbench.training.run.loading import build_datamodule, load_run  # noqa: E402
from normbench.training.run.rundir import KEY_SETS_NAME  # noqa: E402

WHERE = ("before", "after")


def check_spec(spec: dict[str, Any]) -> tuple[list[int], int]:
    """(sizes, sequences) of a ``bench.key_sets`` spec, or a one-line error naming the field."""
    sizes = spec.get("sizes")
    if not isinstance(sizes, list) or not sizes or not all(isinstance(n, int) and n >= 2 for n in sizes):
        raise ValueError(f"bench.key_sets.sizes: must be a non-empty list of integers >= 2, got {sizes!r}")
    sequences = spec.get("sequences", 100)
    if not isinstance(sequences, int) or sequences < 1:
        raise ValueError(f"bench.key_sets.sequences: must be a positive integer, got {sequences!r}")
    return sorted(set(sizes)), sequences


class KeySets(TypedDict):
    """A run's ``key_sets.json`` (:func:`key_sets_run`; the cache adds the checkpoint's stamp, the sizes and the
    sequences requested)."""

    task: str
    """The run's task."""
    variant: str
    """The run's variant."""
    seed: int
    """The run's seed."""
    sequences: int
    """The held-out sequences counted."""
    layers: dict[str, dict[str, dict[str, float]]]
    """Layer (``L1``, ...) -> ``before``/``after`` the norm -> key-set size n (as text) -> unselectable fraction."""


class PaperNull(TypedDict):
    """The random-key null at the paper's key counts (:func:`paper_null`), a key-set table row's ``paper_null``."""

    d: int
    """The dimension the row's keys span."""
    n: list[int]
    """The paper's key counts."""
    mean: list[float]
    """The null's mean unselectable share (%) at each count."""


def key_sets_run(ckpt: Path, sizes: list[int], sequences: int) -> KeySets:
    """Unselectable fraction of the first n keys of each of ``sequences`` held-out sequences, per layer, per n."""
    record, module = load_run(ckpt)
    counts: dict[str, dict[str, dict[int, list[int]]]] = {}
    seen = 0
    for batch in build_datamodule(record["config"], "test").test_dataloader():
        if seen >= sequences:
            break
        args, padding = module.model_inputs(batch)
        if padding is not None:
            raise ValueError(
                f"bench.key_sets: task {record['task']!r} pads its sequences; the key-set analysis "
                "needs unpadded held-out sequences (task lm)"
            )
        take = min(len(args[0]), sequences - seen)
        fitting = [n for n in sizes if n <= args[0].shape[1]]  # longer key sets than the sequences: not measured
        if not fitting:
            break
        for layer, keys in attention_keys(module.model, *(a[:take] for a in args)).items():
            for where in WHERE:
                for n, (bad, total) in prefix_unselectable(keys[where], fitting).items():
                    cell = counts.setdefault(layer, {}).setdefault(where, {}).setdefault(n, [0, 0])
                    cell[0] += bad
                    cell[1] += total
        seen += take
    return {
        "task": record["task"],
        "variant": record["variant"],
        "seed": record["seed"],
        "sequences": seen,
        "layers": {
            layer: {
                where: {str(n): bad / total for n, (bad, total) in by_n.items()} for where, by_n in per_where.items()
            }
            for layer, per_where in counts.items()
        },
    }


def metric_name(where: str, n: int, layer: int | str) -> str:
    """``unselectable_after_k256_L1``: the leaderboard metric of one layer's fraction among n keys."""
    return f"unselectable_{where}_k{n}_L{layer}"


def metrics(sizes: list[int], n_layers: int) -> dict[str, dict[str, Any]]:
    """Leaderboard metric specs of the key-set analysis, each reading its series at the final step."""
    return {
        metric_name(where, n, i): {"series": ANALYSIS_KEY_SET.format(keys=n, where=where, layer=i), "at_step": "last"}
        for where in WHERE
        for n in sizes
        for i in range(1, n_layers + 1)
    }


def with_key_sets(records: list[RecordT], spec: dict[str, Any]) -> list[RecordT]:
    """Each record with its run's key-set fractions added as one-point series at its final step (a
    diverged run, whose weights are not finite, is left as it is)."""
    sizes, sequences = check_spec(spec)
    out = []
    for record in records:
        if record.get("status") == "diverged":
            out.append(record)
            continue
        result = cached_analysis(
            record,
            KEY_SETS_NAME,
            {"sizes": sizes, "sequences_requested": sequences},
            lambda ckpt: key_sets_run(ckpt, sizes, sequences),
        )
        if result is not None:
            record = with_final_values(
                record,
                {
                    ANALYSIS_KEY_SET.format(keys=n, where=where, layer=layer.removeprefix("L")): value
                    for layer, per_where in result["layers"].items()
                    for where, by_n in per_where.items()
                    for n, value in by_n.items()
                },
            )
        out.append(record)
    return out


def paper_null(row: dict[str, Any], spec: dict[str, Any]) -> PaperNull | None:
    """The random-key null (%) at the paper's key counts (``spec.paper_keys``, default 768 and 1024) in the
    dimension the row's keys span (``row.null_d``), for the paper's column; ``None`` for a row without one."""
    if not row.get("null_d"):
        return None
    from normbench.judge.chance.null import chance_fraction  # the null's module; imported where it is drawn
    from normbench.judge.chance.rules import PAPER_CHANCE_SETS

    keys = [int(n) for n in spec.get("paper_keys", [768, 1024])]
    means = [100 * chance_fraction(int(row["null_d"]), n, sets=PAPER_CHANCE_SETS)["mean"] for n in keys]
    return {"d": int(row["null_d"]), "n": keys, "mean": means}


def table_spec(spec: dict[str, Any], n_layers: int) -> dict[str, Any]:
    """A ``bench.tables`` entry: one row per (row of ``spec``, layer), one column per key-set size,
    the paper's value (measured at 768-1024 keys) in a last column of its own, with the random-key null at those
    counts beside it (:func:`paper_null`): the quick preset's sequences stop short of them."""
    sizes, _ = check_spec(spec)
    rows = []
    for row in spec.get("rows") or []:
        paper = row.get("paper") or [None] * n_layers
        null = paper_null(row, spec)
        for i in range(1, n_layers + 1):
            rows.append(
                {
                    "label": f"{row['label']}, L{i}",
                    "variant": row["variant"],
                    "metric": f"unselectable_{row['where']}_{{column}}_L{i}",
                    "paper": paper[i - 1],
                    **({"paper_null": null} if null else {}),
                }
            )
    return {
        "title": spec.get("title", "Unselectable keys by key-set size (%)"),
        "note": spec.get("note", ""),
        "columns": [f"k{n}" for n in sizes],
        "scale": 100,
        "paper_column": spec.get("paper_column", "paper"),
        "rows": rows,
    }


def plot_key_sets(variants: dict[str, dict[str, Any]], spec: dict[str, Any], n_layers: int, path: str | Path) -> Path:
    """One panel per layer: % unselectable keys vs the key-set size n (mean, min-max over seeds) for
    each row of ``spec``, the paper's value drawn over its 768-1024-token sequences."""
    sizes, _ = check_spec(spec)
    paper_span = spec.get("paper_keys", [768, 1024])
    fig, axes = plt.subplots(1, n_layers, figsize=(3.3 * n_layers, 3.4), dpi=120, sharey=True, squeeze=False)
    for i, ax in enumerate(axes[0], start=1):
        for row in spec.get("rows") or []:
            measured = (variants.get(row["variant"]) or {}).get("metrics", {})
            points = [
                (
                    n,
                    [
                        100 * v
                        for v in measured.get(metric_name(row["where"], n, i), {}).get("per_seed") or []
                        if v is not None
                    ],
                )
                for n in sizes
            ]
            points = [(n, vals) for n, vals in points if vals]  # sizes not measured are left out
            if not points:
                continue
            xs = [n for n, _ in points]
            (line,) = ax.plot(xs, [np.mean(v) for _, v in points], marker="o", ms=3, lw=1.5, label=row["label"])
            ax.fill_between(
                xs, [min(v) for _, v in points], [max(v) for _, v in points], color=line.get_color(), alpha=0.2, lw=0
            )
            paper = (row.get("paper") or [None] * n_layers)[i - 1]
            if paper is not None:
                mid = float(np.mean(paper_span))
                ax.errorbar(
                    [mid],
                    [paper],
                    xerr=[[mid - paper_span[0]], [paper_span[1] - mid]],
                    fmt="s",
                    color=line.get_color(),
                    ms=5,
                    mfc="none",
                    capsize=2,
                )
        ax.set_xscale("log", base=2)
        ax.set_xlabel("keys per set n")
        ax.set_title(f"layer {i}", fontsize=9)
        ax.grid(alpha=0.3)
    axes[0, 0].set_ylabel("unselectable keys (%)")
    handles, labels = axes[0, 0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=max(1, len(labels)), fontsize=7.5, frameon=False)
    fig.suptitle(
        spec.get(
            "figure_title",
            "Unselectable keys vs key-set size (lines: measured, mean and min-max over "
            "seeds; squares: the paper, 768-1024 keys)",
        ),
        fontsize=9,
    )
    fig.tight_layout(rect=(0, 0.08, 1, 1))
    return save_png(fig, path)
