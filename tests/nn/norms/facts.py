"""The facts each built-in component declares, and the state-dict keys of its own parameters."""

from __future__ import annotations

# name: (class, projects, scales, uses_eps, identity, learned_direction, shift-and-scale form, options)
FACTS = {
    "both": ("LayerNorm", True, True, True, False, False, True, {}),
    "project": ("Projection", True, False, False, False, False, True, {}),
    "scale": ("RMSNorm", False, True, True, False, False, True, {}),
    "none": ("NoNorm", False, False, False, True, False, True, {}),
    "paper_no_projection": ("PaperNoProjection", False, True, False, False, False, True, {}),
    "learned": ("LearnedNorm", True, True, True, False, True, True, {}),
    "scalenorm": ("ScaleNorm", False, True, True, False, False, True, {"g": None}),
    "dyt": ("DyT", False, False, False, False, False, False, {"alpha": 0.5}),
}
# the state-dict keys of each component with the affine map (without it: the same less weight and bias)
OWN_KEYS = {"learned": ["direction"], "scalenorm": ["g"], "dyt": ["alpha"]}
