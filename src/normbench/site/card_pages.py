"""The documentation of the report cards: a page per card and the cards index's tables, from the cards' JSON.

A card (``results/cards/<slug>/card.{md,json}``, written by ``normbench card``) gets the page ``docs/cards/<slug>.md``
(:func:`card_page`): the card itself (an ``include:`` block), then the boards it was judged on
(``results/cards/<slug>/<task>/``, ``board:`` blocks), whose page it is (:func:`page_of_card_board`);
:func:`normbench.site.docs_pages.write_pages` writes it. The index page
``docs/cards/index.md`` holds ``<!-- generated: cards -->``, every card's summary rows (:func:`cards_table`);
``docs/test-your-norm.md`` holds ``<!-- generated: card-costs -->``, the training time of each card's new norm's runs
(:func:`card_costs_table`).
Nothing here computes a value: the rows are the cards' own ``summary`` and ``training_cost`` (its mean per run and
whole-card estimate included).
"""

from __future__ import annotations

import json
import posixpath
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from normbench.archive import board_keys
from normbench.render.markdown import cell

AT_TUNED = " at the tuned lr"  # a card summary row's metric at each variant's tuned rate

# under results/ the cards' folders (each card's boards in it: results/cards/<slug>/<task>/[lr/, tuned/, post/]),
# under docs/ their pages
CARDS = board_keys.CARDS


def card_slugs(results_dir: str | Path = "results") -> list[str]:
    """Every card under ``results_dir`` (a folder of ``cards/`` holding ``card.json``), sorted."""
    return sorted(p.parent.name for p in (Path(results_dir) / CARDS).glob("*/card.json"))


def load_card(slug: str, results_dir: str | Path = "results") -> Mapping[str, Any]:
    """The JSON of card ``slug`` (:class:`normbench.cards.document.CardJson`, whose layer is above this one's: read
    here as the file gives it)."""
    return json.loads((Path(results_dir) / CARDS / slug / "card.json").read_text(encoding="utf-8"))


def card_page_of(slug: str) -> str:
    """The docs page of card ``slug`` (relative to the docs root): ``cards/<slug>.md``."""
    return f"{CARDS}/{slug}.md"


def page_of_card_board(key: str) -> str | None:
    """The page of board ``key`` when it is a card's (``cards/pnorm/majority``, its learning-rate grid
    ``cards/pnorm/majority/lr``, tuned runs ``cards/pnorm/majority/tuned`` and post-LN runs
    ``cards/pnorm/majority/post`` -> ``cards/pnorm.md``), else ``None``."""
    try:
        card = board_keys.parse_key(key).card
    except ValueError:  # not a board's folder
        return None
    return card_page_of(card) if card is not None else None


def card_page(slug: str, results_dir: str | Path = "results") -> str:
    """The Markdown of card ``slug``'s page, its blocks not yet generated: the card, then its boards."""
    card = load_card(slug, results_dir)
    keys = [
        key
        for t in card.get("tasks", [])
        for key in (t["board"], (t.get("tuning") or {}).get("grid_board"), (t.get("tuning") or {}).get("tuned_board"))
        if key
    ]
    boards = [key for key in keys if (board_keys.board_folder(results_dir, key) / "leaderboard.md").is_file()]
    lines = [
        f"# Report card: `{card['norm']}`",
        "",
        "Generated from `results/cards/" + slug + "/` by `python -m normbench.site.docs_pages --docs docs`; "
        "[Test your norm](../test-your-norm.md) says what each part means.",
        "",
        f"<!-- include: {CARDS}/{slug}/card.md -->",
    ]
    if boards:
        lines += [
            "",
            "The boards the card was judged on follow (per task its headline runs, then its learning-rate grid and "
            "its runs at the tuned rates where it has them): every seed of every variant.",
            "",
        ]
        for key in boards:
            lines += [f"<!-- board: {key} -->", ""]
    return "\n".join(lines).rstrip() + "\n"


def linked_cards(results_dir: str | Path, page: str) -> list[tuple[str, Mapping[str, Any]]]:
    """Every card as (a link to its page from docs page ``page``, its JSON)."""
    here = posixpath.dirname(page) or "."
    return [
        (f"[`{card['norm']}`]({posixpath.relpath(card_page_of(slug), here)})", card)
        for slug in card_slugs(results_dir)
        for card in [load_card(slug, results_dir)]
    ]


def cards_table(
    results_dir: str | Path = "results", page: str = "cards/index.md", docs_dir: str | Path | None = None
) -> str:
    """One row per card, task and headline metric: the card's own summary row (a broken card: one row saying why)."""
    lines = [
        "| card | task | metric | new norm | LayerNorm | RMSNorm | vs LayerNorm | vs RMSNorm |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for link, card in linked_cards(results_dir, page):
        if card.get("broken"):
            lines.append(f"| {link} | – | – | {cell('broken ' + card['broken'])}; not trained | | | | |")
        for row in card.get("summary", []):
            metric = summary_metric(row)
            cells = [cell(row.get(k, "")) for k in ("new", "layernorm", "rmsnorm", "vs_layernorm", "vs_rmsnorm")]
            lines.append(f"| {link} | {row['task']} | {metric} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def summary_metric(row: Mapping[str, str]) -> str:
    """A card summary row's metric as every table shows it: `` `val_acc` ``, `` `val_acc` at the tuned lr``, or
    ``–`` (a task not run, or its tuned claims not judged yet)."""
    metric = f"`{row['metric']}`" if row["metric"] != "–" else "–"
    return metric + (AT_TUNED if row.get("lr") == "tuned" else "")


def card_costs_table(
    results_dir: str | Path = "results", page: str = "test-your-norm.md", docs_dir: str | Path | None = None
) -> str:
    """One row per card whose new norm trained: its runs per task (of the runs a whole card trains), their training
    time per task and summed, the whole card's time the card estimates from them, and where they ran (each card's
    ``training_cost``; the baselines are published runs, not trained again)."""
    lines = [
        "| card | the new norm's runs (of a whole card's) | training time, summed | per run (mean) | "
        "whole card, estimated | devices |",
        "|---|---|---|---|---|---|",
    ]
    for link, card in linked_cards(results_dir, page):
        spent = card.get("training_cost") or {}
        if spent.get("wall_time_s") is None:
            continue
        tasks = spent["tasks"].items()
        runs = ", ".join(f"{t}: {c.get('runs', '–')} of {c.get('whole_card_runs', '–')}" for t, c in tasks)
        per_run = ", ".join(f"{t}: {c['mean_run_s'] / 60:.1f} min" for t, c in tasks if c.get("mean_run_s") is not None)
        estimate = spent.get("estimated_whole_card_s")
        whole = f"{estimate / 3600:.1f} h" if estimate is not None else "–"
        where = ", ".join(spent.get("devices") or []) or "–"
        lines.append(
            f"| {link} | {runs} | {spent['wall_time_s'] / 60:.0f} min | {per_run or '–'} | {whole} | {where} |"
        )
    return "\n".join(lines) + "\n"
