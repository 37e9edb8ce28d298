"""Task ``majority``: predict the most frequent class of a sequence at every position.

Loss: mean cross-entropy over all positions. Metrics: train/test accuracy over positions, and the
mean folded angle between each query q Q K^T / sqrt(d) and the ones vector (Figure 2b).
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torchmetrics import MeanMetric
from torchmetrics.classification import MulticlassAccuracy

import normbench.tasks.series as S
from normbench.analysis.angles import query_angle_to_ones
from normbench.analysis.hooks import attention_modules, capture_attention_inputs
from normbench.data.majority import MajorityDataModule
from normbench.nn.majority import MajorityConfig, MajorityEncoder
from normbench.tasks.base import NormbenchModule, OptimConfig
from normbench.tasks.registry import Task
from normbench.tasks.series import TaskSeries


class MajorityModule(NormbenchModule):
    """The majority encoder of Brody et al. (2023) under a placement and per-norm components.

    Args:
        arch: the network (:class:`~normbench.nn.majority.MajorityConfig`; default: the paper's).
        optim: optimizer and schedule (:class:`~normbench.tasks.base.OptimConfig`).
    """

    SERIES = TaskSeries(
        (S.TRAIN_LOSS_STEP, S.TRAIN_LOSS_EPOCH, S.TRAIN_ACC, S.TEST_ACC, S.TEST_LOSS, S.TEST_QUERY_ANGLE)
    )
    # stacked seeds with their own data (normbench.sweep.vectorized): a short batch's padded rows are
    # token 0 with label -100, the target F.cross_entropy ignores, so the loss is that of the real rows
    STACK_PADDING = (0, -100)

    def __init__(self, arch: MajorityConfig = MajorityConfig(), optim: OptimConfig = OptimConfig()) -> None:
        super().__init__(arch, optim)
        self.save_hyperparameters()
        self.model = MajorityEncoder(arch)
        # fed class indices (see log_train_metrics) from our own data: no per-step input validation
        self.train_acc = MulticlassAccuracy(arch.num_classes, average="micro", validate_args=False)
        self.test_acc = MulticlassAccuracy(arch.num_classes, average="micro")
        self.test_loss = MeanMetric()
        self.query_angle = MeanMetric()

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        return self.network()(tokens)

    def loss_and_targets(
        self, batch: tuple[torch.Tensor, torch.Tensor]
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        tokens, labels = batch
        logits = self(tokens).flatten(0, 1)
        targets = labels[:, None].expand_as(tokens).flatten()
        return F.cross_entropy(logits, targets), logits, targets

    def training_step(self, batch: tuple[torch.Tensor, torch.Tensor], batch_idx: int) -> torch.Tensor:
        loss, logits, targets = self.loss_and_targets(batch)
        self.check_finite(loss)
        self.log_train_metrics(loss, logits, targets, batch_size=len(batch[0]))
        return loss

    def log_train_metrics(
        self, loss: torch.Tensor, logits: torch.Tensor, targets: torch.Tensor, batch_size: int
    ) -> None:
        """Training loss (step and epoch mean) and accuracy; also used per seed by :mod:`normbench.sweep.vectorized`."""
        # logged per epoch: no per-batch value needed. Predictions = the first maximal logit, as the
        # metric's own argmax picks, but ``max`` is about 40% faster than ``argmax`` over 20 classes
        self.train_acc.update(logits.detach().max(-1).indices, targets)
        self.log_train_loss(loss, batch_size=batch_size)
        self.log_training(S.TRAIN_ACC, self.train_acc, on_step=False, on_epoch=True)

    def model_inputs(self, batch: tuple[torch.Tensor, torch.Tensor]) -> tuple[tuple[torch.Tensor, ...], None]:
        return (batch[0],), None

    def validation_step(self, batch: tuple[torch.Tensor, torch.Tensor], batch_idx: int) -> None:
        with capture_attention_inputs(self.model) as keys:
            loss, logits, targets = self.loss_and_targets(batch)
        self.test_acc(logits, targets)
        self.test_loss(loss, weight=targets.numel())
        for name, attn in attention_modules(self.model).items():
            self.query_angle(query_angle_to_ones(attn.effective_queries(keys[name])).flatten())
        self.log(S.TEST_ACC, self.test_acc, prog_bar=True)
        self.log(S.TEST_LOSS, self.test_loss)
        self.log(S.TEST_QUERY_ANGLE, self.query_angle)


TASK = Task(
    name="majority",
    order=0,
    module=MajorityModule,
    datamodule=MajorityDataModule,
    description="Brody et al. 2023 §4.1: majority class of 50 tokens over 20 classes, 1-layer d=8 encoder",
    card=True,
)
