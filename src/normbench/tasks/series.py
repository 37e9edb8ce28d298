"""The metric series a run logs, named once.

Every series a task logs (``self.log(name, ...)``), the monitor logs (``geometry/...``) or the
decomposition adds to a record (``decomposition/...``) is named here. Per-layer series are
templates with ``{layer}`` (1-based), expanded with the network's ``n_layers``. Leaderboard
metrics (``bench.metrics`` in a task YAML) must read one of these names; a test trains every task
for a few steps and checks that each leaderboard column and claim metric is logged.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal, TypedDict, cast

TRAIN_LOSS_STEP = "train/loss_step"
TRAIN_LOSS_EPOCH = "train/loss_epoch"
TRAIN_ACC = "train/acc"
TRAIN_PPL = "train/ppl"
LEARNING_RATE = (
    "lr"  # Lightning's LearningRateMonitor, per step (lr/pg1, lr/pg2 when weight decay splits the parameters)
)
VAL_LOSS, VAL_ACC, VAL_F1, VAL_PPL = "val/loss", "val/acc", "val/f1", "val/ppl"
TEST_LOSS, TEST_ACC, TEST_QUERY_ANGLE = "test/loss", "test/acc", "test/query_angle"
ANALYSIS_SEQUENCES = "analysis/sequences"
ANALYSIS_UNSELECTABLE = "analysis/unselectable/L{layer}"
ANALYSIS_UNSELECTABLE_BEFORE = "analysis/unselectable_before/L{layer}"
ANALYSIS_UNSELECTABLE_AFTER = "analysis/unselectable_after/L{layer}"
ANALYSIS_UNSELECTABLE_TOKENS = "analysis/unselectable_tokens"
# the per-head key-space view: unselectable keys among each head's keys x W_k^T (after QK-norm), over heads
ANALYSIS_UNSELECTABLE_HEADS = "analysis/unselectable_heads/L{layer}"
# the key-set analysis (normbench.run_analyses.key_sets): the first {keys} keys of each held-out sequence,
# {where} = before | after the attention norm
ANALYSIS_KEY_SET = "analysis/keys{keys}/unselectable_{where}/L{layer}"
# the class-key analysis (normbench.run_analyses.class_keys): unselectable vocabulary keys at layer 1's attention input
ANALYSIS_CLASS_KEYS = "analysis/class_keys/unselectable"
ANALYSIS_CLASS_KEYS_HEADS = "analysis/class_keys/unselectable_heads"  # the same, per head in key space

# the monitor (normbench.training.monitoring.monitor), per hook point (e.g. L1.attn_norm, final_norm)
NORM_INPUT_MEAN = "geometry/{point}/input_mean"
NORM_INPUT_STD = "geometry/{point}/input_std"
NORMAL_ANGLE_TO_ONES = "geometry/{point}/normal_angle_to_ones"
NORM_SCALAR = "geometry/{point}/{parameter}"  # a component's own learned scalar (dyt: alpha, scalenorm: g)
QK_TEMPERATURE = "geometry/{point}/qk_temperature"  # QK-norm's learned temperature, mean over heads
UNSELECTABLE_KEYS = "geometry/L{layer}/unselectable"
QUERY_ANGLE_HISTOGRAM = "geometry/L{layer}/query_angle"  # TensorBoard histogram only

# the decomposition (normbench.run_analyses.decomposition), per layer (embed, L1..Ln, final, output)
DECOMPOSITION = "decomposition/{layer}/{term}"


def layer_series(template: str, layer: int) -> str:
    """``analysis/unselectable_after/L{layer}`` -> ``analysis/unselectable_after/L3`` (layers count from 1)."""
    return template.format(layer=layer)


def expand_layers(templates: Iterable[str], n_layers: int) -> list[str]:
    """Each template once if it has no ``{layer}``, else once per layer 1..n_layers."""
    out = []
    for t in templates:
        out += [layer_series(t, i) for i in range(1, n_layers + 1)] if "{layer}" in t else [t]
    return out


@dataclass(frozen=True)
class TaskSeries:
    """What a task module logs itself: fixed names and per-layer templates (``{layer}``)."""

    names: tuple[str, ...]

    def expand(self, n_layers: int) -> list[str]:
        return expand_layers(self.names, n_layers)


def monitor_series(norm_points: Iterable[str], n_layers: int) -> list[str]:
    """The scalar series the monitor may log for a network with these norm hook points."""
    out = []
    for point in norm_points:
        out += [t.format(point=point) for t in (NORM_INPUT_MEAN, NORM_INPUT_STD, NORMAL_ANGLE_TO_ONES)]
    return out + expand_layers([UNSELECTABLE_KEYS], n_layers)


def decomposition_series(n_layers: int, terms: Iterable[str] = ("i", "h", "f", "c")) -> list[str]:
    """The ``decomposition/<layer>/<term>`` series a decomposed run's record gains."""
    layers = ["embed", *(f"L{i}" for i in range(1, n_layers + 1)), "final", "output"]
    return [DECOMPOSITION.format(layer=layer, term=t) for layer in layers for t in terms]


def decomposition_as_series(decomposition: Mapping[str, Any], step: int) -> dict[str, list[list[float]]]:
    """A run's ``decomposition.json`` as one-point series at ``step``: ``decomposition/<layer>/<term>``, and
    ``decomposition/output/<term>`` for its output layer."""
    out = {}
    for layer, shares in decomposition["layers"].items():
        for term, value in shares.items():
            out[DECOMPOSITION.format(layer=layer, term=term)] = [[step, value]]
    for term, value in decomposition["layers"][decomposition["output_layer"]].items():
        out[DECOMPOSITION.format(layer="output", term=term)] = [[step, value]]
    return out


class MetricSpec(TypedDict, total=False):
    """A leaderboard metric (``bench.metrics.<name>`` of a task YAML; see the module docstring of
    :mod:`normbench.boards.build`): the ``series`` it reads, and how: its value ``at_step`` (a step, or ``last``), or
    the step it is ``first_below`` a threshold, over a trailing mean of ``smooth`` logged points."""

    series: str
    at_step: int | Literal["last"]
    first_below: float
    smooth: int


def expand_metric_layers(metrics: Mapping[str, MetricSpec], n_layers: int) -> dict[str, MetricSpec]:
    """Metrics whose name holds ``{layer}`` become one metric per layer 1..n_layers (in name and series)."""
    out: dict[str, MetricSpec] = {}
    for name, spec in metrics.items():
        if "{layer}" not in name:
            out[name] = spec
            continue
        for layer in range(1, n_layers + 1):
            out[name.format(layer=layer)] = cast(
                MetricSpec, {k: v.format(layer=layer) if isinstance(v, str) else v for k, v in spec.items()}
            )
    return out


def finite_or_none(value: float | None) -> float | None:
    """``value`` if it is a finite number, else ``None`` (a record's ``null``: NaN or ±inf when logged)."""
    return None if value is None or not math.isfinite(value) else value


def smooth(points: list[list[float | None]], window: int) -> list[list[float | None]]:
    """Trailing moving average over ``window`` logged points, m_i = (1/w) Σ_{j>i-w} v_j (the step stays
    the last one's); ``None`` wherever a value in the window is not finite."""
    if window <= 1 or not points:
        return points
    values = [finite_or_none(v) for _, v in points]
    out, total, missing = [], 0.0, 0
    for i, (step, _) in enumerate(points):
        v, old = values[i], (values[i - window] if i >= window else 0.0)
        missing += (v is None) - (i >= window and old is None)
        total += (0.0 if v is None else v) - (0.0 if old is None else old)
        out.append([step, None if missing else total / min(i + 1, window)])
    return out


def series_value(points: list[list[float]], spec: MetricSpec) -> tuple[float | None, float | None]:
    """(value, lower_bound) of one run's series under a metric spec; see the module docstring.

    A value that is not finite (``null`` in a record, NaN or ±inf in an old one) reads as ``None``.
    """
    points = smooth(points, int(spec.get("smooth", 1)))
    if not points:
        return None, None
    if "first_below" in spec:
        hit = next((step for step, v in points if finite_or_none(v) is not None and v <= spec["first_below"]), None)
        return (float(hit), None) if hit is not None else (None, float(points[-1][0]))
    at = spec.get("at_step", "last")
    if at == "last":
        return finite_float(points[-1][1]), None
    if points[-1][0] < at:
        return None, None
    before = [v for step, v in points if step <= at]
    return (finite_float(before[-1]) if before else None), None


def finite_float(value: float | None) -> float | None:
    """``float(value)`` when finite, else ``None``."""
    value = finite_or_none(value)
    return None if value is None else float(value)


# the series the analyses of a run's final checkpoint add (their prefixes)
FROM_CHECKPOINT = tuple(
    p.split("{")[0] for p in (DECOMPOSITION, ANALYSIS_KEY_SET, ANALYSIS_CLASS_KEYS, ANALYSIS_UNSELECTABLE_HEADS)
)
