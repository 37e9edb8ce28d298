"""One rule for a plug-in ``nn.Module``: the slot's eps reaches it, the slot's affine map (normbench's) is its only one,
its options reach it."""

from __future__ import annotations

import pytest
import torch
from torch import nn

from normbench.nn.majority import MajorityConfig, MajorityEncoder
from normbench.nn.norms import Norm, NormSpec, PluginNorm, get_component


class GainNorm(nn.Module):
    """RMS scaling with its own gain and bias and a learned temperature, as a paper's code might write it."""

    def __init__(self, d: int, eps: float = 0.5, alpha_init: float = 1.0) -> None:
        super().__init__()
        self.eps, self.alpha_init = eps, alpha_init
        self.gain = nn.Parameter(torch.full((d,), 2.0))
        self.shift = nn.Parameter(torch.zeros(d))
        self.alpha = nn.Parameter(torch.tensor(float(alpha_init)))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps)
        return self.alpha * y * self.gain + self.shift


class TorchStyleNorm(nn.Module):
    """A norm built as ``torch.nn.LayerNorm`` is: it takes ``eps`` and ``elementwise_affine``."""

    def __init__(self, d: int, eps: float = 0.25, elementwise_affine: bool = True) -> None:
        super().__init__()
        self.inner = nn.LayerNorm(d, eps=eps, elementwise_affine=elementwise_affine)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.inner(x)


def test_the_slots_eps_and_one_affine_map_reach_a_module_with_its_own_gain() -> None:
    path = f"{__name__}:GainNorm"
    for affine in (True, False):
        norm = Norm(8, NormSpec(path, affine=affine, eps=1e-5, options={"alpha_init": 0.0}))
        assert isinstance(norm, PluginNorm) and norm.plugin.eps == 1e-5 and norm.plugin.alpha_init == 0.0
        learned = {n for n, p in norm.named_parameters() if p.requires_grad}
        # its own gain and shift are frozen at their initial values (buffers): normbench's map is the slot's only one
        assert learned == ({"weight", "bias", "plugin.alpha"} if affine else {"plugin.alpha"})
        assert norm.frozen == ("gain", "shift") and torch.equal(norm.plugin.gain, torch.full((8,), 2.0))
        assert list(norm.state_dict()) == [*(["weight", "bias"] if affine else []), "plugin.alpha", "plugin.gain",
                                           "plugin.shift"]  # fmt: skip
    assert get_component(path).uses_eps  # the eps is part of its map: kept in its spec
    assert NormSpec(path, eps=1e-5).canonical().eps == 1e-5
    with pytest.raises(ValueError, match=r"options.eps: the slot's, not an option"):
        NormSpec(path, options={"eps": 0.1}).check()


def test_a_module_that_takes_elementwise_affine_is_told_false() -> None:
    norm = Norm(8, NormSpec(f"{__name__}:TorchStyleNorm", affine=True, eps=1e-5))
    assert norm.plugin.inner.weight is None and norm.plugin.inner.eps == 1e-5
    assert {n for n, p in norm.named_parameters()} == {"weight", "bias"}


def test_a_model_with_a_plugin_trains_only_the_slots_affine_maps() -> None:
    path = f"{__name__}:GainNorm"
    base = MajorityEncoder(MajorityConfig())
    model = MajorityEncoder(MajorityConfig(attn_norm=NormSpec(path, affine=False), ffn_norm=NormSpec(path)))
    count = sum(p.numel() for p in model.parameters() if p.requires_grad)
    layers = len(model.blocks)
    # LayerNorm's model has the same affine maps; the plug-in adds its temperature, one per norm
    assert count == sum(p.numel() for p in base.parameters()) + 2 * layers


class ExitingNorm(nn.Module):
    """A norm whose constructor ends the process, as a script's argument check might."""

    def __init__(self, d: int) -> None:
        raise SystemExit("ExitingNorm needs d > 1000")


def test_a_norm_that_exits_while_it_is_built_is_one_line_naming_it() -> None:
    from normbench.nn.norms import create_norm

    with pytest.raises(ValueError) as caught:
        create_norm(8, NormSpec(f"{__name__}:ExitingNorm", affine=False))
    message = str(caught.value)
    assert "\n" not in message and message.startswith("component: ")
    assert "ExitingNorm" in message and "SystemExit: ExitingNorm needs d > 1000" in message


def test_a_norm_module_that_exits_on_import_is_one_line_naming_it(tmp_path, monkeypatch) -> None:  # noqa: ANN001
    (tmp_path / "exits_on_import.py").write_text("import sys\nsys.exit(3)\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(ValueError, match=r"component: cannot import 'exits_on_import:Norm' \(SystemExit: 3\)"):
        get_component("exits_on_import:Norm")
