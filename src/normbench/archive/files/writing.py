"""A replicate folder's files as the archive writes them: each atomically (:func:`write_file`: a full disk is one
``OSError`` naming the file), the record last and gzipped with no timestamp, each analysis with no absolute local
path (:func:`local_path`), and an unfinished run's checkpoint, read as tensors and plain data only
(:func:`checkpoint_state`).
"""

from __future__ import annotations

import errno
import gzip
import json
import os
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

from normbench.archive.files.reading import ArchiveError
from normbench.archive.record import RecordDocument, Series
from normbench.archive.replicate import ANALYSES, CHECKPOINT, FINISHED, RECORD, Replicate
from normbench.io import atomic_write, dumps_json

MAX_CHECKPOINT_BYTES = 2 * 2**20  # an unfinished run's checkpoint is committed only for small models
# the keys of an analysis (or a record) that hold a path of the machine it was computed on
PATH_KEYS = ("run", "checkpoint", "log_dir", "resumed_from", "record_path", "runs_dir")


def dead_checkpoint(rep: Replicate) -> bool:
    """Whether an unfinished replicate's checkpoint is missing or cannot be read (nothing can continue from it)."""
    if not rep.checkpoint.is_file():
        return True
    try:
        checkpoint_state(rep.checkpoint)
    except ArchiveError:
        return True
    return False


def forget_dead_checkpoint(rep: Replicate) -> None:
    """Remove an unfinished replicate's checkpoint that cannot be read: a run restored from it started from the
    beginning, and every later bake would restore it again. Its record stays."""
    if rep.checkpoint.is_file() and dead_checkpoint(rep):
        rep.checkpoint.unlink()


def write_file(path: Path, write: Callable[[Path], object]) -> Path:
    """``write`` into a temporary file beside ``path``, then renamed onto it (:func:`normbench.io.atomic_write`); an
    ``OSError`` (a full disk) names ``path``, the file that could not be written, and leaves it as it was. What
    ``write`` returns (``Path.write_bytes``'s count, ``shutil.copyfile``'s path) is not used."""

    def write_tmp(tmp: Path) -> None:
        write(tmp)

    try:
        return atomic_write(path, write_tmp)
    except OSError as exc:
        code = exc.errno if exc.errno is not None else errno.EIO
        raise OSError(code, exc.strerror or os.strerror(code), str(path)) from None


def local_path(value: str, runs_root: Path) -> str:
    """A path a run wrote as it is kept in the archive: one under its runs folder relative to that folder's parent
    (``runs/majority/<run>/seed0``, as a run trained with ``--runs_dir runs`` names it), any other absolute path cut
    to its file name; a relative path as it is."""
    path = Path(value)
    if not path.is_absolute():
        return value
    try:
        return str(Path(runs_root.name) / path.relative_to(runs_root))
    except ValueError:
        return path.name


def without_local_paths(doc: Any, runs_root: Path) -> Any:
    """``doc`` (an analysis, as JSON data) with the value of each :data:`PATH_KEYS` key made local
    (:func:`local_path`); series are left as they are."""
    if isinstance(doc, dict):
        return {
            k: local_path(v, runs_root)
            if k in PATH_KEYS and isinstance(v, str)
            else (v if k == "series" else without_local_paths(v, runs_root))
            for k, v in doc.items()
        }
    if isinstance(doc, list):
        return [without_local_paths(v, runs_root) for v in doc]
    return doc


def runs_root_of(run_dir: Path) -> Path:
    """The runs folder a run directory ``<runs>/<task>/<run>/seed<k>`` lies in."""
    return Path(os.path.abspath(run_dir)).parents[2]


def analysis_writer(src: Path, run_dir: Path) -> Callable[[Path], None]:
    """Writes the analysis ``src`` of the run at ``run_dir`` as it is archived (:func:`archived_analysis`) into the
    file it is given (for :func:`write_file`)."""

    def write(tmp: Path) -> None:
        tmp.write_bytes(archived_analysis(src, run_dir))

    return write


def archived_analysis(src: Path, run_dir: Path) -> bytes:
    """The bytes an analysis of the run at ``run_dir`` is archived as: its JSON with no absolute local path
    (:func:`without_local_paths`), the file as it is when it holds none."""
    raw = src.read_bytes()
    try:
        doc = json.loads(raw)
    except (UnicodeDecodeError, ValueError, RecursionError):
        raise ArchiveError(f"archive: {src} is not valid JSON; compute the analysis again") from None
    kept = without_local_paths(doc, runs_root_of(run_dir))
    return raw if kept == doc else (dumps_json(kept, indent=2, sort_keys=False) + "\n").encode("utf-8")


def write_replicate(target: Path, run_dir: Path, record: RecordDocument, *, checkpoint: bool) -> None:
    """Write one replicate folder atomically per file (:func:`write_file`): the record last, so a reader never sees
    a record whose analyses or checkpoint are missing. Neither an analysis nor the record holds an absolute local path
    (:func:`local_path`: a run trained under ``--runs_dir /abs/runs`` is kept as ``runs/<task>/<run>/seed<k>``; those
    keys are not part of its identity), so the archive reads the same on every machine."""
    target.mkdir(parents=True, exist_ok=True)
    for name in ANALYSES:
        src = run_dir / name
        if src.is_file():
            write_file(target / name, analysis_writer(src, run_dir))
    ckpt = run_dir / "checkpoints" / CHECKPOINT
    unfinished = record.get("status") not in FINISHED
    if checkpoint and unfinished and ckpt.is_file():
        size = ckpt.stat().st_size
        if size > MAX_CHECKPOINT_BYTES:
            raise ArchiveError(
                f"archive: {ckpt} is {size / 2**20:.1f} MiB, over the {MAX_CHECKPOINT_BYTES // 2**20} MiB an "
                f"archived checkpoint may have; finish this run where it is"
            )
        write_file(target / CHECKPOINT, lambda tmp: shutil.copyfile(ckpt, tmp))
    elif not unfinished and (target / CHECKPOINT).is_file():
        (target / CHECKPOINT).unlink()  # finished: the weights the analyses need are summarised beside it
    kept = {k: v for k, v in record.items() if k not in ("record_path", "archived")}
    write_gzip_json(target / RECORD, without_local_paths(kept, runs_root_of(run_dir)))


def checkpoint_state(path: Path) -> tuple[int, Series | None]:
    """The optimizer steps a Lightning checkpoint holds and the run's series up to them (normbench's run state),
    read as tensors and plain data only: no code runs."""
    import torch  # only here: the archive's other readers need no torch

    try:
        data = torch.load(path, map_location="cpu", weights_only=True)
        return int(data["global_step"]), (data.get("normbench") or {}).get("series")
    except Exception as exc:  # noqa: BLE001 - any unreadable checkpoint is one line
        raise ArchiveError(f"archive: {path} is not a readable checkpoint ({type(exc).__name__})") from None


def checkpoint_step(path: Path) -> int:
    """The optimizer steps a Lightning checkpoint holds."""
    return checkpoint_state(path)[0]


def write_gzip_json(path: Path, obj: Any) -> None:
    """``obj`` as strict JSON, gzipped with no timestamp (the same object gives the same bytes), atomically
    (:func:`write_file`: a full disk is one ``OSError`` naming ``path``)."""
    data = gzip.compress((dumps_json(obj, indent=None, sort_keys=False) + "\n").encode("utf-8"), mtime=0)
    write_file(path, lambda tmp: Path(tmp).write_bytes(data))
