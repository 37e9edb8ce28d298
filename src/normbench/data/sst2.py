"""SST-2 sentiment data (GLUE): labelled sentences, a WordPiece tokenizer, dynamically padded batches.

Local files are GLUE's, in a folder: ``train.tsv`` and ``dev.tsv`` are labelled, with the header
``sentence<TAB>label`` (GLUE's own order) or ``label<TAB>sentence`` (the column order is read from
the header; label 1 = positive); an optional ``test.tsv`` is GLUE's unlabelled ``index<TAB>sentence``
and serves prediction only (the ``predict`` split, batches with ``index`` and no labels). Every
file is checked line by line and then read with HF ``datasets`` (``csv`` builder;
:mod:`normbench.data.sst2_files`); online users load ``stanfordnlp/sst2`` from the hub. A BERT-style
WordPiece tokenizer (lower-cased, ``[CLS] sentence [SEP]``; :mod:`normbench.data.wordpiece`) is trained
with HF ``tokenizers`` on the training sentences and cached under ``$NORMBENCH_CACHE/sst2/<digest>/``;
batches are padded to their longest sentence.

``holdout`` > 0 holds that many whole training sentences out, with every phrase inside them
(:mod:`normbench.data.phrases`), as the validation split a learning rate is chosen on; GLUE's dev sentences then
serve the test stage only, so a choice made on the held-out sentences never reads them.

Before anything is tokenized, every split's sentences are normalized (``text_normalization``):
``ptb`` (the default) undoes the Penn Treebank escapes that GLUE's dev and test files keep and its
training phrases mostly do not (``-lrb-`` for ``(``, ``\\/`` for ``/``, ...;
:mod:`normbench.data.treebank`), ``none`` reads the text as it is. It is a data argument, so part of
a run's identity: runs on either text never share a config hash, nor a cached tokenizer.
"""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar, Literal

import lightning as L
import torch
from filelock import FileLock
from tokenizers import Tokenizer
from torch.utils.data import DataLoader, Dataset

from normbench.data.batching import batch_loader, trainer_progress
from normbench.data.phrases import hold_out
from normbench.data.sst2_files import PREDICT_FILE, UNLABELLED_HEADER, load_hub, load_local, load_unlabelled, show
from normbench.data.text import DATA_ENV, SOURCES, default_data_dir, resolve_source
from normbench.data.tokenizer import load_tokenizer, save_next_to_run, save_tokenizer
from normbench.data.treebank import TEXT_NORMALIZATIONS, TextNormalization, normalize_texts
from normbench.data.wordpiece import train_wordpiece
from normbench.io import cache_root, discard_corrupt_cache, texts_digest

Source = Literal["auto", "local", "hub"]
PIPELINE_VERSION = 2


class Encoded(Dataset):
    """Token id lists and labels (or, for the ``predict`` split, indices); items are ``(ids, label)``."""

    def __init__(self, ids: list[list[int]], labels: list[int]) -> None:
        self.ids, self.labels = ids, labels

    def __len__(self) -> int:
        return len(self.ids)

    def __getitem__(self, i: int) -> tuple[list[int], int]:
        return self.ids[i], self.labels[i]


def pad_batch(items: list[tuple[list[int], int]], pad_id: int = 0, key: str = "labels") -> dict[str, torch.Tensor]:
    """Dynamic padding: ``input_ids`` (B, longest), ``padding_mask`` (True at padding), and ``key``
    (``labels``; ``index`` for the unlabelled ``predict`` split) from the items' second elements."""
    longest = max(len(ids) for ids, _ in items)
    input_ids = torch.full((len(items), longest), pad_id, dtype=torch.long)
    for row, (ids, _) in enumerate(items):
        input_ids[row, : len(ids)] = torch.as_tensor(ids)
    return {
        "input_ids": input_ids,
        "padding_mask": input_ids == pad_id,
        key: torch.as_tensor([value for _, value in items]),
    }


def pad_unlabelled(items: list[tuple[list[int], int]]) -> dict[str, torch.Tensor]:
    """:func:`pad_batch` of the ``predict`` split: ``input_ids``, ``padding_mask`` and ``index``, no labels."""
    return pad_batch(items, key="index")


class SST2DataModule(L.LightningDataModule):
    """SST-2 sentences for binary sentiment classification.

    Args:
        source: ``local`` (``data_dir``), ``hub`` (``hub_name``) or ``auto``: ``data_dir`` when it exists, else
            the hub (unless ``HF_HUB_OFFLINE``/``HF_DATASETS_OFFLINE`` say the machine is offline). The run's
            identity and record name the source ``auto`` picked.
        data_dir: folder with ``train.tsv`` and ``dev.tsv`` (default ``$NORMBENCH_DATA_DIR/sst2``,
            else ``../shared/data/sst2``), and optionally the unlabelled ``test.tsv``: the ``predict``
            split (:meth:`predict_dataloader`).
        hub_name: hub dataset with ``train``/``validation`` splits and ``sentence``/``label`` columns.
        vocab_size: WordPiece vocabulary (BERT-base cased: 28996).
        max_length: longest encoding, ``[CLS]`` and ``[SEP]`` included (longer ones are truncated).
        batch_size, eval_batch_size: loader batch sizes.
        train_limit: use only the first ``train_limit`` training examples (None: all).
        cache_dir: cache root (default ``$NORMBENCH_CACHE/sst2``).
        holdout: whole training sentences held out, with every phrase inside them, as the validation split (after
            ``train_limit``); 0: none, GLUE's dev sentences are the validation split. Either way the test stage (the
            unselectable-token analysis) reads the dev sentences.
        text_normalization: ``ptb`` (undo the Penn Treebank escapes, :func:`~normbench.data.treebank.ptb_unescape`)
            or ``none`` (the text as read, as runs before this option trained on).
    """

    # a resolved config written before ``text_normalization`` existed trained on the text as read
    LEGACY_INIT_ARGS: ClassVar[dict[str, str]] = {"text_normalization": "none"}
    # arguments added after runs were trained, at the value that trains as those runs did: left out of a run's
    # identity there (normbench.training.run.rundir.run_identity), so those runs keep their config hash
    IDENTITY_DEFAULTS: ClassVar[dict[str, int]] = {"holdout": 0}

    def __init__(
        self,
        source: Source = "auto",
        data_dir: str | None = None,
        hub_name: str = "stanfordnlp/sst2",
        vocab_size: int = 28996,
        max_length: int = 128,
        batch_size: int = 32,
        eval_batch_size: int = 256,
        train_limit: int | None = None,
        cache_dir: str | None = None,
        text_normalization: TextNormalization = "ptb",
        holdout: int = 0,
    ) -> None:
        super().__init__()
        for name, value in {
            "max_length": max_length,
            "batch_size": batch_size,
            "eval_batch_size": eval_batch_size,
        }.items():
            if not isinstance(value, int) or value <= 0:
                raise ValueError(f"data.{name}: must be a positive integer, got {value!r}")
        if not isinstance(holdout, int) or isinstance(holdout, bool) or holdout < 0:
            raise ValueError(f"data.holdout: must be a whole number of sentences >= 0, got {holdout!r}")
        if max_length < 3:
            raise ValueError(f"data.max_length: must be >= 3 ([CLS], a token, [SEP]), got {max_length}")
        if source not in SOURCES:
            raise ValueError(f"data.source: {source!r} is not allowed; choose one of {', '.join(SOURCES)}")
        if text_normalization not in TEXT_NORMALIZATIONS:
            raise ValueError(
                f"data.text_normalization: choose one of {', '.join(TEXT_NORMALIZATIONS)}, got {text_normalization!r}"
            )
        self.save_hyperparameters()
        self.data_dir, self.hub_name = data_dir, hub_name
        self.auto = source == "auto"
        self.source = resolve_source(source, self.folder)
        self.vocab_size, self.max_length, self.train_limit = vocab_size, max_length, train_limit
        self.text_normalization, self.holdout = text_normalization, holdout
        self.batch_size, self.eval_batch_size = batch_size, eval_batch_size
        self.cache_dir = Path(cache_dir) if cache_dir else cache_root() / "sst2"
        self.splits: dict[str, dict[str, list]] | None = None
        self.tokenizer_path: Path | None = None
        self.encoded: dict[str, Encoded] = {}
        self.unlabelled: dict[str, list] | None = None

    @property
    def folder(self) -> Path:
        """The local data folder (``data_dir``, else the default)."""
        return Path(self.data_dir) if self.data_dir is not None else default_data_dir("sst2")

    @property
    def predict_file(self) -> Path | None:
        """``test.tsv`` of the local data folder if it is there (the ``predict`` split), else None."""
        path = self.folder / PREDICT_FILE
        return path if self.source == "local" and path.is_file() else None

    def raw(self) -> dict[str, dict[str, list]]:
        """The labelled splits, ``{"train"|"validation"|"test": {"sentence": [...], "label": [...]}}``: ``test`` is
        GLUE's dev sentences, and so is ``validation`` unless ``holdout`` holds training sentences out for it."""
        if self.splits is None:
            self.splits = load_local(self.folder) if self.source == "local" else self.load_hub()
            self.splits = {
                split: {**data, "sentence": self.normalize(data["sentence"])} for split, data in self.splits.items()
            }
            if self.train_limit is not None:
                self.splits["train"] = {k: v[: self.train_limit] for k, v in self.splits["train"].items()}
            self.splits["test"] = self.splits["validation"]
            if self.holdout:
                self.splits["train"], self.splits["validation"] = hold_out(self.splits["train"], self.holdout)
        return self.splits

    def load_hub(self) -> dict[str, dict[str, list]]:
        """The hub's splits; under ``auto`` a failure names the missing folder first."""
        try:
            return load_hub(self.hub_name)
        except ValueError as exc:
            if not self.auto:
                raise
            raise ValueError(
                f"data.data_dir: {str(self.folder)!r} does not exist, and source auto could not "
                f"use the hub instead ({exc}); point data.data_dir (or ${DATA_ENV}) at a folder "
                f"with GLUE's SST-2 train.tsv and dev.tsv"
            ) from None

    def identity_args(self) -> dict[str, str]:
        """The init arguments as trained on: ``source`` as ``auto`` resolved it (``local`` or ``hub``)."""
        return {"source": self.source}

    def normalize(self, sentences: list[str]) -> list[str]:
        """``sentences`` as this module tokenizes them (``text_normalization``)."""
        return normalize_texts(sentences, self.text_normalization)

    def build_tokenizer(self) -> Path:
        """Train (once) and cache the WordPiece tokenizer of the (normalized) training sentences."""
        train = self.raw()["train"]["sentence"]
        digest = texts_digest(
            train,
            {"vocab_size": self.vocab_size, "version": PIPELINE_VERSION, "text_normalization": self.text_normalization},
        )
        path = self.cache_dir / digest / "tokenizer.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        with FileLock(path.parent / "tokenizer.lock"):  # concurrent runs: one trains, the others read its file
            if path.is_file():
                try:
                    load_tokenizer(path)
                except Exception as exc:  # noqa: BLE001 - a cut or damaged file: trained again
                    discard_corrupt_cache(path, exc)
            if not path.is_file():
                save_tokenizer(train_wordpiece(train, self.vocab_size), path)
        return path

    def prepare_data(self) -> None:
        self.build_tokenizer()

    def raw_predict(self) -> dict[str, list] | None:
        """The unlabelled ``predict`` split, ``{"index": [...], "sentence": [...]}``, or None without ``test.tsv``."""
        if self.unlabelled is None and self.predict_file is not None:
            data = load_unlabelled(self.predict_file)
            self.unlabelled = {**data, "sentence": self.normalize(data["sentence"])}
        return self.unlabelled

    def encode(self, sentences: list[str]) -> list[list[int]]:
        """Token ids of ``sentences`` with the training tokenizer, truncated to ``max_length``."""
        tokenizer = self.tokenizer
        tokenizer.enable_truncation(self.max_length)
        return [e.ids for e in tokenizer.encode_batch(sentences)]

    def setup(self, stage: str | None = None) -> None:
        """Encode the labelled splits (once); at the ``predict`` stage also ``test.tsv``, if present."""
        if self.tokenizer_path is None:
            self.tokenizer_path = self.build_tokenizer()
            splits = self.raw()
            for split, data in splits.items():
                same = next((s for s in self.encoded if splits[s] is data), None)  # dev as validation and test
                self.encoded[split] = (
                    self.encoded[same] if same else Encoded(self.encode(data["sentence"]), data["label"])
                )
        if stage == "predict" and "predict" not in self.encoded:
            data = self.raw_predict()
            if data is not None:
                self.encoded["predict"] = Encoded(self.encode(data["sentence"]), data["index"])
        save_next_to_run(self.tokenizer_path, getattr(self, "trainer", None))

    @property
    def tokenizer(self) -> Tokenizer:
        if self.tokenizer_path is None:
            self.setup()
        return load_tokenizer(self.tokenizer_path)

    def loader(self, split: str, batch_size: int, shuffle: bool) -> DataLoader:
        if not self.encoded:
            self.setup()
        progress = trainer_progress(self) if shuffle else None
        return batch_loader(self.encoded[split], batch_size, shuffle, pad_batch, progress)

    def train_dataloader(self) -> DataLoader:
        return self.loader("train", self.batch_size, shuffle=True)

    def val_dataloader(self) -> DataLoader:
        return self.loader("validation", self.eval_batch_size, shuffle=False)

    def test_dataloader(self) -> DataLoader:
        """The dev sentences: the test stage is the unselectable-token analysis."""
        return self.loader("test", self.eval_batch_size, shuffle=False)

    def predict_dataloader(self) -> DataLoader:
        """Batches of the unlabelled ``test.tsv`` in file order: ``input_ids``, ``padding_mask``, ``index``.

        A plain ``DataLoader``: ``Trainer.predict`` rebuilds its loader (to track batch indices, and
        under DDP to shard it with a ``DistributedSampler``), which the resumable loader cannot be.
        """
        if self.predict_file is None:
            where = (
                f"data.data_dir {str(self.folder)!r}"
                if self.source == "local"
                else "data.source hub (prediction reads local files only)"
            )
            raise ValueError(
                f"no predict split: {PREDICT_FILE} (GLUE's unlabelled {show(UNLABELLED_HEADER)}) not found in {where}"
            )
        if "predict" not in self.encoded:
            self.setup("predict")
        return DataLoader(
            self.encoded["predict"], batch_size=self.eval_batch_size, shuffle=False, collate_fn=pad_unlabelled
        )
