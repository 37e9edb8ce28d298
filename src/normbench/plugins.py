"""Named registries that other packages extend through an entry-point group (``normbench.tasks``, ``normbench.norms``).

Plug-ins are loaded on first need, once: a registry's built-in entries never import a plug-in
(which would import normbench while normbench itself is being imported).
"""

from __future__ import annotations

from collections.abc import Callable
from importlib.metadata import entry_points
from typing import Any, Generic, TypeVar

T = TypeVar("T")


class Registry(Generic[T]):
    """``name -> entry`` of one kind, extended by the entry points of ``group``.

    Args:
        kind: what the entries are, for messages (e.g. ``task``, ``component``).
        group: the entry-point group whose objects are registered on first need.
        cls: the type every entry must have (``type`` for a registry of classes, such as the norm components).
        convert: ``(entry point name, loaded object) -> entry``, for groups whose entry points may
            name something else than a ``cls`` (e.g. a plain ``nn.Module`` class, wrapped as a norm component).
    """

    def __init__(self, kind: str, group: str, cls: type[T], convert: Callable[[str, Any], T] | None = None) -> None:
        self.kind, self.group, self.cls, self.convert = kind, group, cls, convert
        self.entries: dict[str, T] = {}
        self.plugins_loaded = False

    def register(self, name: str, entry: T) -> T:
        """Add ``entry``; a different entry under a taken name is an error."""
        known = self.entries.get(name)
        if known is not None and known != entry:
            raise ValueError(f"{self.kind}: {name!r} is already registered")
        self.entries[name] = entry
        return entry

    def load_plugins(self) -> None:
        """Register every object of the entry-point group (once)."""
        if self.plugins_loaded:
            return
        self.plugins_loaded = True
        for ep in entry_points(group=self.group):
            entry = ep.load()
            if self.convert is not None:
                entry = self.convert(ep.name, entry)
            if not isinstance(entry, self.cls):
                raise TypeError(
                    f"entry point {ep.name!r} of {self.group}: {ep.value} is not a normbench {self.cls.__name__}"
                )
            self.register(getattr(entry, "name", ep.name), entry)

    def get(self, name: str) -> T | None:
        """The entry ``name``; plug-ins are loaded only when it is not built in. ``None`` if unknown."""
        if name not in self.entries:
            self.load_plugins()
        return self.entries.get(name)

    def names(self) -> list[str]:
        """Every name, plug-ins included, in registration order."""
        self.load_plugins()
        return list(self.entries)
