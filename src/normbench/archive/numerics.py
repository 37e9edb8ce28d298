"""Numerics references: short runs of every task as this platform class trains them, to catch a change of numbers.

A change of the training code that moves a number under an unchanged configuration must bump
:data:`normbench.training.run.rundir.NUMERICS_VERSION` (the run identity then changes with it). To catch one that does
not, ``tests/test_numerics.py`` trains a few short runs ("probes") and compares their series bit for bit with the
references kept here for the platform class it runs on (CPU model, vector width, threads and torch version: what
decides the last bits). ``NORMBENCH_WRITE_NUMERICS=1`` writes this platform's references instead (once per platform
class, and after each bump).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TypedDict

from normbench.archive.record import Provenance, RecordDocument, Series
from normbench.archive.replicate import platform_slug
from normbench.archive.store import ARCHIVE
from normbench.io import atomic_write_json

NUMERICS = "numerics"
WRITE_ENV = "NORMBENCH_WRITE_NUMERICS"


class NumericsReferences(TypedDict, total=False):
    """One platform class's references (``results/archive/numerics/<platform class>.json``; empty before any): the
    ``numerics_version`` they were trained at, the ``platform`` and ``torch`` of the machine that wrote them (as its
    runs' provenance names them) and ``probes``: probe name -> its series (:func:`probe_series`)."""

    numerics_version: int
    platform: object
    torch: str | None
    probes: dict[str, Series]


def platform_class(provenance: Provenance) -> str:
    """The platform and torch version of a run, as a file name: ``cpu-amd-epyc-avx2-t1-torch2.15.0``."""
    return f"{platform_slug(provenance)}-torch{str(provenance.get('torch', 'unknown')).split('+')[0]}"


def reference_path(results_dir: str | Path, provenance: Provenance) -> Path:
    return Path(results_dir) / ARCHIVE / NUMERICS / f"{platform_class(provenance)}.json"


def probe_series(record: RecordDocument) -> dict[str, list[list[float]]]:
    """What a probe compares: every logged series but those of wall-clock time."""
    return {k: v for k, v in sorted((record.get("series") or {}).items()) if "time" not in k and "per_s" not in k}


def load_references(path: Path) -> NumericsReferences:
    """``{"numerics_version": N, "probes": {name: series}}`` (empty when there are none yet)."""
    if not path.is_file():
        return {}
    return json.loads(path.read_text(encoding="utf-8"))


def save_reference(path: Path, version: int, probe: str, series: Series, provenance: Provenance) -> None:
    """Add (or replace, at a new version) one probe's series to this platform's references."""
    doc = load_references(path)
    if doc.get("numerics_version") != version:
        doc = {"numerics_version": version, "platform": provenance.get("platform"), "probes": {}}
    doc["torch"] = provenance.get("torch")
    doc["probes"][probe] = series
    doc["probes"] = dict(sorted(doc["probes"].items()))
    atomic_write_json(path, doc)
