"""Task configs: load a YAML (a file or a registered task's), apply a preset, check what Lightning would accept.

A task config's top-level sections ``trainer``/``model``/``data``/``seed_everything`` are a
LightningCLI config; ``presets`` patch them (``--preset quick``), ``default_preset`` names the
preset of the task's own bench, and ``bench`` says what a sweep trains and reports.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import yaml

from normbench.io import Config, read_yaml
from normbench.tasks import resolve_config


def config_value(config: Config, key: str) -> Any:
    """``config["a"]["b"]["c"]`` for the dotted ``key`` ``a.b.c`` of a resolved config (``None`` where a key is
    missing)."""
    node: Any = config
    for part in key.split("."):
        node = node.get(part) if isinstance(node, dict) else None
    return node


def deep_merge(base: Config, patch: Config) -> Config:
    """A copy of ``base`` with ``patch`` merged in, recursively for nested dicts."""
    out = copy.deepcopy(base)
    for key, value in patch.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = deep_merge(out[key], value)
        else:
            out[key] = copy.deepcopy(value)
    return out


def load_config(path: str | Path, preset: str | None = None) -> Config:
    """The YAML config at ``path`` (a file, or a registered task's name) with ``presets[preset]`` merged in
    (``preset`` recorded). A file with ``extends: <task or file>`` is that config with the file's sections merged
    over it (a report card adds its variant to a task this way)."""
    path = resolve_config(path)
    if not path.is_file():
        raise ValueError(f"config: no such file {str(path)!r}")
    config = read_yaml(path) or {}
    if not isinstance(config, dict):
        raise ValueError(
            f"config: {path} holds a {type(config).__name__}, not a mapping of sections (model, data, ...)"
        )
    if "extends" in config:  # a config that adds to a task's (e.g. a report card's variant): the task's, patched
        base, seen = config.pop("extends"), str(path)
        if not isinstance(base, str) or resolve_config(base) == path:
            raise ValueError(f"extends: {seen} must name another config file or a registered task, got {base!r}")
        config = deep_merge(load_config(base), config)
    if preset is None:
        return config
    return {**deep_merge(config, preset_patch(config, preset, str(path))), "preset": preset}


def preset_patch(config: Config, preset: str, where: str = "the config") -> Config:
    """``presets[preset]``, with the preset it ``extends`` (if any) merged under it, recursively.

    ``matrix: {extends: quick, bench: {...}}`` is the quick preset plus its own changes: a
    hyperparameter set by ``quick`` is declared there only.
    """
    presets = config.get("presets") or {}
    chain: list[str] = []
    patch: Config = {}
    while preset is not None:
        if preset not in presets:
            known = ", ".join(presets) or "(none)"
            field = f"presets.{chain[-1]}.extends" if chain else "preset"
            raise ValueError(f"{field}: {preset!r} is not defined in {where}; choose one of {known}")
        if preset in chain:
            raise ValueError(
                f"presets.{chain[-1]}.extends: {preset!r} extends itself ({' -> '.join([*chain, preset])})"
            )
        chain.append(preset)
        own = dict(presets[preset] or {})
        parent = own.pop("extends", None)
        if parent is not None and not isinstance(parent, str):
            raise ValueError(f"presets.{preset}.extends: must name one preset, got {parent!r}")
        patch = deep_merge(own, patch)
        preset = parent
    return patch


def config_names_to_files(args: list[str]) -> list[str]:
    """``--config majority`` -> ``--config <the task's shipped YAML>``; files are left as they are."""
    out = list(args)
    for i, arg in enumerate(out):
        key, eq, val = arg.partition("=")
        if key == "--config":
            if eq:
                out[i] = f"--config={resolve_yaml_arg(val)}"
            elif i + 1 < len(out):
                out[i + 1] = resolve_yaml_arg(out[i + 1])
    return out


def resolve_yaml_arg(value: str) -> str:
    """A ``--config`` value that is a registered task's name becomes its file; YAML text and files stay."""
    if "\n" in value:
        return value
    if Path(value).is_file():
        read_yaml(Path(value))  # a syntax error: one line naming the file and line (not the parser's text)
        return value
    try:
        return str(resolve_config(value))
    except ValueError:
        return value  # LightningCLI reports it


def preset_args(args: list[str]) -> list[str]:
    """Rewrite ``--preset NAME`` into the config it names, merged into the ``--config`` file.

    ``[--config F, --preset P, ...]`` becomes ``[--config <F with presets[P] merged>, ...]`` so
    that command-line overrides given after it still win. ``F`` may name a registered task.
    """
    if "--preset" not in args and not any(a.startswith("--preset=") for a in args):
        return config_names_to_files(args)
    out, config_path, preset, i = [], None, None, 0
    while i < len(args):
        arg = args[i]
        key, eq, val = arg.partition("=")
        if key in ("--config", "--preset"):
            if not eq:
                if i + 1 >= len(args):
                    raise ValueError(f"{key}: expects a value")
                val, i = args[i + 1], i + 1
            if key == "--config":
                config_path = val
                out += ["--config", val]
            else:
                preset = val
        else:
            out.append(arg)
        i += 1
    if config_path is None:
        raise ValueError("preset: --preset needs a --config that defines it (e.g. --config majority)")
    pos = max(j for j, a in enumerate(out) if a == "--config")
    out[pos + 1] = yaml.safe_dump(load_config(config_path, preset), sort_keys=False)
    return out


def check_shared_hparams(config: Config) -> None:
    """Architecture and data arguments with the same name (``num_classes``, ``vocab_size``) must agree."""
    model = ((config.get("model") or {}).get("init_args") or {}).get("arch") or {}
    data = (config.get("data") or {}).get("init_args") or {}
    for key in sorted(set(model) & set(data)):
        if model[key] != data[key]:
            raise ValueError(f"model.arch.{key}={model[key]!r} and data.{key}={data[key]!r} must be equal; set both")


def check_trainer(trainer: Config) -> None:
    """One-line errors for step/epoch budgets that cannot train (Lightning would accept 0)."""
    for key in ("max_steps", "max_epochs"):
        value = trainer.get(key)
        if value is not None and value != -1 and (not isinstance(value, int) or value <= 0):
            raise ValueError(f"trainer.{key}: must be a positive integer or -1 (no limit), got {value!r}")
    interval = trainer.get("val_check_interval")
    if interval is not None and not (isinstance(interval, (int, float)) and interval > 0):
        raise ValueError(f"trainer.val_check_interval: must be positive, got {interval!r}")
