"""BERT-style encoder: the paper's parameter count, equality with HF BERT, padding invariance."""

from __future__ import annotations

import pytest
import torch

from normbench.nn.bert import BertEncoder
from normbench.nn.norms import NormSpec

NONE = NormSpec("none", affine=False, eps=0.0)


def n_params(model: torch.nn.Module) -> int:
    return sum(p.numel() for p in model.parameters())


def test_parameter_count_of_the_paper_config() -> None:
    # 28996 x 8 + 512 x 8 + 2 x 8 + 16 (embeddings) + 4 x 52,552 (blocks) + 72 (pooler) + 18 (classifier)
    assert n_params(BertEncoder()) == 446_394
    # the paper's model without any LayerNorm: 5 x 16 + 4 x 16 affine parameters fewer
    assert n_params(BertEncoder(placement="none", embed_norm=NONE)) == 446_394 - 144


def test_logits_equal_huggingface_bert_with_the_same_weights() -> None:
    transformers = pytest.importorskip("transformers")
    cfg = transformers.BertConfig(
        vocab_size=97,
        hidden_size=8,
        num_hidden_layers=2,
        num_attention_heads=4,
        intermediate_size=64,
        max_position_embeddings=40,
        hidden_dropout_prob=0.0,
        attention_probs_dropout_prob=0.0,
    )
    hf = transformers.BertForSequenceClassification(cfg).eval()
    ours = BertEncoder(
        vocab_size=97, max_positions=40, type_vocab_size=2, d_model=8, n_heads=4, n_layers=2, ffn_width=64, dropout=0.0
    ).eval()
    assert n_params(ours) == n_params(hf)
    emb, enc = hf.bert.embeddings, hf.bert.encoder
    with torch.no_grad():
        for p in hf.parameters():  # non-trivial values everywhere, norms and biases included
            p.add_(torch.randn_like(p) * 0.3)
        ours.token_embedding.weight.copy_(emb.word_embeddings.weight)
        ours.position_embedding.weight.copy_(emb.position_embeddings.weight)
        ours.segment_embedding.weight.copy_(emb.token_type_embeddings.weight)
        ours.embed_norm.weight.copy_(emb.LayerNorm.weight), ours.embed_norm.bias.copy_(emb.LayerNorm.bias)
        for block, layer in zip(ours.blocks, enc.layer, strict=False):
            att = layer.attention
            for mine, theirs in (
                (block.attn.q_proj, att.self.query),
                (block.attn.k_proj, att.self.key),
                (block.attn.v_proj, att.self.value),
                (block.attn.out_proj, att.output.dense),
                (block.ffn[0], layer.intermediate.dense),
                (block.ffn[2], layer.output.dense),
            ):
                mine.weight.copy_(theirs.weight), mine.bias.copy_(theirs.bias)
            for norm, ln in ((block.attn_norm, att.output.LayerNorm), (block.ffn_norm, layer.output.LayerNorm)):
                norm.weight.copy_(ln.weight), norm.bias.copy_(ln.bias)
        ours.pooler.weight.copy_(hf.bert.pooler.dense.weight), ours.pooler.bias.copy_(hf.bert.pooler.dense.bias)
        ours.classifier.weight.copy_(hf.classifier.weight), ours.classifier.bias.copy_(hf.classifier.bias)
        ids = torch.randint(5, 97, (3, 11))
        pad = torch.zeros(3, 11, dtype=torch.bool)
        pad[1, 7:] = True
        expected = hf(input_ids=ids, attention_mask=(~pad).long()).logits
        torch.testing.assert_close(ours(ids, pad), expected, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("placement", ["post", "pre", "none"])
def test_padding_does_not_change_the_prediction(placement: str) -> None:
    model = BertEncoder(vocab_size=50, max_positions=16, placement=placement, ffn_width=16, dropout=0.0).eval()
    ids = torch.randint(5, 50, (1, 6))
    padded = torch.cat([ids, torch.zeros(1, 4, dtype=torch.long)], dim=1)
    pad = padded == 0
    with torch.no_grad():
        torch.testing.assert_close(model(ids), model(padded, pad), rtol=1e-5, atol=1e-6)
