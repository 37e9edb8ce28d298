"""Placement: where the norms sit in a Transformer, and the one rule for which norms exist.

With N_a the norm in front of attention A and N_f the one in front of the feed-forward f:

* ``pre``:  x <- x + A(N_a(x));  x <- x + f(N_f(x))
* ``post``: x <- N_a(x + A(x));  x <- N_f(x + f(x))
* ``none``: x <- x + A(x);       x <- x + f(x)
* ``peri``: x <- x + N_a'(A(N_a(x)));  x <- x + N_f'(f(N_f(x)))  (Sandwich-LN / Peri-LN: a second,
  "output" norm N' on each sublayer's output, with its own spec)

An architecture names each of its norms with a role (:data:`NormRole`), and
:func:`present_norms` says which of them exist under a placement. Models build exactly those
norms, and run names, leaderboard rows, the monitor and the decomposition all read the same answer.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Literal, get_args

Placement = Literal["pre", "post", "none", "peri"]
PLACEMENTS: tuple[str, ...] = get_args(Placement)
NormRole = Literal["block", "final", "embedding", "output"]
"""``block``: one per block (N_a, N_f); ``final``: after the last block, normalising what pre-norm
blocks leave unnormalised; ``embedding``: on the input embedding, whatever the placement;
``output``: on a sublayer's output (N_a', N_f' of ``peri``)."""


def check_placement(placement: str, field: str = "model.arch.placement") -> None:
    """One-line error unless ``placement`` is a known placement."""
    if placement not in PLACEMENTS:
        raise ValueError(f"{field}: {placement!r} is not allowed; choose one of {', '.join(PLACEMENTS)}")


def norm_exists(role: NormRole, placement: str) -> bool:
    """Whether a norm of ``role`` exists under ``placement``.

    Block norms exist unless the placement is ``none``; a final norm under ``pre`` and ``peri``
    (whose residual streams are unnormalised; post-norm blocks already end normalised, ``none`` has
    no norms); output norms only under ``peri``; an embedding norm always.
    """
    check_placement(placement)
    if role == "block":
        return placement != "none"
    if role == "final":
        return placement in ("pre", "peri")
    if role == "output":
        return placement == "peri"
    if role == "embedding":
        return True
    raise ValueError(f"norm role: {role!r} is not one of {', '.join(get_args(NormRole))}")


def present_norms(placement: str, roles: Mapping[str, NormRole]) -> tuple[str, ...]:
    """The names (keys of ``roles``) of the norms that exist under ``placement``, in order."""
    return tuple(name for name, role in roles.items() if norm_exists(role, placement))


def attention_input_norm(
    placement: str, layer: int, present: Mapping[str, NormRole], identity: Collection[str] = ()
) -> str | None:
    """The norm whose output is, unchanged, the input of layer ``layer``'s attention (layers count from 1).

    ``present`` maps the network's norms (block norms named ``attn_norm`` / ``ffn_norm``, as in
    :class:`normbench.nn.blocks.TransformerBlock`) to their roles; norms in ``identity`` are N(x) = x
    and pass their input through. Under ``pre`` and ``peri`` the attention norm of the layer feeds it; under
    ``post`` the previous block's FFN norm (layer 1: the embedding norm); under ``none``, and behind
    an identity attention norm, the block input: the embedding norm for layer 1, else the residual
    stream (``None``: no norm feeds the attention).
    """
    check_placement(placement)
    if layer < 1:
        raise ValueError(f"layer: layers count from 1, got {layer}")
    embedding = next((n for n, role in present.items() if role == "embedding" and n not in identity), None)
    if placement in ("pre", "peri") and "attn_norm" in present and "attn_norm" not in identity:
        return "attn_norm"
    if placement == "post" and layer > 1:
        return "ffn_norm" if "ffn_norm" in present and "ffn_norm" not in identity else None
    return embedding if layer == 1 else None
