"""Norm components as classes: one signature, one registry, plug-ins written either way."""

from __future__ import annotations

import inspect
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
    create_norm,
    get_component,
    register_component,
)
from normbench.nn.norms import registry as norm_registry

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"

# name: (class, projects, scales, uses_eps, identity, learned_direction, shift-and-scale form, options)
FACTS = {
    "both": ("LayerNorm", True, True, True, False, False, True, {}),
    "project": ("Projection", True, False, False, False, False, True, {}),
    "scale": ("RMSNorm", False, True, True, False, False, True, {}),
    "none": ("NoNorm", False, False, False, True, False, True, {}),
    "paper_no_projection": ("PaperNoProjection", False, True, False, False, False, True, {}),
    "learned": ("LearnedNorm", True, True, True, False, True, True, {}),
    "scalenorm": ("ScaleNorm", False, True, True, False, False, True, {"g": None}),
    "dyt": ("DyT", False, False, False, False, False, False, {"alpha": 0.5}),
}
# the state-dict keys of each component with the affine map (without it: the same less weight and bias)
OWN_KEYS = {"learned": ["direction"], "scalenorm": ["g"], "dyt": ["alpha"]}


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


@pytest.mark.parametrize("name", list(FACTS))
def test_every_built_in_has_the_one_signature_and_its_facts(name: str) -> None:
    cls = get_component(name)
    _, projects, scales, uses_eps, identity, learned, form, options = FACTS[name]
    params = [p for p in inspect.signature(cls).parameters.values() if p.kind is not p.VAR_KEYWORD]
    assert [p.name for p in params] == ["d", "eps", "affine", *options]
    assert params[0].kind is params[0].POSITIONAL_OR_KEYWORD and all(p.kind is p.KEYWORD_ONLY for p in params[1:])
    assert [p.default for p in params[1:]] == [1e-5, True, *options.values()]
    assert (cls.projects, cls.scales, cls.uses_eps, cls.identity, cls.learned_direction) == (
        projects,
        scales,
        uses_eps,
        identity,
        learned,
    )
    assert dict(cls.options) == options
    assert (cls.shift_and_scale is not None) == form
    assert cls.own_parameters == tuple(k for k in OWN_KEYS.get(name, []) if k != "direction")


@pytest.mark.parametrize("name", list(FACTS))
@pytest.mark.parametrize("affine", [False, True])
def test_state_dict_keys_are_those_of_the_checkpoints(name: str, affine: bool) -> None:
    norm = Norm(8, NormSpec(name, affine=affine))
    expected = (["weight", "bias"] if affine and name != "none" else []) + OWN_KEYS.get(name, [])
    assert list(norm.state_dict()) == expected
    assert [n for n, _ in norm.named_buffers()] == ["ones_normal"]  # not persistent: no key
    assert type(norm) is get_component(name) and isinstance(norm, Norm)


@pytest.mark.parametrize("name", list(FACTS))
def test_the_class_built_directly_is_the_norm_of_the_spec(name: str) -> None:
    options = {"dyt": {"alpha": 0.8}, "scalenorm": {"g": 2.0}}.get(name, {})
    spec = NormSpec(name, affine=True, eps=1e-6, options=options or None)
    direct = get_component(name)(8, eps=1e-6, affine=True, **options)
    built = Norm(8, spec)
    assert built.spec is spec and direct.spec == spec
    assert direct.state_dict().keys() == built.state_dict().keys()
    x = torch.randn(3, 5, 8)
    assert torch.equal(direct(x), built(x))
    assert torch.equal(create_norm(8, spec)(x), built(x))


def test_fused_kernels_compute_the_affine_norms_exactly() -> None:
    x = torch.randn(4, 7, 8)
    w, b = torch.rand(8) + 0.5, torch.randn(8)
    both, scale = Norm(8, NormSpec("both", eps=1e-5)), Norm(8, NormSpec("scale", eps=1e-5))
    with torch.no_grad():
        for norm in (both, scale):
            norm.weight.copy_(w)
            norm.bias.copy_(b)
    assert torch.equal(both(x), F.layer_norm(x, (8,), w, b, eps=1e-5))
    assert torch.equal(scale(x), torch.addcmul(b, F.rms_norm(x, (8,), eps=1e-5), w))


def test_unknown_options_of_a_class_are_a_type_error() -> None:
    with pytest.raises(TypeError, match="unexpected options alpha"):
        get_component("both")(8, eps=1e-5, affine=True, alpha=1.0)
    with pytest.raises(TypeError, match="beta"):
        get_component("dyt")(8, beta=1.0)


def test_dyt_is_not_of_the_shift_and_scale_form() -> None:
    norm = Norm(8, NormSpec("dyt"))
    with pytest.raises(NotShiftAndScale, match="^component: dyt is not of the shift-and-scale form"):
        norm.shift_and_scale(torch.randn(2, 8))


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


def test_a_class_with_another_signature_is_refused_when_defined() -> None:
    with pytest.raises(TypeError, match="option 'k' must be a keyword-only argument with a default"):

        class NoDefault(Norm):
            def __init__(self, d: int, *, eps: float = 1e-5, affine: bool = True, k: float) -> None:
                super().__init__(d, eps=eps, affine=affine)

    with pytest.raises(TypeError, match=r"constructor is \(d, \*, eps, affine, \*\*options\)"):

        class NoEps(Norm):
            def __init__(self, d: int, affine: bool = True) -> None:
                super().__init__(d, affine=affine)


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
    get_component("tests.nn.test_components:nn.Identity")
    with pytest.raises(ValueError) as err:
        get_component("layer")
    named = str(err.value).split("choose one of ")[1].split(", or an import path")[0]
    assert ":" not in named and named.startswith("both, project, scale, none")
