"""The documentation's tables over every published board: what its runs cost (runs, training time, where they ran)
and its verdicts counted (the paper's and normbench's claims, each verdict, the provisional ones apart)."""

from __future__ import annotations

import posixpath
from collections import Counter
from pathlib import Path

from normbench.archive import Board
from normbench.archive.documents.rows import RowProvenance
from normbench.site import card_pages
from normbench.site.board_pages import load_board, page_of, published

VERDICT_ORDER = ("reproduced", "direction only", "borderline", "inconclusive", "not reproduced", "not run")


def duration(seconds: float | None) -> str:
    """``42 s``, ``17 min`` or ``2.8 h``; ``–`` when unknown."""
    if seconds is None:
        return "–"
    if seconds < 120:
        return f"{seconds:.0f} s"
    return f"{seconds / 60:.0f} min" if seconds < 5400 else f"{seconds / 3600:.1f} h"


def trained_on(board: Board) -> str:
    """Where a board's runs trained: devices, CPU or GPU models where recorded, threads per run."""
    provenances: list[RowProvenance] = [v.provenance or {} for v in board.variants]
    if not provenances:
        p = board.provenance
        return f"{p.get('device')}, {p.get('threads')} threads"
    devices = sorted({d for p in provenances for d in p.get("devices") or []})
    threads = sorted({t for p in provenances for t in p.get("threads") or []})
    machines = sorted(
        {
            pl.get("gpu")
            or " ".join(
                filter(None, [pl.get("cpu"), f"({pl['cpu_capability']})" if pl.get("cpu_capability") else None])
            )
            for p in provenances
            for pl in p.get("platforms") or []
        }
        - {""}
        - set(devices)  # a GPU's device name is its model already
    )
    where = ", ".join(devices) + (f": {'; '.join(machines)}" if machines else "")
    per_run = " or ".join(map(str, threads))
    return f"{where}, {per_run} thread{'s' if threads != [1] else ''} per run"


def costs_table(results_dir: str | Path = "results", page: str = "index.md", docs_dir: str | Path | None = None) -> str:
    """One row per published board: preset, variants, finished runs, training time (summed, and per run), where
    it ran."""
    here = posixpath.dirname(page) or "."
    lines = [
        "| board | preset | variants | runs | training time, summed over runs | per run | trained on |",
        "|---|---|---|---|---|---|---|",
    ]
    for key in published(results_dir, docs_dir):
        if card_pages.page_of_card_board(key):  # a card's boards: the cards' own tables count them
            continue
        board = load_board(key, results_dir)
        variants = board.variants
        runs = sum(len(v.seeds) for v in variants)
        wall = board.provenance.get("wall_time_s")
        link = posixpath.relpath(page_of(key), here)
        lines.append(
            f"| [`{key}`]({link}) | `{board.preset}` | {len(variants) or '–'} | {runs or '–'} | "
            f"{duration(wall)} | {duration(wall / runs) if wall is not None and runs else '–'} | {trained_on(board)} |"
        )
    return "\n".join(lines) + "\n"


def verdicts_table(
    results_dir: str | Path = "results", page: str = "index.md", docs_dir: str | Path | None = None
) -> str:
    """One row per published board with claims: how many of its claims got each verdict, the paper's and
    normbench's; a board judged at tuned learning rates, or against the random-key null, has a row for those
    verdicts too. A provisional verdict (judged on fewer seeds than its protocol declares) is not final: it is
    counted under *provisional* only, never under its verdict."""
    here = posixpath.dirname(page) or "."
    lines = [
        "| board | claims (paper / normbench) | " + " | ".join(VERDICT_ORDER) + " | provisional |",
        "|---|---|" + "---|" * (len(VERDICT_ORDER) + 1),
    ]
    for key in published(results_dir, docs_dir):
        if card_pages.page_of_card_board(key):  # a card's boards: the cards' own tables count them
            continue
        board = load_board(key, results_dir)
        if not board.claims:
            continue
        link = posixpath.relpath(page_of(key), here)
        for where, claims in (("", board.claims), (", tuned rates", board.tuned_claims),
                              (", against chance", board.against_chance)):  # fmt: skip
            if not claims:
                continue
            counts = Counter(c.verdict for c in claims if not c.provisional)
            owners = Counter(c.owner for c in claims)
            provisional = sum(1 for c in claims if c.provisional)
            lines.append(
                f"| [`{key}`]({link}){where} | {len(claims)} ({owners['paper']} / {owners['normbench']}) | "
                + " | ".join(str(counts[v]) for v in VERDICT_ORDER)
                + f" | {provisional} |"
            )
    return "\n".join(lines) + "\n"
