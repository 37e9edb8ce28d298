"""A sweep's grid: its axes crossed with the named variants, axes of several keys, labelled axes."""

from __future__ import annotations

import pytest

from normbench.sweep.grid import parse_grid, variant_grid


def test_grid_crosses_named_variants_or_replaces_them() -> None:
    config = {
        "model": {"class_path": "normbench.tasks.majority.MajorityModule"},
        "bench": {
            "variants": {
                "pre/both": {"model.init_args.arch.attn_norm.component": "both"},
                "pre/none": {"model.init_args.arch.attn_norm.component": "none"},
            }
        },
    }
    grid = {"model.optim.lr": [0.1, 0.2]}
    assert [n for n, _ in variant_grid(config, None, grid, "majority")] == ["optim.lr=0.1", "optim.lr=0.2"]
    crossed = variant_grid(config, ["pre/both", "pre/none"], grid, "majority")
    assert [n for n, _ in crossed] == [
        "pre/both,optim.lr=0.1",
        "pre/both,optim.lr=0.2",
        "pre/none,optim.lr=0.1",
        "pre/none,optim.lr=0.2",
    ]
    assert crossed[1][1] == ["--model.init_args.arch.attn_norm.component=both", "--model.optim.lr=0.2"]
    with pytest.raises(ValueError, match="also set by variant 'pre/both'"):
        variant_grid(config, ["pre/both"], {"model.arch.attn_norm.component": ["scale"]}, "majority")


def test_an_axis_of_several_keys_moves_them_together() -> None:
    axis = "model.init_args.arch.d_model,model.init_args.arch.n_heads"
    assert parse_grid([f"{axis}=[8,4],[16,8]"]) == {axis: [[8, 4], [16, 8]]}
    with pytest.raises(ValueError, match=r"^grid: .* takes lists of values, e.g."):
        parse_grid([f"{axis}=8,16"])
    config = {
        "model": {"class_path": "normbench.tasks.lm.LMModule"},
        "bench": {"variants": {"pre/both": {"model.init_args.arch.attn_norm.component": "both"}}},
    }
    crossed = variant_grid(config, ["pre/both"], {axis: [[8, 4], [16, 8]]}, "lm")
    assert crossed[1] == (
        "pre/both,arch.d_model=16,arch.n_heads=8",
        [
            "--model.init_args.arch.attn_norm.component=both",
            "--model.init_args.arch.d_model=16",
            "--model.init_args.arch.n_heads=8",
        ],
    )
    with pytest.raises(ValueError, match="each value must be a list of 2"):
        variant_grid(config, ["pre/both"], {axis: [8, 16]}, "lm")


def test_a_labelled_axis_names_its_variants_by_its_label() -> None:
    axis = "model.init_args.arch.attn_norm.options.alpha,model.init_args.arch.final_norm.options.alpha"
    config = {
        "model": {"class_path": "normbench.tasks.lm.LMModule"},
        "bench": {
            "variants": {"pre/dyt": {"model.init_args.arch.qkv_bias": "false"}},
            "grid": {axis: [[0.5, 0.5], [2.0, 0.2]]},
            "grid_labels": {axis: "alpha0"},
        },
    }
    crossed = variant_grid(config, ["pre/dyt"], {}, "lm")
    assert crossed[0] == (
        "pre/dyt,alpha0=0.5",
        [
            "--model.init_args.arch.qkv_bias=false",
            "--model.init_args.arch.attn_norm.options.alpha=0.5",
            "--model.init_args.arch.final_norm.options.alpha=0.5",
        ],
    )
    assert crossed[1][0] == "pre/dyt,alpha0=2.0;0.2"  # keys with different values: each value, in key order
    # the command line's axes keep their key=value names
    assert [n for n, _ in variant_grid(config, ["pre/dyt"], {"model.optim.lr": [0.1]}, "lm")][
        0
    ] == "pre/dyt,alpha0=0.5,optim.lr=0.1"
    for labels, message in (
        ({"model.optim.lr": "lr"}, "bench.grid_labels: 'model.optim.lr' is not an axis"),
        ({axis: "alpha 0"}, "must be a short name"),
    ):
        with pytest.raises(ValueError, match=message):
            variant_grid({**config, "bench": {**config["bench"], "grid_labels": labels}}, ["pre/dyt"], {}, "lm")
