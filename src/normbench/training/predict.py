"""Predictions of a trained text classifier on a GLUE-layout file, written in GLUE's submission format.

The file is GLUE's unlabelled ``test.tsv`` (``index<TAB>sentence``) or a labelled one (``sentence<TAB>label``
or ``label<TAB>sentence``, rows numbered from 0); the sentences are normalised and tokenised as the run
trained (its own ``tokenizer.json``, its ``text_normalization`` and ``max_length``). The output has GLUE's
``index<TAB>prediction`` rows under that header; with labels, the accuracy is returned too.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import lightning as L
import torch
from torch.utils.data import DataLoader
from torchmetrics.functional.classification import binary_accuracy

from normbench.data.sst2 import pad_unlabelled
from normbench.data.sst2_files import UNLABELLED_HEADER, check_tsv, check_utf8, read_tsv, tsv_columns
from normbench.data.tokenizer import load_tokenizer
from normbench.data.treebank import normalize_texts
from normbench.io import Config, atomic_write_text, check_writable, show_bars
from normbench.training.run.loading import load_run
from normbench.training.run.records import read_record
from normbench.training.run.rundir import checkpoint_of, record_path, run_of_checkpoint, tokenizer_path

SUBMISSION_HEADER = "index\tprediction"


@dataclass(frozen=True)
class Predictions:
    """What :func:`predict_file` wrote: the output file, how many rows, and the accuracy (labelled input)."""

    path: Path
    rows: int
    accuracy: float | None


def final_checkpoint(run: str | Path) -> Path:
    """The checkpoint of ``run``: a ``.ckpt`` file as given, else the final checkpoint of a run folder."""
    path = Path(run)
    if path.is_file():
        return path
    record = record_path(path)
    if not record.is_file():
        raise ValueError(f"run: {path} is neither a checkpoint nor a run folder with a record.json")
    ckpt = checkpoint_of(read_record(record), path)
    if ckpt is None or not ckpt.is_file():
        raise ValueError(f"run: {path} has no final checkpoint (is the run finished?)")
    return ckpt


def read_sentences(path: Path) -> tuple[list[int], list[str], list[int] | None]:
    """(indices, sentences, labels or ``None``) of a GLUE-layout file, checked row by row."""
    if not path.is_file():
        raise ValueError(f"tsv: {path} does not exist")
    check_utf8(path)
    with open(path, encoding="utf-8", newline="") as f:
        header = tuple(f.readline().rstrip("\r\n").split("\t"))
    labelled = header != UNLABELLED_HEADER
    check_tsv(path, labelled=labelled)
    rows = read_tsv(path, tsv_columns(path, labelled))
    if labelled:
        return list(range(len(rows["sentence"]))), rows["sentence"], rows["label"]
    return rows["index"], rows["sentence"], None


def check_out(out: str | Path, force: bool = False) -> Path:
    """``out`` as a path the predictions may be written to, checked before any work: a writable folder
    with room, and no existing file that is not an earlier predictions file (``index<TAB>prediction``
    header) or lies under ``results/`` (committed boards), unless ``force``. Else a one-line ``ValueError``."""
    path = Path(out)
    if path.is_dir():
        raise ValueError(f"out: {path} is a folder; give the predictions file's name (e.g. {path / 'SST-2.tsv'})")
    if path.exists() and not force:
        under_results = (Path.cwd() / "results").resolve() in path.resolve().parents
        if under_results or not is_predictions_file(path):
            what = "lies under results/" if under_results else "is not a predictions file (index<TAB>prediction)"
            raise ValueError(f"out: {path} exists and {what}; choose another --out, or --force true to replace it")
    check_writable(path.parent, "out")
    return path


def is_predictions_file(path: Path) -> bool:
    """Whether ``path`` starts with GLUE's submission header (a file :func:`predict_file` wrote)."""
    try:
        with open(path, encoding="utf-8") as f:
            return f.readline().rstrip("\r\n") == SUBMISSION_HEADER
    except (OSError, UnicodeDecodeError):
        return False


def predict_file(
    run: str | Path,
    tsv: str | Path,
    out: str | Path,
    batch_size: int = 256,
    accelerator: str = "auto",
    force: bool = False,
) -> Predictions:
    """Predict every sentence of ``tsv`` with the trained run ``run`` (a run folder or its checkpoint).

    Writes ``out`` atomically: ``index<TAB>prediction`` (0 negative, 1 positive), GLUE's submission format.
    ``out`` is checked first (:func:`check_out`): an existing file other than earlier predictions is
    replaced only with ``force``.
    """
    if batch_size < 1:
        raise ValueError(f"batch_size: must be >= 1, got {batch_size}")
    check_out(out, force)
    ckpt = final_checkpoint(run)
    record, module = load_run(ckpt)
    if not hasattr(module, "predict_step") or type(module).predict_step is L.LightningModule.predict_step:
        raise ValueError(f"run: {ckpt} is a {record['task']} run; prediction needs a sentence classifier (sst2)")
    tokenizer_file = tokenizer_path(run_of_checkpoint(ckpt))
    if not tokenizer_file.is_file():
        raise ValueError(f"run: {tokenizer_file} is missing; the run's tokenizer is needed to encode the sentences")
    data: Config = (record["config"].get("data") or {}).get("init_args") or {}
    indices, sentences, labels = read_sentences(Path(tsv))
    tokenizer = load_tokenizer(tokenizer_file)
    tokenizer.enable_truncation(int(data.get("max_length", 128)))
    texts = normalize_texts(sentences, data.get("text_normalization", "none"))
    items = [(e.ids, i) for e, i in zip(tokenizer.encode_batch(texts), indices, strict=True)]
    loader = DataLoader(items, batch_size=batch_size, collate_fn=pad_unlabelled)
    trainer = L.Trainer(
        accelerator=accelerator,
        devices=1,
        logger=False,
        enable_checkpointing=False,
        enable_model_summary=False,
        enable_progress_bar=show_bars(),
    )
    batches = trainer.predict(module, loader)
    predicted = torch.cat([b["prediction"].cpu() for b in batches])
    lines = [SUBMISSION_HEADER, *(f"{i}\t{int(p)}" for i, p in zip(indices, predicted.tolist(), strict=True))]
    path = atomic_write_text(out, "\n".join(lines) + "\n")
    accuracy = None
    if labels is not None:
        accuracy = float(binary_accuracy(predicted, torch.tensor(labels)))
    return Predictions(path, len(indices), accuracy)
