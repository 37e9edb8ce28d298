"""MkDocs hooks: the results pages are filled from the leaderboards when the site is built.

A page asks for generated content with markers (``<!-- board: majority -->`` and the others that
:mod:`normbench.reporting.docs_pages` lists); the figures next to the leaderboards are copied into the
site at build time (never into ``docs/``).
"""

from __future__ import annotations

from pathlib import Path

from mkdocs.structure.files import File, Files

from normbench.reporting import docs_pages

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "results"


def on_files(files: Files, config) -> Files:
    for src_uri, path in docs_pages.figures(RESULTS):
        files.append(File.generated(config, src_uri, abs_src_path=str(path)))
    return files


def on_page_markdown(markdown: str, page, config, files) -> str:
    return docs_pages.render_page(markdown, page.file.src_uri, RESULTS, ROOT)
