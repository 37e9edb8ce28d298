"""The majority encoder matches the paper's configuration (Appendix E.1)."""

from __future__ import annotations

import pytest
import torch

from normbench.nn.majority import MajorityConfig, MajorityEncoder
from normbench.nn.norms import NormSpec
from normbench.tasks.majority import MajorityModule


def trainable(module: torch.nn.Module) -> int:
    return sum(p.numel() for p in module.parameters() if p.requires_grad)


def test_paper_configuration_has_584_parameters() -> None:
    """Brody et al. 2023, Appendix E.1: d=8 gives 584 learnable parameters."""
    assert trainable(MajorityModule()) == trainable(MajorityEncoder()) == 584


@pytest.mark.parametrize("component", ["both", "project", "scale", "none", "paper_no_projection"])
def test_attention_norm_ablations_keep_584_parameters(component: str) -> None:
    """The attention norm has no affine map, so every ablation has the same parameter count."""
    assert trainable(MajorityModule(MajorityConfig(attn_norm=NormSpec(component, affine=False, eps=0.0)))) == 584


def test_structure_follows_the_authors_code() -> None:
    model = MajorityEncoder(attn_norm=NormSpec("both", False, 0.0), ffn_norm=NormSpec("both", True, 0.0))
    block = model.blocks[0]
    assert len(model.blocks) == 1 and block.placement == "pre"
    assert block.attn.n_heads == 1
    assert block.attn.q_proj.bias is None and block.attn.k_proj.bias is None and block.attn.v_proj.bias is None
    assert block.attn.out_proj.bias is not None
    assert block.attn_norm.weight is None and block.ffn_norm.weight is not None
    assert block.attn_norm.spec.eps == 0.0
    assert isinstance(block.ffn[1], torch.nn.ReLU) and block.ffn[0].out_features == 8


def test_logits_are_read_out_through_the_embedding() -> None:
    model = MajorityEncoder(attn_norm=NormSpec("both", False, 0.0), ffn_norm=NormSpec("both", True, 0.0))
    tokens = torch.randint(0, 20, (3, 50))
    h = model.blocks[0](model.embedding(tokens))
    torch.testing.assert_close(model(tokens), h @ model.embedding.weight.T)
    assert model(tokens).shape == (3, 50, 20)


def test_permutation_equivariance_without_positions() -> None:
    """No positional encoding: permuting the tokens permutes the outputs."""
    model = MajorityEncoder()
    tokens = torch.randint(0, 20, (2, 50))
    perm = torch.randperm(50)
    torch.testing.assert_close(model(tokens[:, perm]), model(tokens)[:, perm], atol=1e-5, rtol=1e-5)
