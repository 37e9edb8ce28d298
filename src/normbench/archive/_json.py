"""What every archive dataclass shares: ``from_json``/``to_json`` that lose nothing.

A field is declared with :func:`required` or :func:`optional`, naming the JSON types it accepts (and a
decoder for a nested dataclass). :meth:`JsonObject.from_json` checks each field's type (one-line
:class:`SchemaError` naming the field and what is allowed), keeps keys it does not know in ``extra``, and
remembers the order of the keys it read; :meth:`JsonObject.to_json` writes them back in that order (fields
set later follow, in declaration order), so a document read and written again is the same text.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from typing import Any, TypeAlias, TypeVar

T = TypeVar("T", bound="JsonObject")

JsonValue: TypeAlias = "str | int | float | bool | None | list[JsonValue] | dict[str, JsonValue]"
"""A JSON value as :func:`json.loads` gives it, of no shape in particular (a walker of whole documents reads it)."""

JsonDict: TypeAlias = dict[str, Any]
"""A JSON object that no schema of this package fixes: a run's resolved config (and its sections), a task's
``bench`` section, the params of a data fact, and what :meth:`JsonObject.to_json` gives for any subclass (a subclass
types its own document where it has one, e.g. :meth:`normbench.archive.record.RunRecord.document`). A document of a
known shape has its own TypedDict instead."""

NUMBER = (int, float)
NULL = type(None)
_META = ("extra", "keys")

JSON_NAMES = {
    str: "a string",
    int: "an integer",
    float: "a number",
    bool: "true or false",
    list: "a list",
    dict: "an object",
    NULL: "null",
}


class SchemaError(ValueError):
    """A document that is not the shape its dataclass gives (one line: ``<where>.<field>: ...``)."""


def json_type(value: Any) -> str:
    """How JSON names the type of ``value``: ``a string``, ``an object``, ``null``..."""
    for kind, name in JSON_NAMES.items():
        if type(value) is kind:
            return name
    return type(value).__name__


def allowed(types: tuple[type, ...]) -> str:
    """``a number or null``: the JSON types of ``types``."""
    names = list(dict.fromkeys(JSON_NAMES.get(t, t.__name__) for t in types if t is not int or float not in types))
    return " or ".join(names)


def required(*types: type, decode: Callable[[Any, str], Any] | None = None) -> Any:
    """A field every document has, of one of ``types`` (``decode(value, where)`` builds its Python value)."""
    return dataclasses.field(metadata={"types": types, "decode": decode})


def optional(*types: type, decode: Callable[[Any, str], Any] | None = None) -> Any:
    """A field a document may lack (``None`` then; a key present with ``null`` stays ``null``)."""
    return dataclasses.field(default=None, metadata={"types": (*types, NULL), "decode": decode})


def checked(value: Any, types: tuple[type, ...], where: str) -> Any:
    """``value`` if it has one of ``types`` (a bool is no number), else a :class:`SchemaError`."""
    ok = isinstance(value, types) and not (isinstance(value, bool) and bool not in types)
    if not ok:
        raise SchemaError(f"{where}: {json_type(value)}, not {allowed(types)}")
    return value


def encode(value: Any) -> Any:
    """The JSON value of a field: dataclasses by their ``to_json``, tuples as lists, mappings walked."""
    if isinstance(value, JsonObject):
        return value.to_json()
    if isinstance(value, (list, tuple)):
        return [encode(v) for v in value]
    if isinstance(value, Mapping):
        return {k: encode(v) for k, v in value.items()}
    return value


def items(cls: type[T]) -> Callable[[Any, str], tuple[T, ...]]:
    """Decoder of a list of ``cls`` objects."""

    def decode(value: list[Any], where: str) -> tuple[T, ...]:
        return tuple(cls.from_json(v, f"{where}[{i}]") for i, v in enumerate(value))

    return decode


def values(cls: type[T]) -> Callable[[Any, str], dict[str, T]]:
    """Decoder of an object whose values are ``cls`` objects."""

    def decode(value: Mapping[str, object], where: str) -> dict[str, T]:
        return {k: cls.from_json(v, f"{where}[{k!r}]") for k, v in value.items()}

    return decode


def as_tuple(value: list[Any], where: str) -> tuple[Any, ...]:
    return tuple(value)


@dataclasses.dataclass(frozen=True, kw_only=True)
class JsonObject:
    """Base of the archive's dataclasses (see the module docstring).

    Attributes:
        extra: keys of the document this dataclass does not declare, kept as they were.
        keys: the order of the document's keys, as read (empty for an object built in code).
    """

    extra: Mapping[str, Any] = dataclasses.field(default_factory=dict, repr=False)
    keys: tuple[str, ...] = dataclasses.field(default=(), compare=False, repr=False)

    SCHEMA_VERSION = 1
    WHAT = "document"

    @classmethod
    def own_fields(cls) -> list[dataclasses.Field]:
        return [f for f in dataclasses.fields(cls) if f.name not in _META]

    @classmethod
    def from_json(cls: type[T], data: Any, where: str | None = None) -> T:
        """The dataclass of ``data`` (a JSON object); a :class:`SchemaError` naming the field if it is not one."""
        where = where or cls.WHAT
        if not isinstance(data, Mapping):
            raise SchemaError(f"{where}: {json_type(data)}, not an object")
        kwargs: dict[str, object] = {}
        for f in cls.own_fields():
            if f.name not in data:
                if f.default is dataclasses.MISSING:
                    raise SchemaError(f"{where}: missing key {f.name!r}")
                continue
            value = checked(data[f.name], f.metadata["types"], f"{where}.{f.name}")
            decode = f.metadata.get("decode")
            kwargs[f.name] = decode(value, f"{where}.{f.name}") if decode and value is not None else value
        names = {f.name for f in cls.own_fields()}
        extra = {k: v for k, v in data.items() if k not in names}
        return cls(**kwargs, extra=extra, keys=tuple(data))

    def with_keys(self: T, **changes: Any) -> T:
        """This object with ``changes``, each written where the document's keys end (``None`` as ``null``); a key it
        does not declare is kept with its unknown keys (``extra``)."""
        keys = self.keys + tuple(k for k in changes if k not in self.keys)
        own = {f.name for f in self.own_fields()}
        declared = {k: v for k, v in changes.items() if k in own}
        extra = {**self.extra, **{k: v for k, v in changes.items() if k not in own}}
        return dataclasses.replace(self, **declared, extra=extra, keys=keys)

    def to_json(self) -> JsonDict:
        """The JSON object: keys in the order they were read, fields set since in declaration order, then
        unknown keys; an optional field that is ``None`` and was not in the document is left out."""
        own = {f.name: f for f in self.own_fields()}
        out: JsonDict = {}
        for key in self.keys:
            if key in own:
                out[key] = encode(getattr(self, key))
            elif key in self.extra:
                out[key] = self.extra[key]
        for name, f in own.items():
            value = getattr(self, name)
            if name not in out and (f.default is dataclasses.MISSING or value is not None):
                out[name] = encode(value)
        for key, value in self.extra.items():
            out.setdefault(key, value)
        return out
