"""Training: a LightningCLI over the task configs, presets, and one recorded run per call.

``train(args)`` parses LightningCLI-style arguments (``--config tasks/<task>.yaml`` plus
``--section.key value`` overrides), trains with the Lightning ``Trainer`` and writes the run
record next to the run's TensorBoard logs: ``<runs_dir>/<task>/<run name>/record.json``.
"""

from __future__ import annotations

import copy
import sys
import time
import warnings
from pathlib import Path
from typing import Any

import lightning as L
import yaml
from lightning.pytorch.cli import LightningCLI
from lightning.pytorch.loggers import TensorBoardLogger
from lightning.pytorch.utilities import rank_zero_only
from lightning.pytorch.utilities.model_helpers import is_overridden

from normbench.checkpointing import AtomicCheckpointIO, RunState, clear_run_dir, resume_checkpoint, rng_states
from normbench.geometry_monitor import GeometryMonitor
from normbench.lightning_module import NormbenchModule
from normbench.records import RECORD_NAME, RunRecordLogger, config_hash, provenance, read_record


def deep_merge(base: dict[str, Any], patch: dict[str, Any]) -> dict[str, Any]:
    """A copy of ``base`` with ``patch`` merged in, recursively for nested dicts."""
    out = copy.deepcopy(base)
    for key, value in patch.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = deep_merge(out[key], value)
        else:
            out[key] = copy.deepcopy(value)
    return out


def load_config(path: str | Path, preset: str | None = None) -> dict[str, Any]:
    """The YAML config at ``path`` with ``presets[preset]`` merged in (``preset`` recorded)."""
    path = Path(path)
    if not path.is_file():
        raise ValueError(f"config: no such file {str(path)!r}")
    config = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    if preset is None:
        return config
    presets = config.get("presets") or {}
    if preset not in presets:
        raise ValueError(f"preset: {preset!r} is not defined in {path}; choose one of {', '.join(presets) or '(none)'}")
    return {**deep_merge(config, presets[preset] or {}), "preset": preset}


def run_name(config: dict[str, Any]) -> str:
    """Readable run name, e.g. ``pre-attn_both-ffn_both+affine-seed3``."""
    args = (config.get("model") or {}).get("init_args") or {}
    parts = [str(args.get("placement", "pre"))]
    for key in sorted(k for k in args if k.endswith("_norm")):
        spec = args[key] or {}
        label = str(spec.get("component", "both")) + ("+affine" if spec.get("affine") and spec.get("component") != "none" else "")
        parts.append(f"{key.removesuffix('_norm')}_{label}")
    return "-".join(parts + [f"seed{config.get('seed_everything', 0)}"])


def run_dir(runs_dir: str | Path, task: str, preset: str | None, name: str) -> Path:
    """Directory of one run: ``<runs_dir>/<task>[/<preset>]/<name>`` (TensorBoard logs, checkpoints, record)."""
    return Path(runs_dir) / task / (preset or "") / name if preset else Path(runs_dir) / task / name


def check_shared_hparams(config: dict[str, Any]) -> None:
    """Model and data arguments with the same name must agree: Lightning logs them as one hyperparameter."""
    model = (config.get("model") or {}).get("init_args") or {}
    data = (config.get("data") or {}).get("init_args") or {}
    for key in sorted(set(model) & set(data)):
        if model[key] != data[key]:
            raise ValueError(f"model.init_args.{key}={model[key]!r} and data.init_args.{key}={data[key]!r} must be equal; "
                             f"set both")


def check_trainer(trainer: dict[str, Any]) -> None:
    """One-line errors for step/epoch budgets that cannot train (Lightning would accept 0)."""
    for key in ("max_steps", "max_epochs"):
        value = trainer.get(key)
        if value is not None and value != -1 and (not isinstance(value, int) or value <= 0):
            raise ValueError(f"trainer.{key}: must be a positive integer or -1 (no limit), got {value!r}")
    interval = trainer.get("val_check_interval")
    if interval is not None and not (isinstance(interval, (int, float)) and interval > 0):
        raise ValueError(f"trainer.val_check_interval: must be positive, got {interval!r}")


class NormbenchCLI(LightningCLI):
    """LightningCLI with normbench's task bookkeeping arguments and loggers.

    Extra arguments: ``task`` (registry name), ``preset`` (which preset was applied), ``presets``
    and ``bench`` (data for ``normbench bench``), ``variant`` (leaderboard row name) and
    ``runs_dir`` (root of TensorBoard logs, checkpoints and run records).
    """

    def __init__(self, args: list[str] | dict[str, Any] | None = None, **kwargs: Any) -> None:
        # ``args`` is always explicit here; sys.argv is left intact for DDP's re-launch of the command.
        warnings.filterwarnings("ignore", message="LightningCLI's args parameter")
        super().__init__(
            NormbenchModule,
            L.LightningDataModule,
            subclass_mode_model=True,
            subclass_mode_data=True,
            args=args,
            run=False,
            auto_configure_optimizers=False,
            save_config_kwargs={"overwrite": True},
            parser_kwargs=kwargs.pop("parser_kwargs", {"exit_on_error": False}),
            **kwargs,
        )

    def add_arguments_to_parser(self, parser: Any) -> None:
        parser.add_argument("--task", type=str, default="", help="task name in the registry")
        parser.add_argument("--preset", type=str | None, default=None, help="preset applied to this config")
        parser.add_argument("--presets", type=dict, default={}, help="named partial configs (used by --preset)")
        parser.add_argument("--bench", type=dict, default={}, help="what `normbench bench` sweeps and reports")
        parser.add_argument("--variant", type=str | None, default=None, help="leaderboard row name of this run")
        parser.add_argument("--runs_dir", type=str, default="runs", help="root of logs, checkpoints and records")
        parser.add_argument("--run_name", type=str | None, default=None, help="run directory name (default: derived)")
        # normbench's loaders shard every global batch themselves (EpochBatchSampler): N processes
        # then see the batches one process sees at N x the batch size.
        parser.set_defaults({"trainer.use_distributed_sampler": False})

    def resolved_config(self) -> dict[str, Any]:
        return yaml.safe_load(self.parser.dump(self.config, skip_check=True))

    def instantiate_trainer(self, **kwargs: Any) -> L.Trainer:
        config = self.resolved_config()
        check_trainer(config.get("trainer") or {})
        check_shared_hparams(config)
        if self.config.trainer.logger not in (None, True, False):
            raise ValueError("trainer.logger: normbench sets the loggers itself (TensorBoard + run record); "
                             "leave it unset, or use --runs_dir to choose where they write")
        task = config.get("task") or "run"
        derived = run_name(config)
        name = config.get("run_name") or derived
        directory = run_dir(self.config.runs_dir, task, config.get("preset"), name)
        tensorboard = TensorBoardLogger(directory.parent, name="", version=name, default_hp_metric=False)
        meta = {
            "task": task,
            "variant": config.get("variant") or derived.rsplit("-seed", 1)[0],
            "seed": config.get("seed_everything"),
            "preset": config.get("preset"),
            "config_hash": config_hash(config),
            "config": config,
            "log_dir": tensorboard.log_dir,
            "provenance": provenance(),
        }
        self.recorder = RunRecordLogger(Path(tensorboard.log_dir) / RECORD_NAME, meta)
        kwargs["logger"] = [tensorboard, self.recorder]
        if not (config.get("trainer") or {}).get("plugins"):
            kwargs["plugins"] = [AtomicCheckpointIO()]
        trainer = super().instantiate_trainer(**kwargs)
        self.run_state = RunState(self.recorder, start_rng=rng_states())
        trainer.callbacks.insert(0, self.run_state)
        trainer.callbacks.append(GeometryMonitor())
        return trainer


def preset_args(args: list[str]) -> list[str]:
    """Rewrite ``--preset NAME`` into the config it names, merged into the ``--config`` file.

    ``[--config F, --preset P, ...]`` becomes ``[--config <F with presets[P] merged>, ...]`` so
    that command-line overrides given after it still win.
    """
    if "--preset" not in args and not any(a.startswith("--preset=") for a in args):
        return args
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
        raise ValueError("preset: --preset needs a --config file that defines it (e.g. --config tasks/majority.yaml)")
    pos = max(j for j, a in enumerate(out) if a == "--config")
    out[pos + 1] = yaml.safe_dump(load_config(config_path, preset), sort_keys=False)
    return out


def start_point(recorder: RunRecordLogger) -> Path | None:
    """The checkpoint an interrupted run of the same config continues from, or ``None``.

    A run resumes when its record says ``running`` or ``failed`` for the same config hash and its
    ``last.ckpt`` belongs to that config. Otherwise it starts afresh, and what an earlier attempt
    left in the run directory (checkpoints, TensorBoard events) is removed first. A corrupt
    record is reported and its run redone from the start.
    """
    run_dir, wanted = recorder.path.parent, recorder.meta["config_hash"]
    previous = None
    if recorder.path.exists():
        try:
            previous = read_record(recorder.path)
        except ValueError as exc:
            print(f"normbench: {exc}; the run is redone from the start", file=sys.stderr)
    checkpoint = None
    if previous and previous.get("status") in ("running", "failed") and previous.get("config_hash") == wanted:
        checkpoint = resume_checkpoint(run_dir, wanted)
    if checkpoint is not None:
        print(f"normbench: resuming {run_dir} from {checkpoint}", file=sys.stderr)
    elif rank_zero_only.rank == 0:
        clear_run_dir(run_dir)
    return checkpoint


def train(args: list[str] | dict[str, Any]) -> Path:
    """Parse ``args``, fit, and write the run record; returns the record's path.

    The record's status is ``done``, ``diverged`` (non-finite loss; training stopped) or
    ``failed`` (an exception, re-raised after the record is written). An interrupted run of the
    same config resumes from its last checkpoint (:func:`start_point`). A task whose module has a
    ``test_step`` (its analysis of the trained model) gets a test pass after a finished fit.
    """
    cli = NormbenchCLI(args=preset_args(args) if isinstance(args, list) else args)
    recorder: RunRecordLogger = cli.recorder
    checkpoint = start_point(recorder)
    recorder.write("running")
    start = time.perf_counter()
    try:
        cli.trainer.fit(cli.model, datamodule=cli.datamodule, ckpt_path=checkpoint)
    except BaseException as exc:
        recorder.write("failed", error=f"{type(exc).__name__}: {exc}", final_step=cli.trainer.global_step)
        raise
    diverged_at = getattr(cli.model, "diverged_at", None)
    status = "diverged" if diverged_at is not None else "done"
    if status == "done" and cli.run_state.validation_after_fit:
        # resumed from the final step's checkpoint, written before the final validation
        cli.trainer.validate(cli.model, datamodule=cli.datamodule, verbose=False)
    extra: dict[str, Any] = {"final_step": cli.trainer.global_step, "fit_time_s": round(time.perf_counter() - start, 3)}
    if diverged_at is not None:
        extra["diverged_at_step"] = diverged_at
    if checkpoint is not None:
        extra["resumed_from"] = str(checkpoint)
    ckpt = cli.trainer.checkpoint_callback
    if ckpt is not None and ckpt.last_model_path:
        extra["checkpoint"] = ckpt.last_model_path
    elif checkpoint is not None:  # resumed at the final step: no checkpoint written since
        extra["checkpoint"] = str(checkpoint)
    if status == "done" and is_overridden("test_step", cli.model):
        # the task's analysis of the trained model (e.g. unselectable keys on held-out text)
        start = time.perf_counter()
        try:
            cli.trainer.test(cli.model, datamodule=cli.datamodule, verbose=False)
        except BaseException as exc:
            recorder.write("failed", error=f"test stage: {type(exc).__name__}: {exc}", **extra)
            raise
        extra["test_time_s"] = round(time.perf_counter() - start, 3)
    recorder.write(status, **extra)
    return recorder.path
