"""What TensorBoard shows of a run, beyond its scalars: the HParams tab and the custom-scalars layout.

* **HParams**: each run writes its hyperparameters (:func:`run_hparams`: the same keys for every
  run of a task, so the tab can rank its variants) bound to its headline metrics, the task's
  leaderboard columns (``bench.columns`` of its YAML), each read from the run's own series as the
  leaderboard reads it and logged as ``hparams/<metric>`` at the final step.
* **Custom scalars**: one chart per headline series with every run of the task on it (runs are
  named ``<variant label>-<config hash>/seed<k>``, so the seeds of a variant sit together), plus
  the loss and the learning rate. Each run writes the same layout; TensorBoard merges them.
"""

from __future__ import annotations

import re
from dataclasses import fields, is_dataclass
from typing import Any

from torch.utils.tensorboard.summary import hparams

from normbench.io import Config
from normbench.nn.norms.base import NormSpecFields
from normbench.tasks.series import LEARNING_RATE, TRAIN_LOSS_STEP, MetricSpec, expand_metric_layers, series_value

HPARAM_PREFIX = "hparams/"
Scalar = bool | int | float | str


def _scalar(value: Any) -> Scalar:
    """A value TensorBoard's HParams plugin accepts (bool, number or text; ``None`` -> ``"none"``)."""
    if isinstance(value, (bool, int, float, str)):
        return value
    return "none" if value is None else str(value)


def _section(config: Config, name: str) -> Config:
    """The init arguments of section ``name`` (``model``, ``data``) of a resolved config (the section itself where it
    has none; ``{}`` where it is missing)."""
    part = config.get(name) or {}
    return part.get("init_args", part) if isinstance(part, dict) else {}


def norm_text(spec: NormSpecFields | None) -> str:
    """``both+affine``, ``dyt(alpha=0.5)``, or ``absent`` for a norm the placement leaves out."""
    if not spec:
        return "absent"
    options = ",".join(f"{k}={v}" for k, v in sorted((spec.get("options") or {}).items()))
    return f"{spec.get('component')}{f'({options})' if options else ''}{'+affine' if spec.get('affine') else ''}"


def run_hparams(
    config: Config,
    arch: Any,
    norm_names: list[str],
    variant: str,
    seed: Any,
    preset: str | None,
    config_hash: str,
) -> dict[str, Scalar]:
    """The hyperparameters of a run, flat, with the same keys for every run of a task.

    ``arch`` is the network's config dataclass; ``norm_names`` every norm slot of the task
    (``attn_norm``, ``ffn_norm``, ...), each shown as its effective spec or ``absent``.
    """
    out: dict[str, Scalar] = {
        "variant": variant,
        "seed": _scalar(seed),
        "preset": _scalar(preset),
        "config_hash": config_hash,
    }
    effective = arch.effective() if hasattr(arch, "effective") else {}
    if is_dataclass(arch):
        for f in fields(arch):
            value = getattr(arch, f.name)
            if f.name not in norm_names and (value is None or isinstance(value, (bool, int, float, str))):
                out[f"arch.{f.name}"] = _scalar(value)
    for name in norm_names:
        out[f"arch.{name}"] = norm_text(effective.get(name))
    model = _section(config, "model")
    for prefix, source in (("optim", model.get("optim") or {}), ("model", model)):
        for key, value in sorted(source.items()):
            if key not in ("arch", "optim") and not isinstance(value, (dict, list)):  # sections of their own
                out[f"{prefix}.{key}"] = _scalar(value)
    for key, value in sorted(_section(config, "data").items()):
        if not isinstance(value, (dict, list)) and not key.endswith("_dir"):  # where files lie is not a setting
            out[f"data.{key}"] = _scalar(value)
    trainer = config.get("trainer") or {}
    for key in ("max_steps", "max_epochs", "precision", "accumulate_grad_batches", "gradient_clip_val"):
        out[f"trainer.{key}"] = _scalar(trainer.get(key))
    return out


def headline_metrics(bench: Config, n_layers: int) -> dict[str, MetricSpec]:
    """The task's leaderboard columns (``bench.columns``, else every ``bench.metrics``) and their specs."""
    metrics = expand_metric_layers(bench.get("metrics") or {}, n_layers)
    columns = expand_metric_layers({c: {} for c in bench.get("columns") or metrics}, n_layers)
    return {name: metrics[name] for name in columns if name in metrics}


def metric_values(series: dict[str, list[list[float]]], metrics: dict[str, MetricSpec]) -> dict[str, float]:
    """Each headline metric of one run, read from its series as the leaderboard reads it (missing: left out)."""
    out = {}
    for name, spec in metrics.items():
        value, _ = series_value(series.get(spec["series"], []), spec)
        if value is not None:
            out[name] = value
    return out


def write_hparams(
    writer: Any, hparam_values: dict[str, Scalar], metrics: list[str], values: dict[str, float], step: int
) -> None:
    """HParams summaries of one run: its hyperparameters, the metric names every run of its task
    declares, and this run's values of them as ``hparams/<metric>`` scalars at ``step``."""
    tags = {f"{HPARAM_PREFIX}{m}": 0.0 for m in metrics}
    experiment, start, end = hparams(hparam_values, tags)
    file_writer = writer._get_file_writer()
    for summary in (experiment, start, end):
        file_writer.add_summary(summary)
    for name, value in values.items():
        writer.add_scalar(f"{HPARAM_PREFIX}{name}", value, step)
    writer.flush()


def scalars_layout(task: str, metrics: dict[str, MetricSpec]) -> dict[str, dict[str, list[Any]]]:
    """The custom-scalars layout of a task: a chart per headline series (every run on it), loss and learning rate."""
    charts: dict[str, list[Any]] = {}
    for series in dict.fromkeys([TRAIN_LOSS_STEP, *(spec["series"] for spec in metrics.values())]):
        charts[series] = ["Multiline", [f"^{re.escape(series)}$"]]
    charts["learning rate"] = ["Multiline", [f"^{LEARNING_RATE}(/pg\\d+)?$"]]
    return {f"{task}: every variant and seed": charts}


def write_layout(writer: Any, task: str, metrics: dict[str, MetricSpec]) -> None:
    """Add the task's custom-scalars layout to a run's event file."""
    writer.add_custom_scalars(scalars_layout(task, metrics))
    writer.flush()
