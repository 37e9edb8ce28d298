"""MkDocs hooks: the generated blocks of the pages are rendered anew from the leaderboards when the site is built.

A page holds generated content between markers (``<!-- board: majority -->`` ... ``<!-- /board: majority -->``
and the others that :mod:`normbench.site.docs_pages` lists), committed as
``python -m normbench.site.docs_pages --docs docs`` wrote it, with links that work in a repository
browser. For the site each block is rendered again with the site's links: the figures next to the leaderboards
are copied into the site at build time (never into ``docs/``), and only pages that exist are linked.
"""

from __future__ import annotations

from pathlib import Path

from mkdocs.structure.files import File, Files

from normbench.site import board_pages, docs_pages

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "results"


def on_files(files: Files, config) -> Files:
    for src_uri, path in board_pages.figures(RESULTS):
        files.append(File.generated(config, src_uri, abs_src_path=str(path)))
    return files


def on_page_markdown(markdown: str, page, config, files) -> str:
    return docs_pages.render_page(markdown, page.file.src_uri, RESULTS, ROOT, docs_dir=config["docs_dir"], site=True)
