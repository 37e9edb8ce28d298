"""The width axis of a sweep: how the unselectable-key fraction and the loss gap move with d_model.

A sweep whose config has ``bench.width`` (the ``width`` preset of the LM) trains each base variant
(``pre/both``, ``pre/project``, ``pre/dyt``) at several widths through a grid axis. This module
groups the leaderboard's variants by (base variant, width), and for each reports

* the unselectable fraction at the attention input of every layer (input space, Brody et al.'s
  view) and per head in key space, mean ± std over seeds;
* the validation loss, and its gap to the reference variant at the same width: mean difference
  with its 95% Welch interval over seeds (:func:`normbench.judge.stats.difference_interval`).

``width.png`` draws both against d. A planned (variant, width) without a finished run is shown as
such, never dropped.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, cast

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from normbench.archive.documents.views import WidthDoc, WidthRow  # noqa: E402
from normbench.formatting import number, percent  # noqa: E402
from normbench.judge.chance.board import chance_text  # noqa: E402
from normbench.judge.rows import VariantRow  # noqa: E402
from normbench.judge.stats import difference_interval, values_of  # noqa: E402
from normbench.render.matrix import layer_mean  # noqa: E402
from normbench.render.plots import save_png  # noqa: E402
from normbench.training.config import config_value  # noqa: E402

LOSS = "final_val_loss"
INPUT = "unselectable_after_L{layer}"
HEADS = "unselectable_heads_L{layer}"


def check_spec(spec: Mapping[str, object]) -> tuple[str, str]:
    """(axis, reference) of a ``bench.width`` spec, or a one-line error naming the field."""
    axis, reference = spec.get("axis"), spec.get("reference")
    if not isinstance(axis, str) or not axis:
        raise ValueError(f"bench.width.axis: must name the config key of the width, got {axis!r}")
    if not isinstance(reference, str) or not reference:
        raise ValueError(f"bench.width.reference: must name a base variant, got {reference!r}")
    return axis, reference


def build_width(
    spec: Mapping[str, object],
    variants: Sequence[VariantRow],
    records: Sequence[Mapping[str, Any]],
    planned: dict[str, list[int]],
) -> WidthDoc:
    """The width document: one row per planned (base variant, width), sorted by base then width (``records``: the
    sweep's run records, JSON objects: their ``variant`` and ``config``)."""
    axis, reference = check_spec(spec)
    width_of = {r["variant"]: config_value(r["config"], axis) for r in records}
    by_name = {v["name"]: v for v in variants}
    rows: list[WidthRow] = []
    for name, seeds in planned.items():
        base = name.split(",")[0]
        entry = by_name.get(name)
        width = width_of.get(name)
        if width is None:  # planned but never finished: read the width from the variant's name
            width = next(
                (
                    int(p.split("=")[1])
                    for p in name.split(",")[1:]
                    if p.split("=")[0].endswith(axis.rsplit(".", 1)[-1])
                ),
                None,
            )
        row: WidthRow = {
            "variant": name,
            "base": base,
            "width": width,
            "planned_seeds": list(seeds),
            "seeds": list((entry or {}).get("seeds") or []),
            "metrics": {},
        }
        if entry is not None:
            row["n_layers"] = int(entry.get("n_layers") or 1)
            row["metrics"] = {
                LOSS: (entry.get("metrics") or {}).get(LOSS) or {},
                "unselectable": layer_mean(entry, INPUT),
                "unselectable_heads": layer_mean(entry, HEADS),
                **{
                    f"unselectable_L{i}": (entry.get("metrics") or {}).get(INPUT.format(layer=i)) or {}
                    for i in range(1, row["n_layers"] + 1)
                },
            }
        rows.append(row)
    by_key = {(r["base"], r["width"]): r for r in rows}
    for row in rows:
        ref = by_key.get((reference, row["width"]))
        a = values_of((row["metrics"].get(LOSS) or {}).get("per_seed"))
        b = values_of(((ref["metrics"].get(LOSS) if ref else None) or {}).get("per_seed"))
        diff = difference_interval(a, b, (row["base"], reference)) if row["base"] != reference else None
        row["loss_gap"] = None if diff is None else diff.as_dict()
    order = list(dict.fromkeys(r["base"] for r in rows))
    rows.sort(key=lambda r: (order.index(r["base"]), r["width"] or 0))
    return {"axis": axis, "reference": reference, "rows": rows}


def width_doc(width: Mapping[str, object] | None) -> WidthDoc | None:
    """A board's ``width`` as :func:`build_width` wrote it (:class:`normbench.archive.Board` keeps it a JSON object,
    read from ``leaderboard.json``)."""
    return cast("WidthDoc | None", width)


def render_width(board_width: Mapping[str, object] | None) -> list[str]:
    """Markdown of the width document (a board's ``width``): one table, a row per (variant, width)."""
    width = width_doc(board_width)
    if not width:
        return []
    ref = width["reference"]
    lines = [
        "## Width axis",
        "",
        f"Each row: a base variant at width d (`{width['axis']}`), mean ± std over seeds. Unselectable: "
        f"percent of keys at the attention input (input space), averaged over layers, then per layer; per head: "
        f"the same in each head's key space. Gap: validation loss minus `{ref}`'s at the same width, "
        f"mean [95% interval].",
        "",
        "| variant | d | seeds | val loss | gap to "
        + f"`{ref}`"
        + " | unselectable (%) | per layer (%) | per head (%) |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in width["rows"]:
        m = r["metrics"]
        if not m:
            lines.append(f"| `{r['base']}` | {r['width']} | 0 of {len(r['planned_seeds'])} | not run | | | | |")
            continue
        loss, uns, heads = m.get(LOSS) or {}, m["unselectable"], m["unselectable_heads"]
        gap = r.get("loss_gap")
        gap_text = (
            "–"
            if not gap
            else (
                f"{gap['estimate']:+.3f}"
                + (f" [{gap['low']:+.3f}, {gap['high']:+.3f}]" if gap.get("low") is not None else "")
            )
        )
        layers = " / ".join(percent(m.get(f"unselectable_L{i}", {}).get("mean")) for i in range(1, r["n_layers"] + 1))
        lines.append(
            f"| `{r['base']}` | {r['width']} | {len(r['seeds'])} of {len(r['planned_seeds'])} | "
            f"{number(loss.get('mean'))} ± {number(loss.get('std'))} | {gap_text} | "
            f"{percent(uns.get('mean'))} ± {percent(uns.get('std'))}"
            f"{chance_text(uns.get('chance'), 100, 1)} | {layers} | "
            f"{percent(heads.get('mean'))}{chance_text(heads.get('chance'), 100, 1)} |"
        )
    return [*lines, ""]


def plot_width(width: WidthDoc, path: str | Path, title: str = "") -> Path:
    """Two panels against d: the unselectable fraction (mean over layers, each seed a dot) and the loss gap."""
    fig, (ax_u, ax_g) = plt.subplots(1, 2, figsize=(11, 4.2))
    bases = list(dict.fromkeys(r["base"] for r in width["rows"]))
    for k, base in enumerate(bases):
        rows = [r for r in width["rows"] if r["base"] == base and r["metrics"]]
        color = f"C{k}"
        xs = [r["width"] for r in rows]
        means = [r["metrics"]["unselectable"].get("mean") for r in rows]
        ax_u.plot(
            [x for x, m in zip(xs, means, strict=False) if m is not None],
            [100 * m for m in means if m is not None],
            "-o",
            color=color,
            label=base,
        )
        for r in rows:
            seeds = values_of(r["metrics"]["unselectable"].get("per_seed"))
            ax_u.scatter([r["width"]] * len(seeds), [100 * v for v in seeds], color=color, s=10, alpha=0.5)
        gaps = [(r["width"], g) for r in rows if (g := r.get("loss_gap"))]
        if gaps:
            est = [g["estimate"] for _, g in gaps]
            low = [g["estimate"] - (lo if (lo := g.get("low")) is not None else g["estimate"]) for _, g in gaps]
            high = [(hi if (hi := g.get("high")) is not None else g["estimate"]) - g["estimate"] for _, g in gaps]
            ax_g.errorbar(
                [w for w, _ in gaps],
                est,
                yerr=[low, high],
                fmt="-o",
                color=color,
                capsize=3,
                label=f"{base} − {width['reference']}",
            )
    for ax in (ax_u, ax_g):
        ax.set_xscale("log", base=2)
        ax.set_xlabel("d_model (head width fixed)")
        ax.legend(fontsize=8)
    ax_u.set_ylabel("unselectable keys at the attention input (%)")
    ax_u.set_title("Unselectable keys, mean over layers (dots: seeds)", fontsize=9)
    ax_g.axhline(0.0, color="grey", lw=0.8)
    ax_g.set_ylabel("validation loss gap")
    ax_g.set_title("Loss gap to the reference at the same width (95% interval)", fontsize=9)
    if title:
        fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    return save_png(fig, path)
