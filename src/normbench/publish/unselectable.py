"""``results/unselectable/``: the random-grid data, its heatmaps and its leaderboard section."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal, TypedDict

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from normbench.analysis.random_grid import RandomGrid  # noqa: E402
from normbench.archive import JudgedClaim, dumps_board, parse_board  # noqa: E402
from normbench.archive.documents.rows import Citation  # noqa: E402
from normbench.archive.documents.sections import PaperProtocol  # noqa: E402
from normbench.io import atomic_files, atomic_write_json, atomic_write_text  # noqa: E402
from normbench.judge.claims import load_claims  # noqa: E402
from normbench.judge.entries import JudgedEntry  # noqa: E402
from normbench.judge.rows import VariantRow  # noqa: E402
from normbench.judge.rules.grid import judge_grid  # noqa: E402
from normbench.render.board_sections.paper import render_protocol  # noqa: E402
from normbench.render.citation import bibtex  # noqa: E402
from normbench.render.claims_view import summary_rows, whose  # noqa: E402
from normbench.render.plots import save_png  # noqa: E402
from normbench.training.run.records import provenance, utc_now  # noqa: E402

STAT_TITLES: dict[Literal["mean_fraction", "any_fraction"], str] = {
    "mean_fraction": "mean fraction of unselectable keys per run",
    "any_fraction": "fraction of runs with >= 1 unselectable key",
}


class RandomGridBoard(TypedDict, total=False):
    """``results/unselectable/leaderboard.json`` as :func:`write_random_grid` builds it (a board with no variants).

    task, preset, generated_at: ``unselectable``, the grid's size and when it was built; provenance: where and with
    what (with the grid's ``wall_time_s``); protocol: the grid's settings beside the paper's; variants: none;
    claims: the grid claims judged on it; decided_by: how many keys each decision stage decided; citation: its BibTeX.
    """

    task: str
    preset: str
    generated_at: str
    provenance: dict[str, Any]
    protocol: PaperProtocol
    variants: list[VariantRow]
    claims: list[JudgedEntry]
    decided_by: dict[str, int]
    citation: Citation


def heatmap(grid: RandomGrid, keys: str, path: Path) -> Path:
    """Figure 1c/1d style: one panel per statistic, n on x, d on y, colour = value in [0, 1]."""
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.2), dpi=110, sharey=True)
    ns, ds = grid["ns"], grid["ds"]
    for ax, (stat, title) in zip(axes, STAT_TITLES.items(), strict=False):
        values = np.asarray(grid["stats"][keys][stat])
        im = ax.imshow(
            values,
            origin="lower",
            aspect="auto",
            cmap="viridis_r",
            vmin=0,
            vmax=1,
            extent=(ns[0] - 0.5, ns[-1] + 0.5, ds[0] - 0.5, ds[-1] + 0.5),
        )
        ax.set_title(title, fontsize=10)
        ax.set_xlabel("n (keys per set)")
        fig.colorbar(im, ax=ax, fraction=0.046)
    axes[0].set_ylabel("d (dimension)")
    label = {
        "raw": "raw N(0, I) keys",
        "layernorm": "keys after LayerNorm (eps = 0)",
        "layernorm_eps": f"keys after LayerNorm (eps = {grid.get('eps', 1e-5):g})",
    }[keys]
    fig.suptitle(f"Unselectable keys, {label}; {grid['runs']} runs per cell", fontsize=11)
    fig.tight_layout()
    return save_png(fig, path)


def write_random_grid(grid: RandomGrid, out_dir: str | Path) -> RandomGridBoard:
    """Write random_grid.json, the two heatmaps and leaderboard.json/.md; returns the leaderboard."""
    out = Path(out_dir)
    prov = {**provenance(), "wall_time_s": grid["wall_time_s"]}
    claims = [judge_grid(c, grid) for c in load_claims("brody2023-unselectable") if c["rule"]["keys"] in grid["stats"]]
    board: RandomGridBoard = {
        "task": "unselectable",
        "preset": f"random grid, {grid['runs']} runs per cell",
        "generated_at": utc_now(),
        "provenance": prov,
        "protocol": protocol(grid),
        "variants": [],
        "claims": claims,
        "decided_by": grid["decided_by"],
    }
    board["citation"] = {"bibtex": bibtex(parse_board(board), (out / "leaderboard.json").as_posix())}
    with atomic_files(out) as stage:  # the grid, its figures and the board: one unit
        atomic_write_json(stage / "random_grid.json", {**grid, "provenance": prov})
        plots = [
            heatmap(grid, "raw", stage / "random_grid_raw.png"),
            heatmap(grid, "layernorm", stage / "random_grid_layernorm.png"),
        ]
        if "layernorm_eps" in grid["stats"]:
            plots.append(heatmap(grid, "layernorm_eps", stage / "random_grid_layernorm_eps.png"))
        atomic_write_text(stage / "leaderboard.json", dumps_board(parse_board(board)))
        atomic_write_text(stage / "leaderboard.md", render(board, grid, plots))
    return board


def protocol(grid: RandomGrid) -> PaperProtocol:
    """The grid's settings beside the paper's Figure 1c/1d (the leaderboard's protocol table)."""
    ds, ns = grid["ds"], grid["ns"]
    rows = [
        ("keys per set n", f"{ns[0]}..{ns[-1]}", "the axis of Figure 1c/1d (range not stated in the text)"),
        ("dimension d", f"{ds[0]}..{ds[-1]}", "the axis of Figure 1c/1d (range not stated in the text)"),
        ("random sets per cell", grid["runs"], 100),
        ("key distribution", "i.i.d. N(0, I)", "the normal distribution"),
        ("LayerNorm", grid["layernorm"], "LayerNorm (eps not stated)"),
        (
            "statistic",
            "both: fraction of runs with >= 1 unselectable key, mean fraction of unselectable keys",
            "the caption: average fraction of unselectable keys",
        ),
        ("seed", grid["seed"], "not stated"),
    ]
    if "layernorm_eps" in grid["stats"]:
        rows.append(("LayerNorm with eps (normbench's own)", f"eps = {grid.get('eps', 1e-5):g}", "–"))
    return {"settings": [{"setting": a, "this_sweep": b, "paper": c} for a, b, c in rows], "notes": []}


def grid_finding(claim: JudgedEntry) -> str:
    """One sentence per grid claim from its verdict and the statistic it is judged on."""
    value = claim["measured"].get("any_fraction")
    holds = {"reproduced": "holds here", "not reproduced": "does not hold here"}.get(
        claim["verdict"], "was not measured"
    )
    measured = "" if value is None else f" (fraction of runs with an unselectable key: {value:.4f}; {claim['rule']})"
    return f"{whose(JudgedClaim.from_json(claim))} “{claim['statement'].rstrip('.')}” {holds}{measured}."


def render(board: RandomGridBoard, grid: RandomGrid, plots: list[Path]) -> str:
    p = board["provenance"]
    raw = {k: np.asarray(v) for k, v in grid["stats"]["raw"].items()}
    ds, ns = grid["ds"], grid["ns"]
    lines = [
        "# normbench: unselectable keys among random vectors (Brody et al. 2023, Figure 1c/1d)",
        "",
        "Generated by `nox -s bench-unselectable`; do not edit by hand.",
        f"n = {ns[0]}..{ns[-1]}, d = {ds[0]}..{ds[-1]}, {grid['runs']} runs per cell, "
        f"keys i.i.d. N(0, I), seed {grid['seed']}; "
        f"LayerNorm = {grid['layernorm']}. Exact decisions (certificates, LP only where needed); "
        f"whole grid in {grid['wall_time_s']:.1f} s at commit `{(p.get('git_commit') or 'unknown')[:12]}`"
        f"{' (dirty)' if p.get('dirty') else ''}, {p['device']}, {p['threads']} threads, {p['date']}.",
        "",
        *render_protocol(board.get("protocol") or {}),
        "## Claims",
        "",
        "Key numbers: the statistic each claim's rule reads over its region of the grid, for the fraction of runs "
        "with at least one unselectable key (`any_fraction`) and for the mean fraction of unselectable keys "
        "(`mean_fraction`); the details give the region, the rule and on which statistic the claim holds.",
        "",
        *summary_rows([JudgedClaim.from_json(c) for c in board["claims"]]),
    ]
    fig1c = [c for c in board["claims"] if c["id"].startswith("brody2023.fig1c")]
    holds = {stat: all(c["holds_for"][stat] for c in fig1c) for stat in STAT_TITLES}
    if fig1c:
        matching = [STAT_TITLES[s] for s, ok in holds.items() if ok]
        lines += [
            "",
            "Which statistic the paper's Figure 1c matches: its claims hold for "
            + (" and ".join(f"the *{m}*" for m in matching) if matching else "neither statistic")
            + "; the caption describes the mean fraction, the authors' script computed the fraction of runs.",
        ]
    lines += [
        "",
        "## Selected cells (raw keys)",
        "",
        "| d \\ n | " + " | ".join(str(n) for n in (10, 20, 40, 60)) + " |",
        "|---|" + "---|" * 4,
    ]
    for d in (3, 5, 8, 13, 15):
        if d in ds:
            row = [
                f"{raw['any_fraction'][ds.index(d), ns.index(n)]:.2f} / "
                f"{raw['mean_fraction'][ds.index(d), ns.index(n)]:.3f}"
                for n in (10, 20, 40, 60)
                if n in ns
            ]
            lines.append(f"| {d} | " + " | ".join(row) + " |")
    if "layernorm_eps" in grid["stats"]:
        eps_any = np.asarray(grid["stats"]["layernorm_eps"]["any_fraction"])
        where = [(ds[a], ns[b], eps_any[a, b]) for a, b in zip(*np.nonzero(eps_any), strict=False)]
        lines += [
            "",
            f"## LayerNorm with eps = {grid.get('eps', 1e-5):g} (normbench's own check)",
            "",
            "A key of variance v leaves LayerNorm with norm sqrt(d v / (v + eps)) < sqrt(d): a key of low "
            "variance falls inside the sphere the others lie on. Cells with at least one unselectable key "
            "after LayerNorm with eps (d, n: fraction of runs): "
            + (
                ", ".join(f"({d}, {n}): {f:.2f}" for d, n, f in where[:40]) + (" ..." if len(where) > 40 else "")
                if where
                else "none"
            )
            + ".",
        ]
    lines += [
        "",
        "Cells show *fraction of runs with ≥ 1 unselectable key* / *mean fraction of unselectable keys*.",
        "",
        "Keys decided by each stage: " + ", ".join(f"{k} {v}" for k, v in board["decided_by"].items()),
        "",
        "Seconds per d (all n, raw + LayerNorm (+ eps)): "
        + ", ".join(f"d={d}: {t:.1f}" for d, t in grid.get("seconds_by_d", {}).items()),
        "",
        "## Figures",
        "",
    ] + [f"![{path.stem}]({path.name})" for path in plots]
    lines += ["", "## Findings", ""] + [f"- {grid_finding(c)}" for c in board["claims"]]
    lines += ["", "## How to cite", "", "```bibtex", board["citation"]["bibtex"], "```"]
    return "\n".join(lines) + "\n"
