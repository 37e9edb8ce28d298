"""Task ``sst2``: binary sentiment classification with a BERT-style encoder (Brody et al. 2023, App. D).

Loss: cross-entropy of the [CLS] classifier. Metrics on the dev sentences: loss, accuracy, F1 of
the positive class. The test stage is the paper's analysis: per layer, the fraction of the
attention's keys (its input rows, padding excluded) that are unselectable, and the fraction of
sentence tokens (``[CLS]``/``[SEP]`` excluded) unselectable in at least one layer.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torchmetrics import MeanMetric
from torchmetrics.classification import BinaryAccuracy, BinaryF1Score

import normbench.tasks.series as S
from normbench.analysis.model_keys import unselectable_per_layer
from normbench.data.sst2 import SST2DataModule
from normbench.nn.bert import BertConfig, BertEncoder
from normbench.tasks.base import NormbenchModule, OptimConfig
from normbench.tasks.registry import Task
from normbench.tasks.series import TaskSeries, layer_series

Batch = dict[str, torch.Tensor]


def content_mask(batch: Batch) -> torch.Tensor:
    """True at the sentence's own tokens: not padding, not the leading [CLS], not the final [SEP]."""
    mask = ~batch["padding_mask"]
    lengths = mask.sum(dim=1)
    mask = mask.clone()
    mask[:, 0] = False
    mask[torch.arange(len(mask), device=mask.device), lengths - 1] = False
    return mask


class SST2Module(NormbenchModule):
    """BERT-style encoder under a placement and per-norm components, trained on SST-2.

    Args:
        arch: the network (:class:`~normbench.nn.bert.BertConfig`; default: the paper's BERT at d = 8).
        optim: optimizer and schedule (:class:`~normbench.tasks.base.OptimConfig`).
    """

    SERIES = TaskSeries(
        (
            S.TRAIN_LOSS_STEP,
            S.TRAIN_LOSS_EPOCH,
            S.TRAIN_ACC,
            S.VAL_LOSS,
            S.VAL_ACC,
            S.VAL_F1,
            S.ANALYSIS_UNSELECTABLE,
            S.ANALYSIS_UNSELECTABLE_TOKENS,
            S.ANALYSIS_UNSELECTABLE_HEADS,
        )
    )

    def __init__(
        self, arch: BertConfig = BertConfig(), optim: OptimConfig = OptimConfig(lr=5e-5, lr_decay_steps=50_000)
    ) -> None:
        super().__init__(arch, optim)
        self.save_hyperparameters()
        self.model = BertEncoder(arch)
        self.train_acc = BinaryAccuracy(validate_args=False)  # our own labels: no per-step check on the host
        self.val_acc, self.val_f1, self.val_loss = BinaryAccuracy(), BinaryF1Score(), MeanMetric()
        self.unselectable = torch.nn.ModuleDict(
            {f"{view}L{i + 1}": MeanMetric() for view in ("", "heads_") for i in range(arch.n_layers)}
        )
        self.unselectable_tokens = MeanMetric()

    def setup(self, stage: str) -> None:
        datamodule = getattr(self.trainer, "datamodule", None)
        if isinstance(datamodule, SST2DataModule):
            self.check_data_fits(datamodule.tokenizer.get_vocab_size(), datamodule.max_length, "data.max_length")

    def forward(self, input_ids: torch.Tensor, padding_mask: torch.Tensor | None = None) -> torch.Tensor:
        return self.network()(input_ids, padding_mask)

    def training_step(self, batch: Batch, batch_idx: int) -> torch.Tensor:
        logits = self(batch["input_ids"], batch["padding_mask"])
        loss = F.cross_entropy(logits, batch["labels"])
        self.check_finite(loss)
        self.train_acc.update(logits.argmax(-1), batch["labels"])  # logged per epoch: no per-batch value needed
        self.log_train_loss(loss, batch_size=len(logits))
        self.log_training(S.TRAIN_ACC, self.train_acc, on_step=False, on_epoch=True, batch_size=len(logits))
        return loss

    def model_inputs(self, batch: Batch) -> tuple[tuple[torch.Tensor, ...], torch.Tensor]:
        return (batch["input_ids"], batch["padding_mask"]), batch["padding_mask"]

    def predict_step(self, batch: Batch, batch_idx: int) -> dict[str, torch.Tensor]:
        """Predicted labels of unlabelled sentences (GLUE's ``test.tsv``): ``{"index", "prediction", "p_positive"}``."""
        probs = self(batch["input_ids"], batch["padding_mask"]).softmax(-1)
        return {"index": batch["index"], "prediction": probs.argmax(-1), "p_positive": probs[:, 1]}

    def validation_step(self, batch: Batch, batch_idx: int) -> None:
        logits = self(batch["input_ids"], batch["padding_mask"])
        labels = batch["labels"]
        self.val_loss(F.cross_entropy(logits, labels), weight=len(labels))
        predicted = logits.argmax(-1)
        self.val_acc(predicted, labels)
        self.val_f1(predicted, labels)
        self.log(S.VAL_LOSS, self.val_loss, batch_size=len(labels))
        self.log(S.VAL_ACC, self.val_acc, prog_bar=True, batch_size=len(labels))
        self.log(S.VAL_F1, self.val_f1, batch_size=len(labels))

    def test_step(self, batch: Batch, batch_idx: int) -> None:
        """Per-layer unselectable fraction over all keys (input space and per head), and over sentence tokens in any
        layer."""
        keys = ~batch["padding_mask"]
        layers = unselectable_per_layer(
            self.model, batch["input_ids"], batch["padding_mask"], key_padding_mask=batch["padding_mask"]
        )
        positions = [layer["positions_after"] for layer in layers]
        for i, (p, layer) in enumerate(zip(positions, layers, strict=False)):
            metric = self.unselectable[f"L{i + 1}"]
            metric(p[keys].float().mean(), weight=int(keys.sum()))
            self.log(layer_series(S.ANALYSIS_UNSELECTABLE, i + 1), metric, batch_size=len(p))
            heads = self.unselectable[f"heads_L{i + 1}"]
            heads(layer["fraction_heads"], weight=int(keys.sum()))
            self.log(layer_series(S.ANALYSIS_UNSELECTABLE_HEADS, i + 1), heads, batch_size=len(p))
        content = content_mask(batch)
        any_layer = torch.stack(positions).any(dim=0)
        self.unselectable_tokens(any_layer[content].float().mean(), weight=int(content.sum()))
        self.log(S.ANALYSIS_UNSELECTABLE_TOKENS, self.unselectable_tokens, batch_size=len(content))


TASK = Task(
    name="sst2",
    order=2,
    module=SST2Module,
    datamodule=SST2DataModule,
    description="Brody et al. 2023 App. D: SST-2 sentiment, 4-layer d=8 BERT-style encoder with/without LayerNorm",
    card=True,
    analysis_sets="dev sentences",
    sentence_encoder=True,
    token_table=4,
)
