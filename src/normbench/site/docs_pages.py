"""The documentation's results pages and the README's results teaser, generated from the leaderboards.

Nothing here measures or rounds a result of its own: every number shown comes from a file under
``results/`` that ``normbench leaderboard`` (or another generating command) wrote. A hand-written
Markdown page asks for generated content with a marker on a line of its own; the content follows it, up to
the matching end marker (``<!-- /board: majority -->``):

* ``<!-- board: majority/modern -->``: ``results/majority/modern/leaderboard.md``, its headings one
  level down, its figures linked;
* ``<!-- include: sst2/unselectable_tokens.md -->``: another generated Markdown file under ``results/``;
* ``<!-- file: examples/slurm_sweep.sh -->``: a file of the repository as a code block;
* ``<!-- generated: costs -->``: every published board's runs and training time, from its provenance;
* ``<!-- generated: verdicts -->``: every published board's verdicts, counted;
* ``<!-- generated: cards -->``, ``<!-- generated: card-costs -->``: every report card's summary and the training
  time of its new norm (:mod:`normbench.site.card_pages`), whose pages
  (``docs/cards/<card>.md``) :func:`write_pages` writes itself.

A board is *published* when the documentation has its page, :func:`page_of` (``docs/results/lm-width.md``
for ``results/lm/width/``): the tables list those boards, and a link to a board goes to its page only when
that page exists, so a board of one's own sweep (``results/majority/quick-5e097699/``) adds no link to a
missing page. The committed pages hold their generated content, so that they read as they are in a
repository browser (figures and files linked into ``results/``); :func:`write_pages` writes it::

    python -m normbench.site.docs_pages --docs docs           # rewrite the generated blocks of docs/
    python -m normbench.site.docs_pages --docs docs --check   # exit 1 if a page is stale

When the site is built, the MkDocs hook ``docs/hooks.py`` renders each block again for the site
(:func:`render_page` with ``site=True``: figures linked to the copies :func:`figures` lists, which the site
gets at build time, never ``docs/``).

The README's results teaser is the block between ``<!-- results-teaser:start -->`` and
``<!-- results-teaser:end -->``; :func:`teaser` writes it from ``results/majority/leaderboard.json``::

    python -m normbench.site.docs_pages --readme README.md           # rewrite the block
    python -m normbench.site.docs_pages --readme README.md --check   # exit 1 if it is stale

This module imports nothing heavy (no torch), so the site builds in seconds.
"""

from __future__ import annotations

import os
import posixpath
import re
import sys
from collections import Counter
from pathlib import Path
from typing import Any

from normbench import archive
from normbench.archive import Board, Metric
from normbench.io import atomic_write_text
from normbench.site import card_pages

BOARD_FILE = "leaderboard.md"
#: where the figures of the boards lie in the built site, below the docs root
FIGURES = "results/figures"
TEASER_START = "<!-- results-teaser:start -->"
TEASER_END = "<!-- results-teaser:end -->"
NORMS_GLANCE = "norms-glance.md"  # the norm leaderboard at a glance, the teaser's first block
ABLATION_HEADING = "**The paper's ablation** (the norm in front of attention alone), on its own board:"
#: the board and the columns the README's teaser shows
TEASER_BOARD = "majority"
TEASER_COLUMNS = ("test_acc@1000", "test_acc@5000")
#: the docs page of each board, relative to the docs root (``results/<key with / as ->.md``)
PAGES = "results"
VERDICT_ORDER = ("reproduced", "direction only", "borderline", "inconclusive", "not reproduced", "not run")
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

MARKER = re.compile(r"^<!--\s*(board|include|file|generated):\s*(\S+)\s*-->\s*$")
END_MARKER = re.compile(r"^<!--\s*/(board|include|file|generated):\s*(\S+)\s*-->\s*$")
HEADING = re.compile(r"^(#{1,5}) ")
FENCE = re.compile(r"^\s*(```|~~~)")
# ![alt](target) and [text](target) with a relative target (no scheme, no anchor-only, no absolute path)
LINK = re.compile(r"(!?)\[([^\]]*)\]\((?![a-z][a-z0-9+.-]*:|#|/)([^)\s]+)\)")
IMAGE_SUFFIXES = (".png", ".svg", ".jpg", ".jpeg", ".gif")
CODE_LANGUAGES = {".sh": "bash", ".py": "python", ".yaml": "yaml", ".yml": "yaml", ".toml": "toml"}


# ---------------------------------------------------------------------------------------------------- boards


def boards(results_dir: str | Path = "results") -> list[str]:
    """Every board under ``results_dir``, as ``<task>`` or ``<task>/<name>`` keys, sorted."""
    root = Path(results_dir)
    return sorted(p.parent.relative_to(root).as_posix() for p in root.rglob(BOARD_FILE))


def page_of(key: str) -> str:
    """The docs page (relative to the docs root) that shows board ``key``: ``results/lm-width.md``; a report card's
    board is shown on its card's page (``majority/card-pnorm`` -> ``cards/pnorm.md``)."""
    return card_pages.page_of_card_board(key) or f"{PAGES}/{key.replace('/', '-')}.md"


def docs_root(results_dir: str | Path = "results", docs_dir: str | Path | None = None) -> Path:
    """The documentation's root: ``docs_dir``, by default ``docs/`` beside ``results_dir``."""
    return Path(docs_dir) if docs_dir is not None else Path(results_dir).resolve().parent / "docs"


def has_page(key: str, results_dir: str | Path = "results", docs_dir: str | Path | None = None) -> bool:
    """Whether board ``key`` is published: the documentation has its page :func:`page_of`."""
    return (docs_root(results_dir, docs_dir) / page_of(key)).is_file()


def published(results_dir: str | Path = "results", docs_dir: str | Path | None = None) -> list[str]:
    """The boards under ``results_dir`` that have a page (a board of one's own sweep has none), sorted."""
    return [key for key in boards(results_dir) if has_page(key, results_dir, docs_dir)]


def figures(results_dir: str | Path = "results") -> list[tuple[str, Path]]:
    """Every figure under ``results_dir`` as (its path in the site, its file): what the site copies."""
    root = Path(results_dir)
    return [
        (f"{FIGURES}/{p.relative_to(root).as_posix()}", p)
        for p in sorted(root.rglob("*"))
        if p.suffix.lower() in IMAGE_SUFFIXES and p.is_file()
    ]


def shift_headings(markdown: str, by: int = 1) -> str:
    """Every ATX heading outside code blocks ``by`` levels down (``#`` -> ``##``), at most to level 6."""
    out, fenced = [], False
    for line in markdown.splitlines():
        if FENCE.match(line):
            fenced = not fenced
        elif not fenced and (m := HEADING.match(line)):
            line = "#" * min(6, len(m[1]) + by) + line[len(m[1]) :]
        out.append(line)
    return "\n".join(out)


def rewrite_links(
    markdown: str,
    source_dir: str,
    page: str,
    results_dir: str | Path = "results",
    docs_dir: str | Path | None = None,
    site: bool = True,
) -> str:
    """Relative links of a generated file under ``results/<source_dir>`` as seen from docs page ``page``.

    A link to another board's ``leaderboard.md`` points at that board's page where it has one. In the site,
    figures point at their copies under :data:`FIGURES`, and any other relative link becomes its text and the
    file's path (it lies outside the site); in the committed page (``site=False``) both link to the file
    under ``results/``, as a repository browser shows it.
    """
    here = posixpath.dirname(page)
    docs = docs_root(results_dir, docs_dir)
    results = Path(os.path.relpath(Path(results_dir).resolve(), (docs / here).resolve())).as_posix()

    def replace(match: re.Match[str]) -> str:
        bang, text, target = match[1], match[2], match[3]
        path = posixpath.normpath(posixpath.join(source_dir, target))
        if target.lower().endswith(IMAGE_SUFFIXES) and site:
            return f"{bang}[{text}]({posixpath.relpath(f'{FIGURES}/{path}', here or '.')})"
        key = posixpath.dirname(path)
        if posixpath.basename(path) == BOARD_FILE and has_page(key, results_dir, docs):
            return f"[{text}]({posixpath.relpath(page_of(key), here or '.')})"
        return f"{text} (`results/{path}`)" if site else f"{bang}[{text}]({results}/{path})"

    return LINK.sub(replace, markdown)


def generated_file(
    relpath: str,
    page: str,
    results_dir: str | Path = "results",
    docs_dir: str | Path | None = None,
    site: bool = True,
) -> str:
    """A generated Markdown file ``results/<relpath>`` as it appears in docs page ``page``."""
    root = Path(results_dir).resolve()
    path = (root / relpath).resolve()
    if root not in path.parents or path.suffix != ".md":
        raise ValueError(f"include: {relpath!r} is not a Markdown file under {results_dir}")
    if not path.is_file():
        raise FileNotFoundError(f"include: {path} does not exist")
    text = rewrite_links(
        path.read_text(encoding="utf-8"), posixpath.dirname(relpath), page, results_dir, docs_dir, site
    )
    return shift_headings(text).rstrip() + "\n"


def board_markdown(
    key: str, page: str, results_dir: str | Path = "results", docs_dir: str | Path | None = None, site: bool = True
) -> str:
    """Board ``key`` (``results/<key>/leaderboard.md``) as it appears in docs page ``page``."""
    return generated_file(f"{key}/{BOARD_FILE}", page, results_dir, docs_dir, site)


def repository_file(relpath: str, root: str | Path) -> str:
    """A file of the repository (relative to ``root``) as a fenced code block."""
    base = Path(root).resolve()
    path = (base / relpath).resolve()
    if base not in path.parents or not path.is_file():
        raise FileNotFoundError(f"file: {relpath!r} is not a file of the repository")
    language = CODE_LANGUAGES.get(path.suffix, "text")
    return f"```{language}\n{path.read_text(encoding='utf-8').rstrip()}\n```\n"


def load_board(key: str, results_dir: str | Path = "results") -> Board:
    """Board ``key`` (``results/<key>/leaderboard.json``), read by :func:`normbench.archive.load_board`."""
    return archive.load_board(Path(results_dir) / key / "leaderboard.json")


# ---------------------------------------------------------------------------------------------------- tables


def duration(seconds: float | None) -> str:
    """``42 s``, ``17 min`` or ``2.8 h``; ``–`` when unknown."""
    if seconds is None:
        return "–"
    if seconds < 120:
        return f"{seconds:.0f} s"
    return f"{seconds / 60:.0f} min" if seconds < 5400 else f"{seconds / 3600:.1f} h"


def trained_on(board: Board) -> str:
    """Where a board's runs trained: devices, CPU or GPU models where recorded, threads per run."""
    provenances = [v.provenance or {} for v in board.variants]
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


GENERATED = {"costs": costs_table, "verdicts": verdicts_table, "cards": card_pages.cards_table,
             "card-costs": card_pages.card_costs_table}  # fmt: skip


# ---------------------------------------------------------------------------------------------------- pages


def end_marker(kind: str, arg: str) -> str:
    """The line that ends the generated block of marker ``<!-- kind: arg -->``."""
    return f"<!-- /{kind}: {arg} -->"


def blocks(lines: list[str]) -> list[tuple[int, int | None, str, str]]:
    """The generated blocks of a page's lines: (marker line, end marker line or ``None``, kind, arg). A marker
    with no end marker before the next marker (a page not yet generated) has an empty block."""
    found, fenced, i = [], False, 0
    while i < len(lines):
        if FENCE.match(lines[i]):
            fenced = not fenced
        match = None if fenced else MARKER.match(lines[i])
        if match:
            end = None
            for j in range(i + 1, len(lines)):
                if MARKER.match(lines[j]):
                    break
                if (m := END_MARKER.match(lines[j])) and (m[1], m[2]) == (match[1], match[2]):
                    end = j
                    break
            found.append((i, end, match[1], match[2]))
            i = end if end is not None else i
        i += 1
    return found


def generated(
    kind: str,
    arg: str,
    page: str,
    results_dir: str | Path = "results",
    root: str | Path | None = None,
    docs_dir: str | Path | None = None,
    site: bool = True,
) -> str:
    """The content of marker ``<!-- kind: arg -->`` in docs page ``page`` (see :func:`render_page`)."""
    root = Path(results_dir).resolve().parent if root is None else Path(root)
    if kind == "board":
        return board_markdown(arg, page, results_dir, docs_dir, site)
    if kind == "include":
        return generated_file(arg, page, results_dir, docs_dir, site)
    if kind == "file":
        return repository_file(arg, root)
    if arg in GENERATED:
        return GENERATED[arg](results_dir, page, docs_dir)
    raise ValueError(f"generated: {arg!r} is not one of {', '.join(GENERATED)}")


def render_page(
    markdown: str,
    page: str,
    results_dir: str | Path = "results",
    root: str | Path | None = None,
    docs_dir: str | Path | None = None,
    site: bool = True,
) -> str:
    """A docs page's Markdown with the content of each marker generated anew (see the module's docstring).

    ``page`` is the page's path relative to the docs root ``docs_dir`` (it decides the relative links;
    default: ``docs/`` beside ``results_dir``), ``root`` the repository (for ``file:`` markers; default: the
    parent of ``results_dir``). For the site (``site``) the markers give way to the content; for the committed
    page each block stays between its marker and end marker, with its links into ``results/``.
    """
    lines = markdown.splitlines()
    out, start = [], 0
    for begin, end, kind, arg in blocks(lines):
        out += lines[start:begin] if site else lines[start : begin + 1]
        content = generated(kind, arg, page, results_dir, root, docs_dir, site).rstrip("\n")
        out += [content] if site else ["", content, "", end_marker(kind, arg)]
        start = begin + 1 if end is None else end + 1
    out += lines[start:]
    return "\n".join(out) + "\n"


def without_generated(markdown: str) -> str:
    """A page's Markdown with the content of its generated blocks left out (its markers kept): what was typed."""
    lines = markdown.splitlines()
    out, start = [], 0
    for begin, end, _kind, _arg in blocks(lines):
        out += lines[start : begin + 1]
        start = begin + 1 if end is None else end
    out += lines[start:]
    return "\n".join(out) + "\n"


def write_pages(
    docs_dir: str | Path = "docs",
    results_dir: str | Path = "results",
    root: str | Path | None = None,
    check: bool = False,
) -> list[Path]:
    """Generate the blocks of every Markdown page under ``docs_dir`` (``check``: only compare); the stale pages. A
    report card without its page (or whose page shows other blocks) gets it first (:func:`card_pages.card_page`)."""
    docs = Path(docs_dir)
    stale = []
    for slug in card_pages.card_slugs(results_dir):
        page = card_pages.card_page_of(slug)
        path = docs / page
        want = render_page(card_pages.card_page(slug, results_dir), page, results_dir, root, docs, site=False)
        if not path.is_file() or path.read_text(encoding="utf-8") != want:
            stale.append(path)
            if not check:
                path.parent.mkdir(parents=True, exist_ok=True)
                atomic_write_text(path, want)
    for path in sorted(docs.rglob("*.md")):
        text = path.read_text(encoding="utf-8")
        if not blocks(text.splitlines()):
            continue
        new = render_page(text, path.relative_to(docs).as_posix(), results_dir, root, docs, site=False)
        if new != text:
            stale += [] if path in stale else [path]
            if not check:
                atomic_write_text(path, new)
    return stale


def board_markers(markdown: str) -> list[str]:
    """The boards a page's Markdown shows (its ``board:`` markers)."""
    return [m[2] for line in markdown.splitlines() if (m := MARKER.match(line)) and m[1] == "board"]


# ---------------------------------------------------------------------------------------------------- teaser


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
        component = v.norms.get("attn", {}).get("component", "")
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
            protocol = c.protocol or {}
            why = "; not the paper's protocol" if protocol and not protocol.get("met", True) else ""
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


USAGE = """usage: python -m normbench.site.docs_pages [--readme PATH] [--docs PATH] [--results_dir PATH] [--check]

Write what the documentation shows from the leaderboards: the README's results teaser (the block between the
teaser markers) and the generated blocks of the documentation's pages (each marker's content).
  --readme PATH       the README whose teaser block is rewritten
  --docs PATH         the documentation's root, whose pages' generated blocks are rewritten
                      (neither --readme nor --docs: both, README.md and docs)
  --results_dir PATH  the folder holding the leaderboards (default: results)
  --check             write nothing; exit 1 if something is stale"""


def parse_args(argv: list[str]) -> dict[str, Any]:
    """``--readme PATH``, ``--docs PATH``, ``--results_dir PATH`` (also ``--opt=PATH``) and ``--check``; a one-line
    error otherwise."""
    args: dict[str, Any] = {"readme": None, "docs": None, "results_dir": "results", "check": False, "help": False}
    words = list(argv)
    while words:
        word = words.pop(0)
        name, eq, value = word.partition("=")
        if word in ("-h", "--help"):
            args["help"] = True
        elif word == "--check":
            args["check"] = True
        elif name in ("--readme", "--docs", "--results_dir"):
            if not eq:
                if not words:
                    raise ValueError(f"{name}: needs a path")
                value = words.pop(0)
            args[name[2:]] = value
        else:
            raise ValueError(f"{word!r} is not an option ({USAGE.splitlines()[0].removeprefix('usage: ')})")
    if args["readme"] is None and args["docs"] is None:
        args["readme"], args["docs"] = "README.md", "docs"
    return args


def main(argv: list[str] | None = None) -> int:
    try:
        args = parse_args(sys.argv[1:] if argv is None else argv)
        if args["help"]:
            print(USAGE)
            return 0
        stale = []
        if args["readme"] is not None and update_readme(args["readme"], args["results_dir"], check=args["check"]):
            stale.append(Path(args["readme"]))
        if args["docs"] is not None:
            stale += write_pages(args["docs"], args["results_dir"], check=args["check"])
    except (ValueError, OSError) as exc:
        print(f"docs_pages: error: {exc}", file=sys.stderr)
        return 2
    if args["check"] and stale:
        names = ", ".join(map(str, stale))
        print(f"docs_pages: stale: {names}; run without --check to rewrite them", file=sys.stderr)
        return 1
    print(f"docs_pages: {'rewrote ' + ', '.join(map(str, stale)) if stale else 'everything up to date'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
