"""A small SST-2-style corpus in GLUE's TSV layout for the sst2 tests."""

from __future__ import annotations

from pathlib import Path

import numpy as np

POSITIVE = "great charming moving funny brilliant warm delightful".split()
NEGATIVE = "dull boring tedious awful flat lifeless clumsy".split()
FILLER = "the film is a movie with story and cast of this , it 's".split()
SHARED = Path(__file__).resolve().parents[2] / "shared" / "data" / "sst2"  # GLUE's files, where a machine has them


def write_sst2(folder: Path, train: int = 400, dev: int = 60, seed: int = 0, crlf: bool = True) -> Path:
    rng = np.random.default_rng(seed)
    folder.mkdir(parents=True, exist_ok=True)
    for name, n, newline in (("train.tsv", train, "\r\n" if crlf else "\n"), ("dev.tsv", dev, "\n")):
        rows = ["label\tsentence"]
        for _ in range(n):
            label = int(rng.integers(0, 2))
            words = list(rng.choice(FILLER, size=int(rng.integers(3, 12))))
            words.insert(int(rng.integers(0, len(words))), str(rng.choice(POSITIVE if label else NEGATIVE)))
            rows.append(f"{label}\t{' '.join(words)}")
        (folder / name).write_bytes((newline.join(rows) + newline).encode())
    return folder


def rows_of(path: Path) -> list[list[str]]:
    """The fields of each line of ``path`` (header included), split by hand."""
    return [line.rstrip("\r\n").split("\t") for line in path.read_bytes().decode().splitlines(keepends=True)]


def write_rows(path: Path, rows: list[list[str]], newline: str = "\n") -> Path:
    path.write_bytes((newline.join("\t".join(r) for r in rows) + newline).encode())
    return path


def glue_layout(folder: Path, test: int | None = 30, train: int = 50, dev: int = 10) -> Path:
    """GLUE's own SST-2 folder: ``sentence<TAB>label`` train/dev (train with CRLF) and, if ``test``,
    an unlabelled ``index<TAB>sentence`` test.tsv (indices from 100 up, to tell them from positions)."""
    write_sst2(folder, train=train, dev=dev)
    for name, newline in (("train.tsv", "\r\n"), ("dev.tsv", "\n")):
        write_rows(folder / name, [[s, label] for label, s in rows_of(folder / name)], newline)
    if test:
        sentences = [s for _, s in rows_of(folder / "dev.tsv")[1:]]
        write_rows(
            folder / "test.tsv",
            [["index", "sentence"]] + [[str(100 + i), sentences[i % len(sentences)]] for i in range(test)],
        )
    return folder
