"""Forward + backward time of every norm component against torch's fused kernels.

Goal: each component within 1.25x of its fused reference (``F.layer_norm`` for ``both`` and
``project``; ``F.rms_norm`` for ``scale`` and ``paper_no_projection``) at d=8 and d=768. The norms
beyond the papers (``dyt``, ``scalenorm``, each with its learned scalar) are measured against
``F.layer_norm``, the norm they replace, under the same goal.
"""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

from normbench.nn.norms import Norm, NormSpec

ROWS = {8: 65_536, 768: 1024}  # ~2-3 MB tensors: cache-friendly, no allocator noise
REFERENCE = {
    "both": "layer_norm",
    "project": "layer_norm",
    "scale": "rms_norm",
    "paper_no_projection": "rms_norm",
    "dyt": "layer_norm",
    "scalenorm": "layer_norm",
}


def fwd_bwd(fn, x: torch.Tensor) -> None:  # noqa: ANN001
    x.grad = None
    fn(x).backward(torch.ones_like(x))


@pytest.mark.parametrize("d", [8, 768])
@pytest.mark.parametrize("reference", ["layer_norm", "rms_norm"])
def test_fused_reference(benchmark, record_pair, d: int, reference: str) -> None:  # noqa: ANN001
    x = torch.randn(ROWS[d], d, requires_grad=True)
    op = getattr(F, reference)
    benchmark.pedantic(fwd_bwd, args=(lambda t: op(t, (d,), eps=1e-5), x), rounds=60, iterations=5, warmup_rounds=5)
    record_pair(f"norm d={d} vs F.{reference}", "baseline", "goal <= 1.25x")


@pytest.mark.parametrize("d", [8, 768])
@pytest.mark.parametrize("component", list(REFERENCE))
def test_component(benchmark, record_pair, d: int, component: str) -> None:  # noqa: ANN001
    x = torch.randn(ROWS[d], d, requires_grad=True)
    norm = Norm(d, NormSpec(component, affine=False, eps=1e-5))
    benchmark.pedantic(fwd_bwd, args=(norm, x), rounds=60, iterations=5, warmup_rounds=5)
    record_pair(f"norm d={d} vs F.{REFERENCE[component]}", component)
