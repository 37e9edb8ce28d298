"""One configuration dataclass per architecture: every hyperparameter of a network, declared once.

The task modules take these as their ``arch`` argument (``--model.arch.d_model 8`` on the command
line, ``model.init_args.arch`` in a task YAML), the networks are built from them, and a run is
keyed by :meth:`ArchConfig.effective`: two configs that build the same network share it.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import TYPE_CHECKING, Any, ClassVar, NotRequired, TypedDict, cast

from normbench.nn.norms import NormSpec
from normbench.nn.norms.base import NormSpecFields
from normbench.nn.placement import NormRole, Placement, check_placement, present_norms

Activation = str
"""The feed-forward activation, a key of :data:`normbench.nn.blocks.ACTIVATIONS` (``relu``, ``gelu``, ``gelu_tanh``):
any string on the command line, a wrong one refused in one line when the network is built."""


def check_positive(config: Any, *names: str) -> None:
    """One-line error unless every field ``names`` of ``config`` is a positive integer."""
    for name in names:
        value = getattr(config, name)
        if not isinstance(value, int) or value < 1:
            raise ValueError(f"model.arch.{name}: must be a positive integer, got {value!r}")


def check_heads(d_model: int, n_heads: int) -> None:
    """One-line error unless ``n_heads`` divides ``d_model`` (both positive)."""
    if d_model <= 0 or n_heads <= 0:
        raise ValueError(f"model.arch.d_model and model.arch.n_heads must be positive, got {d_model} and {n_heads}")
    if d_model % n_heads:
        raise ValueError(f"model.arch.d_model={d_model} is not divisible by model.arch.n_heads={n_heads}")


class BlockKwargs(TypedDict):
    """The keyword arguments of each block of a network (:meth:`ArchConfig.block_kwargs`), as
    :class:`~normbench.nn.blocks.TransformerBlock` takes them."""

    d_model: int
    """The block's width."""
    n_heads: int
    """Its attention heads."""
    ffn_width: int | None
    """The feed-forward width (an architecture with a default for ``None`` fills it in)."""
    placement: Placement
    """Where the block norms sit."""
    attn_norm: NormSpec
    """The norm in front of (or after) attention."""
    ffn_norm: NormSpec
    """The norm in front of (or after) the feed-forward layer."""
    attn_out_norm: NormSpec
    """The norm of attention's output (``peri`` placement)."""
    ffn_out_norm: NormSpec
    """The norm of the feed-forward layer's output (``peri`` placement)."""
    qk_norm: bool
    """Whether queries and keys are normalized."""
    activation: Activation
    """The feed-forward activation."""
    dropout: float
    """The dropout rate."""
    qkv_bias: NotRequired[bool]
    """Whether q, k, v have biases (architectures that set it)."""
    causal: NotRequired[bool]
    """Whether attention is causal (the decoders)."""


class EffectiveArch(TypedDict, total=False):
    """An architecture config as the network sees it (:meth:`ArchConfig.effective`), what a run's identity and record
    hold as ``model.init_args.arch``: the fields of its config (those of :class:`~normbench.nn.gpt.GPTConfig`,
    :class:`~normbench.nn.majority.MajorityConfig` and :class:`~normbench.nn.bert.BertConfig` together), each norm
    as its identity (``None``: absent under the placement), optional fields only where they change the network."""

    d_model: int
    n_heads: int
    n_layers: int
    ffn_width: int | None
    placement: Placement
    qk_norm: bool
    activation: Activation
    dropout: float
    embed_norm: NormSpecFields | None
    attn_norm: NormSpecFields | None
    ffn_norm: NormSpecFields | None
    attn_out_norm: NormSpecFields
    ffn_out_norm: NormSpecFields
    final_norm: NormSpecFields | None
    vocab_size: int
    max_positions: int
    type_vocab_size: int
    qkv_bias: bool
    init_std: float
    embedding_scale: float
    """The multiplier s of the token embeddings (GPT), where it is not 1 or is learned."""
    learn_embedding_scale: bool
    num_classes: int
    num_labels: int
    init: str


@dataclass(frozen=True)
class ArchConfig:
    """Base of the architecture configs.

    Every architecture is ``n_layers`` Transformer blocks of width ``d_model`` with ``n_heads`` heads, a
    feed-forward layer of width ``ffn_width`` with its ``activation``, ``dropout``, the block norms placed by
    ``placement`` (``attn_norm``, ``ffn_norm``; under ``peri`` also ``attn_out_norm``, ``ffn_out_norm``) and
    ``qk_norm``; each block is built from :meth:`block_kwargs`. Each config declares those fields itself, with
    its own defaults and in its own order, the order of its keys on the command line and in run records (a
    field of this base class would come first), so they are declared here for type checkers only.
    ``NORM_ROLES`` names every norm of the config with its role.
    """

    NORM_ROLES: ClassVar[dict[str, NormRole]] = {}
    OPTIONAL: ClassVar[dict[str, object]] = {"qk_norm": False}
    """Fields left out of :meth:`effective` at these values (absent norms: whenever absent): fields added
    after runs were published, so a network without them keeps its identity (its config hash)."""
    if TYPE_CHECKING:
        d_model: int
        n_heads: int
        n_layers: int
        ffn_width: int | None
        attn_norm: NormSpec
        ffn_norm: NormSpec
        attn_out_norm: NormSpec
        ffn_out_norm: NormSpec
        activation: Activation
        dropout: float
    placement: Placement = "pre"
    qk_norm: bool = False

    def __post_init__(self) -> None:
        check_placement(self.placement)
        check_positive(self, "d_model", "n_heads", "n_layers")
        check_heads(self.d_model, self.n_heads)
        for name in self.NORM_ROLES:
            spec = getattr(self, name)
            if not isinstance(spec, NormSpec):
                raise ValueError(f"model.arch.{name}: must be a norm spec {{component, affine, eps}}, got {spec!r}")
            spec.check(f"model.arch.{name}", self.d_model)
        if not isinstance(self.qk_norm, bool):
            raise ValueError(f"model.arch.qk_norm: must be true or false, got {self.qk_norm!r}")
        if not 0.0 <= self.dropout < 1.0:
            raise ValueError(f"model.arch.dropout: must be in [0, 1), got {self.dropout!r}")

    def block_kwargs(self) -> BlockKwargs:
        """The keyword arguments of each of the network's blocks (:class:`~normbench.nn.blocks.TransformerBlock`).

        An architecture whose blocks differ in more (biases, causal attention) adds those.
        """
        return {
            "d_model": self.d_model,
            "n_heads": self.n_heads,
            "ffn_width": self.ffn_width,
            "placement": self.placement,
            "attn_norm": self.attn_norm,
            "ffn_norm": self.ffn_norm,
            "attn_out_norm": self.attn_out_norm,
            "ffn_out_norm": self.ffn_out_norm,
            "qk_norm": self.qk_norm,
            "activation": self.activation,
            "dropout": self.dropout,
        }

    def norms(self) -> dict[str, NormSpec]:
        """The norms the network has under its placement, by name, with canonical specs."""
        return {name: getattr(self, name).canonical() for name in present_norms(self.placement, self.NORM_ROLES)}

    def effective(self) -> EffectiveArch:
        """The config as the network sees it: absent norms ``None``, ignored norm settings reset.

        Optional fields (``OPTIONAL``, the ``output`` norms) are left out where they do not change the network.
        """
        present = self.norms()
        out = {
            f.name: getattr(self, f.name)
            for f in fields(self)
            if not (f.name in self.OPTIONAL and getattr(self, f.name) == self.OPTIONAL[f.name])
        }
        for name, role in self.NORM_ROLES.items():
            if name in present:
                out[name] = present[name].identity()
            elif role == "output":
                del out[name]
            else:
                out[name] = None
        return cast(EffectiveArch, out)
