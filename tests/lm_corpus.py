"""A small WikiText-style corpus for the LM tests (real files live outside the repository)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

WORDS = (
    "the of and in to a was is for on as by with he that at from his it an were are which this be "
    "album song river city war ship army film game species church station school season team"
).split()


def write_corpus(folder: Path, articles: int = 24, paragraphs: int = 3, seed: int = 0) -> list[str]:
    """Write ``valid.txt`` / ``test.txt`` in WikiText layout; returns the article titles in order."""
    rng = np.random.default_rng(seed)
    folder.mkdir(parents=True, exist_ok=True)
    titles, files = [], {"test.txt": [], "valid.txt": []}
    for i in range(articles):
        title = f"Article {i:03d}"
        titles.append(title)
        lines = [" \n", f" = {title} = \n", " \n"]
        for p in range(paragraphs):
            if p == 1:
                lines += [f" = = Section {p} = = \n", " \n"]
            lines += [" " + " ".join(rng.choice(WORDS, size=int(rng.integers(40, 80)))) + " . \n", " \n"]
        files["test.txt" if i < articles // 2 else "valid.txt"].append("".join(lines))
    for name, parts in files.items():
        (folder / name).write_text("".join(parts), encoding="utf-8")
    return titles
