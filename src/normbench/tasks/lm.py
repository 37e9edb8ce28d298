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

import normbench.tasks.series as S
from normbench.analysis.model_keys import unselectable_per_layer
from normbench.data.lm import LMDataModule
from normbench.nn.gpt import GPTConfig, GPTDecoder
from normbench.tasks.base import NormbenchModule, OptimConfig
from normbench.tasks.registry import Task
from normbench.tasks.series import TaskSeries, layer_series

IGNORE = -100  # target index that the loss and perplexity skip


class LMModule(NormbenchModule):
    """GPT-2-style decoder under a placement and per-norm components, trained on next-token loss.

    Args:
        arch: the network (:class:`~normbench.nn.gpt.GPTConfig`; default: the paper's GPT-2 at d = 8).
        optim: optimizer and schedule (:class:`~normbench.tasks.base.OptimConfig`).
    """

    SERIES = TaskSeries(
        (
            S.TRAIN_LOSS_STEP,
            S.TRAIN_LOSS_EPOCH,
            S.TRAIN_PPL,
            S.VAL_LOSS,
            S.VAL_PPL,
            S.TEST_LOSS,
            S.ANALYSIS_SEQUENCES,
            S.ANALYSIS_UNSELECTABLE_BEFORE,
            S.ANALYSIS_UNSELECTABLE_AFTER,
            S.ANALYSIS_UNSELECTABLE_HEADS,
        )
    )

    def __init__(
        self, arch: GPTConfig = GPTConfig(), optim: OptimConfig = OptimConfig(lr=5e-5, lr_decay_steps=50_000)
    ) -> None:
        super().__init__(arch, optim)
        self.save_hyperparameters()
        self.model = GPTDecoder(arch)
        self.val_loss = MeanMetric()
        self.val_ppl = Perplexity(ignore_index=IGNORE)
        self.test_loss = MeanMetric()
        self.analysed = SumMetric()
        self.unselectable = torch.nn.ModuleDict(
            {f"{where}_L{i + 1}": MeanMetric() for where in ("before", "after", "heads") for i in range(arch.n_layers)}
        )

    def setup(self, stage: str) -> None:
        datamodule = getattr(self.trainer, "datamodule", None)
        if isinstance(datamodule, LMDataModule):
            field = "data.context" if datamodule.context >= datamodule.analysis_length else "data.analysis_length"
            self.check_data_fits(
                datamodule.tokenizer.get_vocab_size(), max(datamodule.context, datamodule.analysis_length), field
            )

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        return self.network()(tokens)

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
        self.log_training(S.TRAIN_PPL, loss.detach().exp(), on_step=True, on_epoch=False)
        return loss

    def model_inputs(self, batch: tuple[torch.Tensor]) -> tuple[tuple[torch.Tensor, ...], None]:
        return (batch[0],), None

    def validation_step(self, batch: tuple[torch.Tensor], batch_idx: int) -> None:
        (tokens,) = batch
        loss, logits = self.next_token_loss(tokens)
        self.val_loss(loss, weight=tokens.shape[0] * (tokens.shape[1] - 1))
        self.val_ppl(logits, self.next_tokens(tokens))
        self.log(S.VAL_LOSS, self.val_loss, prog_bar=True)
        self.log(S.VAL_PPL, self.val_ppl)

    def test_step(self, batch: tuple[torch.Tensor], batch_idx: int) -> None:
        """Tables 1-2 on held-out sequences: unselectable fraction per layer, before/after its norm, and per head."""
        (tokens,) = batch
        loss, logits = self.next_token_loss(tokens)
        self.test_loss(loss, weight=tokens.shape[0] * (tokens.shape[1] - 1))
        self.log(S.TEST_LOSS, self.test_loss)
        self.analysed(tokens.shape[0])
        self.log(S.ANALYSIS_SEQUENCES, self.analysed)
        for i, layer in enumerate(unselectable_per_layer(self.model, tokens)):
            for where, template, fraction in (
                ("before", S.ANALYSIS_UNSELECTABLE_BEFORE, layer["fraction_before"]),
                ("after", S.ANALYSIS_UNSELECTABLE_AFTER, layer["fraction_after"]),
                ("heads", S.ANALYSIS_UNSELECTABLE_HEADS, layer["fraction_heads"]),
            ):
                metric = self.unselectable[f"{where}_L{i + 1}"]
                metric(fraction, weight=tokens.numel())
                self.log(layer_series(template, i + 1), metric)


TASK = Task(
    name="lm",
    order=1,
    module=LMModule,
    datamodule=LMDataModule,
    description="Brody et al. 2023 §4.2: GPT-2-style 4-layer d=8 decoder on Wikipedia text, unselectable keys",
    card=True,
    analysis_set_size="analysis_length",
    token_table=3,
)
