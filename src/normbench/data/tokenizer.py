"""Byte-level BPE (GPT-2's scheme) trained with HF ``tokenizers`` on the training articles.

Byte-level means every string round-trips: ``decode(encode(s)) == s``. The single special
token ``<|endoftext|>`` (id 0) separates articles when they are packed into one stream.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterable
from pathlib import Path

from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

from normbench.io import atomic_write

EOS = "<|endoftext|>"
TOKENIZER_FILE = "tokenizer.json"  # the name of the copy saved in each run's directory
GPT2_VOCAB_SIZE = 50257


def train_bpe(texts: Iterable[str], vocab_size: int, min_frequency: int = 2) -> Tokenizer:
    """A byte-level BPE tokenizer with at most ``vocab_size`` entries (256 bytes + EOS + merges)."""
    alphabet = pre_tokenizers.ByteLevel.alphabet()
    if vocab_size < len(alphabet) + 1:
        raise ValueError(f"data.vocab_size: must be >= {len(alphabet) + 1} (all bytes + {EOS}), got {vocab_size}")
    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        min_frequency=min_frequency,
        special_tokens=[EOS],
        initial_alphabet=alphabet,
        show_progress=False,
    )
    tokenizer.train_from_iterator(texts, trainer=trainer)
    return tokenizer


def save_tokenizer(tokenizer: Tokenizer, path: str | Path) -> Path:
    """Write ``tokenizer.json`` atomically."""
    return atomic_write(path, lambda p: tokenizer.save(str(p)))


def load_tokenizer(path: str | Path) -> Tokenizer:
    return Tokenizer.from_file(str(path))


def save_next_to_run(tokenizer_path: Path, trainer: object | None) -> None:
    """Copy the cached ``tokenizer.json`` into the run's log directory (global rank 0 only).

    A trainer without a logger (e.g. one that only predicts) has no run directory: nothing is copied (its
    ``log_dir`` would be the working directory)."""
    if (
        trainer is not None
        and getattr(trainer, "loggers", None)
        and getattr(trainer, "log_dir", None)
        and trainer.is_global_zero
    ):
        atomic_write(Path(trainer.log_dir) / TOKENIZER_FILE, lambda p: shutil.copyfile(tokenizer_path, p))
