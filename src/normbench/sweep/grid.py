"""A sweep's grid: axes of config keys (``bench.grid`` and ``--grid``) crossed with the named variants.

:func:`variant_grid` gives every variant as ``(name, overrides)``: the named variants (``bench.variants``) crossed with
the grid's axes, each point named ``base,key=value,...`` (``bench.grid_labels`` may give an axis a short name). An axis
may join keys with commas: they move together, one value per key. Every key of an axis must be an option of the
config's model, data module or the Lightning ``Trainer`` (:func:`check_option`); a bad axis or value is one error.
"""

from __future__ import annotations

import dataclasses
import importlib
import inspect
import itertools
import re
import typing
from typing import Any

import lightning as L
import yaml

from normbench.errors import short_key
from normbench.io import Config
from normbench.sweep.options import override_section


def parse_grid(items: list[str] | None) -> dict[str, list[Any]]:
    """``["model.arch.attn_norm.component=both,project", ...]`` -> ``{axis: [values]}`` (values read as YAML).

    An axis of several keys joined by commas takes lists: ``a,b=[8,4],[16,8]`` -> ``{"a,b": [[8, 4], [16, 8]]}``.
    """
    grid: dict[str, list[Any]] = {}
    for item in items or []:
        axis, eq, values = item.partition("=")
        axis = axis.strip().removeprefix("--")
        if not eq or not axis or not values.strip():
            raise ValueError(
                f"grid: {item!r} must look like key=value1,value2 (e.g. model.arch.attn_norm.component=both,scale)"
            )
        if "," in axis:  # keys that move together: values are lists, e.g. a,b=[8,4],[16,8]
            try:
                points = yaml.safe_load(f"[{values}]")
            except yaml.YAMLError:
                points = None
            if not isinstance(points, list) or not all(isinstance(p, list) for p in points):
                raise ValueError(
                    f"grid: {item!r}: an axis of several keys takes lists of values, e.g. {axis}=[8,4],[16,8]"
                )
            grid[axis] = points
        else:
            try:
                grid[axis] = [scalar(v.strip()) for v in values.split(",")]
            except yaml.YAMLError as exc:
                problem = getattr(exc, "problem", None) or "not valid YAML"
                raise ValueError(f"grid: {item!r}: a value is not valid YAML ({problem})") from None
    return grid


def scalar(text: str) -> Any:
    """A command-line value read as YAML, with ``1e-3`` a number (YAML 1.1 reads it as a string)."""
    value = yaml.safe_load(text)
    if isinstance(value, str):
        try:
            return float(value)
        except ValueError:
            pass
    return value


def axis_label(axis: str, value: Any) -> str:
    """Short name of one grid coordinate: ``model.init_args.lr=0.01`` -> ``lr=0.01``."""
    short = short_key(axis).removeprefix("model.")
    return f"{short}={value}"


def check_option(config: Config, key: str, what: str) -> None:
    """One-line error unless ``key`` (e.g. ``model.arch.attn_norm.component``) names an argument of the
    config's model/data class (or a field of a dataclass argument) or of the Lightning ``Trainer``."""
    parts = short_key(key.removeprefix("--").split("=")[0]).split(".")
    section, name = override_section(key, what), parts[1] if len(parts) > 1 else ""
    if section in ("model", "data"):
        class_path = (config.get(section) or {}).get("class_path", "")
        module, _, cls_name = class_path.rpartition(".")
        owner = getattr(importlib.import_module(module), cls_name) if module else None
        label = cls_name
    elif section == "trainer":
        owner, label = L.Trainer, "Trainer"
    else:  # --compile: normbench fit's own option (checked when each run is parsed)
        return
    if owner is None or name in ("class_path", "init_args"):
        return
    params = {
        n: p for n, p in inspect.signature(owner.__init__).parameters.items() if n not in ("self", "args", "kwargs")
    }
    if name not in params:
        raise ValueError(
            f"{what}: {key.split('=')[0]!r} is not an option: {label} has no argument {name!r}; "
            f"its arguments are {', '.join(params)}"
        )
    hints = typing.get_type_hints(owner.__init__) if len(parts) > 2 else {}
    kind = hints.get(name)
    if len(parts) > 2 and isinstance(kind, type) and dataclasses.is_dataclass(kind):
        names = [f.name for f in dataclasses.fields(kind)]
        if parts[2] not in names:
            raise ValueError(
                f"{what}: {key.split('=')[0]!r} is not an option: {kind.__name__} has no field "
                f"{parts[2]!r}; its fields are {', '.join(names)}"
            )


def variant_grid(
    config: Config, variants: list[str] | None, grid: dict[str, list[Any]], task: str
) -> list[tuple[str, list[str]]]:
    """``(name, overrides)`` of every variant: the named variants crossed with the grid axes.

    A ``grid`` from the command line replaces the YAML's named variants unless ``variants`` names
    some; ``bench.grid`` axes in the YAML are crossed with the named variants. An axis may join
    keys with commas (``model.init_args.arch.d_model,model.init_args.arch.n_heads``), its values
    then being lists of one value per key: the keys move together (e.g. width with fixed head width).
    ``bench.grid_labels`` may name an axis for the variant names (:func:`grid_labels`).
    """
    bench = config.get("bench") or {}
    named: dict[str, dict[str, object]] = bench.get("variants") or {}  # name -> its overrides, config key -> value
    points = {v for v in variants or [] if "," in v}  # one point of the grid each: ``base,label=value``
    if variants:
        chosen = list(dict.fromkeys(v.split(",")[0] for v in variants))
        unknown = [v for v in chosen if v not in named]
        if unknown:
            raise ValueError(
                f"variants: {', '.join(map(repr, unknown))} not defined for task {task}; "
                f"choose from {', '.join(named) or '(none)'}"
            )
    elif grid:
        chosen = []
    else:
        chosen = bench.get("default_variants") or list(named)
    axes = {**(bench.get("grid") or {}), **grid}
    for axis, values in axes.items():
        keys = axis_keys(axis)
        for key in keys:
            check_option(config, key, "grid")
        if not isinstance(values, list) or not values:
            raise ValueError(f"grid: axis {axis!r} needs a non-empty list of values")
        if len(keys) > 1 and not all(isinstance(v, list) and len(v) == len(keys) for v in values):
            raise ValueError(f"grid: axis {axis!r} joins {len(keys)} keys; each value must be a list of {len(keys)}")
        clash = [(v, k) for v in chosen for k in keys if short_key(k) in {short_key(o) for o in (named[v] or {})}]
        if clash:
            raise ValueError(f"grid: axis {clash[0][1]!r} is also set by variant {clash[0][0]!r}; drop one of them")
    short = grid_labels(bench, axes)
    bases = [(name, [f"--{k}={v}" for k, v in (named[name] or {}).items()]) for name in chosen] or [("", [])]
    out = []
    for (base, base_args), point in itertools.product(bases, itertools.product(*axes.values())):
        settings: list[tuple[str, Any]] = []
        labels: list[str] = []
        for axis, v in zip(axes, point, strict=False):
            keys = axis_keys(axis)
            values = v if len(keys) > 1 else [v]
            settings += zip(keys, values, strict=False)
            if axis in short:
                labels.append(f"{short[axis]}={labelled_value(values)}")
            else:
                labels += [axis_label(k, x) for k, x in zip(keys, values, strict=False)]
        name = ",".join(filter(None, [base, *labels])) or "default"
        args = base_args + [
            f"--{k}={yaml.safe_dump(v, default_flow_style=True).strip().removesuffix('...').strip()}"
            for k, v in settings
        ]
        out.append((name, args))
    if points:  # the named grid points, beside every point of the variants named whole
        whole = {v for v in variants or [] if "," not in v}
        missing = sorted(points - {name for name, _ in out})
        if missing:
            raise ValueError(
                f"variants: {missing[0]!r} is not a point of the grid; choose from {', '.join(n for n, _ in out)}"
            )
        out = [(name, args) for name, args in out if name in points or name.split(",")[0] in whole]
    return out


def grid_labels(bench: Config, axes: dict[str, list[Any]]) -> dict[str, str]:
    """``bench.grid_labels``: a short name per grid axis for the variant names, e.g. ``alpha0`` for an axis that sets
    the initial alpha of three norms: ``pre/dyt,alpha0=2.0`` instead of one ``key=value`` per key. One-line errors."""
    labels = bench.get("grid_labels") or {}
    if not isinstance(labels, dict):
        raise ValueError(f"bench.grid_labels: must map grid axes to names, got {labels!r}")
    for axis, label in labels.items():
        if axis not in axes:
            raise ValueError(
                f"bench.grid_labels: {axis!r} is not an axis of the grid ({', '.join(map(repr, axes)) or 'none'})"
            )
        if not isinstance(label, str) or not re.fullmatch(r"[A-Za-z0-9_.+-]+", label):
            raise ValueError(f"bench.grid_labels.{axis}: {label!r} must be a short name (letters, digits, _ . + -)")
    return dict(labels)


def labelled_value(values: list[Any]) -> str:
    """A labelled axis' value in a variant name: the one value its keys share, else their values joined by ``;``."""
    return str(values[0]) if all(v == values[0] for v in values) else ";".join(map(str, values))


def axis_keys(axis: str) -> list[str]:
    """The config keys of a grid axis: one, or several joined by commas (they move together)."""
    return [k.strip() for k in axis.split(",") if k.strip()]
