"""The null of each leaderboard column: the width and key-set sizes its keys have, read from a run's config."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from normbench.judge.chance.columns import chance_for_metric, set_sizes_from_data
from normbench.judge.chance.null import chance_fraction
from normbench.training.run.loading import build_datamodule
from tests.sst2_corpus import write_sst2


def lm(length: int = 32, **arch: Any) -> dict[str, Any]:
    """A resolved LM config with the fields the chance values read (the norms not named: the task's defaults)."""
    return {
        "task": "lm",
        "model": {
            "class_path": "normbench.tasks.lm.LMModule",
            "init_args": {
                "arch": {"d_model": 8, "n_heads": 4, "n_layers": 4, "placement": "pre", "qk_norm": False, **arch}
            },
        },
        "data": {"init_args": {"analysis_length": length}},
    }


def norm(component: str, affine: bool = False, eps: float = 1e-5) -> dict[str, Any]:
    return {"component": component, "affine": affine, "eps": eps}


def test_lm_columns() -> None:
    both = lm(attn_norm=norm("both"))
    after = chance_for_metric("unselectable_after_L2", both)
    assert after["sanity_check"] and after["mean"] == 0.0 and after["keys"] == "sphere" and after["feed"] == "both"
    assert after["d"] == 7 and after["n"] == 32 and "eps = 1e-05" in after["basis"]
    before = chance_for_metric("unselectable_before_L2", both)  # the residual stream
    assert not before["sanity_check"] and before["d"] == 8 and before["feed"] is None and before["mean"] > 0
    assert before["mean"] == chance_fraction(8, 32)["mean"]
    heads = chance_for_metric("unselectable_heads_L1", both)  # a sphere in 7 dimensions seen through W_k in 2
    assert not heads["sanity_check"] and heads["d"] == 2 and heads["mean"] == chance_fraction(2, 32)["mean"]
    assert chance_for_metric("unselectable_after_k16_L1", lm(attn_norm=norm("none")))["n"] == 16

    projected = chance_for_metric("unselectable_after_L1", lm(attn_norm=norm("project", eps=0.0)))
    assert projected["d"] == 7 and not projected["sanity_check"] and projected["feed"] == "project"
    assert chance_for_metric("unselectable_after_L3", lm(attn_norm=norm("dyt")))["d"] == 8
    scalenorm = chance_for_metric("unselectable_after_L3", lm(attn_norm=norm("scalenorm")))
    assert scalenorm["sanity_check"] and scalenorm["d"] == 8
    qk = chance_for_metric("unselectable_heads_L2", lm(attn_norm=norm("none"), qk_norm=True))
    assert qk["sanity_check"] and qk["d"] == 2 and qk["mean"] == 0.0

    post = lm(placement="post", attn_norm=norm("project", eps=0.0))  # layer 1 reads the raw embedding
    assert not chance_for_metric("unselectable_after_L1", post)["sanity_check"]
    for metric in ("unselectable_after_L2", "unselectable_before_L2"):  # the FFN LayerNorm of the block before
        assert chance_for_metric(metric, post)["sanity_check"]

    for other in ("final_val_loss", "unselectable_k64_L1", "normal_angle_L1", "mu_h@L2"):
        assert chance_for_metric(other, both) is None


def sst2(data: dict[str, Any] | None = None, **arch: Any) -> dict[str, Any]:
    return {
        "model": {
            "class_path": "normbench.tasks.sst2.SST2Module",
            "init_args": {"arch": {"d_model": 8, "n_heads": 4, "n_layers": 4, **arch}},
        },
        "data": {"class_path": "normbench.data.sst2.SST2DataModule", "init_args": data or {}},
    }


def test_sst2_columns_with_given_sentence_lengths() -> None:
    lengths = [5, 9, 9, 14, 30]
    bare = sst2(placement="none", embed_norm=norm("none"))
    first = chance_for_metric("unselectable_L1", bare, set_sizes=lengths)
    assert first["d"] == 8 and not first["sanity_check"] and first["n"]["keys"] == 67
    assert first["mean"] == chance_fraction(8, lengths)["mean"]
    assert chance_for_metric("unselectable_heads_L4", bare, set_sizes=lengths)["d"] == 2
    tokens = chance_for_metric("unselectable_tokens", bare, set_sizes=lengths)
    assert tokens["layers"] == 4 and tokens["skip_ends"] and not tokens["sanity_check"]
    assert tokens["mean"] > tokens["if_layers_identical"]["mean"] > 0

    bert = sst2(placement="post")  # BERT: LayerNorm on the embedding and after every block
    for metric in ("unselectable_L1", "unselectable_L3", "unselectable_tokens"):
        assert chance_for_metric(metric, bert, set_sizes=lengths)["sanity_check"]
    pre_none = sst2(placement="pre", attn_norm=norm("none"))  # layer 1 reads the embedding LayerNorm
    assert chance_for_metric("unselectable_L1", pre_none, set_sizes=lengths)["sanity_check"]
    mixed = chance_for_metric("unselectable_tokens", pre_none, set_sizes=lengths)
    assert mixed["layers"] == 3 and "L1" in mixed["basis"]


def test_sst2_sentence_lengths_from_the_data_module(tmp_path: Path) -> None:
    folder = write_sst2(tmp_path / "sst2", train=200, dev=30)
    config = sst2(
        data={"source": "local", "data_dir": str(folder), "vocab_size": 200, "eval_batch_size": 8},
        placement="none",
        embed_norm=norm("none"),
    )
    sizes = set_sizes_from_data(config)
    expected = [len(ids) for ids in build_datamodule(config, "test").encoded["validation"].ids]
    assert sorted(sizes) == sorted(expected) and len(sizes) == 30
    result = chance_for_metric("unselectable_L2", config, sets=2)
    assert result["n"]["keys"] == sum(expected) and "30 dev sentences" in result["basis"]


def test_majority_class_keys() -> None:
    config = {
        "task": "majority",
        "model": {
            "init_args": {
                "arch": {
                    "d_model": 8,
                    "n_heads": 1,
                    "num_classes": 20,
                    "placement": "pre",
                    "attn_norm": norm("both", eps=0.0),
                }
            }
        },
    }
    keys = chance_for_metric("class_keys_unselectable", config)
    assert keys["sanity_check"] and keys["n"] == 20 and "eps" not in keys["basis"]
    heads = chance_for_metric("class_keys_unselectable_heads", config)  # one head of width 8: W_k keeps the sphere
    assert heads["sanity_check"]
    config["model"]["init_args"]["arch"]["placement"] = "none"
    bare = chance_for_metric("class_keys_unselectable", config)
    assert not bare["sanity_check"] and bare["d"] == 8 and bare["mean"] == chance_fraction(8, 20)["mean"]
    assert np.isfinite(bare["sem"])
