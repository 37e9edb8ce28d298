"""The architecture configs: one field order per network, blocks built from the config, one set of checks."""

from __future__ import annotations

import dataclasses

import pytest

from normbench.nn.bert import BertConfig, BertEncoder
from normbench.nn.blocks import Attention, TransformerBlock
from normbench.nn.config import ArchConfig
from normbench.nn.gpt import GPTConfig, GPTDecoder
from normbench.nn.majority import MajorityConfig, MajorityEncoder

BLOCK = ["d_model", "n_heads", "n_layers", "ffn_width"]
NORMS = ["attn_norm", "ffn_norm", "attn_out_norm", "ffn_out_norm"]
# the order of the keys of `--print_config`, of the resolved configs in run records and of `effective()`
FIELDS = {
    MajorityConfig: [
        "placement",
        "qk_norm",
        "num_classes",
        "d_model",
        "n_heads",
        "ffn_width",
        "n_layers",
        *NORMS,
        "activation",
        "dropout",
        "init",
    ],
    GPTConfig: [
        "placement",
        "qk_norm",
        "vocab_size",
        "max_positions",
        *BLOCK,
        *NORMS,
        "final_norm",
        "activation",
        "qkv_bias",
        "dropout",
        "init_std",
        "embedding_scale",
        "learn_embedding_scale",
    ],
    BertConfig: [
        "placement",
        "qk_norm",
        "vocab_size",
        "max_positions",
        "type_vocab_size",
        *BLOCK,
        "embed_norm",
        *NORMS,
        "activation",
        "dropout",
        "num_labels",
        "init_std",
    ],
}
SMALL = {MajorityConfig: {}, GPTConfig: {"vocab_size": 30, "max_positions": 8}, BertConfig: {"vocab_size": 30}}
NETWORK = {MajorityConfig: MajorityEncoder, GPTConfig: GPTDecoder, BertConfig: BertEncoder}


@pytest.mark.parametrize("cls", list(FIELDS))
def test_the_field_order_is_each_networks_own(cls: type[ArchConfig]) -> None:
    assert [f.name for f in dataclasses.fields(cls)] == FIELDS[cls]
    assert list(cls(**SMALL[cls]).effective())[:3] == FIELDS[cls][:1] + FIELDS[cls][2:4]  # qk_norm off: left out


@pytest.mark.parametrize("cls", list(FIELDS))
def test_every_block_is_built_from_the_config(cls: type[ArchConfig]) -> None:
    config = cls(**SMALL[cls], n_layers=2, dropout=0.0, qk_norm=True)
    kwargs = config.block_kwargs()
    block = TransformerBlock(**kwargs)
    network = NETWORK[cls](config)
    assert len(network.blocks) == 2
    for built in network.blocks:
        assert [(k, tuple(v.shape)) for k, v in built.state_dict().items()] == [
            (k, tuple(v.shape)) for k, v in block.state_dict().items()
        ]
    attn = network.blocks[0].attn
    assert attn.causal == (cls is GPTConfig)
    assert (attn.q_proj.bias is not None) == (cls is not MajorityConfig)  # GPT-2 and BERT learn q/k/v biases
    assert attn.out_proj.bias is not None and attn.qk_norm_scale is not None


def test_the_lm_feed_forward_is_four_times_wider_unless_set() -> None:
    assert GPTConfig(d_model=8).block_kwargs()["ffn_width"] == 32
    assert GPTConfig(d_model=8, ffn_width=12).block_kwargs()["ffn_width"] == 12
    assert GPTConfig(qkv_bias=False).block_kwargs()["qkv_bias"] is False


@pytest.mark.parametrize("cls", list(FIELDS))
def test_the_shared_checks_name_the_field(cls: type[ArchConfig]) -> None:
    small = SMALL[cls]
    with pytest.raises(ValueError, match=r"^model.arch.d_model=8 is not divisible by model.arch.n_heads=3$"):
        cls(**small, n_heads=3)
    with pytest.raises(ValueError, match=r"^model.arch.n_layers: must be a positive integer, got 0$"):
        cls(**small, n_layers=0)
    with pytest.raises(ValueError, match=r"^model.arch.dropout: must be in \[0, 1\), got 1.0$"):
        cls(**small, dropout=1.0)
    with pytest.raises(ValueError, match=r"^model.arch.ffn_width: must be a positive integer, got 0$"):
        cls(**small, ffn_width=0)
    with pytest.raises(ValueError, match=r"^model.arch.d_model=8 is not divisible by model.arch.n_heads=3$"):
        Attention(8, 3)  # the same rule where a block is built by hand
