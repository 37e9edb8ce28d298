"""What TensorBoard shows of a run, beyond its scalars: the HParams tab and the custom-scalars layout.

* **HParams**: each run writes its hyperparameters (:func:`run_hparams`: the same keys for every
  run of a task, so the tab can rank its variants; no seed, so a variant's seeds form one session group whose
  metrics the tab shows as their mean) bound to its headline metrics, the task's
  leaderboard columns (``bench.columns`` of its YAML), each read from the run's own series as the
  leaderboard reads it and logged as ``hparams/<metric>`` at the final step.
* **Custom scalars**: one chart per headline series with every run of the task on it (runs are
  named ``<variant label>-<config hash>/seed<k>``, so the seeds of a variant sit together), plus
  the loss and the learning rate. Each run writes the same layout; TensorBoard merges them.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Sequence
from dataclasses import fields, is_dataclass
from typing import Any

from tensorboard.plugins.hparams.plugin_data_pb2 import HParamsPluginData
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
    preset: str | None,
    config_hash: str,
) -> dict[str, Scalar]:
    """The hyperparameters of a run, flat, with the same keys for every run of a task: the variant and its norms
    first (the columns the HParams tab shows first), then the preset, the config hash and every other setting.

    ``arch`` is the network's config dataclass; ``norm_names`` every norm slot of the task
    (``attn_norm``, ``ffn_norm``, ...), each shown as its effective spec or ``absent``. The seed is not a
    hyperparameter: the seeds of a variant have the same values, so the tab groups them into one session group and
    shows their mean (each seed is a session of it, named ``.../seed<k>``).
    """
    effective = arch.effective() if hasattr(arch, "effective") else {}
    out: dict[str, Scalar] = {"variant": variant}
    for name in norm_names:
        out[f"arch.{name}"] = norm_text(effective.get(name))
    out.update({"preset": _scalar(preset), "config_hash": config_hash})
    if is_dataclass(arch):
        for f in fields(arch):
            value = getattr(arch, f.name)
            if f.name not in norm_names and (value is None or isinstance(value, (bool, int, float, str))):
                out[f"arch.{f.name}"] = _scalar(value)
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


def session_group(hparam_values: dict[str, Scalar]) -> str:
    """The HParams session group of a run: the hash of its hyperparameters, so runs that differ only in their seed
    are one group (TensorBoard otherwise makes each session a group of its own and shows no mean)."""
    text = json.dumps(hparam_values, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def ablation_axes(norm_names: list[str]) -> list[str]:
    """The hyperparameters a norm ablation varies: the variant and each norm slot (``arch.<slot>``)."""
    return ["variant", *(f"arch.{name}" for name in norm_names)]


def write_hparams(
    writer: Any,
    hparam_values: dict[str, Scalar],
    metrics: list[str],
    values: dict[str, float],
    step: int,
    axes: Sequence[str] = (),
) -> None:
    """HParams summaries of one run: its hyperparameters, the metric names every run of its task
    declares, and this run's values of them as ``hparams/<metric>`` scalars at ``step``.

    ``axes`` (:func:`ablation_axes`) are declared as the hyperparameters that differ between runs: TensorBoard lists
    those first (then the rest by name), so the tab opens on the variant and its norms, not on constants."""
    tags = {f"{HPARAM_PREFIX}{m}": 0.0 for m in metrics}
    experiment, start, end = hparams(hparam_values, tags)
    declared = experiment.value[0].metadata.plugin_data
    described = HParamsPluginData.FromString(declared.content)
    for info in described.experiment.hparam_infos:
        info.differs = info.name in axes
    declared.content = described.SerializeToString()
    plugin = start.value[0].metadata.plugin_data  # the session's start: named into its group
    data = HParamsPluginData.FromString(plugin.content)
    data.session_start_info.group_name = session_group(hparam_values)
    plugin.content = data.SerializeToString()
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
