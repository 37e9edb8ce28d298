"""Facts of a run's data that its board needs, kept in the run archive so that a board is a function of the archive.

A board reads a few numbers off a run's *data* rather than its record: the unigram entropy of a language model's
training stream (the collapse baseline, :mod:`normbench.judge.collapse`) and the key-set sizes of a test stage
(the chance level beside every unselectable fraction, :mod:`normbench.judge.chance`). Each is a function of the
run's data config, computed where the corpus is. Kept only on that machine, a clone without the corpus would build
the board without them; so a board published into the checkout's ``results/`` adds the facts its build read to the
archive, ``results/archive/data-facts/<kind>-<digest>.json`` (``{"kind", "params", "value"}``; the digest is of
``params``, which name the data config as a run's identity does: the data are what the config names), and every
build reads them from there first, then from this machine's cache (``$NORMBENCH_CACHE/data-facts/``), and computes
them from the data last.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypedDict

from normbench.archive._json import JsonDict
from normbench.archive.store import ARCHIVE
from normbench.io import atomic_write_json, cache_root, params_digest

FACTS = "data-facts"


class Fact(TypedDict):
    """A data fact's file (``<kind>-<digest>.json``, :func:`fact_name`): its ``kind``, the ``params`` that decide it
    (the data config, with what else does: :func:`data_fact`) and its ``value``, whatever the kind computes."""

    kind: str
    params: JsonDict
    value: Any


READ: dict[str, Fact] = {}  # the facts this process's builds read or computed: file name -> document


def fact_name(kind: str, params: JsonDict) -> str:
    """``<kind>-<16 hex digits of sha256 over the sorted-JSON params>.json``."""
    return f"{kind}-{params_digest(params)}.json"


def checkout_results() -> Path | None:
    """The ``results/`` folder of the checkout this package runs from (``None`` for an installed package)."""
    root = Path(__file__).resolve().parents[3]
    return root / "results" if (root / "pyproject.toml").is_file() and (root / "results").is_dir() else None


def fact_dirs() -> list[Path]:
    """Where facts are read, in order: the checkout's archive (committed), then this machine's cache."""
    results = checkout_results()
    return [*([results / ARCHIVE / FACTS] if results else []), cache_root() / FACTS]


def read_fact(path: Path, kind: str, params: JsonDict) -> Fact | None:
    """The fact document at ``path`` if it is this kind's and these params' (else ``None``: absent or another's)."""
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    ok = isinstance(doc, dict) and doc.get("kind") == kind and doc.get("params") == params and "value" in doc
    return doc if ok else None


def data_fact(kind: str, data: JsonDict, compute: Callable[[], Any], **extra: Any) -> Any:
    """The fact ``kind`` of the data config ``data`` (a run config's ``data`` section; ``extra``: what else decides
    the value, e.g. a version): read from :func:`fact_dirs`, else ``compute()``d and cached on this machine. A fact of
    data read from files (the config names a ``source`` or ``data_dir``) is noted in :data:`READ`, for
    :func:`archive_facts`; data the code generates (the majority task's) need no archive."""
    params = {"data": data, **extra}
    name = fact_name(kind, params)
    from_files = bool({"source", "data_dir"} & set(data.get("init_args") or {}))  # a corpus read from files or a hub
    for folder in fact_dirs():
        found = read_fact(folder / name, kind, params)
        if found is not None:
            READ.update({name: found} if from_files else {})
            return found["value"]
    doc: Fact = {"kind": kind, "params": params, "value": compute()}
    atomic_write_json(cache_root() / FACTS / name, doc)
    READ.update({name: doc} if from_files else {})
    return doc["value"]


def archive_facts(results_dir: str | Path) -> list[Path]:
    """Add every fact this process read to ``<results_dir>/archive/data-facts/`` where it is not yet (a published
    board's facts travel with it); returns the files written."""
    folder = Path(results_dir) / ARCHIVE / FACTS
    written = []
    for name, doc in sorted(READ.items()):
        path = folder / name
        if read_fact(path, doc["kind"], doc["params"]) is None:
            atomic_write_json(path, doc)
            written.append(path)
    return written
