"""The per-head key-space view for runs trained before their test stage logged it.

Runs log ``analysis/unselectable_heads/L<i>`` in their test stage (the LM and SST-2 modules). A
run trained before that series existed gets it here, once: its final checkpoint is run over the
same held-out sequences its test stage used (the data module's ``test_dataloader``), counting,
per layer, the unselectable keys of each head in its key space
(:func:`normbench.analysis.model_keys.unselectable_per_layer`), weighted by key as the test stage
weights them. The result is cached as ``head_keys.json`` in the run folder; runs that logged the
series keep their own values.
"""

from __future__ import annotations

from pathlib import Path
from typing import TypedDict

import torch

from normbench.analysis.model_keys import unselectable_per_layer
from normbench.run_analyses.run_cache import RecordT, cached_analysis, with_final_values
from normbench.tasks.series import ANALYSIS_UNSELECTABLE_HEADS, layer_series
from normbench.training.run.loading import build_datamodule, load_run
from normbench.training.run.rundir import HEAD_KEYS_NAME


class HeadKeys(TypedDict):
    """A run's ``head_keys.json`` (:func:`head_keys_run`; the cache adds the checkpoint's stamp)."""

    task: str
    """The run's task."""
    variant: str
    """The run's variant."""
    seed: int
    """The run's seed."""
    keys: int
    """The (unpadded) keys of the test sequences counted."""
    fraction_heads: dict[str, float]
    """Layer number (``"1"``, ...) -> the key-weighted fraction of unselectable keys in its heads' key spaces."""


def head_keys_run(ckpt: Path) -> HeadKeys:
    """Per layer, the fraction of unselectable keys in the heads' key spaces over the run's test sequences."""
    record, module = load_run(ckpt)
    sums: dict[int, float] = {}
    keys = 0
    with torch.no_grad():
        for batch in build_datamodule(record["config"], "test").test_dataloader():
            inputs, padding = module.model_inputs(batch)
            n = int(inputs[0].numel() if padding is None else (~padding).sum())
            for i, layer in enumerate(unselectable_per_layer(module.model, *inputs, key_padding_mask=padding), start=1):
                sums[i] = sums.get(i, 0.0) + layer["fraction_heads"] * n
            keys += n
    if not keys:
        raise ValueError(f"ckpt: the test data of {record['log_dir']} yielded no keys")
    return {
        "task": record["task"],
        "variant": record["variant"],
        "seed": record["seed"],
        "keys": keys,
        "fraction_heads": {str(i): s / keys for i, s in sums.items()},
    }


def with_head_keys(records: list[RecordT]) -> list[RecordT]:
    """Each record with ``analysis/unselectable_heads/L<i>``: its own if it logged them, else computed once
    (a diverged run, whose weights are not finite, is left as it is)."""
    out = []
    for record in records:
        if record.get("status") == "diverged" or any(
            name.startswith(ANALYSIS_UNSELECTABLE_HEADS.split("{")[0]) for name in record["series"]
        ):
            out.append(record)
            continue
        result = cached_analysis(record, HEAD_KEYS_NAME, {}, head_keys_run)
        if result is not None:
            record = with_final_values(
                record,
                {layer_series(ANALYSIS_UNSELECTABLE_HEADS, int(i)): v for i, v in result["fraction_heads"].items()},
            )
        out.append(record)
    return out
