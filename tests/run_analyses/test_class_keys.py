"""Unselectable class keys of a majority model, on hand-made embeddings."""

from __future__ import annotations

import pytest
import torch

from normbench.nn.majority import MajorityConfig, MajorityEncoder
from normbench.nn.norms import NormSpec
from normbench.run_analyses.class_keys import unselectable_class_keys


def encoder(placement: str, component: str) -> MajorityEncoder:
    torch.manual_seed(0)
    model = MajorityEncoder(
        MajorityConfig(
            num_classes=6, d_model=4, placement=placement, attn_norm=NormSpec(component, affine=False, eps=0.0)
        )
    )
    with torch.no_grad():
        w = torch.randn(6, 4)
        w[5] = w[:5].mean(0)  # the centroid of a 4-simplex: strictly inside the hull of the others
        model.embedding.weight.copy_(w)
    return model


@pytest.mark.parametrize("placement", ["post", "none"])
def test_raw_embeddings_keep_a_key_inside_the_hull(placement: str) -> None:
    assert unselectable_class_keys(encoder(placement, "both")).tolist() == [False] * 5 + [True]


@pytest.mark.parametrize("component", ["both", "scale"])
def test_a_scaling_norm_in_front_of_attention_makes_every_class_key_selectable(component: str) -> None:
    assert not unselectable_class_keys(encoder("pre", component)).any()


def test_a_network_without_classes_is_a_one_line_error() -> None:
    with pytest.raises(ValueError, match="bench.class_keys: the network has no class tokens"):
        unselectable_class_keys(torch.nn.Linear(2, 2))
