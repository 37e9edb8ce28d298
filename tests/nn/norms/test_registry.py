"""One registry of component classes: the built-ins in their order, plug-ins written either way, by name, by import
path or by entry point."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
import torch
import torch.nn.functional as F
from torch import nn

from normbench.nn.majority import MajorityConfig, MajorityEncoder
from normbench.nn.norms import (
    COMPONENTS,
    Norm,
    NormSpec,
    NotShiftAndScale,
    component_names,
    get_component,
    register_component,
)
from normbench.nn.norms import registry as norm_registry
from tests.nn.norms.facts import FACTS

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"


@pytest.fixture
def registry(monkeypatch: pytest.MonkeyPatch) -> None:
    """Components registered by a test are forgotten after it."""
    monkeypatch.setattr(norm_registry._COMPONENTS, "entries", dict(norm_registry._COMPONENTS.entries))


def test_the_built_ins_are_the_registered_classes_in_order() -> None:
    assert COMPONENTS == tuple(FACTS)
    assert component_names()[: len(COMPONENTS)] == COMPONENTS
    for name, (cls_name, *_) in FACTS.items():
        cls = get_component(name)
        assert issubclass(cls, Norm) and cls.__name__ == cls_name and cls.name == name


class Cube(Norm):
    """A plug-in written as the built-ins are: N(x) = c x^3, option c."""

    name = "cube"

    def __init__(self, d: int, *, eps: float = 1e-5, affine: bool = True, c: float = 1.0) -> None:
        super().__init__(d, eps=eps, affine=affine, c=c)
        self.c = c

    @classmethod
    def check_options(cls, options, d=None) -> None:  # noqa: ANN001
        super().check_options(options, d)
        if options.get("c", 1.0) == 0:
            raise ValueError("options.c: must not be 0")

    def normalize(self, x: torch.Tensor) -> torch.Tensor:
        return self.c * x**3


class Doubling(nn.Module):
    """A plug-in written without normbench: N(x) = factor x, any constructor taking d."""

    def __init__(self, d: int, factor: float = 2.0) -> None:
        super().__init__()
        self.scale = nn.Parameter(torch.full((d,), float(factor)))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * self.scale


@pytest.mark.usefixtures("registry")
def test_a_plugin_class_registers_and_is_used_as_it_is() -> None:
    assert register_component(Cube) is Cube and get_component("cube") is Cube and "cube" in component_names()
    assert dict(Cube.options) == {"c": 1.0} and Cube.shift_and_scale is None
    spec = NormSpec("cube", affine=True, options={"c": 2})
    model = MajorityEncoder(MajorityConfig(attn_norm=spec))
    norm = model.blocks[0].attn_norm
    assert type(norm) is Cube and norm.spec is spec
    assert list(norm.state_dict()) == ["weight", "bias"]
    x = torch.randn(2, 3, 8)
    assert torch.equal(norm(x), torch.addcmul(norm.bias, 2 * x**3, norm.weight))
    assert spec.canonical() == NormSpec("cube", True, 0.0, {"c": 2.0})
    assert NormSpec("cube", options={"c": 1}).canonical().options is None  # the default names the same map
    with pytest.raises(ValueError, match=r"^model.arch.attn_norm.options.c: must not be 0$"):
        MajorityConfig(attn_norm=NormSpec("cube", options={"c": 0}))
    with pytest.raises(
        ValueError, match=r"^model.arch.attn_norm.options: 'k' not allowed for component cube; allowed: c$"
    ):
        MajorityConfig(attn_norm=NormSpec("cube", options={"k": 0}))


@pytest.mark.usefixtures("registry")
def test_a_plugin_class_by_import_path_or_under_another_name() -> None:
    path = f"{__name__}:Cube"
    assert get_component(path).name == path and issubclass(get_component(path), Cube)
    assert type(Norm(4, NormSpec(path))).name == path
    class_path = f"{__name__}:Halving"
    assert get_component(class_path) is Halving  # its default name is its import path


class Halving(Norm):
    """N(x) = x / 2, named by its import path."""

    def normalize(self, x: torch.Tensor) -> torch.Tensor:
        return x / 2


@pytest.mark.usefixtures("registry")
def test_an_nn_module_class_is_wrapped_as_before() -> None:
    path = f"{__name__}:Doubling"
    cls = get_component(path)
    assert issubclass(cls, Norm) and cls.name == path and cls.module is Doubling
    assert cls.shift_and_scale is None and dict(cls.options) == {}
    spec = NormSpec(path, affine=True, eps=1e-5, options={"factor": 3})
    norm = Norm(8, spec)
    assert list(norm.state_dict()) == ["weight", "bias", "plugin.scale"]
    x = torch.randn(2, 8)
    with torch.no_grad():
        norm.weight.uniform_(0.5, 2.0)
    assert torch.equal(norm(x), torch.addcmul(norm.bias, x * norm.plugin.scale, norm.weight))
    assert spec.canonical() == NormSpec(path, True, 0.0, {"factor": 3})  # kept as given, eps unused
    with pytest.raises(NotShiftAndScale):
        norm.shift_and_scale(x)
    with pytest.raises(ValueError, match=r"must accept \(d, \*\*options\) with options \{'q': 1\}"):
        NormSpec(path, options={"q": 1}).check()
    assert register_component(Doubling, "doubling").module is Doubling


def test_entry_points_name_classes_of_either_kind() -> None:
    assert norm_registry._plugin_entry("cube", Cube) is Cube
    renamed = norm_registry._plugin_entry("cubic", Cube)
    assert issubclass(renamed, Cube) and renamed.name == "cubic" and renamed.options == Cube.options
    assert norm_registry._plugin_entry("doubling", Doubling).module is Doubling
    with pytest.raises(TypeError, match="entry point 'f' of normbench.norms: .* is neither a normbench Norm class"):
        norm_registry._plugin_entry("f", len)


def test_the_example_plugin_is_a_norm_class(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(str(EXAMPLES))
    from pnorm_example import PNorm

    assert get_component("pnorm_example:PNorm") is PNorm and dict(PNorm.options) == {"p": 4.0}
    x = torch.randn(3, 5, 8, dtype=torch.float64)
    rms = Norm(8, NormSpec("pnorm_example:PNorm", affine=False, eps=1e-5, options={"p": 2})).double()
    torch.testing.assert_close(rms(x), F.rms_norm(x, (8,), eps=1e-5))  # p = 2 is RMSNorm
    p4 = PNorm(8, eps=0.0, affine=False).double()
    torch.testing.assert_close(p4(x).abs().pow(4).sum(-1), torch.full((3, 5), 8.0, dtype=torch.float64))
    with pytest.raises(ValueError, match=r"^options.p: must be >= 1, got 0.5$"):
        NormSpec("pnorm_example:PNorm", options={"p": 0.5}).check()
    assert math.isclose(NormSpec("pnorm_example:PNorm", options={"p": 3}).canonical().options["p"], 3.0)


def test_the_allowed_names_stay_names_after_an_import_path_was_used() -> None:
    """An import path used earlier in the process is registered under that path, but the message for a bad
    name lists the registered names only (import paths are allowed by the message's last clause)."""
    get_component("tests.nn.norms.test_registry:nn.Identity")
    with pytest.raises(ValueError) as err:
        get_component("layer")
    named = str(err.value).split("choose one of ")[1].split(", or an import path")[0]
    assert ":" not in named and named.startswith("both, project, scale, none")
