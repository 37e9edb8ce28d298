"""Files shown inside a docs page: a generated Markdown file of ``results/`` (its headings one level down, its
relative links rewritten for the page) or a file of the repository as a fenced code block."""

from __future__ import annotations

import os
import posixpath
import re
from pathlib import Path

from normbench.site.board_pages import BOARD_FILE, FIGURES, IMAGE_SUFFIXES, docs_root, has_page, page_of

HEADING = re.compile(r"^(#{1,5}) ")
FENCE = re.compile(r"^\s*(```|~~~)")
# ![alt](target) and [text](target) with a relative target (no scheme, no anchor-only, no absolute path)
LINK = re.compile(r"(!?)\[([^\]]*)\]\((?![a-z][a-z0-9+.-]*:|#|/)([^)\s]+)\)")
CODE_LANGUAGES = {".sh": "bash", ".py": "python", ".yaml": "yaml", ".yml": "yaml", ".toml": "toml"}


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
