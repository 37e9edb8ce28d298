"""Reading the run archive's files as untrusted input: bounded, never following a link out of it, one line each.

Every file under ``results/archive/`` may come from anyone (a pull request), so each is read with limits: at most
:data:`MAX_JSON_BYTES` of JSON (a gzipped record is decompressed in chunks and stopped there, so a small file
cannot expand to gigabytes), nested at most :data:`MAX_DEPTH` levels (checked without recursion), and a folder or
file that is a symbolic link is not followed (:func:`check_no_links`). Whatever is wrong is one
:class:`Unreadable` (an :class:`ArchiveError`) naming the file.
"""

from __future__ import annotations

import json
import os
import zlib
from pathlib import Path
from typing import Any

MAX_JSON_BYTES = 64 * 2**20  # a record of the paper's 14,000 steps is about 0.5 MB of JSON
MAX_DEPTH = 100  # a record's config nests about ten levels
CHUNK = 2**20


class ArchiveError(ValueError):
    """A file of the archive, or a record that cannot enter it (one line naming the file and why)."""


class Unreadable(ArchiveError):
    """A file of the archive that cannot be read as what it should be: ``archive: <file>: <reason>`` (or
    ``message``, a reader's own line naming the file)."""

    def __init__(self, path: Path, reason: str, message: str | None = None) -> None:
        super().__init__(message or f"archive: {path}: {reason}")
        self.path, self.reason = Path(path), reason


def read_capped(path: Path, limit: int = MAX_JSON_BYTES) -> bytes:
    """The bytes of ``path``, at most ``limit`` of them; an :class:`ArchiveError` for a larger or unreadable file."""
    try:
        with open(path, "rb") as f:
            raw = f.read(limit + 1)
    except OSError as exc:
        raise Unreadable(path, f"cannot be read ({exc.strerror or exc})") from None
    if len(raw) > limit:
        raise Unreadable(path, f"over the {limit // 2**20} MiB a file of the archive may have")
    return raw


def gunzip_capped(raw: bytes, path: Path, limit: int = MAX_JSON_BYTES) -> bytes:
    """``raw`` (gzip) decompressed in chunks, stopped past ``limit`` bytes; an :class:`ArchiveError` naming ``path``
    for a truncated, corrupt or oversized stream."""
    inflate = zlib.decompressobj(16 + zlib.MAX_WBITS)  # gzip header
    out, size, data = [], 0, raw
    try:
        while not inflate.eof:
            piece = inflate.decompress(data, CHUNK)
            data = inflate.unconsumed_tail
            if not piece and not data and not inflate.eof:
                raise Unreadable(path, "truncated (its gzip stream ends early)")
            size += len(piece)
            if size > limit:
                raise Unreadable(path, f"decompresses to over {limit // 2**20} MiB (the most an archived file holds)")
            out.append(piece)
    except zlib.error as exc:
        raise Unreadable(path, f"not a readable gzip file ({exc})") from None
    return b"".join(out)


def check_depth(doc: Any, path: Path, limit: int = MAX_DEPTH) -> None:
    """An :class:`ArchiveError` naming ``path`` when ``doc`` nests deeper than ``limit`` (walked without recursion)."""
    stack: list[tuple[Any, int]] = [(doc, 1)]
    while stack:
        node, depth = stack.pop()
        if depth > limit:
            raise Unreadable(path, f"nested deeper than {limit} levels (not a file normbench writes)")
        if isinstance(node, dict):
            stack.extend((v, depth + 1) for v in node.values() if isinstance(v, (dict, list)))
        elif isinstance(node, list):
            stack.extend((v, depth + 1) for v in node if isinstance(v, (dict, list)))


def parse_json(raw: bytes, path: Path) -> Any:
    """``raw`` parsed as JSON (UTF-8), at most :data:`MAX_DEPTH` deep; an :class:`ArchiveError` naming ``path``."""
    try:
        doc = json.loads(raw.decode("utf-8"))
    except RecursionError:
        raise Unreadable(path, "nested too deep to read (not a file normbench writes)") from None
    except (UnicodeDecodeError, ValueError) as exc:
        raise Unreadable(path, f"not valid JSON ({exc})") from None
    check_depth(doc, path)
    return doc


def read_json(path: str | os.PathLike[str], limit: int = MAX_JSON_BYTES) -> Any:
    """The JSON file ``path`` (gzipped where its name ends ``.gz``), read within the limits above."""
    path = Path(path)
    raw = read_capped(path, limit)
    return parse_json(gunzip_capped(raw, path, limit) if path.name.endswith(".gz") else raw, path)


def check_no_links(root: Path, path: Path) -> None:
    """An :class:`ArchiveError` when ``path`` or a folder between ``root`` and it is a symbolic link: the archive's
    files are read where they lie, never through a link that may point out of it."""
    root, path = Path(root), Path(path)
    try:
        parts = path.relative_to(root).parts
    except ValueError:
        raise Unreadable(path, f"not inside {root}") from None
    at = root
    for part in parts:
        at = at / part
        if at.is_symlink():
            raise Unreadable(at, "a symbolic link (not followed: the archive holds files and folders only)")
