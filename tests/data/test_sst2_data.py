"""SST-2 data: local TSV loading and validation, WordPiece tokenizer, dynamic padding."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from normbench.data.sst2 import SST2DataModule, check_tsv, load_local, pad_batch, train_wordpiece
from tests.sst2_corpus import FILLER, NEGATIVE, POSITIVE, write_sst2

SHARED = Path(__file__).resolve().parents[3] / "shared" / "data" / "sst2"


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


def test_missing_header_is_reported(tmp_path: Path) -> None:
    (tmp_path / "x.tsv").write_text("1\tgood\n")
    with pytest.raises(ValueError, match=r"x.tsv:1: expected the header"):
        check_tsv(tmp_path / "x.tsv")


def test_missing_files_one_line_with_remedy(tmp_path: Path) -> None:
    with pytest.raises(ValueError) as err:
        load_local(tmp_path)
    msg = str(err.value)
    assert "train.tsv, dev.tsv not found" in msg and "hub" in msg and "\n" not in msg


@pytest.fixture(scope="module")
def tokenizer(tmp_path_factory: pytest.TempPathFactory):  # noqa: ANN201
    folder = write_sst2(tmp_path_factory.mktemp("sst2"))
    return train_wordpiece(load_local(folder)["train"]["sentence"], 200)


WORDS = FILLER + POSITIVE + NEGATIVE


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(WORDS), st.booleans(), st.sampled_from([" ", "  ", "\t", ", ", " ' "])),
                max_size=20))
def test_wordpiece_round_trip(tokenizer, parts: list[tuple[str, bool, str]]) -> None:  # noqa: ANN001
    """Text made of known words re-encodes to the same ids (decoding loses only case and spacing)."""
    text = "".join((w.upper() if up else w) + sep for w, up, sep in parts)
    ids = tokenizer.encode(text).ids
    assert 1 not in ids  # no [UNK]
    assert tokenizer.encode(tokenizer.decode(ids)).ids == ids


def test_wordpiece_wraps_in_cls_sep_and_lower_cases(tokenizer) -> None:  # noqa: ANN001
    enc = tokenizer.encode("The Film is GREAT")
    assert enc.tokens[0] == "[CLS]" and enc.tokens[-1] == "[SEP]"
    assert tokenizer.decode(enc.ids) == "the film is great"
    assert [tokenizer.token_to_id(t) for t in ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]")] == [0, 1, 2, 3, 4]


def test_pad_batch_pads_to_the_longest() -> None:
    batch = pad_batch([([2, 7, 3], 1), ([2, 3], 0)])
    assert batch["input_ids"].tolist() == [[2, 7, 3], [2, 3, 0]]
    assert batch["padding_mask"].tolist() == [[False] * 3, [False, False, True]]
    assert batch["labels"].tolist() == [1, 0]


def test_datamodule_truncates_and_batches(tmp_path: Path) -> None:
    write_sst2(tmp_path)
    dm = SST2DataModule(data_dir=str(tmp_path), vocab_size=200, max_length=6, batch_size=8)
    dm.setup("fit")
    batch = next(iter(dm.train_dataloader()))
    assert batch["input_ids"].shape[0] == 8 and batch["input_ids"].shape[1] <= 6
    assert (batch["input_ids"][:, 0] == 2).all()  # [CLS]
    assert dm.tokenizer_path.is_file()


def test_bad_max_length_names_the_field() -> None:
    with pytest.raises(ValueError, match="data.init_args.max_length"):
        SST2DataModule(max_length=2)


@pytest.mark.skipif(not SHARED.is_dir(), reason="the shared SST-2 files are not on this machine")
def test_shared_sst2_sizes() -> None:
    data = load_local(SHARED)
    assert len(data["train"]["label"]) == 67349 and len(data["validation"]["label"]) == 872
    assert torch.tensor(data["validation"]["label"]).float().mean().item() == pytest.approx(444 / 872)
