"""Task ``majority``: predict the most frequent class of a sequence at every position.

Loss: mean cross-entropy over all positions. Metrics: train/test accuracy over positions, and the
mean folded angle between each query q Q K^T / sqrt(d) and the ones vector (Figure 2b).
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torchmetrics import MeanMetric
from torchmetrics.classification import MulticlassAccuracy

from normbench.analysis import capture_attention_inputs, query_angle_to_ones
from normbench.analysis.hooks import attention_modules
from normbench.blocks import Activation, Placement
from normbench.data.majority import MajorityDataModule
from normbench.lightning_module import NormbenchModule
from normbench.models.majority import MajorityEncoder
from normbench.norms import NormSpec
from normbench.tasks.registry import Task, register


class MajorityModule(NormbenchModule):
    """The majority encoder of Brody et al. (2023) under a placement and per-norm components.

    Args:
        num_classes: token classes (must equal the data's).
        d_model, n_heads, ffn_width, n_layers, activation, dropout: architecture.
        placement: ``pre`` | ``post`` | ``none``.
        attn_norm: the norm in front of attention (the paper ablates this one; no affine).
        ffn_norm: the norm in front of the feed-forward layer (affine LayerNorm).
        lr, lr_decay_steps, warmup_steps, weight_decay: see :class:`NormbenchModule`.
    """

    def __init__(
        self,
        num_classes: int = 20,
        d_model: int = 8,
        n_heads: int = 1,
        ffn_width: int = 8,
        n_layers: int = 1,
        placement: Placement = "pre",
        attn_norm: NormSpec = NormSpec("both", affine=False, eps=0.0),
        ffn_norm: NormSpec = NormSpec("both", affine=True, eps=0.0),
        activation: Activation = "relu",
        dropout: float = 0.0,
        lr: float = 1e-3,
        lr_decay_steps: int = 140_000,
        warmup_steps: int = 0,
        weight_decay: float = 0.0,
    ) -> None:
        super().__init__(lr, lr_decay_steps, warmup_steps, weight_decay)
        self.save_hyperparameters()
        self.model = MajorityEncoder(
            num_classes, d_model, n_heads, ffn_width, n_layers, placement, attn_norm, ffn_norm, activation, dropout
        )
        self.train_acc = MulticlassAccuracy(num_classes, average="micro")
        self.test_acc = MulticlassAccuracy(num_classes, average="micro")
        self.test_loss = MeanMetric()
        self.query_angle = MeanMetric()

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        return self.model(tokens)

    def loss_and_targets(self, batch: tuple[torch.Tensor, torch.Tensor]) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        tokens, labels = batch
        logits = self(tokens).flatten(0, 1)
        targets = labels[:, None].expand_as(tokens).flatten()
        return F.cross_entropy(logits, targets), logits, targets

    def training_step(self, batch: tuple[torch.Tensor, torch.Tensor], batch_idx: int) -> torch.Tensor:
        loss, logits, targets = self.loss_and_targets(batch)
        self.check_finite(loss)
        self.log_train_metrics(loss, logits, targets, batch_size=len(batch[0]))
        return loss

    def log_train_metrics(self, loss: torch.Tensor, logits: torch.Tensor, targets: torch.Tensor, batch_size: int) -> None:
        """Training loss (step and epoch mean) and accuracy; also used per seed by :mod:`normbench.vectorized`."""
        self.train_acc.update(logits, targets)  # logged per epoch: no per-batch value needed
        self.log_train_loss(loss, batch_size=batch_size)
        self.log("train/acc", self.train_acc, on_step=False, on_epoch=True)

    def model_inputs(self, batch: tuple[torch.Tensor, torch.Tensor]) -> tuple[tuple[torch.Tensor, ...], None]:
        return (batch[0],), None

    def validation_step(self, batch: tuple[torch.Tensor, torch.Tensor], batch_idx: int) -> None:
        with capture_attention_inputs(self.model) as keys:
            loss, logits, targets = self.loss_and_targets(batch)
        self.test_acc(logits, targets)
        self.test_loss(loss, weight=targets.numel())
        for name, attn in attention_modules(self.model).items():
            self.query_angle(query_angle_to_ones(attn.effective_queries(keys[name])).flatten())
        self.log("test/acc", self.test_acc, prog_bar=True)
        self.log("test/loss", self.test_loss)
        self.log("test/query_angle", self.query_angle)


register(
    Task(
        name="majority",
        module=MajorityModule,
        datamodule=MajorityDataModule,
        description="Brody et al. 2023 §4.1: majority class of 50 tokens over 20 classes, 1-layer d=8 encoder",
    )
)
