"""Analyses from the papers: pure functions on tensors plus one hook utility; no Lightning inside."""

from normbench.analysis.angles import attention_normals, query_angle_to_ones
from normbench.analysis.hooks import Capture, attention_modules, capture_attention_inputs

__all__ = ["Capture", "attention_modules", "attention_normals", "capture_attention_inputs", "query_angle_to_ones"]
