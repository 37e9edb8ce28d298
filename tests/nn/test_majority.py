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


def authors_model(
    seed: int, d: int = 8, classes: int = 20
) -> tuple[torch.nn.Embedding, torch.nn.TransformerEncoderLayer]:
    """The authors' majority model, built as their code builds it, under ``seed``."""
    torch.manual_seed(seed)
    embedding = torch.nn.Embedding(classes, d)
    layer = torch.nn.TransformerEncoderLayer(
        d, 1, d, dropout=0.0, layer_norm_eps=0.0, norm_first=True, batch_first=True
    )
    return embedding, layer


@pytest.mark.parametrize("seed", [0, 7])
def test_encoder_layer_init_draws_the_authors_parameters_to_the_last_bit(seed: int) -> None:
    embedding, layer = authors_model(seed)
    after_theirs = torch.rand(3)
    torch.manual_seed(seed)
    model = MajorityEncoder(init="encoder_layer")
    attn, ffn = model.blocks[0].attn, model.blocks[0].ffn
    assert torch.equal(model.embedding.weight, embedding.weight)
    assert torch.equal(
        torch.cat([attn.q_proj.weight, attn.k_proj.weight, attn.v_proj.weight]), layer.self_attn.in_proj_weight
    )
    assert torch.equal(attn.out_proj.weight, layer.self_attn.out_proj.weight)
    assert torch.equal(attn.out_proj.bias, torch.zeros(8))
    for ours, theirs in ((ffn[0], layer.linear1), (ffn[2], layer.linear2)):
        assert torch.equal(ours.weight, theirs.weight) and torch.equal(ours.bias, theirs.bias)
    assert torch.equal(torch.rand(3), after_theirs)  # the RNG moves on exactly as after the authors' build


def test_encoder_layer_init_computes_the_authors_forward() -> None:
    """Same parameters, same function: ours with a no-affine attention norm vs their layer (gain 1, bias 0)."""
    embedding, layer = authors_model(3)
    torch.manual_seed(3)
    model = MajorityEncoder(init="encoder_layer")
    tokens = torch.randint(0, 20, (4, 50))
    with torch.no_grad():
        theirs = layer(embedding(tokens)) @ embedding.weight.T
        torch.testing.assert_close(model(tokens), theirs, atol=1e-5, rtol=1e-5)


def test_encoder_layer_init_has_the_xavier_bound_and_linear_keeps_its_own() -> None:
    """xavier_uniform_ over the fused (3d, d) weight: bound sqrt(6 / (d + 3d)) = 0.433 at d = 8."""
    torch.manual_seed(0)
    authors = MajorityEncoder(init="encoder_layer", d_model=64, ffn_width=64)
    default = MajorityEncoder(d_model=64, ffn_width=64)
    q_authors, q_default = authors.blocks[0].attn.q_proj.weight, default.blocks[0].attn.q_proj.weight
    assert (6 / (64 + 3 * 64)) ** 0.5 * 0.95 < q_authors.abs().max() <= (6 / (64 + 3 * 64)) ** 0.5
    assert (1 / 64) ** 0.5 * 0.95 < q_default.abs().max() <= (1 / 64) ** 0.5
    assert not torch.equal(default.blocks[0].attn.out_proj.bias, torch.zeros(64))


def test_init_is_validated_and_left_out_of_the_run_identity_at_its_default() -> None:
    with pytest.raises(
        ValueError, match=r"model.arch.init: 'xavier' is not allowed; choose one of linear, encoder_layer"
    ):
        MajorityConfig(init="xavier")
    assert "init" not in MajorityConfig().effective()
    assert MajorityConfig(init="encoder_layer").effective()["init"] == "encoder_layer"
