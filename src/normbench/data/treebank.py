"""Penn Treebank escapes in SST-2 text, undone.

The Stanford Sentiment Treebank's sentences went through the Penn Treebank tokenizer, which
escapes brackets, quotes, slashes and asterisks. GLUE's SST-2 dev and test files keep the escapes
while its training phrases mostly spell brackets as they are, so a WordPiece tokenizer trained on
the training phrases reads the dev sentences' ``-lrb-`` as ``- l ##r ##b -`` and their ``\\/`` as
``[UNK] /``. :func:`ptb_unescape` maps, wherever they occur (brackets in either case):

    -lrb- -> (    -rrb- -> )    -lsb- -> [    -rsb- -> ]    -lcb- -> {    -rcb- -> }
    ``    -> "    ''    -> "    \\/    -> /    \\*    -> *
"""

from __future__ import annotations

import re
from typing import Literal

TextNormalization = Literal["ptb", "none"]
TEXT_NORMALIZATIONS: tuple[str, ...] = ("ptb", "none")

PTB_ESCAPES: dict[str, str] = {
    "-lrb-": "(",
    "-rrb-": ")",
    "-lsb-": "[",
    "-rsb-": "]",
    "-lcb-": "{",
    "-rcb-": "}",
    "``": '"',
    "''": '"',
    "\\/": "/",
    "\\*": "*",
}
_ESCAPE = re.compile("|".join(re.escape(e) for e in PTB_ESCAPES), flags=re.IGNORECASE)


def ptb_unescape(text: str) -> str:
    """``text`` with every Penn Treebank escape of :data:`PTB_ESCAPES` replaced by the character it stands for."""
    return _ESCAPE.sub(lambda m: PTB_ESCAPES[m.group(0).lower()], text)


def normalize_texts(texts: list[str], normalization: TextNormalization) -> list[str]:
    """``texts`` as a data module trains on them: ``ptb`` unescapes (:func:`ptb_unescape`), ``none`` keeps them as
    read."""
    if normalization == "none":
        return list(texts)
    if normalization == "ptb":
        return [ptb_unescape(t) for t in texts]
    raise ValueError(f"data.text_normalization: choose one of {', '.join(TEXT_NORMALIZATIONS)}, got {normalization!r}")
