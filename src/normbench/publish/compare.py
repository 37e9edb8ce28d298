"""How a build of a board compares with the board published in its folder: whether it says the same (then it is not
written again), and whether its per-seed values drift from the published ones (replicates trained elsewhere: then the
published values stay)."""

from __future__ import annotations

import fnmatch
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from normbench.archive import Board
from normbench.publish import files as publish
from normbench.publish.files import Document
from normbench.render.plots import GEOMETRY_FIGURES

# when and where a board was built (its citation names the commit), the figure files it lists, and when its claims
# were last judged again from its own values (`normbench rejudge`)
VOLATILE = ("generated_at", "provenance", "citation", "figures", "rejudged")


class KeptAsPublished(Exception):
    """A build that leaves the published board as it is (its message says why)."""


def kept_as_published(out: Path, board: Board, force: bool, plots: Sequence[str] = ()) -> str | None:
    """Why the published board at ``out`` stays as it is (a line to print), or ``None`` to write this build: a build
    that says the same and shows the same figures (``plots`` and :func:`~normbench.publish.write.figures_kept`, by
    name) is not written again (``git status`` stays clean), and one whose per-seed values differ for the same runs
    (replicates trained on another platform or commit) does not replace the published values unless ``force``."""
    old = publish.read_board(out / "leaderboard.json", "--results_dir/--name")
    if old is None or force:
        return None
    doc = board.to_json()  # what the build would write, beside what the published file holds
    shown = {Path(p).name for p in plots} | set(outside_figures(old, out, plots))  # the board is read once here
    figures_differ = shown != {Path(p).name for p in old.get("figures") or [] if isinstance(p, str)}
    if publish.says_the_same(own_rules(old), own_rules(doc), VOLATILE) and not figures_differ:
        return f"normbench: {out / 'leaderboard.json'} is unchanged (same runs, values and verdicts)"
    if drift := replicate_drift(old, doc):
        variant, metric, seed, was, now = max(drift, key=lambda d: abs(d[4] - d[3]))
        return (
            f"normbench: {out / 'leaderboard.json'} kept: {len(drift)} per-seed values of its runs differ in this "
            f"build (runs trained again on another platform or commit; largest: {variant} seed {seed} {metric} "
            f"{was:.6g} published, {now:.6g} here). Published values change only with their canonical runs; "
            f"{publish.FORCE}"
        )
    return None


def own_rules(doc: Mapping[str, Any]) -> Mapping[str, Any]:
    """``doc`` with only the reproducibility rules (declared tolerances, metrics compared by distribution) that apply
    to a metric of its own: a rule about other boards' metrics changes no word of what this board says, so a build
    that differs only there is not written again."""
    rep = doc.get("reproducibility")
    if not isinstance(rep, dict):
        return doc
    metrics = {m for v in doc.get("variants") or [] if isinstance(v, dict) for m in v.get("metrics") or {}}

    def applies(row: Any) -> bool:
        pattern = row.get("metrics") if isinstance(row, dict) else None
        return not isinstance(pattern, str) or any(fnmatch.fnmatchcase(m, pattern) for m in metrics)

    rules = {
        k: [r for r in rep[k] if applies(r)] for k in ("tolerances", "by_distribution") if isinstance(rep.get(k), list)
    }
    return {**doc, "reproducibility": {**rep, **rules}}


def outside_figures(published: Mapping[str, Any], out: Path, plots: Sequence[str]) -> list[str]:
    """:func:`normbench.publish.write.figures_kept` of the ``published`` board already read."""
    drawn = {Path(p).name for p in plots}
    listed = published.get("figures")
    figures: list[Any] = listed if isinstance(listed, list) else []
    names = dict.fromkeys(Path(f).name for f in figures if isinstance(f, str))  # by file name, once, in its order
    return [n for n in names if n in GEOMETRY_FIGURES and n not in drawn and (out / n).is_file()]


def replicate_drift(old: Document, new: Document) -> list[tuple[str, str, int, float, float]]:
    """Per-seed values of one run (same variant, seed and config hash) that differ between the published board
    ``old`` and the build ``new``: ``(variant, metric, seed, published, new)``."""
    out = []
    olds = {v.get("name"): v for v in old.get("variants") or [] if isinstance(v, dict)}
    for v in new.get("variants") or []:
        o = olds.get(v["name"])
        if o is None or o.get("config_hash") != v.get("config_hash"):
            continue
        seeds_old, seeds_new = list(o.get("seeds") or []), list(v.get("seeds") or [])
        for metric, m in (v.get("metrics") or {}).items():
            om = (o.get("metrics") or {}).get(metric) or {}
            for seed, now in zip(seeds_new, m.get("per_seed") or [], strict=False):
                if seed in seeds_old and isinstance(now, int | float):
                    was = (om.get("per_seed") or [None] * len(seeds_old))[seeds_old.index(seed)]
                    if isinstance(was, int | float) and was != now:
                        out.append((v["name"], metric, int(seed), float(was), float(now)))
    return out
