"""A norm's own facts, measured rather than declared: does it project, does it scale, its output norm, its speed.

A component declares ``projects`` and ``scales`` (:class:`normbench.nn.norms.Norm`); a norm from elsewhere may
declare nothing, or the wrong thing. :func:`probe` builds it without its affine map at width ``d`` and feeds a copy
in evaluation mode (the map as built: a norm with state, such as a step count, keeps it) inputs x = a (z + m 1),
z ~ N(0, I_d), m ~ N(0, 3^2), a log-uniform in [1e-2, 1e2] (keys with every mean and scale a trained network
gives), in float64:

* **projects**: every output is orthogonal to the ones vector, max_x |mean_j N(x)_j| / rms(N(x)) <= 1e-6;
* **scales**: every output has the same Euclidean norm, (max - min) / mean of ||N(x)|| <= 1e-6;
* **output norm**: the mean of ||N(x)|| / sqrt(d) (1 for LayerNorm and RMSNorm, 1/d for the paper's
  ``F.normalize(x) / sqrt(d)``).

A norm that raises, changes the shape or returns a value that is not finite on these inputs is *broken*:
:attr:`NormFacts.problem` says how, and nothing else is measured. Speed: forward + backward of the norm against
``F.layer_norm`` on the same float32 input, in training mode, timed in alternating rounds
(``torch.utils.benchmark``, one process); the ratio is the median of the rounds' ratios, so that the machine, and a
load that changes while it is measured, cancel out, and the rounds' spread is kept beside it.
"""

from __future__ import annotations

import copy
import math
import statistics
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any, TypedDict

import torch
import torch.nn.functional as F

from normbench.cards.protocol import OptionValue
from normbench.nn.norms import NormSpec, create_norm, get_component
from normbench.nn.norms.plugin import PLUGIN_FAILURES
from normbench.training.config import load_config

if TYPE_CHECKING:
    from normbench.sweep.baking.queue import QueueItem as SweepItem

WIDTHS = (8, 768)  # the majority model's width and GPT-2's
TOLERANCE = 1e-6
SAMPLES = 512
TIMING_ROWS = {8: 65_536, 768: 1024}  # about 2-3 MB a tensor, as the norm speed benchmark
ROUNDS = 7  # alternating timing rounds of the norm and F.layer_norm


class NormFactsJson(TypedDict):
    """:class:`NormFacts` as a card stores it (``card.json``: ``facts[d]``, :meth:`NormFacts.to_json`): its fields in
    their order (``round_ratios`` a list in the file), then ``speed_ratio`` (:attr:`NormFacts.speed_ratio`)."""

    component: str
    d: int
    problem: str | None
    projects: bool | None
    scales: bool | None
    output_norm: float | None
    declared: dict[str, bool] | None
    forward_backward_s: float | None
    layer_norm_s: float | None
    round_ratios: tuple[float, ...] | None
    speed_ratio: float | None


@dataclass(frozen=True)
class NormFacts:
    """What :func:`probe` measured of one norm at width ``d`` (``problem``: why it is broken, else ``None``)."""

    component: str
    d: int
    problem: str | None = None
    projects: bool | None = None
    scales: bool | None = None
    output_norm: float | None = None  # mean ||N(x)|| / sqrt(d)
    declared: dict[str, bool] | None = None  # what the class says (projects, scales)
    forward_backward_s: float | None = None
    layer_norm_s: float | None = None
    round_ratios: tuple[float, ...] | None = None  # each timing round's forward + backward time over F.layer_norm's

    @property
    def speed_ratio(self) -> float | None:
        """Forward + backward time over ``F.layer_norm``'s: the median of the rounds' ratios (``None`` where not
        timed; the ratio of the two medians for facts that kept no rounds)."""
        if self.round_ratios:
            return statistics.median(self.round_ratios)
        if self.forward_backward_s is None or not self.layer_norm_s:
            return None
        return self.forward_backward_s / self.layer_norm_s

    def to_json(self) -> NormFactsJson:
        return {
            "component": self.component,
            "d": self.d,
            "problem": self.problem,
            "projects": self.projects,
            "scales": self.scales,
            "output_norm": self.output_norm,
            "declared": None if self.declared is None else dict(self.declared),
            "forward_backward_s": self.forward_backward_s,
            "layer_norm_s": self.layer_norm_s,
            "round_ratios": self.round_ratios,
            "speed_ratio": self.speed_ratio,
        }


def inputs(d: int, samples: int = SAMPLES, seed: int = 0) -> torch.Tensor:
    """``samples`` inputs a (z + m 1) in float64 (see the module docstring), from their own generator."""
    cpu = torch.device("cpu")  # the probe runs on the CPU, whatever the default device
    gen = torch.Generator(device=cpu).manual_seed(seed)
    z = torch.randn(samples, d, generator=gen, dtype=torch.float64, device=cpu)
    m = 3.0 * torch.randn(samples, 1, generator=gen, dtype=torch.float64, device=cpu)
    a = torch.exp(
        torch.empty(samples, 1, dtype=torch.float64, device=cpu).uniform_(math.log(1e-2), math.log(1e2), generator=gen)
    )
    return a * (z + m)


def probe(component: str, d: int, options: dict[str, OptionValue] | None = None, *, timing: bool = True) -> NormFacts:
    """The measured facts of ``component`` at width ``d`` (its ``options``); a norm that cannot be imported or built
    is a one-line ``ValueError``, one that runs but misbehaves a :class:`NormFacts` with its ``problem``."""
    cls = get_component(component)
    declared = {"projects": bool(cls.projects), "scales": bool(cls.scales)}
    eps = 0.0 if cls.uses_eps else 1e-5  # eps = 0: the map itself, as the facts are stated
    built = create_norm(d, NormSpec(component, affine=False, eps=eps, options=options)).to("cpu", torch.float64)
    norm = copy.deepcopy(built).eval()  # the map as built: a norm with state (steps, running statistics) keeps it
    x = inputs(d)
    try:
        with torch.no_grad():
            y = norm(x)
    except PLUGIN_FAILURES as exc:  # a norm that raises (or exits) is reported, not propagated
        return NormFacts(component, d, f"raises {type(exc).__name__}: {exc}".splitlines()[0], declared=declared)
    if not isinstance(y, torch.Tensor) or tuple(y.shape) != tuple(x.shape):
        shape = tuple(y.shape) if isinstance(y, torch.Tensor) else type(y).__name__
        return NormFacts(component, d, f"changes the shape: {tuple(x.shape)} -> {shape}", declared=declared)
    bad = int((~torch.isfinite(y)).any(dim=-1).sum())
    if bad:
        return NormFacts(
            component, d, f"returns values that are not finite for {bad} of {len(x)} inputs", declared=declared
        )
    try:  # the float32 forward + backward that training (and the timing) runs
        x32 = x[:64].float().requires_grad_()
        copy.deepcopy(built).float()(x32).sum().backward()
    except PLUGIN_FAILURES as exc:  # a norm that raises (or exits) is reported, not propagated
        why = f"raises {type(exc).__name__} in float32 forward + backward: {exc}".splitlines()[0]
        return NormFacts(component, d, why, declared=declared)
    rms = y.pow(2).mean(dim=-1).sqrt().clamp_min(torch.finfo(torch.float64).tiny)
    norms = y.norm(dim=-1)
    projects = bool((y.mean(dim=-1).abs() / rms).max() <= TOLERANCE)
    scales = bool((norms.max() - norms.min()) / norms.mean().clamp_min(torch.finfo(torch.float64).tiny) <= TOLERANCE)
    facts = NormFacts(
        component,
        d,
        projects=projects,
        scales=scales,
        output_norm=float(norms.mean() / math.sqrt(d)),
        declared=declared,
    )
    if not timing:
        return facts
    ours, reference = forward_backward_times(built.float(), d)  # in training mode, as training runs it
    return NormFacts(
        **{
            **asdict(facts),
            "forward_backward_s": statistics.median(ours),
            "layer_norm_s": statistics.median(reference),
            "round_ratios": tuple(a / b for a, b in zip(ours, reference, strict=True)),
        }
    )


def forward_backward_times(
    norm: torch.nn.Module, d: int, rounds: int = ROUNDS, min_run_time: float = 0.03
) -> tuple[list[float], list[float]]:
    """Per round, the median seconds of one forward + backward of ``norm`` and then of ``F.layer_norm`` on the same
    float32 input (rounds alternate the two, so that both see the same load)."""
    from torch.utils import benchmark  # imports torch.utils.cpp_extension, which may warn: only when timing

    x = torch.randn(TIMING_ROWS.get(d, 4096), d, requires_grad=True, device=torch.device("cpu"))
    grad = torch.ones_like(x)

    def step(fn: Any) -> None:
        x.grad = None
        fn(x).backward(grad)

    timers = [
        benchmark.Timer(stmt="step(fn)", globals={"step": step, "fn": fn})
        for fn in (norm, lambda t: F.layer_norm(t, (d,)))
    ]
    ours, reference = [], []
    for _ in range(rounds):
        ours.append(float(timers[0].blocked_autorange(min_run_time=min_run_time).median))
        reference.append(float(timers[1].blocked_autorange(min_run_time=min_run_time).median))
    return ours, reference


def probe_lines(facts: Mapping[int, NormFacts]) -> list[str]:
    """What the probe found, one line per width: projects, scales, output norm, speed against ``F.layer_norm``."""

    def yes(value: bool | None) -> str:
        return "?" if value is None else "yes" if value else "no"

    lines = []
    for d, f in sorted(facts.items()):
        if f.problem:
            lines.append(f"probe at d = {d}: broken ({f.problem})")
            continue
        speed = f", forward + backward {f.speed_ratio:.2f}x F.layer_norm's" if f.speed_ratio is not None else ""
        norm = f", output norm / sqrt(d) {f.output_norm:.3g}" if f.output_norm is not None else ""
        lines.append(f"probe at d = {d}: projects {yes(f.projects)}, scales {yes(f.scales)}{norm}{speed}")
    return lines


def speed_scale(facts: Mapping[int, NormFacts], variants: set[str]) -> Callable[[SweepItem, str], float]:
    """The dry run's factor on the time of a run of the card's own variants (``variants``): the norm's forward +
    backward time over LayerNorm's at the probed width nearest the item's ``d_model`` (1 for the baselines, and where
    the norm was not timed)."""

    widths: dict[tuple[str, str], int] = {}  # (config, preset) -> d_model, each config read once

    def scale(item: SweepItem, variant: str) -> float:
        if variant.split(",")[0] not in variants:
            return 1.0
        if (item.config_arg, item.preset) not in widths:
            config = load_config(item.config_arg, item.preset)
            arch = ((config.get("model") or {}).get("init_args") or {}).get("arch")
            widths[item.config_arg, item.preset] = int((arch or {}).get("d_model") or WIDTHS[0])
        d_model = widths[item.config_arg, item.preset]
        nearest = min(facts, key=lambda d: abs(d - d_model))
        return facts[nearest].speed_ratio or 1.0

    return scale
