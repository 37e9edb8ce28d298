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

A board is *published* when the documentation has its page (:mod:`normbench.site.board_pages`): the tables
list those boards (:mod:`normbench.site.board_tables`), and a generated file shows in a page with its links
rewritten for it (:mod:`normbench.site.included_files`). The committed pages hold their generated content, so
that they read as they are in a repository browser (figures and files linked into ``results/``);
:func:`write_pages` writes it::

    python -m normbench.site.docs_pages --docs docs           # rewrite the generated blocks of docs/
    python -m normbench.site.docs_pages --docs docs --check   # exit 1 if a page is stale

When the site is built, the MkDocs hook ``docs/hooks.py`` renders each block again for the site
(:func:`render_page` with ``site=True``: figures linked to the copies :func:`normbench.site.board_pages.figures`
lists, which the site gets at build time, never ``docs/``).

The README's results teaser is the block between ``<!-- results-teaser:start -->`` and
``<!-- results-teaser:end -->``; :func:`normbench.site.teaser.teaser` writes it from
``results/majority/leaderboard.json``::

    python -m normbench.site.docs_pages --readme README.md           # rewrite the block
    python -m normbench.site.docs_pages --readme README.md --check   # exit 1 if it is stale

This module imports nothing heavy (no torch), so the site builds in seconds.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import TypedDict

from normbench.io import atomic_write_text
from normbench.site import card_pages
from normbench.site.board_tables import costs_table, verdicts_table
from normbench.site.included_files import FENCE, board_markdown, generated_file, repository_file
from normbench.site.teaser import update_readme

MARKER = re.compile(r"^<!--\s*(board|include|file|generated):\s*(\S+)\s*-->\s*$")
END_MARKER = re.compile(r"^<!--\s*/(board|include|file|generated):\s*(\S+)\s*-->\s*$")

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


USAGE = """usage: python -m normbench.site.docs_pages [--readme PATH] [--docs PATH] [--results_dir PATH] [--check]

Write what the documentation shows from the leaderboards: the README's results teaser (the block between the
teaser markers) and the generated blocks of the documentation's pages (each marker's content).
  --readme PATH       the README whose teaser block is rewritten
  --docs PATH         the documentation's root, whose pages' generated blocks are rewritten
                      (neither --readme nor --docs: both, README.md and docs)
  --results_dir PATH  the folder holding the leaderboards (default: results)
  --check             write nothing; exit 1 if something is stale"""


class PagesArgs(TypedDict):
    """The command line of ``python -m normbench.site.docs_pages`` (:func:`parse_args`): the ``readme`` and the
    ``docs`` root to rewrite (``None``: not that one), the ``results_dir`` read, ``check`` (write nothing, say what is
    stale) and ``help``."""

    readme: str | None
    docs: str | None
    results_dir: str
    check: bool
    help: bool


def parse_args(argv: list[str]) -> PagesArgs:
    """``--readme PATH``, ``--docs PATH``, ``--results_dir PATH`` (also ``--opt=PATH``) and ``--check``; a one-line
    error otherwise."""
    args: PagesArgs = {"readme": None, "docs": None, "results_dir": "results", "check": False, "help": False}
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
            if name == "--readme":
                args["readme"] = value
            elif name == "--docs":
                args["docs"] = value
            else:
                args["results_dir"] = value
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
