"""Language-modelling data: articles -> train / validation / analysis split -> BPE -> packed blocks.

The corpus (:mod:`normbench.data.text`) is split by article with a seeded permutation, a
byte-level BPE tokenizer is trained on the train articles only, and each split is tokenized into
one stream (articles joined by ``<|endoftext|>``) that is cut into blocks of ``context`` tokens.
The tokenizer and the token streams are cached under ``$NORMBENCH_CACHE/lm/<digest>/`` (the
digest covers the corpus text, the split and the vocabulary size), so a second run skips all of
it; the tokenizer is also saved next to each run's logs.
"""

from __future__ import annotations

import json
from pathlib import Path

import lightning as L
import numpy as np
import torch
from lightning.pytorch.utilities import rank_zero_warn
from torch.utils.data import DataLoader

from normbench.data.batching import IndexedTensors, tensor_loader, trainer_progress, training_device
from normbench.data.text import Layout, Source, default_data_dir, load_articles, resolve_source, split_articles
from normbench.data.tokenizer import EOS, load_tokenizer, save_next_to_run, save_tokenizer, train_bpe
from normbench.io import atomic_write, cache_root, discard_corrupt_cache, texts_digest

SPLITS = ("train", "validation", "analysis")
PIPELINE_VERSION = 1


def save_npy(path: Path, array: np.ndarray) -> None:
    with open(path, "wb") as f:  # a file object: np.save would append ".npy" to a path
        np.save(f, array)


def unigram_entropy(stream: np.ndarray) -> float:
    """H = -sum_v p_v ln p_v (nats), p_v = count of token v / len(stream): the loss of the best model that ignores
    context (the cross-entropy of a stream under its own unigram frequencies). 0 for an empty stream."""
    if len(stream) == 0:
        return 0.0
    counts = np.bincount(np.asarray(stream, dtype=np.int64))
    p = counts[counts > 0] / len(stream)
    return float(-(p * np.log(p)).sum())


def pack(stream: np.ndarray, block: int) -> torch.Tensor:
    """Cut a token stream into ``len(stream) // block`` rows of ``block`` tokens (the tail is dropped)."""
    n = len(stream) // block
    return torch.from_numpy(stream[: n * block].astype(np.int64).reshape(n, block))


def readable_cache(folder: Path) -> bool:
    """Whether every file of a complete cache folder reads; the first one that does not is named and removed
    (:func:`normbench.io.discard_corrupt_cache`), and the folder is then built again."""
    for path in [folder / f"{s}.npy" for s in SPLITS] + [folder / "tokenizer.json"]:
        try:
            if path.suffix == ".npy":
                np.load(path, mmap_mode="r")  # the header and the file's length, not the tokens
            else:
                load_tokenizer(path)
        except Exception as exc:  # noqa: BLE001 - a cut or damaged file: any reader's error
            discard_corrupt_cache(path, exc)
            return False
    return True


class LMDataModule(L.LightningDataModule):
    """WikiText-style articles for causal language modelling and the unselectable-key analysis.

    Args:
        source: ``local`` (read ``data_dir``), ``hub`` (``hub_name``/``hub_config``) or ``auto``: ``data_dir``
            when it exists, else the hub (unless ``HF_HUB_OFFLINE``/``HF_DATASETS_OFFLINE`` say the machine is
            offline). The run's identity and record name the source ``auto`` picked.
        data_dir: folder of ``*.txt`` files (default ``$NORMBENCH_DATA_DIR/wikitext-2``, else
            ``../shared/data/wikitext-2``).
        hub_name, hub_config, hub_splits: the hub corpus, e.g. ``wikitext`` / ``wikitext-103-v1``.
        layout: ``wikitext`` (rows are lines with `` = Title = `` headings) or ``articles``
            (each row is one article, as in the hub's ``wikipedia``).
        validation_fraction, analysis_fraction: shares of articles held out; the rest trains.
        split_seed: seed of the article permutation (independent of the training seed).
        vocab_size: BPE vocabulary size (GPT-2: 50257).
        context: tokens per training / validation block.
        batch_size, eval_batch_size: loader batch sizes.
        analysis_sequences, analysis_length: how many held-out blocks of how many tokens the
            unselectable-key analysis reads (drawn without replacement, seeded by ``split_seed``).
        cache_dir: cache root (default ``$NORMBENCH_CACHE/lm``).
    """

    def __init__(
        self,
        source: Source = "auto",
        data_dir: str | None = None,
        hub_name: str = "wikitext",
        hub_config: str | None = "wikitext-103-v1",
        hub_splits: list[str] = ["train", "validation", "test"],  # noqa: B006 - read only
        layout: Layout = "wikitext",
        validation_fraction: float = 0.1,
        analysis_fraction: float = 0.1,
        split_seed: int = 0,
        vocab_size: int = 8192,
        context: int = 256,
        batch_size: int = 16,
        eval_batch_size: int = 32,
        analysis_sequences: int = 100,
        analysis_length: int = 256,
        cache_dir: str | None = None,
    ) -> None:
        super().__init__()
        for name, value in {
            "context": context,
            "batch_size": batch_size,
            "eval_batch_size": eval_batch_size,
            "analysis_sequences": analysis_sequences,
            "analysis_length": analysis_length,
        }.items():
            if not isinstance(value, int) or value <= 0:
                raise ValueError(f"data.{name}: must be a positive integer, got {value!r}")
        self.save_hyperparameters()
        self.data_dir, self.layout = data_dir, layout
        self.auto = source == "auto"
        self.source = resolve_source(source, data_dir if data_dir is not None else default_data_dir("wikitext-2"))
        self.hub = (hub_name, hub_config, list(hub_splits))
        self.fractions = {"validation": validation_fraction, "analysis": analysis_fraction}
        self.split_seed, self.vocab_size, self.context = split_seed, vocab_size, context
        self.batch_size, self.eval_batch_size = batch_size, eval_batch_size
        self.analysis_sequences, self.analysis_length = analysis_sequences, analysis_length
        self.cache_dir = Path(cache_dir) if cache_dir else cache_root() / "lm"
        self.folder: Path | None = None  # the cache folder, once built or found
        self.streams: dict[str, np.ndarray] | None = None
        self.tokenizer_path: Path | None = None

    # -- building and caching -------------------------------------------------------------
    def _articles(self) -> list[str]:
        return load_articles("auto" if self.auto else self.source, self.data_dir, *self.hub, self.layout)

    def identity_args(self) -> dict[str, str]:
        """The init arguments as trained on: ``source`` as ``auto`` resolved it (``local`` or ``hub``)."""
        return {"source": self.source}

    def digest(self, articles: list[str]) -> str:
        """Names the cache folder: corpus text, split and vocabulary."""
        return texts_digest(
            articles,
            {
                "fractions": self.fractions,
                "split_seed": self.split_seed,
                "vocab_size": self.vocab_size,
                "version": PIPELINE_VERSION,
            },
        )

    def build(self) -> Path:
        """Tokenizer + token streams in the cache (built once; later calls in this process reuse the folder)."""
        if self.folder is not None:
            return self.folder
        articles = self._articles()
        folder = self.cache_dir / self.digest(articles)
        if all((folder / f"{s}.npy").is_file() for s in SPLITS) and (folder / "tokenizer.json").is_file():
            if readable_cache(folder):
                self.folder = folder
                return folder
        parts = split_articles(len(articles), self.fractions, self.split_seed)
        texts = {name: [articles[i] for i in idx] for name, idx in parts.items()}
        tokenizer = train_bpe(texts["train"], self.vocab_size)
        eos = tokenizer.token_to_id(EOS)
        dtype = np.uint16 if tokenizer.get_vocab_size() <= np.iinfo(np.uint16).max else np.int32
        for name in SPLITS:
            pieces = [np.asarray(e.ids + [eos], dtype=dtype) for e in tokenizer.encode_batch(texts[name])]
            stream = np.concatenate(pieces) if pieces else np.zeros(0, dtype=dtype)
            atomic_write(folder / f"{name}.npy", lambda p, s=stream: save_npy(p, s))
        meta = {
            name: {"articles": len(idx), "tokens": int(np.load(folder / f"{name}.npy").size)}
            for name, idx in parts.items()
        }
        atomic_write(folder / "split.json", lambda p: p.write_text(json.dumps(meta, indent=2)))
        save_tokenizer(tokenizer, folder / "tokenizer.json")  # written last: marks the folder complete
        self.folder = folder
        return folder

    def prepare_data(self) -> None:
        self.build()

    def setup(self, stage: str | None = None) -> None:
        if self.streams is None:
            folder = self.build()
            self.streams = {s: np.load(folder / f"{s}.npy") for s in SPLITS}
            self.tokenizer_path = folder / "tokenizer.json"
            too_short = [s for s in ("train", "validation") if len(self.streams[s]) < self.context]
            if too_short:
                raise ValueError(f"data.context: {self.context} tokens is longer than the {', '.join(too_short)} split")
        trainer = getattr(self, "trainer", None)
        save_next_to_run(self.tokenizer_path, trainer)
        if trainer is not None and stage == "fit" and trainer.max_steps > 0:
            blocks = len(self.streams["train"]) // self.context
            epochs = trainer.max_steps * self.batch_size / max(1, blocks)
            if epochs > 20:
                rank_zero_warn(
                    f"data: {trainer.max_steps} steps of {self.batch_size} blocks repeat the {blocks} training "
                    f"blocks {epochs:.0f} times; expect overfitting (a larger corpus: --data.source hub)"
                )

    @property
    def tokenizer(self):  # noqa: ANN201 - tokenizers.Tokenizer
        if self.tokenizer_path is None:
            self.setup()
        return load_tokenizer(self.tokenizer_path)

    def unigram_entropy(self, split: str = "train") -> float:
        """The unigram entropy (nats) of a split's token stream (:func:`unigram_entropy`; ``<|endoftext|>`` counts):
        a model that predicts every next token by its training frequency reaches about this loss."""
        if self.streams is None:
            self.setup()
        return unigram_entropy(self.streams[split])

    # -- loaders ---------------------------------------------------------------------------
    def blocks(self, split: str, length: int | None = None) -> torch.Tensor:
        """The split's stream packed into rows of ``length`` (default ``context``) tokens."""
        if self.streams is None:
            self.setup()
        return pack(self.streams[split], length or self.context)

    def analysis_blocks(self) -> torch.Tensor:
        """``analysis_sequences`` held-out blocks of ``analysis_length`` tokens (fewer if the split is short)."""
        rows = self.blocks("analysis", self.analysis_length)
        if len(rows) == 0:
            raise ValueError(f"data.analysis_length: {self.analysis_length} tokens is longer than the analysis split")
        pick = np.random.default_rng(self.split_seed).permutation(len(rows))[: self.analysis_sequences]
        return rows[np.sort(pick)]

    def train_dataloader(self) -> DataLoader:
        return tensor_loader(
            self.on_device(self.blocks("train")), self.batch_size, shuffle=True, progress=trainer_progress(self)
        )

    def val_dataloader(self) -> DataLoader:
        return tensor_loader(self.on_device(self.blocks("validation")), self.eval_batch_size, shuffle=False)

    def test_dataloader(self) -> DataLoader:
        """The held-out analysis sequences (the test stage runs the unselectable-key analysis)."""
        return tensor_loader(self.on_device(self.analysis_blocks()), self.eval_batch_size, shuffle=False)

    def on_device(self, blocks: torch.Tensor) -> IndexedTensors:
        """Token blocks on the trainer's device, where batches are indexed (WikiText-2's training split: 17 MB)."""
        return IndexedTensors(blocks).to(training_device(self))
