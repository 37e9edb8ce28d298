"""LayerNorm's geometry in pictures: Brody et al. (2023) Figure 1a/1b and the query angles over training.

For the majority model with d = 3 (preset ``geometry``) every key is the attention-norm output
of one class embedding, k_c = N(E_c) (there are no positions), and every query is the effective
query q_c Q K^T / sqrt(d) of Brody et al. eq. 6, so the 20 keys and 20 queries *are* the model's
whole attention geometry. ``geometry_3d.png`` draws them with the ones vector (and a learned
normal u); ``query_angle_histograms.png`` shows, per variant, the distribution of the angles
between the queries of evaluation sequences and the normal, as logged to TensorBoard by
:class:`normbench.training.monitoring.monitor.GeometryMonitor` at every evaluation.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import torch  # noqa: E402

from normbench.analysis.angles import attention_normals, query_angle_to_ones  # noqa: E402
from normbench.archive import load_record  # noqa: E402
from normbench.io import atomic_write_json  # noqa: E402
from normbench.render.plots import GEOMETRY_FIGURES, save_png  # noqa: E402
from normbench.tasks.series import QUERY_ANGLE_HISTOGRAM, layer_series  # noqa: E402
from normbench.training.monitoring.monitor import ANGLE_BINS  # noqa: E402
from normbench.training.run.loading import load_module  # noqa: E402
from normbench.training.run.rundir import checkpoint_of  # noqa: E402


def class_keys_and_queries(module: Any) -> dict[str, np.ndarray]:
    """Keys N(E_c), effective queries and the unit normal of the first block (d = 3 majority model)."""
    model = module.model
    block = model.blocks[0]
    with torch.no_grad():
        # the attention input: N(E_c) under pre-norm, E_c itself in front of a post/none block
        keys = block.attn_norm(model.embedding.weight) if block.placement in ("pre", "peri") else model.embedding.weight
        queries = block.attn.effective_queries(keys[None])[0, 0]  # first head: (C, d)
        normal = attention_normals(model)["L1.attn"]
    return {"keys": keys.detach().numpy(), "queries": queries.detach().numpy(), "normal": normal.detach().numpy()}


def read_angle_histograms(
    log_dir: str | Path, tag: str = layer_series(QUERY_ANGLE_HISTOGRAM, 1)
) -> tuple[np.ndarray, np.ndarray]:
    """(steps, fractions (steps, bins)) of a run's query-angle histograms on the 2-degree bins."""
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    acc = EventAccumulator(str(log_dir), size_guidance={"histograms": 0})
    acc.Reload()
    if tag not in acc.Tags().get("histograms", []):
        raise ValueError(f"runs_dir: {log_dir} has no {tag} histograms (trained before GeometryMonitor existed?)")
    steps, rows = [], []
    for event in acc.Histograms(tag):
        h = event.histogram_value
        counts = np.zeros(len(ANGLE_BINS) - 1)
        for limit, count in zip(h.bucket_limit, h.bucket, strict=False):
            index = int(np.clip(np.searchsorted(ANGLE_BINS, limit - 1e-6) - 1, 0, len(counts) - 1))
            counts[index] += count
        steps.append(event.step)
        rows.append(counts / max(counts.sum(), 1.0))
    return np.asarray(steps), np.asarray(rows)


def plot_geometry_3d(views: dict[str, dict[str, np.ndarray]], path: Path) -> Path:
    """One 3-D panel per variant: keys (dots), queries (crosses, scaled to the keys' radius), 1 and u."""
    n = len(views)
    fig = plt.figure(figsize=(4.3 * n, 4.6), dpi=120)
    for i, (name, v) in enumerate(views.items(), start=1):
        ax = fig.add_subplot(1, n, i, projection="3d")
        keys, queries = v["keys"], v["queries"]
        radius = float(np.linalg.norm(keys, axis=1).max()) or 1.0
        q = queries / np.linalg.norm(queries, axis=1, keepdims=True).clip(1e-12) * radius
        ax.scatter(*keys.T, s=18, c="tab:blue", label="keys N(E_c)", depthshade=False)
        ax.scatter(*q.T, s=22, c="tab:red", marker="x", label="query directions", depthshade=False)
        ones = np.ones(3) / np.sqrt(3) * radius * 1.3
        ax.plot(*np.stack([-ones, ones]).T, color="k", lw=1.5, label="ones vector")
        if np.abs(keys @ v["normal"]).max() < 1e-4 * radius:  # keys on the plane orthogonal to the normal
            basis = np.linalg.svd(np.eye(3) - np.outer(v["normal"], v["normal"]))[0][:, :2]
            t = np.linspace(0, 2 * np.pi, 200)
            circle = basis @ np.stack([np.cos(t), np.sin(t)]) * float(np.linalg.norm(keys, axis=1).mean())
            ax.plot(*circle, color="tab:blue", lw=0.8, alpha=0.5, label="plane orthogonal to the normal")
        if not np.allclose(v["normal"], np.ones(3) / np.sqrt(3), atol=1e-6):
            u = v["normal"] * radius * 1.3
            ax.plot(*np.stack([-u, u]).T, color="tab:green", lw=1.5, label="learned normal u")
        if "angle_to_normal" in v:
            ax.set_title(f"{name}\nmean query angle to normal {v['angle_to_normal']:.1f}°", fontsize=9)
        else:
            ax.set_title(name, fontsize=9)
        ax.set_box_aspect((1, 1, 1))
        lim = radius * 1.3
        for setter in (ax.set_xlim, ax.set_ylim, ax.set_zlim):
            setter(-lim, lim)
        ax.tick_params(labelsize=6)
        if i == 1 or not np.allclose(v["normal"], np.ones(3) / np.sqrt(3), atol=1e-6):
            ax.legend(fontsize=7, loc="upper left")
    fig.suptitle(
        "Majority model, d = 3: keys and queries of the trained attention (Brody et al. Fig. 1a/1b)", fontsize=10
    )
    fig.tight_layout(rect=(0, 0, 1, 0.94))
    return save_png(fig, path)


def plot_angle_histograms(histograms: dict[str, tuple[np.ndarray, np.ndarray]], path: Path) -> Path:
    """Per variant a heat map: training step x query angle to the normal, colour = fraction of queries."""
    n = len(histograms)
    fig, axes = plt.subplots(1, n, figsize=(3.6 * n, 3.4), dpi=120, squeeze=False, sharey=True)
    image = None
    for ax, (name, (steps, rows)) in zip(axes[0], histograms.items(), strict=False):
        image = ax.pcolormesh(
            np.arange(len(steps) + 1) - 0.5,
            ANGLE_BINS,
            rows.T,
            cmap="viridis",
            vmin=0,
            vmax=max(0.25, float(rows.max())),
            shading="flat",
        )
        ticks = np.linspace(0, len(steps) - 1, min(5, len(steps))).round().astype(int)
        ax.set_xticks(ticks, [str(steps[t]) for t in ticks], fontsize=7)
        ax.set_xlabel("training step")
        ax.set_title(name, fontsize=9)
    axes[0, 0].set_ylabel("query angle to the normal (deg)")
    if image is not None:
        fig.colorbar(image, ax=axes[0, -1], label="fraction of queries")
    fig.suptitle("Query angles over training (d = 3, evaluation sequences; 0° = parallel to the normal)", fontsize=10)
    fig.tight_layout()
    return save_png(fig, path)


def write_geometry(record_paths: dict[str, Path], out: Path) -> dict[str, Any]:
    """Draw both figures from the runs ``{variant: record path}`` and write ``geometry.json`` beside them."""
    views, histograms, summary = {}, {}, {}
    for variant, path in record_paths.items():
        record = load_record(path).document()
        if record["status"] != "done":
            raise ValueError(f"runs_dir: {path} is {record['status']!r}; train it first")
        run = Path(path).parent
        ckpt = checkpoint_of(record, run)
        if ckpt is None:
            raise ValueError(
                f"runs_dir: {path} has no checkpoint (vectorized seed stacks keep none); train it without --vectorize"
            )
        module = load_module(ckpt, record["task"], record, Path(path))
        view = class_keys_and_queries(module)
        angles = query_angle_to_ones(torch.from_numpy(view["queries"]), direction=torch.from_numpy(view["normal"]))
        view["angle_to_normal"] = float(angles.mean())
        views[variant] = view
        histograms[variant] = read_angle_histograms(run)
        key_offsets = view["keys"] @ view["normal"]
        steps, rows = histograms[variant]
        centers = (ANGLE_BINS[:-1] + ANGLE_BINS[1:]) / 2
        summary[variant] = {
            "run": str(run),
            "seed": record["seed"],
            "config_hash": record["config_hash"],
            "class_query_angle_to_normal_deg": view["angle_to_normal"],
            "max_abs_key_component_along_normal": float(np.abs(key_offsets).max()),
            "normal_angle_to_ones_deg": float(
                query_angle_to_ones(torch.from_numpy(view["normal"])[None], fold=False)[0]
            ),
            "eval_query_angle_mean_deg": {int(s): float(r @ centers) for s, r in zip(steps, rows, strict=False)},
        }
    out.mkdir(parents=True, exist_ok=True)
    geometry_3d, histograms_png = GEOMETRY_FIGURES
    plot_geometry_3d(views, out / geometry_3d)
    plot_angle_histograms(histograms, out / histograms_png)
    atomic_write_json(out / "geometry.json", summary)
    return summary
