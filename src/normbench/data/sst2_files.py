"""GLUE's SST-2 files: ``train.tsv`` and ``dev.tsv`` (labelled, ``sentence<TAB>label`` or ``label<TAB>sentence``,
the order read from the header), the unlabelled ``test.tsv`` (``index<TAB>sentence``), and the hub's copy.

Every file is checked line by line (UTF-8, its header, each row: a one-line ``ValueError`` naming the file and line
of the first bad one) and then read with HF ``datasets`` (``csv`` builder), in file order.
"""

from __future__ import annotations

import csv
import sys
from pathlib import Path
from typing import cast

from normbench.data.text import DATA_ENV

FILES = {"train": "train.tsv", "validation": "dev.tsv"}
PREDICT_FILE = "test.tsv"  # GLUE's unlabelled test sentences: the ``predict`` split, if present
LABELLED_HEADERS = (("label", "sentence"), ("sentence", "label"))
UNLABELLED_HEADER = ("index", "sentence")


def show(columns: tuple[str, ...]) -> str:
    """A header as the messages write it: ``'label<TAB>sentence'``."""
    return "'" + "<TAB>".join(columns) + "'"


def check_utf8(path: Path) -> None:
    """One-line ``ValueError`` naming the file and line of the first byte of ``path`` that is not UTF-8."""
    data = Path(path).read_bytes()
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        column = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
        raise ValueError(
            f"{path}:{line}: not UTF-8 text (byte 0x{data[exc.start]:02x} at column {column}: {exc.reason}); "
            f"GLUE's files are UTF-8: save it as UTF-8"
        ) from None


def tsv_columns(path: Path, labelled: bool = True) -> tuple[str, str]:
    """The columns named by the header of ``path``, checked against the allowed headers.

    ``labelled``: a training/validation file (``label<TAB>sentence`` or ``sentence<TAB>label``),
    else an unlabelled prediction file (``index<TAB>sentence``). Raises a one-line ``ValueError``,
    also for a file that is not UTF-8 (:func:`check_utf8`).
    """
    check_utf8(path)
    with open(path, encoding="utf-8", newline="") as f:
        line = f.readline()
    columns = tuple(line.rstrip("\r\n").split("\t"))
    labelled_allowed = " or ".join(show(h) for h in LABELLED_HEADERS)
    if labelled and columns in LABELLED_HEADERS or not labelled and columns == UNLABELLED_HEADER:
        return cast("tuple[str, str]", columns)
    if labelled and columns == UNLABELLED_HEADER:
        raise ValueError(
            f"{path}:1: the header {show(columns)} has no label column: an unlabelled file (GLUE's "
            f"{PREDICT_FILE}) serves prediction only; training and validation files need the header "
            f"{labelled_allowed}"
        )
    if labelled:
        raise ValueError(
            f"{path}:1: expected the header {labelled_allowed} (a labelled file), got {line.strip()[:60]!r}"
        )
    raise ValueError(
        f"{path}:1: expected the header {show(UNLABELLED_HEADER)} (GLUE's unlabelled {PREDICT_FILE}, "
        f"index an integer), got {line.strip()[:60]!r}"
    )


def check_tsv(path: Path, labelled: bool = True) -> int:
    """Validate a GLUE SST-2 file (see :func:`tsv_columns` for ``labelled``); returns its number of examples.

    Raises a one-line ``ValueError`` naming the file and line of the first malformed row.
    """
    columns = tsv_columns(path, labelled)
    key = "label" if labelled else "index"
    at, text = columns.index(key), columns.index("sentence")
    allowed = "label 0 or 1" if labelled else "an integer index"
    lineno = 1
    with open(path, encoding="utf-8", newline="") as f:
        next(f)  # the header
        for lineno, line in enumerate(f, start=2):
            fields = line.rstrip("\r\n").split("\t")
            value = fields[at] if len(fields) == 2 else ""
            ok_key = value in ("0", "1") if labelled else value.isascii() and value.isdigit()
            if len(fields) != 2 or not ok_key or not fields[text].strip():
                raise ValueError(
                    f"{path}:{lineno}: expected {show(columns)} with {allowed} and a non-empty "
                    f"sentence, got {line.rstrip()[:60]!r}"
                )
    if lineno == 1:
        raise ValueError(f"{path}:1: no examples after the header {show(columns)}")
    return lineno - 1


def read_tsv(path: Path, columns: tuple[str, str]) -> dict[str, list]:
    """Read a checked file with the ``datasets`` ``csv`` builder; ``{column: [...]}`` in file order."""
    from datasets import Features, Value, load_dataset

    types = {"label": Value("int64"), "index": Value("int64"), "sentence": Value("string")}
    features = Features({name: types[name] for name in columns})  # in the header's order
    options: dict[str, str | int | bool] = {"delimiter": "\t", "quoting": csv.QUOTE_NONE, "keep_default_na": False}
    try:
        ds = load_dataset("csv", data_files={"rows": str(path)}, features=features, **options)["rows"]
    except Exception as exc:  # noqa: BLE001 - the file is checked: a damaged datasets (arrow) cache of it
        why = f"{type(exc).__name__}: {(str(exc).strip().splitlines() or [''])[0][:200]}"
        print(f"normbench: the datasets cache of {path} is unreadable ({why}); rebuilding it", file=sys.stderr)
        try:
            ds = load_dataset(
                "csv", data_files={"rows": str(path)}, features=features, download_mode="force_redownload", **options
            )["rows"]
        except Exception as again:  # noqa: BLE001 - one line naming the file, not the reader's traceback
            raise ValueError(f"{path}: cannot be read ({type(again).__name__}: {again})") from None
    return {name: list(ds[name]) for name in columns}


def load_local(data_dir: str | Path) -> dict[str, dict[str, list]]:
    """``{split: {"sentence": [...], "label": [...]}}`` from ``train.tsv`` and ``dev.tsv`` (either column order)."""
    folder = Path(data_dir)
    hint = (
        f"point data.data_dir (or ${DATA_ENV}) at a folder with GLUE's SST-2 train.tsv and dev.tsv, "
        "or use --data.source hub to download stanfordnlp/sst2 from the Hugging Face hub"
    )
    missing = [name for name in FILES.values() if not (folder / name).is_file()]
    if missing:
        raise ValueError(f"data.data_dir: {', '.join(missing)} not found in {str(folder)!r}; {hint}")
    for name in FILES.values():
        check_tsv(folder / name)
    splits = {}
    for split, name in FILES.items():
        rows = read_tsv(folder / name, tsv_columns(folder / name))
        splits[split] = {"sentence": rows["sentence"], "label": rows["label"]}
    return splits


def load_unlabelled(path: str | Path) -> dict[str, list]:
    """``{"index": [...], "sentence": [...]}`` from an unlabelled ``index<TAB>sentence`` file (GLUE's ``test.tsv``)."""
    path = Path(path)
    if not path.is_file():
        raise ValueError(
            f"{path}: not found; prediction needs GLUE's unlabelled {PREDICT_FILE} "
            f"({show(UNLABELLED_HEADER)}) in data.data_dir"
        )
    check_tsv(path, labelled=False)
    rows = read_tsv(path, UNLABELLED_HEADER)
    return {"index": rows["index"], "sentence": rows["sentence"]}


def load_hub(name: str) -> dict[str, dict[str, list]]:
    from datasets import load_dataset

    try:
        ds = load_dataset(name)
    except Exception as exc:  # network, unknown name, ...
        raise ValueError(
            f"data.hub_name: could not load {name!r} from the hub: {type(exc).__name__}: "
            f"{str(exc).splitlines()[0] if str(exc) else ''}"
        ) from exc
    return {split: {"sentence": list(ds[split]["sentence"]), "label": list(ds[split]["label"])} for split in FILES}
