"""What every component shares through the base class: one signature, its facts, its state-dict keys, the affine map,
the spec that builds it, and one-line errors for bad specs and options."""

from __future__ import annotations

import inspect

import pytest
import torch

from normbench.nn.gpt import GPTConfig
from normbench.nn.norms import COMPONENTS, Norm, NormSpec, create_norm, get_component
from tests.nn.norms.facts import FACTS, OWN_KEYS


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


@pytest.mark.parametrize("component", [c for c in COMPONENTS if c != "none"])
def test_affine_applies_gain_and_bias(component: str) -> None:
    x = torch.randn(4, 6, 8, dtype=torch.float64)
    plain = Norm(8, NormSpec(component, affine=False)).double()
    affine = Norm(8, NormSpec(component, affine=True)).double()
    with torch.no_grad():
        affine.weight.uniform_(0.5, 2.0)
        affine.bias.normal_()
    torch.testing.assert_close(affine(x), plain(x) * affine.weight + affine.bias)
    extra = {"learned": 8, "scalenorm": 1, "dyt": 1}.get(component, 0)  # the learned normal, g, alpha
    assert sum(p.numel() for p in affine.parameters()) == 16 + extra


@pytest.mark.parametrize("component", COMPONENTS)
def test_gradients_are_finite(component: str) -> None:
    x = torch.randn(2, 9, 8, requires_grad=True)
    Norm(8, NormSpec(component, affine=True, eps=1e-5))(x).square().sum().backward()
    assert torch.isfinite(x.grad).all()


@pytest.mark.parametrize(("component", "parameter"), [("dyt", "alpha"), ("scalenorm", "g")])
def test_gradients_reach_the_learned_scalar(component: str, parameter: str) -> None:
    norm = Norm(8, NormSpec(component, affine=True))
    norm(torch.randn(4, 8)).pow(2).sum().backward()
    grad = getattr(norm, parameter).grad
    assert grad is not None and grad.shape == () and grad.item() != 0.0


def test_unknown_options_of_a_class_are_a_type_error() -> None:
    with pytest.raises(TypeError, match="unexpected options alpha"):
        get_component("both")(8, eps=1e-5, affine=True, alpha=1.0)
    with pytest.raises(TypeError, match="beta"):
        get_component("dyt")(8, beta=1.0)


def test_a_class_with_another_signature_is_refused_when_defined() -> None:
    with pytest.raises(TypeError, match="option 'k' must be a keyword-only argument with a default"):

        class NoDefault(Norm):
            def __init__(self, d: int, *, eps: float = 1e-5, affine: bool = True, k: float) -> None:
                super().__init__(d, eps=eps, affine=affine)

    with pytest.raises(TypeError, match=r"constructor is \(d, \*, eps, affine, \*\*options\)"):

        class NoEps(Norm):
            def __init__(self, d: int, affine: bool = True) -> None:
                super().__init__(d, affine=affine)


def test_options_are_canonical_numbers() -> None:
    assert NormSpec("dyt", options={"alpha": 1}).canonical() == NormSpec("dyt", options={"alpha": 1.0}).canonical()
    assert NormSpec("scalenorm", options={"g": None}).canonical() == NormSpec("scalenorm").canonical()
    plugin = NormSpec("pnorm_example:PNorm", options={"p": [1, 2]})
    assert isinstance(hash(plugin), int)  # unhashable option values still hash


def test_bad_spec_is_a_clear_error_naming_its_field() -> None:
    from normbench.nn.majority import MajorityConfig

    with pytest.raises(ValueError, match="^component: 'layer' is not allowed; choose one of both, project"):
        Norm(8, NormSpec("layer"))
    with pytest.raises(ValueError, match="^model.arch.attn_norm.component: 'layer' is not allowed"):
        MajorityConfig(attn_norm=NormSpec("layer"))
    with pytest.raises(ValueError, match="^model.arch.ffn_norm.eps: must be a finite number >= 0"):
        MajorityConfig(ffn_norm=NormSpec("both", eps=-1.0))


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        (NormSpec("scalenorm", options={"g": 0.0}), r"^model.arch.attn_norm.options.g: must be > 0, got 0.0$"),
        (
            NormSpec("dyt", options={"beta": 1.0}),
            r"^model.arch.attn_norm.options: 'beta' not allowed for component dyt; allowed: alpha$",
        ),
        (
            NormSpec("dyt", options={"alpha": "big"}),
            r"^model.arch.attn_norm.options.alpha: must be a finite number, got 'big'$",
        ),
        (
            NormSpec("both", options={"alpha": 1.0}),
            r"^model.arch.attn_norm.options: 'alpha' not allowed for component both; allowed: none$",
        ),
    ],
)
def test_bad_options_are_one_line_errors_naming_the_field(spec: NormSpec, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        GPTConfig(attn_norm=spec)
