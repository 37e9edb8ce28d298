"""The norm probe: projection, scaling and output norm measured, broken norms named, speed against F.layer_norm."""

from __future__ import annotations

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import nn

from normbench.cards.probe import NormFacts, inputs, probe


class NaNNorm(nn.Module):
    """Returns NaN wherever the input's first feature is negative."""

    def __init__(self, d: int) -> None:
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.where(x[..., :1] < 0, torch.nan, x)


class HalfNorm(nn.Module):
    """Drops half the features."""

    def __init__(self, d: int) -> None:
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x[..., : x.shape[-1] // 2]


class _FailingBackward(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x: torch.Tensor) -> torch.Tensor:  # noqa: ANN001
        return x.clone()

    @staticmethod
    def backward(ctx, grad: torch.Tensor) -> torch.Tensor:  # noqa: ANN001
        raise RuntimeError("no gradient here")


class BackwardRaisingNorm(nn.Module):
    """A forward that works and a backward that raises."""

    def __init__(self, d: int) -> None:
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return _FailingBackward.apply(x)


class RaisingNorm(nn.Module):
    def __init__(self, d: int) -> None:
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        raise RuntimeError("not today")


@pytest.mark.parametrize(
    ("component", "projects", "scales", "output_norm"),
    [
        ("both", True, True, 1.0),
        ("scale", False, True, 1.0),
        ("paper_no_projection", False, True, 1 / 8),
        ("project", True, False, None),
        ("none", False, False, None),
        ("dyt", False, False, None),
        ("scalenorm", False, True, 1.0),
    ],
)
def test_the_facts_are_measured_and_agree_with_the_declared_ones(component, projects, scales, output_norm) -> None:
    facts = probe(component, 8, timing=False)
    assert facts.problem is None and (facts.projects, facts.scales) == (projects, scales)
    assert facts.declared == {"projects": projects, "scales": scales}
    if output_norm is not None:
        assert facts.output_norm == pytest.approx(output_norm, rel=1e-6)  # float32 parameters (ScaleNorm g)


def test_a_plug_in_is_measured_as_it_behaves_not_as_it_declares() -> None:
    """The example p-norm (p = 4) puts its outputs on a p-sphere: not one Euclidean norm, no projection."""
    facts = probe("examples.pnorm_example:PNorm", 16, timing=False)
    assert facts.problem is None and facts.projects is False and facts.scales is False
    assert probe("examples.pnorm_example:PNorm", 16, {"p": 2.0}, timing=False).scales is True  # p = 2: RMSNorm


@pytest.mark.parametrize(
    ("name", "problem"),
    [
        ("NaNNorm", r"^returns values that are not finite for \d+ of 512 inputs$"),
        ("HalfNorm", r"^changes the shape: \(512, 8\) -> \(512, 4\)$"),
        ("RaisingNorm", r"^raises RuntimeError: not today$"),
        ("BackwardRaisingNorm", r"^raises RuntimeError in float32 forward \+ backward: no gradient here$"),
    ],
)
def test_a_broken_norm_is_named_with_what_is_wrong(name: str, problem: str) -> None:
    facts = probe(f"tests.cards.test_probe:{name}", 8, timing=False)
    assert facts.problem is not None and __import__("re").match(problem, facts.problem)
    assert facts.projects is None and facts.speed_ratio is None


def test_a_norm_that_cannot_be_imported_is_one_line() -> None:
    with pytest.raises(ValueError, match=r"^component: cannot import 'nowhere.at_all:Norm' \(ModuleNotFoundError"):
        probe("nowhere.at_all:Norm", 8)


def test_the_speed_is_the_median_ratio_to_layer_norm_over_alternating_rounds() -> None:
    import statistics

    from normbench.cards.probe import ROUNDS
    from normbench.cards.render import speed_text

    facts = probe("both", 8)
    assert facts.forward_backward_s > 0 and facts.layer_norm_s > 0
    assert facts.round_ratios is not None and len(facts.round_ratios) == ROUNDS
    assert facts.speed_ratio == statistics.median(facts.round_ratios)
    assert min(facts.round_ratios) <= facts.speed_ratio <= max(facts.round_ratios)
    assert facts.to_json()["speed_ratio"] == facts.speed_ratio
    assert speed_text(facts).endswith(f"over {ROUNDS} rounds)")
    kept = NormFacts("both", 8, forward_backward_s=2.0, layer_norm_s=1.6)  # a card measured before the rounds
    assert kept.speed_ratio == 1.25 and speed_text(kept) == "1.25x"


@settings(max_examples=20, deadline=None)
@given(d=st.integers(2, 64), seed=st.integers(0, 2**16))
def test_layernorm_outputs_project_and_scale_for_any_width_and_inputs(d: int, seed: int) -> None:
    """The probe's inputs span every mean and scale; LayerNorm (eps = 0) maps each onto the sphere of radius sqrt(d)
    in the hyperplane orthogonal to 1."""
    x = inputs(d, 64, seed)
    y = torch.nn.functional.layer_norm(x, (d,), eps=0.0)
    assert torch.allclose(y.mean(-1), torch.zeros(64, dtype=torch.float64), atol=1e-9)
    assert torch.allclose(y.norm(dim=-1), torch.full((64,), d**0.5, dtype=torch.float64), rtol=1e-9)


def test_the_facts_json_is_every_field_in_order_then_the_speed_ratio() -> None:
    import dataclasses

    facts = NormFacts("both", 8, projects=True, declared={"projects": True, "scales": False}, round_ratios=(1.0, 2.0))
    doc = facts.to_json()
    assert list(doc) == [f.name for f in dataclasses.fields(NormFacts)] + ["speed_ratio"]
    assert doc == {**dataclasses.asdict(facts), "speed_ratio": 1.5}
