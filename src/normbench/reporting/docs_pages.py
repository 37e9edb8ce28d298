"""The documentation's results pages and the README's results teaser, generated from the leaderboards.

Nothing here measures or rounds a result of its own: every number shown comes from a file under
``results/`` that ``normbench leaderboard`` (or another generating command) wrote. A hand-written
Markdown page asks for generated content with markers, each on a line of its own, which
:func:`render_page` replaces when the site is built (the MkDocs hook ``docs/hooks.py`` calls it):

* ``<!-- board: majority/modern -->``: ``results/majority/modern/leaderboard.md``, its headings one
  level down, its figures linked to the copies :func:`figures` lists (copied into the site at build time);
* ``<!-- include: sst2/unselectable_tokens.md -->``: another generated Markdown file under ``results/``;
* ``<!-- file: examples/slurm_sweep.sh -->``: a file of the repository as a code block;
* ``<!-- generated: costs -->``: every board's runs and training time, from its provenance;
* ``<!-- generated: verdicts -->``: every board's verdicts, counted.

The README's results teaser is the block between ``<!-- results-teaser:start -->`` and
``<!-- results-teaser:end -->``; :func:`teaser` writes it from ``results/majority/leaderboard.json``::

    python -m normbench.reporting.docs_pages --readme README.md           # rewrite the block
    python -m normbench.reporting.docs_pages --readme README.md --check   # exit 1 if it is stale

This module imports nothing heavy (no torch), so the site builds in seconds.
"""

from __future__ import annotations

import posixpath
import re
import sys
from collections import Counter
from pathlib import Path
from typing import Any

from normbench import archive
from normbench.archive import Board, Metric
from normbench.io import atomic_write_text

BOARD_FILE = "leaderboard.md"
#: where the figures of the boards lie in the built site, below the docs root
FIGURES = "results/figures"
TEASER_START = "<!-- results-teaser:start -->"
TEASER_END = "<!-- results-teaser:end -->"
#: the board and the columns the README's teaser shows
TEASER_BOARD = "majority"
TEASER_COLUMNS = ("test_acc@1000", "test_acc@5000")
#: the docs page of each board, relative to the docs root (``results/<key with / as ->.md``)
PAGES = "results"
VERDICT_ORDER = ("reproduced", "direction only", "inconclusive", "not reproduced", "not run")
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
    """The docs page (relative to the docs root) that shows board ``key``: ``results/lm-width.md``."""
    return f"{PAGES}/{key.replace('/', '-')}.md"


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


def rewrite_links(markdown: str, source_dir: str, page: str) -> str:
    """Relative links of a generated file under ``results/<source_dir>`` as seen from docs page ``page``.

    Figures point at their copies under :data:`FIGURES`; a link to another board's ``leaderboard.md`` points at
    that board's page; any other relative link becomes its text and the file's path (it lies outside the site).
    """
    here = posixpath.dirname(page)

    def replace(match: re.Match[str]) -> str:
        bang, text, target = match[1], match[2], match[3]
        path = posixpath.normpath(posixpath.join(source_dir, target))
        if target.lower().endswith(IMAGE_SUFFIXES):
            return f"{bang}[{text}]({posixpath.relpath(f'{FIGURES}/{path}', here or '.')})"
        if posixpath.basename(path) == BOARD_FILE:
            return f"[{text}]({posixpath.relpath(page_of(posixpath.dirname(path)), here or '.')})"
        return f"{text} (`results/{path}`)"

    return LINK.sub(replace, markdown)


def generated_file(relpath: str, page: str, results_dir: str | Path = "results") -> str:
    """A generated Markdown file ``results/<relpath>`` as it appears in docs page ``page``."""
    root = Path(results_dir).resolve()
    path = (root / relpath).resolve()
    if root not in path.parents or path.suffix != ".md":
        raise ValueError(f"include: {relpath!r} is not a Markdown file under {results_dir}")
    if not path.is_file():
        raise FileNotFoundError(f"include: {path} does not exist")
    text = path.read_text(encoding="utf-8")
    return shift_headings(rewrite_links(text, posixpath.dirname(relpath), page)).rstrip() + "\n"


def board_markdown(key: str, page: str, results_dir: str | Path = "results") -> str:
    """Board ``key`` (``results/<key>/leaderboard.md``) as it appears in docs page ``page``."""
    return generated_file(f"{key}/{BOARD_FILE}", page, results_dir)


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
    )
    where = ", ".join(devices) + (f": {'; '.join(machines)}" if machines else "")
    per_run = " or ".join(map(str, threads))
    return f"{where}, {per_run} thread{'s' if threads != [1] else ''} per run"


def costs_table(results_dir: str | Path = "results", page: str = "index.md") -> str:
    """One row per board: preset, variants, finished runs, training time (summed, and per run), where it ran."""
    here = posixpath.dirname(page) or "."
    lines = [
        "| board | preset | variants | runs | training time, summed over runs | per run | trained on |",
        "|---|---|---|---|---|---|---|",
    ]
    for key in boards(results_dir):
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


def verdicts_table(results_dir: str | Path = "results", page: str = "index.md") -> str:
    """One row per board with claims: how many of its claims got each verdict, the paper's and normbench's."""
    here = posixpath.dirname(page) or "."
    lines = [
        "| board | claims (paper / normbench) | " + " | ".join(VERDICT_ORDER) + " |",
        "|---|---|" + "---|" * len(VERDICT_ORDER),
    ]
    for key in boards(results_dir):
        claims = load_board(key, results_dir).claims
        if not claims:
            continue
        counts = Counter(c.verdict for c in claims)
        owners = Counter(c.owner for c in claims)
        link = posixpath.relpath(page_of(key), here)
        lines.append(
            f"| [`{key}`]({link}) | {len(claims)} ({owners['paper']} / {owners['normbench']}) | "
            + " | ".join(str(counts[v]) for v in VERDICT_ORDER)
            + " |"
        )
    return "\n".join(lines) + "\n"


GENERATED = {"costs": costs_table, "verdicts": verdicts_table}


# ---------------------------------------------------------------------------------------------------- pages


def render_page(markdown: str, page: str, results_dir: str | Path = "results", root: str | Path | None = None) -> str:
    """A docs page's Markdown with its markers replaced by generated content (see the module's docstring).

    ``page`` is the page's path relative to the docs root (it decides the relative links), ``root`` the
    repository (for ``file:`` markers; default: the parent of ``results_dir``).
    """
    root = Path(results_dir).resolve().parent if root is None else Path(root)
    out, fenced = [], False
    for line in markdown.splitlines():
        if FENCE.match(line):
            fenced = not fenced
        match = None if fenced else MARKER.match(line)
        if not match:
            out.append(line)
            continue
        kind, arg = match[1], match[2]
        if kind == "board":
            out.append(board_markdown(arg, page, results_dir))
        elif kind == "include":
            out.append(generated_file(arg, page, results_dir))
        elif kind == "file":
            out.append(repository_file(arg, root))
        elif arg in GENERATED:
            out.append(GENERATED[arg](results_dir, page))
        else:
            raise ValueError(f"generated: {arg!r} is not one of {', '.join(GENERATED)}")
    return "\n".join(out) + "\n"


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
            lines.append(f"- {c.owner}: {c.statement}: **{c.verdict}**{why}")
    return "\n".join(lines) + "\n"


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


USAGE = """usage: python -m normbench.reporting.docs_pages [--readme README.md] [--results_dir results] [--check]

Write the README's results teaser (the block between the teaser markers) from the leaderboards.
  --readme PATH       the README whose teaser block is rewritten (default: README.md)
  --results_dir PATH  the folder holding the leaderboards (default: results)
  --check             write nothing; exit 1 if the block is stale"""


def parse_args(argv: list[str]) -> dict[str, Any]:
    """``--readme PATH``, ``--results_dir PATH`` (also ``--opt=PATH``) and ``--check``; a one-line error otherwise."""
    args: dict[str, Any] = {"readme": "README.md", "results_dir": "results", "check": False, "help": False}
    words = list(argv)
    while words:
        word = words.pop(0)
        name, eq, value = word.partition("=")
        if word in ("-h", "--help"):
            args["help"] = True
        elif word == "--check":
            args["check"] = True
        elif name in ("--readme", "--results_dir"):
            if not eq:
                if not words:
                    raise ValueError(f"{name}: needs a path")
                value = words.pop(0)
            args[name[2:]] = value
        else:
            raise ValueError(f"{word!r} is not an option ({USAGE.splitlines()[0].removeprefix('usage: ')})")
    return args


def main(argv: list[str] | None = None) -> int:
    try:
        args = parse_args(sys.argv[1:] if argv is None else argv)
        if args["help"]:
            print(USAGE)
            return 0
        stale = update_readme(args["readme"], args["results_dir"], check=args["check"])
    except (ValueError, OSError) as exc:
        print(f"docs_pages: error: {exc}", file=sys.stderr)
        return 2
    if args["check"] and stale:
        print(f"{args['readme']}: the results teaser is stale; run without --check to rewrite it", file=sys.stderr)
        return 1
    print(f"{args['readme']}: results teaser {'rewritten' if stale else 'up to date'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
