"""GLUE's SST-2 files: each checked line by line (one line naming the file and line of the first bad one), read in
file order whichever the column order."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from normbench.data.sst2_files import check_tsv, load_local, load_unlabelled
from tests.sst2_corpus import SHARED, glue_layout, rows_of, write_rows, write_sst2


def test_local_files_load_with_crlf_and_header(tmp_path: Path) -> None:
    write_sst2(tmp_path, train=50, dev=10)
    data = load_local(tmp_path)
    assert len(data["train"]["sentence"]) == 50 and len(data["validation"]["label"]) == 10
    assert all("\r" not in s for s in data["train"]["sentence"]) and set(data["train"]["label"]) <= {0, 1}


@pytest.mark.parametrize("bad, line", [("2\tgood film", 3), ("1 good film", 3), ("1\t", 3), ("1\ta\tb", 3)])
def test_malformed_row_names_file_and_line(tmp_path: Path, bad: str, line: int) -> None:
    write_sst2(tmp_path, train=5, dev=5, crlf=False)
    path = tmp_path / "dev.tsv"
    rows = path.read_text().splitlines()
    rows.insert(2, bad)
    path.write_text("\n".join(rows) + "\n")
    with pytest.raises(ValueError) as err:
        load_local(tmp_path)
    assert str(err.value).startswith(f"{path}:{line}:") and "\n" not in str(err.value)


@pytest.mark.parametrize("name", ["dev.tsv", "test.tsv"])
def test_invalid_utf8_names_file_and_line(tmp_path: Path, name: str) -> None:
    """A byte that is not UTF-8 (a Latin-1 file, say) in a training or a test file: file and line, one line."""
    write_sst2(tmp_path, train=5, dev=5, crlf=False)
    path = tmp_path / name
    if name == "test.tsv":
        path.write_text("index\tsentence\n0\ta fine film\n")
    path.write_bytes(path.read_bytes() + "1\tun film tr\xe8s dr\xf4le\n".encode("latin-1"))
    line = len(path.read_bytes().splitlines())
    with pytest.raises(ValueError) as err:
        load_local(tmp_path) if name == "dev.tsv" else load_unlabelled(path)
    assert str(err.value).startswith(f"{path}:{line}: not UTF-8 text (byte 0xe8 at column 13") and "\n" not in str(
        err.value
    )


def test_missing_header_is_reported(tmp_path: Path) -> None:
    (tmp_path / "x.tsv").write_text("1\tgood\n")
    with pytest.raises(ValueError, match=r"x.tsv:1: expected the header"):
        check_tsv(tmp_path / "x.tsv")


def test_missing_files_one_line_with_remedy(tmp_path: Path) -> None:
    with pytest.raises(ValueError) as err:
        load_local(tmp_path)
    msg = str(err.value)
    assert "train.tsv, dev.tsv not found" in msg and "hub" in msg and "\n" not in msg


def test_existing_layout_reads_every_row_in_file_order(tmp_path: Path) -> None:
    """``label<TAB>sentence`` files: the same sentences and labels, in the same order, as the file's lines."""
    write_sst2(tmp_path, train=80, dev=20)
    data = load_local(tmp_path)
    for split, name in (("train", "train.tsv"), ("validation", "dev.tsv")):
        header, *rows = rows_of(tmp_path / name)
        assert header == ["label", "sentence"]
        assert data[split] == {"sentence": [s for _, s in rows], "label": [int(label) for label, _ in rows]}
        assert list(data[split]) == ["sentence", "label"]


def test_both_header_orders_give_identical_splits(tmp_path: Path) -> None:
    ours = load_local(write_sst2(tmp_path / "ours", train=80, dev=20))
    glue = load_local(glue_layout(tmp_path / "glue", test=None, train=80, dev=20))
    assert glue == ours and [list(v) for v in glue.values()] == [["sentence", "label"]] * 2
    mixed = tmp_path / "mixed"  # each file's own header decides
    write_sst2(mixed, train=80, dev=20)
    (mixed / "dev.tsv").write_bytes((tmp_path / "glue" / "dev.tsv").read_bytes())
    assert load_local(mixed) == ours
    assert check_tsv(tmp_path / "glue" / "train.tsv") == 80


@pytest.mark.parametrize("bad", ["good film\t2", "good film 1", "\t1", "good film\t", "a\tb\t1", "1\tgood film", ""])
def test_malformed_row_of_sentence_label_file_names_file_and_line(tmp_path: Path, bad: str) -> None:
    folder = glue_layout(tmp_path, test=None)
    path = folder / "train.tsv"
    rows = rows_of(path)
    write_rows(path, rows[:4] + [bad.split("\t")] + rows[4:], "\r\n")
    with pytest.raises(ValueError) as err:
        load_local(folder)
    msg = str(err.value)
    assert msg.startswith(f"{path}:5: expected 'sentence<TAB>label' with label 0 or 1") and "\n" not in msg


@pytest.mark.parametrize(
    "header", ["text\tlabel", "Sentence\tLabel", "label\tsentence\tidx", "label", "\ufefflabel\tsentence"]
)
def test_bad_header_names_file_and_allowed_headers(tmp_path: Path, header: str) -> None:
    folder = write_sst2(tmp_path, train=5, dev=5, crlf=False)
    path = folder / "dev.tsv"
    write_rows(path, [header.split("\t")] + rows_of(path)[1:])
    with pytest.raises(ValueError) as err:
        load_local(folder)
    msg = str(err.value)
    assert msg.startswith(f"{path}:1: expected the header 'label<TAB>sentence' or 'sentence<TAB>label'")
    assert "\n" not in msg


@pytest.mark.parametrize("header", ["label\tsentence", "sentence\tlabel", "idx\tsentence", "sentence\tindex"])
def test_bad_test_tsv_header_names_file_and_allowed_header(tmp_path: Path, header: str) -> None:
    path = write_rows(tmp_path / "test.tsv", [header.split("\t"), ["0", "good film"]])
    with pytest.raises(ValueError) as err:
        load_unlabelled(path)
    assert str(err.value).startswith(f"{path}:1: expected the header 'index<TAB>sentence'")
    assert "\n" not in str(err.value)


@pytest.mark.parametrize("text", ["", "sentence\tlabel\n", "index\tsentence\r\n"])
def test_empty_file_is_refused(tmp_path: Path, text: str) -> None:
    path = tmp_path / "x.tsv"
    path.write_text(text)
    with pytest.raises(ValueError, match=r"x.tsv:1: (expected the header|no examples)"):
        check_tsv(path, labelled=not text.startswith("index"))


@pytest.mark.skipif(not SHARED.is_dir(), reason="the shared SST-2 files are not on this machine")
def test_shared_sst2_sizes() -> None:
    data = load_local(SHARED)
    assert len(data["train"]["label"]) == 67349 and len(data["validation"]["label"]) == 872
    assert torch.tensor(data["validation"]["label"]).float().mean().item() == pytest.approx(444 / 872)


def test_a_damaged_datasets_cache_is_rebuilt(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The datasets library's own (arrow) cache of a checked file fails to read once: named, and rebuilt."""
    import datasets

    write_sst2(tmp_path, train=5, dev=5)
    real, calls = datasets.load_dataset, []

    def damaged_once(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202
        calls.append(kwargs.get("download_mode"))
        if len(calls) == 1:
            raise datasets.exceptions.DatasetGenerationError("An error occurred while generating the dataset")
        return real(*args, **kwargs)

    monkeypatch.setattr(datasets, "load_dataset", damaged_once)
    data = load_local(tmp_path)
    assert len(data["train"]["sentence"]) == 5 and calls[:2] == [None, "force_redownload"]
    (line,) = [x for x in capsys.readouterr().err.splitlines() if x.startswith("normbench:")]
    assert line.startswith(f"normbench: the datasets cache of {tmp_path / 'train.tsv'} is unreadable (")
