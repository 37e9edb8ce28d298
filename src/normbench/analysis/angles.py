"""Angle between attention queries and the all-ones vector (Brody et al. 2023, Sections 3.1 and 4.1)."""

from __future__ import annotations

import torch


def query_angle_to_ones(queries: torch.Tensor, fold: bool = True, direction: torch.Tensor | None = None) -> torch.Tensor:
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
