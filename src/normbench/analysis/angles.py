"""Angle between attention queries and the all-ones vector (Brody et al. 2023, Sections 3.1 and 4.1)."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from normbench.nn.blocks import TransformerBlock, hook_points
from normbench.nn.norms import Norm


def query_angle_to_ones(
    queries: torch.Tensor, fold: bool = True, direction: torch.Tensor | None = None
) -> torch.Tensor:
    """Angle in degrees between each vector v (last dim d) and 1: arccos(v.1 / (|v| sqrt(d))).

    ``direction``: a unit vector u to measure against instead of 1/sqrt(d) (e.g. the learned
    normal of a ``learned`` norm): arccos(v.u / |v|).

    With ``fold`` the sign of v is ignored, arccos(|cos|), giving [0, 90] as in Figure 2b: a query
    anti-parallel to 1 scores projected keys just as uniformly as a parallel one.
    Zero vectors give NaN (no direction).
    """
    d = queries.shape[-1]
    if direction is None:
        cos = queries.sum(-1) / (queries.norm(dim=-1) * d**0.5)
    else:
        cos = (queries @ direction) / queries.norm(dim=-1)
    if fold:
        cos = cos.abs()
    return torch.rad2deg(torch.arccos(cos.clamp(-1.0, 1.0)))


def attention_normals(model: nn.Module) -> dict[str, torch.Tensor]:
    """Per attention hook point (``L1.attn``, ...), the unit normal of the hyperplane its keys lie on.

    Pre- (and peri-) norm blocks whose attention norm projects (``Component.projects``: ``both``, ``project``,
    ``learned``): the keys g * n + b with n orthogonal to u (1/sqrt(d) 1, or the learned u) lie on
    the affine hyperplane with normal u / g, and a query parallel to it scores every key alike.
    Elsewhere (no projection, or keys not produced by a pre-norm) the reference is 1/sqrt(d) 1, as
    in the paper's query angle. Each normal is on its attention's device.
    """
    normals = {}
    for name, block in hook_points(model).items():
        if isinstance(block, TransformerBlock):
            norm = block.attn_norm
            weight = block.attn.q_proj.weight
            d = weight.shape[1]
            direction = torch.full((d,), d**-0.5, device=weight.device, dtype=weight.dtype)
            if isinstance(norm, Norm) and block.placement in ("pre", "peri") and norm.component.projects:
                direction = norm.unit_direction().detach()
                if norm.weight is not None and bool((norm.weight != 0).all()):
                    direction = F.normalize(direction / norm.weight.detach(), dim=0)
            normals[f"{name}.attn"] = direction.detach()
    return normals
