"""The LightningCLI over the task configs: one run parsed and built, with normbench's bookkeeping.

:class:`NormbenchCLI` parses LightningCLI-style arguments (``--config <task or file>`` plus ``--section.key value``
overrides) and builds the run's model, data module and trainer, with normbench's loggers (TensorBoard and the run
record) and callbacks, and the run's identity, directory and record (:mod:`normbench.training.run.rundir`);
:func:`normbench.training.fit.train` trains it.
"""

from __future__ import annotations

import copy
import json
import warnings
from typing import Any, ClassVar

import lightning as L
import torch
from lightning.pytorch.callbacks import LearningRateMonitor
from lightning.pytorch.cli import LightningArgumentParser, LightningCLI
from lightning.pytorch.loggers import TensorBoardLogger

from normbench.io import Config, show_bars, verbose
from normbench.rng import rng_states
from normbench.tasks.base import NormbenchModule
from normbench.training.allocator import keep_freed_memory
from normbench.training.config import check_shared_hparams, check_trainer
from normbench.training.monitoring.last_step import LastStepValidation
from normbench.training.monitoring.monitor import GeometryMonitor
from normbench.training.monitoring.progress import ProgressLines, progress_interval
from normbench.training.monitoring.tensorboard import (
    ablation_axes,
    headline_metrics,
    metric_values,
    run_hparams,
    write_hparams,
    write_layout,
)
from normbench.training.reproducibility import gpu_determinism_wanted, use_deterministic_gpu_algorithms
from normbench.training.run.checkpointing import AtomicCheckpointIO, RunState
from normbench.training.run.records import RunRecordLogger, provenance
from normbench.training.run.rundir import (
    checkpoint_path,
    config_hash,
    override_items,
    record_path,
    reported_norms,
    run_dir,
    run_identity,
    run_label,
)
from normbench.training.stopping.deadline import Deadline, deadline_from_env
from normbench.training.stopping.interrupts import InterruptFlag

COMPILE_MODES = ("none", "default", "reduce-overhead", "max-autotune")  # torch.compile's modes, and eager


class NormbenchCLI(LightningCLI):
    """LightningCLI with normbench's task bookkeeping arguments and loggers.

    Extra arguments: ``task`` (registry name), ``preset`` (which preset was applied), ``presets``,
    ``default_preset`` and ``bench`` (data for sweeps), ``variant`` (leaderboard row name) and
    ``runs_dir`` (root of TensorBoard logs, checkpoints and run records), ``compile`` (eager, or a
    ``torch.compile`` mode for the training steps: :meth:`~normbench.tasks.base.NormbenchModule.compile_network`).

    After instantiation ``run_dir`` is the run's directory, ``config_hash`` its key (computed from
    ``identity_config``, the resolved config), ``run_label`` its readable name and ``recorder`` its run record
    (:mod:`normbench.training.run.rundir`).
    """

    def __init__(self, args: list[str] | Config | None = None, **kwargs: Any) -> None:
        # ``args`` is always explicit here; sys.argv is left intact for DDP's re-launch of the command.
        warnings.filterwarnings("ignore", message="LightningCLI's args parameter")
        self.overrides = override_items(args) if isinstance(args, list) else []
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

    parsers: ClassVar[dict[str, LightningArgumentParser]] = {}
    """Lightning's parser for each set of parser options, built once per process (see :meth:`setup_parser`)."""

    def setup_parser(
        self, add_subcommands: bool, main_kwargs: dict[str, Any], subparser_kwargs: dict[str, Any]
    ) -> None:
        """Lightning's parser, built once per process for each set of options and reused by every later command line:
        building it (reading the Trainer's, the modules' and the data modules' signatures) was a fifth of the time a
        sweep's plan took per variant. Parsing and instantiating leave a parser as it was (its instantiators are
        replaced, not added to, by each CLI)."""
        if add_subcommands:  # normbench's CLI never runs a subcommand; Lightning's own path, uncached
            super().setup_parser(add_subcommands, main_kwargs, subparser_kwargs)
            return
        key = repr(
            (
                main_kwargs,
                self._model_class,
                self._datamodule_class,
                self.subclass_mode_model,
                self.subclass_mode_data,
                self.trainer_class,
                self.trainer_defaults,
                self.seed_everything_default,
                self.auto_configure_optimizers,
                show_bars(),
                verbose(),
            )
        )
        if key not in self.parsers:
            super().setup_parser(add_subcommands, main_kwargs, subparser_kwargs)
            self.parsers[key] = self.parser
        self.parser = self.parsers[key]

    def add_arguments_to_parser(self, parser: Any) -> None:
        parser.add_argument("--task", type=str, default="", help="task name in the registry")
        parser.add_argument("--preset", type=str | None, default=None, help="preset applied to this config")
        parser.add_argument("--presets", type=dict, default={}, help="named partial configs (used by --preset)")
        parser.add_argument("--default_preset", type=str | None, default=None, help="preset of the task's own bench")
        parser.add_argument("--bench", type=dict, default={}, help="what `normbench bench` sweeps and reports")
        parser.add_argument("--variant", type=str | None, default=None, help="leaderboard row name of this run")
        parser.add_argument("--runs_dir", type=str, default="runs", help="root of logs, checkpoints and records")
        parser.add_argument(
            "--compile",
            type=str,
            default="none",
            help=f"train the network through torch.compile: one of {', '.join(COMPILE_MODES)} "
            "(reduce-overhead: CUDA graphs); recorded in the run's provenance",
        )
        # normbench's loaders shard every global batch themselves (EpochBatchSampler): N processes
        # then see the batches one process sees at N x the batch size.
        parser.set_defaults({"trainer.use_distributed_sampler": False})
        # a bar on a terminal; in a log file a line every 30 s instead (ProgressLines), no \r-joined redraws
        parser.set_defaults({"trainer.enable_progress_bar": show_bars()})
        # Lightning's model summary table (parameters, "Total FLOPs: 0") only with --verbose, for one run and
        # for every run of a sweep, stacked seeds included
        parser.set_defaults({"trainer.enable_model_summary": verbose()})

    def _dump_config(self) -> None:
        """Lightning's own (the config its instantiators save as the model's and data module's hyperparameters), the
        config dumped as JSON instead of YAML: the same dict, without a pure-Python YAML round trip, which was most
        of the time a sweep's or bake's plan took (:mod:`normbench.training.lightning_private` names it). The config
        was validated when it was parsed, so the dump does not validate it again (a seventh of a plan's time)."""
        if hasattr(self, "config_dump"):
            return
        dump = self.parser.dump(
            self.config, skip_link_targets=False, skip_none=False, format="json", skip_validation=True
        )
        self.config_dump = json.loads(dump)
        if "subcommand" in self.config:
            self.config_dump = self.config_dump[self.config.subcommand]

    def resolved_config(self) -> Config:
        """The resolved config, with the data module's init arguments as it trains on them (``identity_args``:
        e.g. the ``source`` that ``auto`` picked): what the run's identity and record hold."""
        config = json.loads(self.parser.dump(self.config, format="json", skip_validation=True))
        identity_args = getattr(getattr(self, "datamodule", None), "identity_args", None)
        if callable(identity_args) and isinstance((config.get("data") or {}).get("init_args"), dict):
            config["data"]["init_args"].update(identity_args())
        return config

    def instantiate_trainer(self, **kwargs: Any) -> L.Trainer:
        config = self.resolved_config()
        check_trainer(config.get("trainer") or {})
        check_shared_hparams(config)
        if self.config.trainer.logger not in (None, True, False):
            raise ValueError(
                "trainer.logger: normbench sets the loggers itself (TensorBoard + run record); "
                "leave it unset, or use --runs_dir to choose where they write"
            )
        task = config.get("task") or "run"
        arch_config = getattr(self.model, "arch", None)
        arch = arch_config.effective() if hasattr(arch_config, "effective") else None
        # the trainer is built first: its world size is part of the run's identity
        if not (config.get("trainer") or {}).get("plugins"):
            kwargs["plugins"] = [AtomicCheckpointIO()]
        kwargs["logger"] = False
        trainer = super().instantiate_trainer(**kwargs)
        mode = self.config.get("compile") or "none"
        if mode not in COMPILE_MODES:
            raise ValueError(f"compile: {mode!r} is not allowed; choose one of {', '.join(COMPILE_MODES)}")
        if mode != "none":
            self.model.compile_network(mode)
        host_memory = keep_freed_memory()  # the process is about to train: its large tensors are reused
        if trainer.strategy.root_device.type == "cuda" and gpu_determinism_wanted():
            # same GPU, same seed -> same run (trainer.deterministic: true is strict)
            use_deterministic_gpu_algorithms()
        identity = run_identity(config, arch, world_size(trainer))
        self.identity_config = copy.deepcopy(config)  # what the run's identity was computed from (a plan keeps it)
        self.config_hash = config_hash(identity)
        self.run_label = label = run_label(arch, self.overrides)
        self.run_dir = run_dir(self.config.runs_dir, task, label, self.config_hash, config.get("seed_everything"))
        tensorboard = TensorBoardLogger(
            self.run_dir.parent, name="", version=self.run_dir.name, default_hp_metric=False
        )
        meta = {
            "task": task,
            "variant": config.get("variant") or label,
            "seed": config.get("seed_everything"),
            "preset": config.get("preset"),
            "config_hash": self.config_hash,
            "config": config,
            "norms": reported_norms(arch),
            "placement": (arch or {}).get("placement"),
            "world_size": identity["world_size"],
            "global_batch_size": identity["global_batch_size"],
            "log_dir": tensorboard.log_dir,
            "provenance": provenance(
                device=device_name(trainer),
                torch_device=trainer.strategy.root_device,
                world_size=identity["world_size"],
                global_batch_size=identity["global_batch_size"],
                host_memory=host_memory,
                **({"compile": mode} if mode != "none" else {}),
            ),
        }
        self.recorder = RunRecordLogger(record_path(self.run_dir), meta)
        self.tensorboard = tensorboard
        trainer.loggers = [tensorboard, self.recorder]
        self.run_state = RunState(self.recorder, start_rng=rng_states())
        self.interrupt_flag = InterruptFlag()
        trainer.callbacks.insert(0, self.run_state)
        trainer.callbacks.append(self.interrupt_flag)
        trainer.callbacks.append(GeometryMonitor())
        trainer.callbacks.append(LastStepValidation())
        if not (config.get("trainer") or {}).get("enable_progress_bar", True):  # no bar: a line every 30 s
            trainer.callbacks.append(
                ProgressLines(f"{meta['variant']} seed {meta['seed']}", interval=progress_interval())
            )
        if not any(isinstance(c, LearningRateMonitor) for c in trainer.callbacks):
            trainer.callbacks.append(LearningRateMonitor(logging_interval="step"))
        if (stop_at := deadline_from_env()) is not None:  # a bake's time budget
            trainer.callbacks.append(Deadline(stop_at, checkpoint_path(self.run_dir)))
        self.headline = headline_metrics(config.get("bench") or {}, int(getattr(arch_config, "n_layers", 1)))
        return trainer

    def write_layout(self) -> None:
        """The task's custom-scalars layout, in this run's event file (see
        :mod:`normbench.training.monitoring.tensorboard`)."""
        if self.trainer.is_global_zero:
            write_layout(self.tensorboard.experiment, self.recorder.meta["task"], self.headline)

    def write_hparams(self, step: int) -> None:
        """The run's hyperparameters bound to its headline metrics (at ``step``), for TensorBoard's HParams tab."""
        if not self.trainer.is_global_zero:
            return
        meta = self.recorder.meta
        arch = getattr(self.model, "arch", None)
        names = list(getattr(arch, "NORM_ROLES", None) or meta.get("norms") or {})
        values = run_hparams(meta["config"], arch, names, meta["variant"], meta["preset"], meta["config_hash"])
        write_hparams(
            self.tensorboard.experiment,
            values,
            list(self.headline),
            metric_values(self.recorder.series, self.headline),
            step,
            ablation_axes(names),
        )


def device_name(trainer: L.Trainer) -> str:
    """What a run trains on: ``cpu``, or the GPU's name (e.g. ``NVIDIA H100 80GB HBM3``)."""
    device = trainer.strategy.root_device
    return torch.cuda.get_device_name(device) if device.type == "cuda" else device.type


def world_size(trainer: L.Trainer) -> int:
    """Processes that train one run together: nodes x devices per node."""
    return int(trainer.num_nodes) * int(trainer.num_devices)
