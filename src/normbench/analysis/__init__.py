"""Analyses from the papers: pure functions on tensors plus one hook utility; no Lightning inside."""

from normbench.analysis.angles import attention_normals, query_angle_to_ones
from normbench.analysis.decompose import Decomposition, decompose, importances
from normbench.analysis.hooks import Capture, attention_modules, capture_attention_inputs
from normbench.analysis.hull import hull_distance
from normbench.analysis.model_keys import attention_keys, prefix_unselectable, unselectable_per_layer
from normbench.analysis.unselectable import unselectable_mask, unselectable_mask_lp

__all__ = [
    "Capture",
    "Decomposition",
    "attention_keys",
    "attention_modules",
    "attention_normals",
    "capture_attention_inputs",
    "decompose",
    "hull_distance",
    "importances",
    "prefix_unselectable",
    "query_angle_to_ones",
    "unselectable_mask",
    "unselectable_mask_lp",
    "unselectable_per_layer",
]
