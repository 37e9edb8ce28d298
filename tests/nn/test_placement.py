"""Which norm feeds each attention: the rule of :func:`attention_input_norm` against the networks themselves."""

from __future__ import annotations

import typing

import pytest
import torch

from normbench.nn.norms import Norm, NormSpec
from normbench.nn.placement import PLACEMENTS, attention_input_norm
from normbench.tasks import get_task

TINY = {
    "majority": {"n_layers": 2},
    "lm": {"vocab_size": 40, "max_positions": 16, "n_layers": 3, "dropout": 0.0},
    "sst2": {"vocab_size": 40, "max_positions": 16, "n_layers": 3, "ffn_width": 16, "dropout": 0.0},
}


@pytest.mark.parametrize("task", list(TINY))
@pytest.mark.parametrize("placement", PLACEMENTS)
@pytest.mark.parametrize("component", ["both", "project", "none"])
def test_the_named_norm_output_is_the_attention_input(task: str, placement: str, component: str) -> None:
    torch.manual_seed(0)
    cls = typing.get_type_hints(get_task(task).module.__init__)["arch"]
    arch = cls(**TINY[task], placement=placement, attn_norm=NormSpec(component, affine=True, eps=1e-5))
    model = get_task(task).module(arch=arch).model.eval()
    outputs: dict[str, torch.Tensor] = {}
    hooks = []
    for name, module in model.named_modules():
        if isinstance(module, Norm) or name.endswith(".attn"):  # under `none` the block norms are nn.Identity: absent
            hooks.append(
                module.register_forward_hook(
                    lambda m, args, out, name=name: outputs.__setitem__(
                        name, args[0] if name.endswith(".attn") else out
                    )
                )
            )
    with torch.no_grad():
        model(torch.randint(0, 20, (2, 7)))
    for h in hooks:
        h.remove()
    norms = {n: m for n, m in model.named_modules() if isinstance(m, Norm)}
    present = {n: role for n, role in cls.NORM_ROLES.items() if n in {k.split(".")[-1] for k in norms}}
    identity = {k.split(".")[-1] for k, m in norms.items() if m.component.identity}
    for layer in range(1, arch.n_layers + 1):
        keys = outputs[f"blocks.{layer - 1}.attn"]
        feeder = attention_input_norm(placement, layer, present, identity)
        if feeder is None:  # no norm's output reaches it unchanged
            assert not any(
                out.shape == keys.shape and torch.equal(out, keys)
                for n, out in outputs.items()
                if not n.endswith(".attn") and n.split(".")[-1] not in identity
            )
            continue
        source = {
            "attn_norm": f"blocks.{layer - 1}.attn_norm",
            "ffn_norm": f"blocks.{layer - 2}.ffn_norm",
            "embed_norm": "embed_norm",
        }[feeder]
        assert torch.equal(outputs[source], keys), (feeder, layer)


def test_bad_arguments_are_one_line_errors() -> None:
    with pytest.raises(ValueError, match="model.arch.placement: 'side'"):
        attention_input_norm("side", 1, {})
    with pytest.raises(ValueError, match="layer: layers count from 1"):
        attention_input_norm("pre", 0, {})
