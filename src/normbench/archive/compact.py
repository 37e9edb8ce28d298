"""Board format 2, the compact form of a ``leaderboard.json``: a block that repeats stored once, referenced elsewhere.

The file is in board format :data:`FORMAT` (``"format": 2``, its first key): compact JSON (no indentation; one
top-level key, and one item of a top-level list or object, per line), in which a block that repeats is stored once
under ``shared`` and each of its places holds a JSON reference ``{"$ref": "#/shared/<id>"}`` (:func:`compact`):
the random-key null (``chance``) beside each unselectable fraction, and the rule, reason and explanation texts of the
claims judged per metric (``against_chance``, ``tuned_claims``). The contract's own fields (a variant's name, seeds,
config hash and metric values; every key of ``claims``) are never referenced. :func:`expand` puts every block back
in its places, so the reader gives the same :class:`~normbench.archive.board.Board` whichever format the file is in;
a file without ``format`` is format 1 (indented, every block inline), still read.
"""

from __future__ import annotations

import copy
import hashlib
from collections import Counter
from collections.abc import Callable, Mapping

from normbench.archive._json import JsonValue, SchemaError
from normbench.io import dumps_json

FORMAT = 2  # the board format written (module docstring); a file without the key is format 1
FORMAT_KEY = "format"
SHARED = "shared"  # the blocks stored once: id -> value
REF = "$ref"
REF_PREFIX = f"#/{SHARED}/"  # a JSON pointer into the shared table
SHARED_BLOCKS = ("chance",)  # objects under these keys, anywhere but in the contract's claims
SHARED_TEXTS = ("rule", "why", "explanation")  # texts of the claims of CLAIM_VIEWS
CLAIM_VIEWS = ("against_chance", "tuned_claims")  # lists of claims judged per metric or per tuned point
CONTRACT_CLAIMS = "claims"  # written as they are


def compact(doc: Mapping[str, JsonValue]) -> dict[str, JsonValue]:
    """The board document ``doc`` (format 1) in format :data:`FORMAT`: ``format`` first, each shareable block that
    occurs more than once where a reference to it is shorter stored once under ``shared`` (last; ids by kind and
    content, ``chance-1a2b3c4d``, in the order of first use), and a ``{"$ref": "#/shared/<id>"}`` in each place.
    :func:`expand` gives ``doc`` back (a compact ``doc`` is expanded first: compacting twice changes nothing)."""
    doc = expand(doc)
    counts: Counter[str] = Counter()
    shareable(doc, lambda kind, value: counts.update([canonical(value)]) or value)
    shared: dict[str, JsonValue] = {}
    ids: dict[str, str] = {}

    def share(kind: str, value: JsonValue) -> JsonValue:
        text = canonical(value)
        sid = ids.get(text) or shared_id(kind, text, shared)
        ref: JsonValue = {REF: REF_PREFIX + sid}
        if counts[text] * (len(text) - len(canonical(ref))) <= len(text) + len(sid) + 4:  # no shorter with a reference
            return value
        ids[text], shared[sid] = sid, value
        return ref

    body = shareable(doc, share)
    return {FORMAT_KEY: FORMAT, **body, **({SHARED: shared} if shared else {})}


def shareable(doc: Mapping[str, JsonValue], visit: Callable[[str, JsonValue], JsonValue]) -> dict[str, JsonValue]:
    """``doc`` with each block :func:`compact` may share replaced by ``visit(kind, value)``, in document order: every
    object under a key of :data:`SHARED_BLOCKS`, and the :data:`SHARED_TEXTS` of each claim of :data:`CLAIM_VIEWS`;
    nothing in the contract's ``claims``."""
    out: dict[str, JsonValue] = {}
    for key, value in doc.items():
        if key == CONTRACT_CLAIMS:
            out[key] = value
        elif key in CLAIM_VIEWS and isinstance(value, list):
            out[key] = [claim_texts(blocks(claim, visit), visit) for claim in value]
        else:
            out[key] = blocks(value, visit)
    return out


def blocks(value: JsonValue, visit: Callable[[str, JsonValue], JsonValue]) -> JsonValue:
    """``value`` with every object under a key of :data:`SHARED_BLOCKS`, at any depth, replaced by ``visit``."""
    if isinstance(value, Mapping):
        return {
            k: visit(k, v) if k in SHARED_BLOCKS and isinstance(v, Mapping) else blocks(v, visit)
            for k, v in value.items()
        }
    if isinstance(value, list):
        return [blocks(v, visit) for v in value]
    return value


def claim_texts(claim: JsonValue, visit: Callable[[str, JsonValue], JsonValue]) -> JsonValue:
    """The claim ``claim`` with its :data:`SHARED_TEXTS` replaced by ``visit``."""
    if not isinstance(claim, Mapping):
        return claim
    return {k: visit(k, v) if k in SHARED_TEXTS and isinstance(v, str) else v for k, v in claim.items()}


def canonical(value: JsonValue) -> str:
    """The compact JSON of ``value``, keys in their order: two blocks are one shared block when these are equal."""
    return dumps_json(value, separators=(",", ":"))


def shared_id(kind: str, text: str, taken: Mapping[str, JsonValue]) -> str:
    """The id of the block whose :func:`canonical` text is ``text``: ``<kind>-`` and the first 8 hex digits of its
    sha256, more where another block of the board took those."""
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
    for n in (8, 16, 64):
        sid = f"{kind}-{digest[:n]}"
        if sid not in taken or canonical(taken[sid]) == text:
            return sid
    raise AssertionError(f"board: two shared blocks with the sha256 {digest}")


def expand(doc: Mapping[str, JsonValue], where: str = "board") -> dict[str, JsonValue]:
    """The board document ``doc`` as format 1 holds it: each ``{"$ref": "#/shared/<id>"}`` replaced by (a copy of)
    ``shared[<id>]``, without ``format`` and ``shared``; a format 1 document as it is. A :class:`SchemaError` for
    another format, a ``shared`` that is not an object, or a reference to no shared block."""
    version = doc.get(FORMAT_KEY, 1)
    if version == 1 and FORMAT_KEY not in doc:
        return dict(doc)
    if type(version) is not int or version not in (1, FORMAT):
        raise SchemaError(
            f"{where}.{FORMAT_KEY}: {version!r} is not a board format this normbench reads (1 to {FORMAT}); "
            f"update normbench"
        )
    shared = doc.get(SHARED, {})
    if not isinstance(shared, Mapping):
        raise SchemaError(f"{where}.{SHARED}: {type(shared).__name__}, not an object")
    return {k: resolve(v, shared, where) for k, v in doc.items() if k not in (FORMAT_KEY, SHARED)}


def resolve(value: JsonValue, shared: Mapping[str, JsonValue], where: str) -> JsonValue:
    """``value`` with every reference into ``shared`` replaced by a copy of the block it names."""
    if isinstance(value, Mapping):
        if len(value) == 1 and REF in value:
            target = value[REF]
            sid = target.removeprefix(REF_PREFIX) if isinstance(target, str) and target.startswith(REF_PREFIX) else None
            if sid is None or sid not in shared:
                raise SchemaError(f"{where}: the reference {target!r} names no block of {SHARED!r}")
            return copy.deepcopy(shared[sid])
        return {k: resolve(v, shared, where) for k, v in value.items()}
    if isinstance(value, list):
        return [resolve(v, shared, where) for v in value]
    return value
