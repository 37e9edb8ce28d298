"""The Markdown of a token report: each table's printed sentences (the words of unselectable tokens in bold), its
counts per seed (a stand-in counted on other sentences marked), and its claims.
"""

from __future__ import annotations

from collections.abc import Callable, Set
from typing import TypedDict

from normbench.archive import JudgedClaim
from normbench.judge.entries import JudgedEntry
from normbench.publish.token_runs import TokenRun
from normbench.render.claims_view import INTRO, summary_rows
from normbench.run_analyses.sentence_tokens import TokenSummary, render_words


class ShownBlock(TypedDict):
    """The printed part of a token report's table (:func:`shown_block`).

    title, what: the table's heading and what its model is; variant, seed, config_hash, run: the run printed (``run``:
    its log folder); summary: its counts over every dev sentence; lines: the first dev sentences in Markdown, the words
    of unselectable tokens in bold.
    """

    title: str
    what: str
    variant: str
    seed: int
    config_hash: str | None
    run: str | None
    summary: TokenSummary
    lines: list[str]


def shown_block(title: str, what: str, run: TokenRun, sentences: list[str], shown: int) -> ShownBlock:
    """The printed part of a table: which run, and its first ``shown`` sentences with their bold words."""
    record = run.record or {}
    if run.analysis is None:  # a stand-in: its counts are the published report's, its sentences are not printed
        raise ValueError(f"report: {run.task} {run.variant} seed {run.seed} has no token analysis to print")
    lines = [render_words(text, bold) for text, bold in zip(sentences, run.analysis["bold_words"], strict=False)]
    return {
        "title": title,
        "what": what,
        "variant": run.variant,
        "seed": run.seed,
        "config_hash": run.config_hash,
        "run": record.get("log_dir"),
        "summary": run.summary,
        "lines": lines[:shown],
    }


def section(block: ShownBlock) -> list[str]:
    """Markdown of a table's printed part (:func:`shown_block`)."""
    summary = block["summary"]
    layers = ", ".join(f"L{i + 1}: {n}" for i, n in enumerate(summary["per_layer"]))
    lines = [
        f"## {block['title']}",
        "",
        block["what"],
        "",
        f"Run `{block['run']}` (variant `{block['variant']}`, seed {block['seed']}, "
        f"config hash `{block['config_hash']}`).",
        "",
        f"Over all {summary['sentences']} dev sentences: {summary['any_layer']} of {summary['tokens']} tokens "
        f"({100 * summary['fraction_any_layer']:.1f}%) are unselectable in at least one layer, in "
        f"{summary['sentences_with_unselectable']} sentences; per layer: {layers}.",
        "",
        f"The first {len(block['lines'])} dev sentences, in file order (tokens unselectable in at least one layer in "
        "**bold**):",
        "",
    ]
    return lines + [f"- {line}" for line in block["lines"]] + [""]


def pick_shown(
    runs: list[TokenRun], seed: int, old_block: ShownBlock | None, make: Callable[[TokenRun], ShownBlock]
) -> ShownBlock | None:
    """The printed part of a table: the run of ``seed`` when its analysis is at hand, else the published report's
    block when it printed a run still read, else the first run with its analysis at hand (``None``: none)."""
    by_seed = {t.seed: t for t in runs}
    if seed in by_seed and by_seed[seed].analysis is not None:
        return make(by_seed[seed])
    if old_block and (t := by_seed.get(int(old_block["seed"]))) and t.config_hash == old_block.get("config_hash"):
        return old_block
    first = next((t for t in runs if t.analysis is not None), None)
    return make(first) if first is not None else None


TABLE4 = (
    "Table 4: BERT-style encoder without LayerNorm",
    "The sst2 task's model with every LayerNorm removed, its own WordPiece tokenizer.",
)


def table3_text(variant: str) -> tuple[str, str]:
    return (
        "Table 3: the language model without scaling",
        f"The lm task's `{variant}` model (projection-only norm in front of attention) on the same sentences, with "
        "its own byte-level BPE tokenizer.",
    )


def seed_table(
    title: str,
    task: str,
    summaries: dict[str, dict[int, TokenSummary]],
    seeds: list[int],
    other: Set[tuple[str, int]] = frozenset(),
    other_text: str = "",
) -> list[str]:
    """Markdown: unselectable dev-sentence tokens of each model of ``task``, one column per seed; ``other``: the
    (variant, seed) runs whose counts a published report made on other dev sentences (marked †)."""
    lines = [
        f"### {title}",
        "",
        f"Tokens unselectable in at least one layer, of all dev-sentence tokens, per {task} seed "
        "(– = no finished run):",
        "",
        f"| {task} model | " + " | ".join(f"seed {s}" for s in seeds) + " |",
        "|---|" + "---|" * len(seeds),
    ]
    for variant, by_seed in summaries.items():
        cells = [
            f"{by_seed[s]['any_layer']} / {by_seed[s]['tokens']} ({100 * by_seed[s]['fraction_any_layer']:.2f}%)"
            + (" †" if (variant, s) in other else "")
            if s in by_seed
            else "–"
            for s in seeds
        ]
        lines.append(f"| `{variant}` | " + " | ".join(cells) + " |")
    if any((v, s) in other for v, by_seed in summaries.items() for s in by_seed):
        lines += [
            "",
            "† published before the run archive kept runs: counted by the published report on other dev sentences"
            + (f" ({other_text})" if other_text else "")
            + ", shown as published; not comparable token for token.",
        ]
    return lines + [""]


def claims_lines(claims: list[JudgedEntry]) -> list[str]:
    """The report's claims section: the summary table (measured as fractions of tokens), then each claim's details."""
    return ["## Claims", "", INTRO, "", *summary_rows([JudgedClaim.from_json(c) for c in claims])]
