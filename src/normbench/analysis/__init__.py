"""Analyses from the papers: pure functions on tensors plus forward hooks; no Lightning inside."""

from normbench.analysis.angles import query_angle_to_ones
from normbench.analysis.hooks import capture_attention_inputs

__all__ = ["capture_attention_inputs", "query_angle_to_ones"]
