"""Task ``sst2``: binary sentiment classification with a BERT-style encoder (Brody et al. 2023, App. D).

Loss: cross-entropy of the [CLS] classifier. Metrics on the dev sentences: loss, accuracy, F1 of
the positive class. The test stage is the paper's analysis: per layer, the fraction of the
attention's keys (its input rows, padding excluded) that are unselectable, and the fraction of
sentence tokens (``[CLS]``/``[SEP]`` excluded) unselectable in at least one layer.
"""

from __future__ import annotations

from pathlib import Path

import torch
import torch.nn.functional as F
from torchmetrics import MeanMetric
from torchmetrics.classification import BinaryAccuracy, BinaryF1Score

from normbench.analysis.model_keys import unselectable_per_layer
from normbench.blocks import Activation, Placement
from normbench.data.sst2 import SST2DataModule
from normbench.lightning_module import NormbenchModule
from normbench.models.bert import BERT_NORM, BertEncoder
from normbench.norms import NormSpec
from normbench.tasks.registry import Task, register

Batch = dict[str, torch.Tensor]


def content_mask(batch: Batch) -> torch.Tensor:
    """True at the sentence's own tokens: not padding, not the leading [CLS], not the final [SEP]."""
    mask = ~batch["padding_mask"]
    lengths = mask.sum(dim=1)
    mask = mask.clone()
    mask[:, 0] = False
    mask[torch.arange(len(mask)), lengths - 1] = False
    return mask


class SST2Module(NormbenchModule):
    """BERT-style encoder under a placement and per-norm components, trained on SST-2.

    Args:
        vocab_size: embedding rows (>= the tokenizer's vocabulary; BERT-base cased: 28996).
        max_positions, type_vocab_size, d_model, n_heads, n_layers, ffn_width, activation, dropout:
            architecture (BERT-base hyperparameters with d=8 and 4 layers).
        placement: ``post`` (BERT) | ``pre`` | ``none``.
        embed_norm, attn_norm, ffn_norm: the norms (BERT: affine LayerNorm, eps 1e-12).
        lr, lr_decay_steps, warmup_steps, weight_decay: see :class:`NormbenchModule`.
    """

    def __init__(
        self,
        vocab_size: int = 28996,
        max_positions: int = 512,
        type_vocab_size: int = 2,
        d_model: int = 8,
        n_heads: int = 4,
        n_layers: int = 4,
        ffn_width: int = 3072,
        placement: Placement = "post",
        embed_norm: NormSpec = BERT_NORM,
        attn_norm: NormSpec = BERT_NORM,
        ffn_norm: NormSpec = BERT_NORM,
        activation: Activation = "gelu",
        dropout: float = 0.1,
        lr: float = 5e-5,
        lr_decay_steps: int = 50_000,
        warmup_steps: int = 0,
        weight_decay: float = 0.0,
    ) -> None:
        super().__init__(lr, lr_decay_steps, warmup_steps, weight_decay)
        self.save_hyperparameters()
        self.model = BertEncoder(vocab_size, max_positions, type_vocab_size, d_model, n_heads, n_layers, ffn_width,
                                 placement, embed_norm, attn_norm, ffn_norm, activation, dropout)
        self.train_acc = BinaryAccuracy()
        self.val_acc, self.val_f1, self.val_loss = BinaryAccuracy(), BinaryF1Score(), MeanMetric()
        self.unselectable = torch.nn.ModuleDict({f"L{i + 1}": MeanMetric() for i in range(n_layers)})
        self.unselectable_tokens = MeanMetric()

    def setup(self, stage: str) -> None:
        datamodule = getattr(self.trainer, "datamodule", None)
        if isinstance(datamodule, SST2DataModule):
            self.check_data_fits(datamodule.tokenizer.get_vocab_size(), datamodule.max_length, "data.init_args.max_length")

    def forward(self, input_ids: torch.Tensor, padding_mask: torch.Tensor | None = None) -> torch.Tensor:
        return self.model(input_ids, padding_mask)

    def training_step(self, batch: Batch, batch_idx: int) -> torch.Tensor:
        logits = self(batch["input_ids"], batch["padding_mask"])
        loss = F.cross_entropy(logits, batch["labels"])
        self.check_finite(loss)
        self.train_acc(logits.argmax(-1), batch["labels"])
        self.log_train_loss(loss, batch_size=len(logits))
        self.log("train/acc", self.train_acc, on_step=False, on_epoch=True, batch_size=len(logits))
        return loss

    def model_inputs(self, batch: Batch) -> tuple[tuple[torch.Tensor, ...], torch.Tensor]:
        return (batch["input_ids"], batch["padding_mask"]), batch["padding_mask"]

    def validation_step(self, batch: Batch, batch_idx: int) -> None:
        logits = self(batch["input_ids"], batch["padding_mask"])
        labels = batch["labels"]
        self.val_loss(F.cross_entropy(logits, labels), weight=len(labels))
        predicted = logits.argmax(-1)
        self.val_acc(predicted, labels)
        self.val_f1(predicted, labels)
        self.log("val/loss", self.val_loss, batch_size=len(labels))
        self.log("val/acc", self.val_acc, prog_bar=True, batch_size=len(labels))
        self.log("val/f1", self.val_f1, batch_size=len(labels))

    def unselectable_positions(self, batch: Batch) -> list[torch.Tensor]:
        """Per layer, (B, T) True where a key (the attention input row) is unselectable."""
        mask = batch["padding_mask"]
        layers = unselectable_per_layer(self.model, batch["input_ids"], mask, key_padding_mask=mask)
        return [layer["positions_after"] for layer in layers]

    def test_step(self, batch: Batch, batch_idx: int) -> None:
        """Per-layer unselectable fraction over all keys, and over sentence tokens in any layer."""
        positions = self.unselectable_positions(batch)
        keys = ~batch["padding_mask"]
        for i, p in enumerate(positions):
            metric = self.unselectable[f"L{i + 1}"]
            metric(p[keys].float().mean(), weight=int(keys.sum()))
            self.log(f"analysis/unselectable/L{i + 1}", metric, batch_size=len(p))
        content = content_mask(batch)
        any_layer = torch.stack(positions).any(dim=0)
        self.unselectable_tokens(any_layer[content].float().mean(), weight=int(content.sum()))
        self.log("analysis/unselectable_tokens", self.unselectable_tokens, batch_size=len(content))


def token_report(config: dict, preset: str, runs_dir: str, out_dir: Path) -> dict | None:
    """Tables 3-4 (``results/sst2/unselectable_tokens.md``) when the config asks for them."""
    from normbench.token_report import write_token_report

    if not (config.get("bench") or {}).get("token_report"):
        return None
    def dev_sentences(run_config: dict) -> list[str]:
        return SST2DataModule(**run_config["data"]["init_args"]).raw()["validation"]["sentence"]

    return write_token_report(config, preset, runs_dir, Path(out_dir), dev_sentences)


register(
    Task(
        name="sst2",
        module=SST2Module,
        datamodule=SST2DataModule,
        report=token_report,
        description="Brody et al. 2023 App. D: SST-2 sentiment, 4-layer d=8 BERT-style encoder with/without LayerNorm",
    )
)
