"""Where a run lives, and what it is: the one owner of run paths and run identity.

A run is keyed by its effective configuration (:func:`run_identity`): the resolved config that
builds its network and data after defaults, presets and overrides, with the network's
architecture as the network sees it (:meth:`normbench.nn.config.ArchConfig.effective`: norms a
placement ignores are absent, settings a norm ignores are reset), plus the world size and the
global batch size. Bookkeeping (seed, preset name, variant label, output folders, logging) is
left out, so the seeds of a variant share one key, and two configurations that build the same
model share it, while two that differ never share a directory::

    <runs_dir>/<task>/<label>-<config hash>/seed<k>/
        record.json  config.yaml  events.out.tfevents.*  checkpoints/last.ckpt  decomposition.json
        tokenizer.json (text tasks)
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
import re
import typing
from pathlib import Path
from typing import Any, cast

import yaml

from normbench.archive.record import RecordDocument
from normbench.data.tokenizer import TOKENIZER_FILE
from normbench.errors import short_key
from normbench.io import Config, load_yaml
from normbench.nn.config import EffectiveArch
from normbench.nn.norms.base import NormSpecFields
from normbench.tasks.trust import record_class, registered_classes, untrusted_norms

# The numerics version of the training code: bumped by any change that moves a number of a run whose
# configuration is unchanged (an op order, an initialiser, the data order, a dtype, a reduction), so that such a
# change gives every run a new identity instead of a second result under one config hash. Version 1 is implicit
# (absent from the identity, so every hash published before the version existed stays as it is); from 2 on it is
# part of every run's identity. tests/test_numerics.py retrains short runs of every task and compares them bit for
# bit with the archived references of this platform class (results/archive/numerics/): a change of numbers fails
# it unless the version is bumped and the references are written again.
NUMERICS_VERSION = 1
RECORD_NAME = "record.json"
CHECKPOINT_DIR = "checkpoints"
LAST_CHECKPOINT = Path(CHECKPOINT_DIR) / "last.ckpt"
DECOMPOSITION_NAME = "decomposition.json"
KEY_SETS_NAME = "key_sets.json"
CLASS_KEYS_NAME = "class_keys.json"
HEAD_KEYS_NAME = "head_keys.json"
SWEEP_LOG = "sweep.log"
# Config keys that do not change what is trained: output locations, logging, bookkeeping.
NON_SEMANTIC_KEYS = (
    "seed_everything",
    "preset",
    "presets",
    "default_preset",
    "bench",
    "variant",
    "runs_dir",
    "task",
    "config",
    "compile",
)  # compile: how the same arithmetic is run (the provenance says)
NON_SEMANTIC_TRAINER_KEYS = ("logger", "callbacks", "enable_progress_bar", "default_root_dir", "enable_model_summary")
# Callbacks that only save, show or log; any other callback (early stopping, SWA, ...) changes what
# is trained and is part of the run's identity.
NON_SEMANTIC_CALLBACKS = (
    "ModelCheckpoint",
    "TQDMProgressBar",
    "RichProgressBar",
    "ModelSummary",
    "RichModelSummary",
    "LearningRateMonitor",
    "DeviceStatsMonitor",
    "Timer",
)


def semantic_callbacks(callbacks: Any) -> list[Any]:
    """The configured callbacks that change training (see ``NON_SEMANTIC_CALLBACKS``)."""
    if not isinstance(callbacks, list):
        callbacks = [callbacks] if callbacks else []
    return [
        c
        for c in callbacks
        if not (isinstance(c, dict) and str(c.get("class_path", "")).rpartition(".")[2] in NON_SEMANTIC_CALLBACKS)
    ]


def run_identity(config: Config, arch: EffectiveArch | None, world_size: int) -> Config:
    """What determines a run's results (seed excluded): see the module docstring.

    ``arch`` is the effective architecture, replacing ``model.init_args.arch`` of ``config``.
    """
    out = {k: v for k, v in config.items() if k not in NON_SEMANTIC_KEYS}
    trainer = out.get("trainer")
    if isinstance(trainer, dict):
        out["trainer"] = {k: v for k, v in trainer.items() if k not in NON_SEMANTIC_TRAINER_KEYS}
        if callbacks := semantic_callbacks(trainer.get("callbacks")):
            out["trainer"]["callbacks"] = callbacks
    if isinstance(out.get("data"), dict):
        out["data"] = without_identity_defaults(out["data"])
    if arch is not None and isinstance(out.get("model"), dict):
        out["model"] = {**out["model"], "init_args": {**(out["model"].get("init_args") or {}), "arch": arch}}
    batch = ((config.get("data") or {}).get("init_args") or {}).get("batch_size")
    accumulate = (trainer or {}).get("accumulate_grad_batches") or 1
    out["world_size"] = world_size
    out["global_batch_size"] = (
        batch * world_size * accumulate if isinstance(batch, int) and isinstance(accumulate, int) else None
    )
    if NUMERICS_VERSION > 1:
        out["numerics"] = NUMERICS_VERSION
    return out


def without_identity_defaults(data: Config) -> Config:
    """The data section without the init arguments its class added after runs were trained, where they hold the value
    that trains as those runs did (the class's ``IDENTITY_DEFAULTS``; registered tasks' data classes only): those runs
    keep their config hash."""
    init_args = data.get("init_args")
    if not isinstance(init_args, dict):
        return data
    # a registered task's data class only: the identity must not hang on what this process has imported
    defaults = getattr(registered_classes().get(str(data.get("class_path"))), "IDENTITY_DEFAULTS", {})
    kept = {k: v for k, v in init_args.items() if not (k in defaults and v == defaults[k])}
    return {**data, "init_args": kept}


def config_hash(identity: Config) -> str:
    """sha256 (first 12 hex digits) of the canonical JSON of a :func:`run_identity`."""
    payload = json.dumps(identity, sort_keys=True, default=str)
    return hashlib.sha256(payload.encode()).hexdigest()[:12]


def effective_arch(config: Config) -> EffectiveArch | None:
    """The effective architecture of a resolved run config, as the planner's network sees it.

    The task module (``model.class_path``) names its architecture config class (its ``arch`` argument),
    which is built from ``model.init_args.arch`` (nested norm specs included) and asked for
    :meth:`~normbench.nn.config.ArchConfig.effective`; ``None`` for a module without one. A config that
    does not build raises ``ValueError``; so does a class or norm that is not registered
    (:mod:`normbench.tasks.trust`: the config may come from a run record).
    """
    model = config.get("model") if isinstance(config, dict) else None
    if not isinstance(model, dict) or not isinstance(model.get("class_path"), str):
        raise ValueError("config: model.class_path is missing")
    cls = record_class(model["class_path"], "model")  # a record is untrusted: registered classes only
    try:
        arch_type = typing.get_type_hints(cls.__init__).get("arch")
    except (AttributeError, NameError, TypeError) as exc:
        raise ValueError(f"config: model.class_path {model['class_path']!r}: {type(exc).__name__}: {exc}") from None
    if not dataclasses.is_dataclass(arch_type):
        return None
    with untrusted_norms():
        arch = build_dataclass(arch_type, (model.get("init_args") or {}).get("arch") or {}, "model.arch")
        return arch.effective() if hasattr(arch, "effective") else None


def build_dataclass(cls: type, values: Any, field: str) -> Any:
    """``cls(**values)`` with nested dataclass fields (e.g. norm specs) built from their dicts too."""
    if not isinstance(values, dict):
        raise ValueError(f"config: {field} must be a mapping, got {values!r}")
    hints = typing.get_type_hints(cls)
    names = {f.name for f in dataclasses.fields(cls) if f.init}
    unknown = sorted(set(values) - names)
    if unknown:
        raise ValueError(f"config: {field} has no field {unknown[0]!r}")
    kwargs = {}
    for key, value in values.items():
        kind = next(
            (t for t in (hints.get(key), *typing.get_args(hints.get(key))) if dataclasses.is_dataclass(t)), None
        )
        kwargs[key] = build_dataclass(kind, value, f"{field}.{key}") if kind and isinstance(value, dict) else value
    try:
        return cls(**kwargs)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"config: {field} does not build ({exc})") from None


def record_config_hash(record: RecordDocument) -> str:
    """The config hash of a run record recomputed from its own config (and world size), as the planner
    computes it for a run: what matches a record to its run, whatever its ``config_hash`` field says."""
    config = record.get("config")
    if not isinstance(config, dict):
        raise ValueError("config: missing")
    world = record.get("world_size") or (record.get("provenance") or {}).get("world_size") or 1
    return config_hash(run_identity(config, effective_arch(config), int(world)))


def reported_norms(arch: EffectiveArch | None) -> dict[str, NormSpecFields]:
    """The norms a run reports (record, leaderboard row, run name): those of its effective architecture.

    ``arch`` comes from :meth:`normbench.nn.config.ArchConfig.effective`, where a norm absent under the
    placement is ``None``; the result maps each present norm's name (``attn_norm``) to its canonical spec.
    """
    return {k: cast(NormSpecFields, v) for k, v in (arch or {}).items() if k.endswith("_norm") and isinstance(v, dict)}


# Command-line keys a run's label leaves out: bookkeeping, and what the label already names (norms, placement).
UNLABELLED_KEYS = (
    "config",
    "print_config",
    "seed_everything",
    "preset",
    "variant",
    "runs_dir",
    "task",
    "compile",
    *(f"trainer.{k}" for k in NON_SEMANTIC_TRAINER_KEYS),
)
MAX_LABEL = 160  # a run folder's name stays well inside the file system's 255 bytes
LABELLED_ARCH = re.compile(r"model\.arch\.(placement|qk_norm|\w+_norm)(\.|$)")


def override_items(args: list[str] | None) -> list[tuple[str, str]]:
    """The ``--section.key value`` overrides of a command line that change a run, as short ``(key, value)``.

    ``--trainer.max_steps 100 --model.init_args.arch.d_model=16`` -> ``[("max_steps", "100"), ("d_model", "16")]``;
    bookkeeping keys, locations (``*_dir``, ``*_path``, ``*_file``) and the norms and placement (named by
    :func:`run_label` already) are left out;
    a key given twice counts once, with its last value.
    """
    items: dict[str, str] = {}
    base = _base_config(args or [])
    tokens = list(args or [])
    while tokens:
        token = tokens.pop(0)
        if not token.startswith("--"):
            continue
        key, eq, value = token[2:].partition("=")
        if not eq:
            value = tokens.pop(0) if tokens and not tokens[0].startswith("--") else "true"
        key = short_key(key)
        if key in UNLABELLED_KEYS or LABELLED_ARCH.match(key) or key.endswith(("_dir", "_path", "_file")):
            continue
        if _same_as_base(base, key, value):  # e.g. d_model=8 on a config whose d_model is 8: not an override
            items.pop(key, None)
            continue
        items.pop(key, None)
        items[key] = value
    return [(key.rpartition(".")[2], value) for key, value in items.items()]


def _base_config(args: list[str]) -> Config:
    """The (last) ``--config`` of a command line as a dict: a YAML file or YAML text; ``{}`` otherwise."""
    text = None
    for i, token in enumerate(args):
        if token == "--config" and i + 1 < len(args):
            text = args[i + 1]
        elif token.startswith("--config="):
            text = token.split("=", 1)[1]
    if text is None:
        return {}
    try:
        return _parsed_config(
            Path(text).read_text(encoding="utf-8") if "\n" not in text and Path(text).is_file() else text
        )
    except OSError:
        return {}


@functools.lru_cache(maxsize=16)
def _parsed_config(text: str) -> Config:
    """A config's YAML text as a dict (``{}`` when it is not one), parsed once: a sweep plans every variant on one
    config. Callers only read it."""
    try:
        loaded = load_yaml(text)
    except yaml.YAMLError:
        return {}
    return loaded if isinstance(loaded, dict) else {}


def _same_as_base(base: Config, key: str, value: str) -> bool:
    """True when the override ``key=value`` (``init_args`` left out of ``key``) repeats ``base``'s value."""
    node: Any = base
    for part in key.split("."):
        if isinstance(node, dict) and "init_args" in node and part not in node:
            node = node["init_args"]
        if not isinstance(node, dict) or part not in node:
            return False
        node = node[part]
    try:
        return yaml.safe_load(value) == node
    except yaml.YAMLError:
        return False


def run_label(arch: EffectiveArch | None, overrides: list[tuple[str, str]] | None = None) -> str:
    """Readable name of a run: its effective architecture and its command-line overrides,
    e.g. ``pre-attn_both-ffn_both+affine`` or ``pre-attn_both-ffn_both+affine-d_model=16-max_steps=100``.

    Only the norms that exist are named: ``none-`` alone for a network without block norms. Overrides
    beyond ``MAX_LABEL`` characters are counted (``+3_more``), not named; the config hash tells runs apart.
    """
    parts = [str((arch or {}).get("placement", "pre"))]
    for key, spec in sorted(reported_norms(arch).items()):
        parts.append(f"{key.removesuffix('_norm')}_{spec.get('component')}{'+affine' if spec.get('affine') else ''}")
    if (arch or {}).get("qk_norm"):
        parts.append("qknorm")
    shown = 0
    for key, value in overrides or []:
        part = f"{key}={re.sub(r'[^A-Za-z0-9_.+=-]+', '_', value)[:24]}"
        if len("-".join([*parts, part])) > MAX_LABEL - 8:  # room for "-+N_more"
            break
        parts.append(part)
        shown += 1
    if shown < len(overrides or []):
        parts.append(f"+{len(overrides or []) - shown}_more")
    return "-".join(parts)


def slug(name: str) -> str:
    """File-system friendly form of a name: ``pre/both`` -> ``pre-both``."""
    return re.sub(r"[^A-Za-z0-9_.+=-]+", "-", name).strip("-")


def run_dir(runs_dir: str | Path, task: str, label: str, config_hash: str, seed: int | None) -> Path:
    """``<runs_dir>/<task>/<label>-<config hash>/seed<seed>``: the directory of one run.

    The hash decides: where this seed's record already lies in a folder of the same config hash under
    another label (runs trained before labels named their overrides, an override spelled
    differently, runs merged from shards), the run is that one, found, skipped or resumed and never
    trained twice; a new seed joins an existing folder of its config.
    """
    folder = Path(runs_dir) / task
    name, leaf = f"{slug(label)}-{config_hash}", f"seed{seed}"
    same = sorted(p.name for p in folder.glob(f"*-{config_hash}") if p.is_dir()) if folder.is_dir() else []
    for other in [name, *same]:  # this seed's run where it lies, under whichever label
        if (folder / other / leaf / RECORD_NAME).is_file():
            return folder / other / leaf
    if not (folder / name).is_dir() and same:  # a new seed joins the seeds of its config
        name = same[0]
    return folder / name / leaf


def record_path(run: Path) -> Path:
    return Path(run) / RECORD_NAME


def checkpoint_path(run: Path) -> Path:
    return Path(run) / LAST_CHECKPOINT


def run_of_checkpoint(ckpt: str | Path) -> Path:
    """The run directory of ``<run>/checkpoints/<name>.ckpt``."""
    return Path(ckpt).resolve().parent.parent


def run_of_record(record: RecordDocument) -> Path:
    """The directory of a loaded run record: where it lies (``record_path``, set when read from a sweep),
    else its ``log_dir``. Runs may have been moved since training; their files move with them."""
    return Path(record["record_path"]).parent if record.get("record_path") else Path(cast(str, record["log_dir"]))


def checkpoint_of(record: RecordDocument, run: Path | None = None) -> Path | None:
    """The final checkpoint of a loaded record inside its run directory (``None`` if it has none, or when the
    record was read from the run archive, which keeps a finished run's analyses but not its weights)."""
    if not record.get("checkpoint") or record.get("archived"):
        return None
    return (run or run_of_record(record)) / CHECKPOINT_DIR / Path(record["checkpoint"]).name


def tokenizer_path(run: str | Path) -> Path:
    """``<run>/tokenizer.json``: the tokenizer a text task's run trained with."""
    return Path(run) / TOKENIZER_FILE
