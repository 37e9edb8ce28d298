"""SST-2 sentiment data (GLUE): labelled sentences, a WordPiece tokenizer, dynamically padded batches.

Local files are GLUE's ``train.tsv`` / ``dev.tsv`` (``label<TAB>sentence`` with a header, label
1 = positive), checked line by line and then read with HF ``datasets`` (``csv`` builder); online
users load ``stanfordnlp/sst2`` from the hub. A BERT-style WordPiece tokenizer (lower-cased,
``[CLS] sentence [SEP]``) is trained with HF ``tokenizers`` on the training sentences and cached
under ``$NORMBENCH_CACHE/sst2/<digest>/``; batches are padded to their longest sentence.
"""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Literal

import lightning as L
import torch
from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, processors, trainers
from torch.utils.data import DataLoader, Dataset

from normbench.data.batching import batch_loader, trainer_progress
from normbench.data.text import DATA_ENV, default_data_dir
from normbench.data.tokenizer import load_tokenizer, save_next_to_run, save_tokenizer
from normbench.io import cache_root, texts_digest

Source = Literal["local", "hub"]
SPECIALS = ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]")  # [PAD] = 0
FILES = {"train": "train.tsv", "validation": "dev.tsv"}
PIPELINE_VERSION = 1


def check_tsv(path: Path) -> int:
    """Validate a GLUE SST-2 file; returns its number of examples.

    Raises a one-line ``ValueError`` naming the file and line of the first malformed row.
    """
    with open(path, encoding="utf-8", newline="") as f:
        for lineno, line in enumerate(f, start=1):
            fields = line.rstrip("\r\n").split("\t")
            if lineno == 1:
                if fields != ["label", "sentence"]:
                    raise ValueError(f"{path}:1: expected the header 'label<TAB>sentence', got {line.strip()[:60]!r}")
                continue
            if len(fields) != 2 or fields[0] not in ("0", "1") or not fields[1].strip():
                raise ValueError(f"{path}:{lineno}: expected 'label<TAB>sentence' with label 0 or 1, "
                                 f"got {line.rstrip()[:60]!r}")
    return lineno - 1


def load_local(data_dir: str | Path) -> dict[str, dict[str, list]]:
    """``{split: {"sentence": [...], "label": [...]}}`` from ``train.tsv`` and ``dev.tsv``."""
    from datasets import Features, Value, load_dataset

    folder = Path(data_dir)
    hint = (f"point data.init_args.data_dir (or ${DATA_ENV}) at a folder with GLUE's SST-2 train.tsv and dev.tsv, "
            "or use --data.init_args.source hub to download stanfordnlp/sst2 from the Hugging Face hub")
    missing = [name for name in FILES.values() if not (folder / name).is_file()]
    if missing:
        raise ValueError(f"data.init_args.data_dir: {', '.join(missing)} not found in {str(folder)!r}; {hint}")
    for name in FILES.values():
        check_tsv(folder / name)
    files = {split: str(folder / name) for split, name in FILES.items()}
    features = Features({"label": Value("int64"), "sentence": Value("string")})
    ds = load_dataset("csv", data_files=files, delimiter="\t", quoting=csv.QUOTE_NONE, keep_default_na=False,
                      features=features)
    return {split: {"sentence": list(ds[split]["sentence"]), "label": list(ds[split]["label"])} for split in FILES}


def load_hub(name: str) -> dict[str, dict[str, list]]:
    from datasets import load_dataset

    try:
        ds = load_dataset(name)
    except Exception as exc:  # network, unknown name, ...
        raise ValueError(f"data.init_args.hub_name: could not load {name!r} from the hub: {type(exc).__name__}: "
                         f"{str(exc).splitlines()[0] if str(exc) else ''}") from exc
    return {split: {"sentence": list(ds[split]["sentence"]), "label": list(ds[split]["label"])} for split in FILES}


def train_wordpiece(sentences: list[str], vocab_size: int) -> Tokenizer:
    """BERT-style uncased WordPiece; encodings are ``[CLS] tokens [SEP]``."""
    if vocab_size < 100:
        raise ValueError(f"data.init_args.vocab_size: must be >= 100, got {vocab_size}")
    tokenizer = Tokenizer(models.WordPiece(unk_token="[UNK]"))
    tokenizer.normalizer = normalizers.BertNormalizer(lowercase=True)
    tokenizer.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tokenizer.decoder = decoders.WordPiece()
    trainer = trainers.WordPieceTrainer(vocab_size=vocab_size, special_tokens=list(SPECIALS), show_progress=False)
    tokenizer.train_from_iterator(sentences, trainer=trainer)
    cls, sep = tokenizer.token_to_id("[CLS]"), tokenizer.token_to_id("[SEP]")
    tokenizer.post_processor = processors.TemplateProcessing(single="[CLS] $A [SEP]", special_tokens=[("[CLS]", cls), ("[SEP]", sep)])
    return tokenizer


class Encoded(Dataset):
    """Token id lists and labels; items are ``(ids, label)``."""

    def __init__(self, ids: list[list[int]], labels: list[int]) -> None:
        self.ids, self.labels = ids, labels

    def __len__(self) -> int:
        return len(self.ids)

    def __getitem__(self, i: int) -> tuple[list[int], int]:
        return self.ids[i], self.labels[i]


def pad_batch(items: list[tuple[list[int], int]], pad_id: int = 0) -> dict[str, torch.Tensor]:
    """Dynamic padding: ``input_ids`` (B, longest), ``padding_mask`` (True at padding), ``labels``."""
    longest = max(len(ids) for ids, _ in items)
    input_ids = torch.full((len(items), longest), pad_id, dtype=torch.long)
    for row, (ids, _) in enumerate(items):
        input_ids[row, : len(ids)] = torch.as_tensor(ids)
    return {"input_ids": input_ids, "padding_mask": input_ids == pad_id,
            "labels": torch.as_tensor([label for _, label in items])}


class SST2DataModule(L.LightningDataModule):
    """SST-2 sentences for binary sentiment classification.

    Args:
        source: ``local`` (``data_dir``) or ``hub`` (``hub_name``).
        data_dir: folder with ``train.tsv`` and ``dev.tsv`` (default ``$NORMBENCH_DATA_DIR/sst2``,
            else ``../shared/data/sst2``).
        hub_name: hub dataset with ``train``/``validation`` splits and ``sentence``/``label`` columns.
        vocab_size: WordPiece vocabulary (BERT-base cased: 28996).
        max_length: longest encoding, ``[CLS]`` and ``[SEP]`` included (longer ones are truncated).
        batch_size, eval_batch_size: loader batch sizes.
        train_limit: use only the first ``train_limit`` training examples (None: all).
        cache_dir: cache root (default ``$NORMBENCH_CACHE/sst2``).
    """

    def __init__(
        self,
        source: Source = "local",
        data_dir: str | None = None,
        hub_name: str = "stanfordnlp/sst2",
        vocab_size: int = 28996,
        max_length: int = 128,
        batch_size: int = 32,
        eval_batch_size: int = 256,
        train_limit: int | None = None,
        cache_dir: str | None = None,
    ) -> None:
        super().__init__()
        for name, value in {"max_length": max_length, "batch_size": batch_size, "eval_batch_size": eval_batch_size}.items():
            if not isinstance(value, int) or value <= 0:
                raise ValueError(f"data.init_args.{name}: must be a positive integer, got {value!r}")
        if max_length < 3:
            raise ValueError(f"data.init_args.max_length: must be >= 3 ([CLS], a token, [SEP]), got {max_length}")
        if source not in ("local", "hub"):
            raise ValueError(f"data.init_args.source: {source!r} is not allowed; choose one of local, hub")
        self.save_hyperparameters()
        self.source, self.data_dir, self.hub_name = source, data_dir, hub_name
        self.vocab_size, self.max_length, self.train_limit = vocab_size, max_length, train_limit
        self.batch_size, self.eval_batch_size = batch_size, eval_batch_size
        self.cache_dir = Path(cache_dir) if cache_dir else cache_root() / "sst2"
        self.splits: dict[str, dict[str, list]] | None = None
        self.tokenizer_path: Path | None = None
        self.encoded: dict[str, Encoded] = {}

    def raw(self) -> dict[str, dict[str, list]]:
        if self.splits is None:
            folder = self.data_dir if self.data_dir is not None else default_data_dir("sst2")
            self.splits = load_local(folder) if self.source == "local" else load_hub(self.hub_name)
            if self.train_limit is not None:
                self.splits["train"] = {k: v[: self.train_limit] for k, v in self.splits["train"].items()}
        return self.splits

    def build_tokenizer(self) -> Path:
        """Train (once) and cache the WordPiece tokenizer of the training sentences."""
        train = self.raw()["train"]["sentence"]
        digest = texts_digest(train, {"vocab_size": self.vocab_size, "version": PIPELINE_VERSION})
        path = self.cache_dir / digest / "tokenizer.json"
        if not path.is_file():
            save_tokenizer(train_wordpiece(train, self.vocab_size), path)
        return path

    def prepare_data(self) -> None:
        self.build_tokenizer()

    def setup(self, stage: str | None = None) -> None:
        if self.tokenizer_path is None:
            self.tokenizer_path = self.build_tokenizer()
            tokenizer = self.tokenizer
            tokenizer.enable_truncation(self.max_length)
            for split, data in self.raw().items():
                ids = [e.ids for e in tokenizer.encode_batch(data["sentence"])]
                self.encoded[split] = Encoded(ids, data["label"])
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
        """The dev sentences again: the test stage is the unselectable-token analysis."""
        return self.val_dataloader()
