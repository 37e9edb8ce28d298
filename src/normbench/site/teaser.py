"""The README's results teaser: the norm leaderboard at a glance, then one board's headline columns per variant and
each of its claims with its verdict, the numbers formatted as the board prints them.

It is the block between ``<!-- results-teaser:start -->`` and ``<!-- results-teaser:end -->``; :func:`teaser`
writes it from ``results/majority/leaderboard.json``, :func:`update_readme` into the README.
"""

from __future__ import annotations

import posixpath
from pathlib import Path

from normbench import archive
from normbench.archive import Metric
from normbench.io import atomic_write_text
from normbench.site.board_pages import load_board, page_of
from normbench.site.included_files import LINK

TEASER_START = "<!-- results-teaser:start -->"
TEASER_END = "<!-- results-teaser:end -->"
NORMS_GLANCE = "norms-glance.md"  # the norm leaderboard at a glance, the teaser's first block
ABLATION_HEADING = "**The paper's ablation** (the norm in front of attention alone), on its own board:"
#: the board and the columns the README's teaser shows
TEASER_BOARD = "majority"
TEASER_COLUMNS = ("test_acc@1000", "test_acc@5000")
#: a reader's name for each attention-norm component (the teaser's second column)
COMPONENT_NAMES = {
    "both": "LayerNorm",
    "scale": "RMSNorm (scaling only)",
    "project": "mean subtraction only",
    "none": "no norm",
    "paper_no_projection": "the paper's variant without projection, `F.normalize(x)/√d`",
    "learned": "LayerNorm with a learned normal instead of **1**",
    "dyt": "DyT",
    "scalenorm": "ScaleNorm",
}


def fmt_mean_std(metric: Metric) -> str:
    """``mean ± std`` as the leaderboard prints it (3 decimals, whole numbers from 100 up; ``± –`` for one seed)."""
    if metric.mean is None:
        return metric.note or "–"
    digits = 0 if abs(metric.mean) >= 100 else 3
    std = "–" if metric.std is None or metric.n < 2 else f"{metric.std:.{digits}f}"
    return f"{metric.mean:.{digits}f} ± {std}"


def teaser(
    results_dir: str | Path = "results", key: str = TEASER_BOARD, columns: tuple[str, ...] = TEASER_COLUMNS
) -> str:
    """The README's results teaser: board ``key``'s headline columns per variant, then each claim, whose it is, and
    its verdict; the numbers formatted as the board prints them."""
    board = load_board(key, results_dir)
    seeds = sorted({len(v.seeds) for v in board.variants})
    p = board.provenance
    lines = [
        *norms_glance(results_dir),
        f"From [`results/{key}/leaderboard.md`](results/{key}/leaderboard.md) (preset `{board.preset}`, "
        f"{' or '.join(map(str, seeds))} seeds per variant, mean ± std over seeds; runs built at commit "
        f"`{(p.get('git_commit') or 'unknown')[:12]}`); [its page](docs/{page_of(key)}) in the documentation shows "
        "the whole board.",
        "",
        "| variant | norm in front of attention | " + " | ".join(f"`{c}`" for c in columns) + " |",
        "|---|---|" + "---|" * len(columns),
    ]
    for v in board.variants:
        attn = v.norms.get("attn")
        component = attn["component"] if attn else ""
        name = COMPONENT_NAMES.get(component, f"`{component}`")
        cells = [fmt_mean_std(v.metrics[c]) for c in columns]
        lines.append(f"| `{v.name}` | {name} | " + " | ".join(cells) + " |")
    claims = board.claims
    if claims:
        lines += [
            "",
            "Its claims (`paper`: a number or ordering the paper reports; `normbench`: a target of our own):",
            "",
        ]
        for c in claims:
            why = "; not the paper's protocol" if c.protocol and not c.protocol.get("met", True) else ""
            lines.append(f"- {c.owner}: {c.statement}: {teaser_verdict(c)}{why}")
    return "\n".join(lines) + "\n"


def teaser_verdict(claim: archive.JudgedClaim) -> str:
    """A claim's verdict as a summary states it: ``**reproduced**``; a provisional one is never stated as final:
    ``**provisional** (reproduced so far, on 2 of 10 seeds)``."""
    p = claim.provisional
    if p:
        return f"**provisional** ({claim.verdict} so far, on {p['finished']} of {p['declared']} seeds)"
    return f"**{claim.verdict}**"


def norms_glance(results_dir: str | Path = "results") -> list[str]:
    """The norm leaderboard's at-a-glance block (``results/norms-glance.md``, written by ``normbench norms``) with its
    links made relative to the repository root, then a heading for the board that follows; ``[]`` without one."""
    path = Path(results_dir) / NORMS_GLANCE
    if not path.is_file():
        return []
    text = LINK.sub(lambda m: f"{m[1]}[{m[2]}]({posixpath.join('results', m[3])})", path.read_text(encoding="utf-8"))
    return [
        text.rstrip("\n"),
        "",
        ABLATION_HEADING,
        "",
    ]


def teaser_block(text: str) -> str | None:
    """The content between the teaser markers of ``text`` (``None`` without both markers)."""
    start, end = text.find(TEASER_START), text.find(TEASER_END)
    if start < 0 or end < start:
        return None
    return text[start + len(TEASER_START) : end].strip("\n") + "\n"


def with_teaser(text: str, block: str) -> str:
    """``text`` with the content between the teaser markers replaced by ``block``."""
    start, end = text.find(TEASER_START), text.find(TEASER_END)
    if start < 0 or end < start:
        raise ValueError(f"readme: no {TEASER_START} ... {TEASER_END} block")
    return text[: start + len(TEASER_START)] + "\n" + block.rstrip("\n") + "\n" + text[end:]


def update_readme(path: str | Path, results_dir: str | Path = "results", check: bool = False) -> bool:
    """Rewrite the teaser block of the README at ``path`` (``check``: only compare); whether it was stale."""
    path = Path(path)
    text = path.read_text(encoding="utf-8")
    new = with_teaser(text, teaser(results_dir))
    if new != text and not check:
        atomic_write_text(path, new)
    return new != text
