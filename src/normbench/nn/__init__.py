"""Networks: norms, blocks with named hook points, placement, one config per architecture."""

from normbench.nn.bert import BertConfig, BertEncoder
from normbench.nn.config import ArchConfig
from normbench.nn.gpt import GPTConfig, GPTDecoder
from normbench.nn.majority import MajorityConfig, MajorityEncoder
from normbench.nn.norms import Norm, NormSpec, component_names, create_norm, get_component, register_component
from normbench.nn.placement import PLACEMENTS, Placement, norm_exists, present_norms

__all__ = [
    "ArchConfig",
    "BertConfig",
    "BertEncoder",
    "GPTConfig",
    "GPTDecoder",
    "MajorityConfig",
    "MajorityEncoder",
    "Norm",
    "NormSpec",
    "PLACEMENTS",
    "Placement",
    "component_names",
    "create_norm",
    "get_component",
    "norm_exists",
    "present_norms",
    "register_component",
]
