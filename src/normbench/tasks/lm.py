"""Task ``lm``: causal language modelling with a GPT-2-style decoder (Brody et al. 2023, §4.2).

Loss: mean next-token cross-entropy, L = -1/N sum_t log p(x_{t+1} | x_<=t); perplexity = exp(L).
The test stage is the paper's analysis (Tables 1-2): on held-out sequences, the fraction of
keys of each layer's attention that are unselectable (inside the convex hull of the others),
before and after the norm in front of attention.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torchmetrics import MeanMetric, SumMetric
from torchmetrics.text import Perplexity

from normbench.analysis.model_keys import unselectable_per_layer
from normbench.blocks import Activation, Placement
from normbench.data.lm import LMDataModule
from normbench.lightning_module import NormbenchModule
from normbench.models.gpt import GPT2_NORM, GPTDecoder
from normbench.norms import NormSpec
from normbench.tasks.registry import Task, register

IGNORE = -100  # target index that the loss and perplexity skip


class LMModule(NormbenchModule):
    """GPT-2-style decoder under a placement and per-norm components, trained on next-token loss.

    Args:
        vocab_size: embedding rows (>= the tokenizer's vocabulary).
        max_positions: learned positions (>= the data's context and analysis length).
        d_model, n_heads, n_layers, ffn_width, activation, dropout: architecture (GPT-2: gelu_tanh, 0.1).
        placement: ``pre`` | ``post`` | ``none``.
        attn_norm: the norm in front of attention ("w/o scaling" = ``project`` without affine).
        ffn_norm, final_norm: the other norms (GPT-2: affine LayerNorm, eps 1e-5).
        lr, lr_decay_steps, warmup_steps, weight_decay: see :class:`NormbenchModule`.
    """

    def __init__(
        self,
        vocab_size: int = 50257,
        max_positions: int = 1024,
        d_model: int = 8,
        n_heads: int = 4,
        n_layers: int = 4,
        ffn_width: int | None = None,
        placement: Placement = "pre",
        attn_norm: NormSpec = GPT2_NORM,
        ffn_norm: NormSpec = GPT2_NORM,
        final_norm: NormSpec = GPT2_NORM,
        activation: Activation = "gelu_tanh",
        dropout: float = 0.1,
        lr: float = 5e-5,
        lr_decay_steps: int = 50_000,
        warmup_steps: int = 0,
        weight_decay: float = 0.0,
    ) -> None:
        super().__init__(lr, lr_decay_steps, warmup_steps, weight_decay)
        self.save_hyperparameters()
        self.model = GPTDecoder(
            vocab_size, max_positions, d_model, n_heads, n_layers, ffn_width, placement,
            attn_norm, ffn_norm, final_norm, activation, dropout,
        )
        self.val_loss = MeanMetric()
        self.val_ppl = Perplexity(ignore_index=IGNORE)
        self.test_loss = MeanMetric()
        self.analysed = SumMetric()
        self.unselectable = torch.nn.ModuleDict(
            {f"{where}_L{i + 1}": MeanMetric() for where in ("before", "after") for i in range(n_layers)}
        )

    def setup(self, stage: str) -> None:
        datamodule = getattr(self.trainer, "datamodule", None)
        if isinstance(datamodule, LMDataModule):
            field = "data.init_args.context" if datamodule.context >= datamodule.analysis_length else "data.init_args.analysis_length"
            self.check_data_fits(datamodule.tokenizer.get_vocab_size(),
                                 max(datamodule.context, datamodule.analysis_length), field)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        return self.model(tokens)

    @staticmethod
    def next_tokens(tokens: torch.Tensor) -> torch.Tensor:
        """Targets: tokens shifted left by one, the last position ignored (-100)."""
        return F.pad(tokens[:, 1:], (0, 1), value=IGNORE)

    def next_token_loss(self, tokens: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """(mean cross-entropy of each next token given its prefix, the targets).

        The last position has no next token; it is ignored instead of slicing the logits,
        which would copy the (B, T, vocab) tensor.
        """
        targets = self.next_tokens(tokens)
        logits = self(tokens)
        return F.cross_entropy(logits.flatten(0, 1), targets.flatten(), ignore_index=IGNORE), logits

    def training_step(self, batch: tuple[torch.Tensor], batch_idx: int) -> torch.Tensor:
        (tokens,) = batch
        loss, _ = self.next_token_loss(tokens)
        self.check_finite(loss)
        self.log_train_loss(loss, batch_size=len(batch[0]))
        self.log("train/ppl", loss.detach().exp(), on_step=True, on_epoch=False)
        return loss

    def model_inputs(self, batch: tuple[torch.Tensor]) -> tuple[tuple[torch.Tensor, ...], None]:
        return (batch[0],), None

    def validation_step(self, batch: tuple[torch.Tensor], batch_idx: int) -> None:
        (tokens,) = batch
        loss, logits = self.next_token_loss(tokens)
        self.val_loss(loss, weight=tokens.shape[0] * (tokens.shape[1] - 1))
        self.val_ppl(logits, self.next_tokens(tokens))
        self.log("val/loss", self.val_loss, prog_bar=True)
        self.log("val/ppl", self.val_ppl)

    def test_step(self, batch: tuple[torch.Tensor], batch_idx: int) -> None:
        """Tables 1-2 on held-out sequences: unselectable fraction per layer, before/after its norm."""
        (tokens,) = batch
        loss, logits = self.next_token_loss(tokens)
        self.test_loss(loss, weight=tokens.shape[0] * (tokens.shape[1] - 1))
        self.log("test/loss", self.test_loss)
        self.analysed(tokens.shape[0])
        self.log("analysis/sequences", self.analysed)
        for i, layer in enumerate(unselectable_per_layer(self.model, tokens)):
            for where in ("before", "after"):
                metric = self.unselectable[f"{where}_L{i + 1}"]
                metric(layer[f"fraction_{where}"], weight=tokens.numel())
                self.log(f"analysis/unselectable_{where}/L{i + 1}", metric)


register(
    Task(
        name="lm",
        module=LMModule,
        datamodule=LMDataModule,
        description="Brody et al. 2023 §4.2: GPT-2-style 4-layer d=8 decoder on Wikipedia text, unselectable keys",
    )
)
