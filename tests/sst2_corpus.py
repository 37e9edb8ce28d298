"""A small SST-2-style corpus in GLUE's TSV layout for the sst2 tests."""

from __future__ import annotations

from pathlib import Path

import numpy as np

POSITIVE = "great charming moving funny brilliant warm delightful".split()
NEGATIVE = "dull boring tedious awful flat lifeless clumsy".split()
FILLER = "the film is a movie with story and cast of this , it 's".split()


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
