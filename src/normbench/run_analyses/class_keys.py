"""Unselectable class keys of a trained majority model (Brody et al. 2023, Figure 1a, counted).

The majority encoder has no positional encoding, so the keys of its first attention are a
function of the token alone: the ``C`` class embeddings, after the norm in front of attention under
``pre`` placement, as they are under ``post`` and ``none`` placement (nothing normalizes them
there). Class c can be attended to first only if its key is selectable, i.e. a vertex of the hull
of the ``C`` keys. This module loads a run's final checkpoint, reads the keys of one sequence that
holds every class once (``attention_keys``, one forward pass) and records the fraction of the
``C`` keys that are unselectable, cached as ``class_keys.json`` in the run folder; the leaderboard
reads it as the series ``analysis/class_keys/unselectable`` (metric ``class_keys_unselectable``).

The key-space view counts, per head, the class keys that head scores (rows of x W_k^T, after
QK-norm where the attention has it) that are unselectable among the C, averaged over heads
(series ``analysis/class_keys/unselectable_heads``, metric ``class_keys_unselectable_heads``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, TypedDict

import numpy as np
import torch
from torch import nn

from normbench.analysis.model_keys import attention_keys, head_unselectable
from normbench.analysis.unselectable import unselectable_mask
from normbench.run_analyses.run_cache import RecordT, cached_analysis, with_final_values
from normbench.tasks.series import ANALYSIS_CLASS_KEYS, ANALYSIS_CLASS_KEYS_HEADS
from normbench.training.run.loading import load_run
from normbench.training.run.rundir import CLASS_KEYS_NAME

METRIC = "class_keys_unselectable"
METRIC_HEADS = "class_keys_unselectable_heads"
VIEWS = 2  # cache version: the input-space and the per-head key-space view


def unselectable_class_keys(model: nn.Module, view: str = "input") -> np.ndarray:
    """True where class c's key at the first attention is unselectable among the C class keys.

    ``view``: ``input`` gives (C,), the attention input rows (Brody et al.); ``heads`` gives (H, C),
    each head's keys in its key space. ``model`` is a majority encoder (``config.num_classes``
    classes, no positional encoding): one forward pass of the sequence 0..C-1 gives the C class keys.
    """
    classes = getattr(getattr(model, "config", None), "num_classes", None)
    if classes is None:
        raise ValueError(
            "bench.class_keys: the network has no class tokens (model.arch.num_classes); "
            "the class-key analysis is for the majority task"
        )
    tokens = torch.arange(classes, device=next(model.parameters()).device)[None]
    keys = attention_keys(model, tokens)["L1"]
    if view == "heads":
        return head_unselectable(keys["heads"])[0]
    return unselectable_mask(keys["after"][0].double().cpu().numpy())


class ClassKeys(TypedDict):
    """A run's ``class_keys.json`` (:func:`class_keys_run`; the cache adds the checkpoint's stamp and ``views``)."""

    task: str
    """The run's task."""
    variant: str
    """The run's variant."""
    seed: int
    """The run's seed."""
    classes: int
    """The number of classes C."""
    unselectable: list[int]
    """The classes whose key at the first attention is unselectable (input space)."""
    fraction: float
    """Their share of the C classes."""
    unselectable_heads: list[list[int]]
    """Per head, the classes whose key is unselectable in its key space."""
    fraction_heads: float
    """The unselectable share, averaged over heads."""


def class_keys_run(ckpt: Path) -> ClassKeys:
    """The unselectable class keys of a run's final checkpoint, in input space and per head."""
    record, module = load_run(ckpt)
    mask = unselectable_class_keys(module.model)
    heads = unselectable_class_keys(module.model, "heads")
    return {
        "task": record["task"],
        "variant": record["variant"],
        "seed": record["seed"],
        "classes": len(mask),
        "unselectable": [int(c) for c in mask.nonzero()[0]],
        "fraction": float(mask.mean()),
        "unselectable_heads": [[int(c) for c in head.nonzero()[0]] for head in heads],
        "fraction_heads": float(heads.mean()),
    }


def metrics() -> dict[str, dict[str, Any]]:
    """The leaderboard metrics of the analysis, read at the final step."""
    return {
        METRIC: {"series": ANALYSIS_CLASS_KEYS, "at_step": "last"},
        METRIC_HEADS: {"series": ANALYSIS_CLASS_KEYS_HEADS, "at_step": "last"},
    }


def with_class_keys(records: list[RecordT]) -> list[RecordT]:
    """Each record with its run's unselectable class-key fractions as one-point series at its final step
    (a diverged run, whose weights are not finite, is left as it is)."""
    out = []
    for record in records:
        if record.get("status") == "diverged":
            out.append(record)
            continue
        result = cached_analysis(record, CLASS_KEYS_NAME, {"views": VIEWS}, class_keys_run)
        if result is not None:
            record = with_final_values(
                record, {ANALYSIS_CLASS_KEYS: result["fraction"], ANALYSIS_CLASS_KEYS_HEADS: result["fraction_heads"]}
            )
        out.append(record)
    return out
