"""Atomic file writes: a reader sees the old file or the new one, never a truncated one.

Console output (:func:`quiet_third_party`, :func:`show_bars`): a command prints normbench's own lines, not
third-party banners, tips or bars in log files. Lightning announces the devices it did not use ("GPU
available: False, used: False"), the seed it set, why a fit stopped, and tips about other products; it also
raises deprecation warnings about its own use of PyTorch. Those are silenced in a command unless ``--verbose``
(or ``NORMBENCH_VERBOSE=1``, which subprocesses inherit) asks for them; warnings meant for the user stay. A
progress bar is drawn on a terminal only: in a log file it is ``\r``-joined redraws, and the sweep's progress
lines say the same.
"""

from __future__ import annotations

import filecmp
import hashlib
import json
import logging
import math
import os
import shutil
import sys
import tempfile
import warnings
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TextIO

Config = dict[str, Any]
"""A task config, or one of its sections, as YAML (:func:`read_yaml`) and LightningCLI's parser give it: sections of
a class path and its init arguments, whose keys are that class's own arguments (free-form)."""


def atomic_write(path: str | os.PathLike, write: Callable[[Path], None]) -> Path:
    """Call ``write(tmp)`` on a temporary file beside ``path``, fsync it, then rename it onto ``path``.

    A ``path`` that already holds what was written (:func:`same_content`) is left as it is (bytes and mtime): a
    rebuild that says the same touches no file.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    os.fchmod(fd, 0o666 & ~current_umask())  # mkstemp's 0600 would hide results from other users
    os.close(fd)
    tmp_path = Path(tmp)
    try:
        write(tmp_path)
        if same_content(tmp_path, path):
            tmp_path.unlink()
            return path
        with open(tmp_path, "rb+") as f:
            os.fsync(f.fileno())
        os.replace(tmp_path, path)
    except BaseException:
        tmp_path.unlink(missing_ok=True)
        raise
    return path


def same_content(new: Path, old: Path) -> bool:
    """Whether the file ``old`` already holds what ``new`` does, so that a writer may leave it as it is: the same
    bytes, or for two PNGs the same image (size, mode and pixels: :func:`same_image`), whatever their compression
    and metadata chunks (a PNG drawn again with another zlib, or written before figures dropped their metadata)."""
    if not old.is_file() or old.is_symlink():
        return False
    if new.stat().st_size == old.stat().st_size and filecmp.cmp(new, old, shallow=False):
        return True
    return new.suffix.lower() == old.suffix.lower() == ".png" and same_image(new, old)


def same_image(a: Path, b: Path) -> bool:
    """Whether the images ``a`` and ``b`` decode to the same pixels (``False`` for a file that is not an image, or
    without Pillow)."""
    try:
        from PIL import Image
    except ImportError:
        return False
    try:
        with Image.open(a) as x, Image.open(b) as y:
            return x.size == y.size and x.mode == y.mode and x.tobytes() == y.tobytes()
    except (OSError, ValueError, SyntaxError):  # not an image, or a damaged one: written again
        return False


@contextmanager
def atomic_files(
    folder: str | os.PathLike, last: tuple[str, ...] = ("leaderboard.md", "leaderboard.json")
) -> Iterator[Path]:
    """A temporary folder beside ``folder`` to write a unit of files into (a board and its figures).

    When the block ends without an error, every file in it is renamed into ``folder`` (those named in
    ``last`` last, in that order: a reader that finds the new board finds its new figures), except a file whose
    target already holds the same (:func:`same_content`: it keeps its bytes and mtime, so a figure is rewritten
    only when it changed); on an error nothing in ``folder`` changes. The temporary folder is removed either way.
    """
    folder = Path(folder)
    folder.parent.mkdir(parents=True, exist_ok=True)
    stage = Path(tempfile.mkdtemp(dir=folder.parent, prefix=f".{folder.name}.", suffix=".tmp"))
    try:
        yield stage
        files = sorted(
            (p for p in stage.rglob("*") if p.is_file()),
            key=lambda p: (last.index(p.name) + 1 if p.name in last and p.parent == stage else 0, str(p)),
        )
        for path in files:
            target = folder / path.relative_to(stage)
            if same_content(path, target):
                continue
            target.parent.mkdir(parents=True, exist_ok=True)
            os.replace(path, target)
    finally:
        shutil.rmtree(stage, ignore_errors=True)


# the settings read when a figure is rendered (fonts, text hinting, path handling, the saved file's dpi, colours and
# margins): matplotlib's own defaults while a PNG is written, whatever a matplotlibrc or style in effect says
DRAW_SETTINGS = ("agg.", "font.", "mathtext.", "path.", "savefig.", "text.")
PNG_METADATA: dict[str, str | None] = {"Software": None}  # no matplotlib version in the file (a PNG has no date)


def write_png(fig: Any, path: str | os.PathLike) -> Path:
    """Write the matplotlib figure ``fig`` as the PNG ``path`` atomically (:func:`atomic_write`: a file that already
    shows the same image is left as it is), rendered so that the same figure gives the same bytes: with Agg whatever
    the backend, at the figure's own dpi, under matplotlib's default :data:`DRAW_SETTINGS` (its bundled DejaVu fonts),
    without metadata. matplotlib is imported here, by the commands that draw."""
    import matplotlib

    defaults = {k: v for k, v in matplotlib.rcParamsDefault.items() if k.startswith(DRAW_SETTINGS)}

    def render(tmp: Path) -> None:
        with matplotlib.rc_context(defaults):
            fig.savefig(tmp, format="png", backend="agg", dpi=fig.dpi, metadata=PNG_METADATA)

    return atomic_write(path, render)


def current_umask() -> int:
    """The process's file-creation mask (read by setting and restoring it)."""
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def atomic_write_text(path: str | os.PathLike, text: str) -> Path:
    return atomic_write(path, lambda p: p.write_text(text, encoding="utf-8"))


def strict_json(obj: Any) -> Any:
    """``obj`` with every non-finite float (NaN, ±inf) replaced by ``None``: x ↦ x if |x| < ∞ else null.

    Strict JSON has no NaN or Infinity; a reader takes ``null`` for "no finite value". Dicts, lists
    and tuples are walked (tuples become lists); anything else is returned as it is.
    """
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    if isinstance(obj, dict):
        return {key: strict_json(value) for key, value in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [strict_json(value) for value in obj]
    return obj


def dumps_json(obj: Any, **kwargs: Any) -> str:
    """Strict JSON text of ``obj`` (:func:`strict_json` first; ``json.dumps`` then refuses any NaN left)."""
    return json.dumps(strict_json(obj), allow_nan=False, **kwargs)


def dumps_json_lines(obj: Mapping[str, object]) -> str:
    """Compact strict JSON of the object ``obj`` (:func:`dumps_json`, no spaces), one top-level member per line and,
    for a member that is a non-empty list or object, one of its items per line; a newline at the end. Small beside
    indented JSON, yet a change to one item (a board's variant or claim) is a change to its line."""

    def dumps(value: Any) -> str:
        return dumps_json(value, separators=(",", ":"))

    def member(value: Any) -> str:
        if isinstance(value, list) and value:
            return "[\n" + ",\n".join(dumps(v) for v in value) + "\n]"
        if isinstance(value, dict) and value:
            return "{\n" + ",\n".join(f"{dumps(str(k))}:{dumps(v)}" for k, v in value.items()) + "\n}"
        return dumps(value)

    return "{\n" + ",\n".join(f"{dumps(str(k))}:{member(v)}" for k, v in obj.items()) + "\n}\n"


def atomic_write_json(path: str | os.PathLike, obj: Any) -> Path:
    """Write ``obj`` as indented strict JSON (non-finite floats as ``null``) atomically."""
    return atomic_write_text(path, dumps_json(obj, indent=2, sort_keys=False) + "\n")


def texts_digest(texts: list[str], params: Mapping[str, object]) -> str:
    """16 hex digits naming a cache entry: sha256 over each text's sha256, then the sorted-JSON ``params``."""
    h = hashlib.sha256()
    for text in texts:
        h.update(hashlib.sha256(text.encode()).digest())
    h.update(json.dumps(params, sort_keys=True).encode())
    return h.hexdigest()[:16]


def params_digest(params: Mapping[str, object]) -> str:
    """16 hex digits naming a cache entry or archived fact: sha256 over the sorted-JSON ``params``."""
    return hashlib.sha256(json.dumps(params, sort_keys=True).encode()).hexdigest()[:16]


def cache_root() -> Path:
    """Where generated/tokenized data is cached: ``$NORMBENCH_CACHE`` or ``~/.cache/normbench``."""
    return Path(os.environ.get("NORMBENCH_CACHE", Path.home() / ".cache" / "normbench"))


def load_yaml(text: str) -> Any:
    """``yaml.safe_load`` through libyaml where PyYAML was built with it (the same safe tags and resolvers, about ten
    times faster on a task config than the pure-Python parser)."""
    import yaml

    return yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))


def read_yaml(path: Any, field: str = "config") -> Any:
    """The YAML file ``path`` (a path, or a package resource) parsed; a file that is not UTF-8 or not valid
    YAML is one ``ValueError`` naming ``field``, the file and the line (``config: tiny.yaml:3:5: ...``)."""
    import yaml

    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise ValueError(f"{field}: {path}: not UTF-8 text (byte {exc.start}: {exc.reason})") from None
    try:
        return load_yaml(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f":{mark.line + 1}:{mark.column + 1}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or (str(exc).strip().splitlines() or ["unreadable"])[0]
        context = getattr(exc, "context", None)
        raise ValueError(
            f"{field}: {path}{where}: not valid YAML ({problem}{f', {context}' if context else ''})"
        ) from None


def discard_corrupt_cache(path: str | os.PathLike, exc: BaseException) -> None:
    """Say in one line that the cached file ``path`` cannot be read (and why), and remove it: the caller
    builds it again. Caches are written atomically, so this is a file cut or damaged outside normbench."""
    why = (str(exc).strip().splitlines() or [""])[0][:200]
    print(f"normbench: data cache {path} is corrupt ({type(exc).__name__}: {why}); rebuilding it", file=sys.stderr)
    Path(path).unlink(missing_ok=True)


MIN_FREE_BYTES = 16 << 20  # what a command's outputs (records, boards, figures) need at least


def check_writable(path: str | os.PathLike, field: str, min_free: int = MIN_FREE_BYTES) -> None:
    """One-line ``ValueError`` naming ``field`` unless the folder ``path`` is, or can be created, writable.

    Nothing is created: the nearest existing folder on the way to ``path`` must be a folder this process
    may write into, on a device with at least ``min_free`` bytes free (checked before work whose outputs
    would otherwise be lost at its end).
    """
    target = Path(path).absolute()
    existing = target
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent
    if not existing.is_dir():
        raise ValueError(f"{field}: {str(path)!r} cannot be a folder: {existing} is a file; choose another {field}")
    if not os.access(existing, os.W_OK | os.X_OK):
        raise ValueError(f"{field}: {existing} is not writable; make it writable or choose another {field}")
    free = shutil.disk_usage(existing).free
    if free < min_free:
        raise ValueError(
            f"{field}: the disk of {existing} is full ({free >> 20} MiB free, {min_free >> 20} MiB needed); "
            f"free some space or choose another {field}"
        )


VERBOSE_ENV = "NORMBENCH_VERBOSE"
# Lightning's info lines (devices, seed, tips, "`Trainer.fit` stopped") go through these loggers
CHATTY_LOGGERS = (
    "lightning.pytorch.utilities.rank_zero",
    "lightning.fabric.utilities.seed",
    "lightning.fabric.utilities.rank_zero",
)
# torch.utils.benchmark (the card's timing) imports torch.utils.cpp_extension, which warns "No CUDA runtime is found"
# wherever a CUDA toolkit is installed without a GPU: it compiles nothing for normbench
SILENCED_LOGGERS = ("torch.utils.cpp_extension",)
# Deprecation warnings raised by third-party code about its own use of PyTorch: nothing a user can act on
INTERNAL_WARNINGS = (r".*isinstance\(treespec, LeafSpec\).*",)


def verbose() -> bool:
    """Whether third-party chatter was asked for (``--verbose`` sets ``NORMBENCH_VERBOSE=1``)."""
    return os.environ.get(VERBOSE_ENV, "") not in ("", "0")


def quiet_third_party() -> None:
    """Silence third-party banners and tips (see the module docstring), unless :func:`verbose`."""
    if verbose():
        return
    for name in CHATTY_LOGGERS:
        logging.getLogger(name).setLevel(logging.WARNING)
    for name in SILENCED_LOGGERS:
        logging.getLogger(name).setLevel(logging.ERROR)
    for message in INTERNAL_WARNINGS:
        warnings.filterwarnings("ignore", message=message)


def show_bars(progress: bool = True, stream: TextIO | None = None) -> bool:
    """Whether a progress bar should be drawn: asked for, and ``stream`` (stderr) is a terminal."""
    stream = stream or sys.stderr
    return progress and hasattr(stream, "isatty") and stream.isatty()
