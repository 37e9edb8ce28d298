"""SST-2 data: the data module's splits and prediction, dynamic padding, text normalization, the tokenizer cache."""

from __future__ import annotations

from pathlib import Path

import lightning as L
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from normbench.data.sst2 import SST2DataModule, pad_batch
from normbench.data.sst2_files import load_local, load_unlabelled
from normbench.data.treebank import PTB_ESCAPES, ptb_unescape
from normbench.nn.bert import BertConfig
from normbench.tasks.sst2 import SST2Module
from tests.sst2_corpus import SHARED, glue_layout, rows_of, write_rows, write_sst2


def test_glue_dir_with_test_tsv_gives_a_predict_loader_with_indices(tmp_path: Path) -> None:
    folder = glue_layout(tmp_path / "sst2", test=30)
    assert load_unlabelled(folder / "test.tsv") == {
        "index": [100 + i for i in range(30)],
        "sentence": [s for _, s in rows_of(folder / "test.tsv")[1:]],
    }
    dm = SST2DataModule(data_dir=str(folder), vocab_size=200, max_length=6, eval_batch_size=8)
    dm.setup("fit")
    assert "predict" not in dm.encoded  # only the predict stage reads test.tsv
    batches = list(dm.predict_dataloader())
    assert [len(b["index"]) for b in batches] == [8, 8, 8, 6]
    for batch in batches:
        assert set(batch) == {"input_ids", "padding_mask", "index"}  # no labels
        assert batch["input_ids"].shape[1] <= 6 and (batch["input_ids"][:, 0] == 2).all()
        assert batch["padding_mask"].equal(batch["input_ids"] == 0)
    assert torch.cat([b["index"] for b in batches]).tolist() == [100 + i for i in range(30)]
    assert len(dm.train_dataloader().dataset) == 50 and len(dm.val_dataloader().dataset) == 10  # training unchanged


def test_the_sst2_model_predicts_the_unlabelled_file(tmp_path: Path) -> None:
    dm = SST2DataModule(data_dir=str(glue_layout(tmp_path / "sst2", test=12)), vocab_size=200, eval_batch_size=5)
    model = SST2Module(
        arch=BertConfig(vocab_size=200, max_positions=128, d_model=8, n_heads=2, n_layers=1, ffn_width=16)
    )
    trainer = L.Trainer(
        accelerator="cpu",
        devices=1,
        logger=False,
        enable_checkpointing=False,
        enable_progress_bar=False,
        enable_model_summary=False,
        default_root_dir=tmp_path,
    )
    out = trainer.predict(model, datamodule=dm)
    assert torch.cat([o["index"] for o in out]).tolist() == [100 + i for i in range(12)]
    assert set(torch.cat([o["prediction"] for o in out]).tolist()) <= {0, 1}
    assert all(((o["p_positive"] >= 0) & (o["p_positive"] <= 1)).all() for o in out)


def test_dir_without_test_tsv_has_no_predict_split(tmp_path: Path) -> None:
    dm = SST2DataModule(data_dir=str(glue_layout(tmp_path, test=None)), vocab_size=200)
    dm.setup("predict")  # no error: the predict split is optional
    assert dm.predict_file is None and "predict" not in dm.encoded and len(dm.encoded["train"]) == 50
    with pytest.raises(ValueError) as err:
        dm.predict_dataloader()
    assert "test.tsv" in str(err.value) and str(tmp_path) in str(err.value) and "\n" not in str(err.value)


@pytest.mark.parametrize("name", ["train.tsv", "dev.tsv"])
def test_unlabelled_training_file_is_refused_in_one_line(tmp_path: Path, name: str) -> None:
    folder = glue_layout(tmp_path, test=5)
    path = folder / name
    path.write_bytes((folder / "test.tsv").read_bytes())
    for load in (lambda: load_local(folder), lambda: SST2DataModule(data_dir=str(folder), vocab_size=200).setup("fit")):
        with pytest.raises(ValueError) as err:
            load()
        msg = str(err.value)
        assert msg.startswith(f"{path}:1:") and "no label column" in msg and "prediction only" in msg
        assert "\n" not in msg


@pytest.mark.parametrize("bad", ["x\tgood film", "-1\tgood film", "7\t", "7", "7\tgood\tfilm"])
def test_malformed_row_of_test_tsv_names_file_and_line(tmp_path: Path, bad: str) -> None:
    folder = glue_layout(tmp_path, test=6)
    path = folder / "test.tsv"
    rows = rows_of(path)
    write_rows(path, rows[:3] + [bad.split("\t")] + rows[3:])
    dm = SST2DataModule(data_dir=str(folder), vocab_size=200)
    dm.setup("fit")  # training does not read test.tsv
    for load in (lambda: load_unlabelled(path), dm.predict_dataloader):
        with pytest.raises(ValueError) as err:
            load()
        msg = str(err.value)
        assert msg.startswith(f"{path}:4: expected 'index<TAB>sentence' with an integer index") and "\n" not in msg


def test_pad_batch_pads_to_the_longest() -> None:
    batch = pad_batch([([2, 7, 3], 1), ([2, 3], 0)])
    assert batch["input_ids"].tolist() == [[2, 7, 3], [2, 3, 0]]
    assert batch["padding_mask"].tolist() == [[False] * 3, [False, False, True]]
    assert batch["labels"].tolist() == [1, 0]
    assert pad_batch([([2, 7, 3], 11), ([2, 3], 10)], key="index")["index"].tolist() == [11, 10]


def test_datamodule_truncates_and_batches(tmp_path: Path) -> None:
    write_sst2(tmp_path)
    dm = SST2DataModule(data_dir=str(tmp_path), vocab_size=200, max_length=6, batch_size=8)
    dm.setup("fit")
    batch = next(iter(dm.train_dataloader()))
    assert batch["input_ids"].shape[0] == 8 and batch["input_ids"].shape[1] <= 6
    assert (batch["input_ids"][:, 0] == 2).all()  # [CLS]
    assert dm.tokenizer_path.is_file()


def test_bad_max_length_names_the_field() -> None:
    with pytest.raises(ValueError, match="data.max_length"):
        SST2DataModule(max_length=2)


ESCAPED = {"(": "-lrb-", ")": "-rrb-", "[": "-lsb-", "]": "-rsb-", "{": "-lcb-", "}": "-rcb-", "/": "\\/", "*": "\\*"}


@pytest.mark.parametrize(
    ("raw", "clean"),
    [
        ("while -lrb- hill -rrb- has learned new tricks", "while ( hill ) has learned new tricks"),
        ("-LSB- sic -RSB- and -lcb- -RCB-", "[ sic ] and { }"),
        ("writer\\/director \\* a `` grand '' film", 'writer/director * a " grand " film'),
        ("no escapes : ( ) / it 's '' fine", "no escapes : ( ) / it 's \" fine"),
        ("", ""),
    ],
)
def test_ptb_unescape_maps_every_escape(raw: str, clean: str) -> None:
    assert ptb_unescape(raw) == clean


def test_the_docstring_lists_the_mapping() -> None:
    import normbench.data.treebank as treebank

    listed = treebank.__doc__.replace("\\\\", "\\")
    for escape, char in PTB_ESCAPES.items():
        assert f"{escape} -> {char}" in " ".join(listed.split())


@settings(max_examples=100, deadline=None)
@given(st.text(alphabet='ab ()[]{}/*"', max_size=30))
def test_unescape_undoes_the_treebank_escapes(text: str) -> None:
    """Escape text as the treebank does (brackets, slashes, asterisks; double quotes as `` and ''): unescaping restores it."""
    quotes = iter(["``", "''"] * len(text))
    escaped = "".join(ESCAPED.get(c) or (next(quotes) if c == '"' else c) for c in text)
    assert ptb_unescape(escaped) == text
    assert ptb_unescape(text) == text  # text without escapes is left alone


def escaped_corpus(folder: Path) -> Path:
    """Train phrases with plain brackets and slashes; dev sentences with the treebank's escapes (as GLUE's SST-2)."""
    write_sst2(folder, train=200, dev=20)
    train = [
        ["label", "sentence"],
        *rows_of(folder / "train.tsv")[1:],
        ["1", "a warm ( and funny ) writer/director debut"],
        ["0", "dull `` thriller '' , not a comedy/drama"],
    ]
    write_rows(folder / "train.tsv", train)
    dev = [
        ["label", "sentence"],
        ["1", "a warm -lrb- and funny -rrb- writer\\/director debut"],
        ["0", "dull `` thriller '' , not a comedy\\/drama"],
    ]
    write_rows(folder / "dev.tsv", dev)
    return folder


def test_ptb_normalization_tokenizes_dev_escapes_like_train_text(tmp_path: Path) -> None:
    folder = escaped_corpus(tmp_path / "sst2")
    dm = SST2DataModule(data_dir=str(folder), vocab_size=200, cache_dir=str(tmp_path / "cache"))
    assert dm.text_normalization == "ptb"  # the default
    dev = dm.raw()["validation"]["sentence"]
    assert dev == ["a warm ( and funny ) writer/director debut", 'dull " thriller " , not a comedy/drama']
    tokens = [dm.tokenizer.encode(s).tokens for s in dev]
    assert "(" in tokens[0] and ")" in tokens[0] and "/" in tokens[0]
    assert not {"[UNK]", "##r", "##b"} & {t for ts in tokens for t in ts}
    assert dm.raw()["train"]["sentence"][-1] == 'dull " thriller " , not a comedy/drama'

    raw = SST2DataModule(
        data_dir=str(folder), vocab_size=200, cache_dir=str(tmp_path / "cache"), text_normalization="none"
    )
    assert raw.raw()["validation"]["sentence"][0] == "a warm -lrb- and funny -rrb- writer\\/director debut"
    assert "[UNK]" in raw.tokenizer.encode(raw.raw()["validation"]["sentence"][0]).tokens  # the backslash
    assert raw.build_tokenizer() != dm.build_tokenizer()  # separate cached tokenizers


def test_the_tokenizer_cache_key_names_the_normalization(tmp_path: Path) -> None:
    """Even when the training text has no escape (so the same text), each normalization has its own tokenizer."""
    folder = write_sst2(tmp_path / "sst2", train=80, dev=10)
    paths = {
        kind: SST2DataModule(
            data_dir=str(folder), vocab_size=200, cache_dir=str(tmp_path / "cache"), text_normalization=kind
        ).build_tokenizer()
        for kind in ("ptb", "none")
    }
    assert paths["ptb"] != paths["none"]


def test_predict_sentences_are_normalized_too(tmp_path: Path) -> None:
    folder = glue_layout(tmp_path / "sst2", test=None)
    write_rows(folder / "test.tsv", [["index", "sentence"], ["0", "-lrb- a -rrb- shapeless blob"]])
    dm = SST2DataModule(data_dir=str(folder), vocab_size=200, cache_dir=str(tmp_path / "cache"))
    assert dm.raw_predict()["sentence"] == ["( a ) shapeless blob"]


@pytest.mark.parametrize("bad", ["PTB", "nfkc", ""])
def test_bad_text_normalization_names_the_field(bad: str) -> None:
    with pytest.raises(ValueError, match=r"^data.text_normalization: choose one of ptb, none, got "):
        SST2DataModule(text_normalization=bad)  # type: ignore[arg-type]


def test_the_normalization_is_part_of_the_run_identity(tmp_path: Path) -> None:
    """tasks/sst2.yaml declares it; ptb, none and a config written before the option each hash differently,
    and a record without it is rebuilt on the text as read (what its run trained on)."""
    from normbench.tasks import get_task
    from normbench.training.cli import NormbenchCLI
    from normbench.training.run.loading import build_datamodule
    from normbench.training.run.rundir import config_hash, run_identity

    folder = write_sst2(tmp_path / "sst2", train=80, dev=10)
    common = [
        "--config",
        str(get_task("sst2").config_path),
        f"--runs_dir={tmp_path / 'runs'}",
        f"--data.init_args.data_dir={folder}",
        f"--data.init_args.cache_dir={tmp_path / 'cache'}",
    ]
    ptb = NormbenchCLI(args=common)
    none = NormbenchCLI(args=[*common, "--data.init_args.text_normalization=none"])
    config = ptb.resolved_config()
    assert config["data"]["init_args"]["text_normalization"] == "ptb"
    old = {
        **config,
        "data": {
            **config["data"],
            "init_args": {k: v for k, v in config["data"]["init_args"].items() if k != "text_normalization"},
        },
    }
    hashes = {config_hash(run_identity(c, None, 1)) for c in (config, none.resolved_config(), old)}
    assert len(hashes) == 3
    assert build_datamodule(old, "fit").text_normalization == "none"
    assert build_datamodule(config, "fit").text_normalization == "ptb"


@pytest.mark.skipif(not SHARED.is_dir(), reason="the shared SST-2 files are not on this machine")
def test_shared_sst2_escapes() -> None:
    """GLUE's dev file escapes brackets (42 sentences) and slashes (8); its training phrases do not."""
    data = load_local(SHARED)
    changed = {split: sum(ptb_unescape(s) != s for s in v["sentence"]) for split, v in data.items()}
    assert changed == {"train": 869, "validation": 62}  # train: `` '' quotes only
    dev = [ptb_unescape(s) for s in data["validation"]["sentence"]]
    assert sum("(" in s for s in dev) == 42 and not any("\\" in s or "-lrb-" in s for s in dev)


def test_a_corrupt_cached_tokenizer_is_named_and_trained_again(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write_sst2(tmp_path / "sst2", train=60, dev=10)
    kwargs = {"data_dir": str(tmp_path / "sst2"), "cache_dir": str(tmp_path / "cache"), "vocab_size": 200}
    path = SST2DataModule(**kwargs).build_tokenizer()
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])
    capsys.readouterr()
    assert SST2DataModule(**kwargs).build_tokenizer() == path
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert line.startswith(f"normbench: data cache {path} is corrupt (") and line.endswith("; rebuilding it")
    assert path.read_bytes() == data
