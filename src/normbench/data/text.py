"""Text corpora as lists of whole articles, from a local directory or the Hugging Face hub.

Both routes go through HF ``datasets``: a local directory of ``*.txt`` files is read with the
``text`` builder (one row per line), a hub corpus with ``load_dataset(name, config)``. WikiText
files hold one paragraph per line with `` = Title = `` headings; :func:`group_articles` cuts the
lines into articles at the top-level headings, so splits never cut an article in two.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Literal

import numpy as np

Source = Literal["auto", "local", "hub"]
Layout = Literal["wikitext", "articles"]
SOURCES = ("auto", "local", "hub")
OFFLINE_ENV = ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE")  # Hugging Face's own switches for a machine without internet

# `` = Title = `` (one "=" on each side); `` = = Section = = `` lines are not article starts.
HEADING = re.compile(r"^ ?= [^=](?:.*[^=])? = ?$")
DATA_ENV = "NORMBENCH_DATA_DIR"


def default_data_dir(name: str) -> Path:
    """``$NORMBENCH_DATA_DIR/<name>``, else ``../shared/data/<name>`` relative to the working directory."""
    root = os.environ.get(DATA_ENV)
    return Path(root) / name if root else Path("..") / "shared" / "data" / name


def offline() -> bool:
    """True when Hugging Face is told the machine is offline (``HF_HUB_OFFLINE`` / ``HF_DATASETS_OFFLINE``)."""
    return any(os.environ.get(name, "").upper() in ("1", "ON", "YES", "TRUE") for name in OFFLINE_ENV)


def resolve_source(source: str, folder: str | Path) -> str:
    """``local`` or ``hub``: what a data module's ``source`` reads. ``auto`` is ``local`` when ``folder``
    exists, and the hub only when it is missing and the machine is not offline (so a missing folder
    offline is reported as missing)."""
    if source not in SOURCES:
        raise ValueError(f"data.source: {source!r} is not allowed; choose one of {', '.join(SOURCES)}")
    if source != "auto":
        return source
    return "hub" if not Path(folder).is_dir() and not offline() else "local"


def group_articles(lines: Iterable[str]) -> list[str]:
    """Join WikiText lines into articles, each starting at a top-level `` = Title = `` heading.

    Lines before the first heading form an article of their own; blank lines are dropped and
    each kept line ends with a newline, so an article is its non-empty lines joined.
    """
    articles: list[list[str]] = []
    for line in lines:
        text = line.rstrip("\n")
        if not text.strip():
            continue
        if HEADING.match(text) or not articles:
            articles.append([])
        articles[-1].append(text.strip() + "\n")
    return ["".join(a) for a in articles]


def load_local_lines(data_dir: str | Path, field: str = "data.data_dir") -> list[str]:
    """All lines of the ``*.txt`` files of ``data_dir`` (sorted by file name), read with ``datasets``."""
    from datasets import load_dataset

    path = Path(data_dir)
    hint = (
        f"point {field} (or ${DATA_ENV}) at a folder of WikiText-style *.txt files, "
        "or use --data.source hub to download from the Hugging Face hub"
    )
    if not path.is_dir():
        raise ValueError(f"{field}: {str(path)!r} does not exist; {hint}")
    files = sorted(str(p) for p in path.glob("*.txt") if p.stat().st_size > 0)
    if not files:
        raise ValueError(f"{field}: {str(path)!r} has no non-empty *.txt files; {hint}")
    rows = load_dataset("text", data_files={"corpus": files}, split="corpus")
    return list(rows["text"])


def load_hub_rows(name: str, config: str | None, splits: Sequence[str], column: str = "text") -> list[str]:
    """Rows of ``column`` from the hub dataset ``name``/``config``, the given splits in order."""
    from datasets import load_dataset

    try:
        parts = [load_dataset(name, config, split=s) for s in splits]
    except Exception as exc:  # network, unknown name, ...: one line, with the cause
        raise ValueError(
            f"data.hub_name: could not load {name!r} ({config}) from the hub: "
            f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
        ) from exc
    return [text for part in parts for text in part[column]]


def load_articles(
    source: Source,
    data_dir: str | Path | None,
    hub_name: str,
    hub_config: str | None,
    hub_splits: Sequence[str],
    layout: Layout,
) -> list[str]:
    """The corpus as articles; raises a one-line ``ValueError`` when it is missing or empty.

    ``source`` ``auto`` reads ``data_dir`` when it exists, else the hub (:func:`resolve_source`).
    """
    data_dir = data_dir if data_dir is not None else default_data_dir("wikitext-2")
    resolved = resolve_source(source, data_dir)
    if source == "auto" and resolved == "hub":
        try:
            return load_articles("hub", data_dir, hub_name, hub_config, hub_splits, layout)
        except ValueError as exc:
            raise ValueError(
                f"data.data_dir: {str(data_dir)!r} does not exist, and source auto could not "
                f"use the hub instead ({exc}); point data.data_dir (or ${DATA_ENV}) at "
                f"a folder of WikiText-style *.txt files"
            ) from None
    source = resolved
    if source == "local":
        rows = load_local_lines(data_dir)
    elif source == "hub":
        rows = load_hub_rows(hub_name, hub_config, hub_splits)
    else:
        raise ValueError(f"data.source: {source!r} is not allowed; choose one of local, hub")
    articles = group_articles(rows) if layout == "wikitext" else [r for r in rows if r.strip()]
    if not articles:
        where = data_dir if source == "local" else f"{hub_name} ({hub_config})"
        raise ValueError(f"data: the corpus ({source}: {where}) contains no text")
    return articles


def split_articles(n: int, fractions: dict[str, float], seed: int) -> dict[str, np.ndarray]:
    """Article indices per split: a seeded permutation cut by ``fractions`` (the rest is ``train``).

    Every split but ``train`` gets round(fraction * n) articles, at least one.
    """
    for name, frac in fractions.items():
        if not 0.0 < frac < 1.0:
            raise ValueError(f"data.{name}_fraction: must be in (0, 1), got {frac!r}")
    sizes = {name: max(1, round(frac * n)) for name, frac in fractions.items()}
    if sum(sizes.values()) >= n:
        raise ValueError(
            f"data: {n} articles cannot be split into {', '.join(sizes)} and a train part "
            f"(the held-out fractions take {sum(sizes.values())})"
        )
    order = np.random.default_rng(seed).permutation(n)
    out, start = {}, 0
    for name, size in sizes.items():
        out[name] = np.sort(order[start : start + size])
        start += size
    out["train"] = np.sort(order[start:])
    return out
