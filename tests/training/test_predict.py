"""``normbench predict``: a trained sst2 run and a GLUE-layout file -> GLUE's submission format (+ accuracy)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import torch

from normbench.cli import main
from normbench.tasks import get_task
from normbench.training.fit import train
from normbench.training.predict import SUBMISSION_HEADER, predict_file
from normbench.training.run.loading import build_datamodule, load_run
from normbench.training.run.records import read_record
from normbench.training.run.rundir import checkpoint_of
from tests.sst2_corpus import write_sst2
from tests.tasks.test_sst2_task import tiny


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One tiny trained sst2 run (its folder), the dev file of its corpus beside it."""
    root = tmp_path_factory.mktemp("predict")
    corpus = write_sst2(root / "sst2", train=200, dev=40)
    args = [
        "--config",
        str(get_task("sst2").config_path),
        "--preset",
        "quick",
        *(f"--{o}" for o in tiny(corpus)),
        f"--data.cache_dir={root / 'cache'}",
        f"--runs_dir={root / 'runs'}",
    ]
    return Path(train(args)).parent


def test_a_labelled_file_gives_glue_rows_and_the_validation_accuracy(run: Path, tmp_path: Path) -> None:
    corpus = run.parents[3] / "sst2"
    # on the CPU, in one batch as the validation loader's (40 sentences, eval batch 256): the same padded
    # shapes, so the comparison below is exact on any CPU and with a GPU visible
    found = predict_file(run, corpus / "dev.tsv", tmp_path / "SST-2.tsv", accelerator="cpu")
    lines = (tmp_path / "SST-2.tsv").read_text().splitlines()
    assert lines[0] == SUBMISSION_HEADER and len(lines) == 41 and found.rows == 40
    assert [line.split("\t")[0] for line in lines[1:]] == [str(i) for i in range(40)]
    assert {line.split("\t")[1] for line in lines[1:]} <= {"0", "1"}
    # the same predictions as the run's own validation loader gives: the run's tokenizer and text as trained
    record, module = load_run(checkpoint_of(read_record(run / "record.json"), run))
    dm = build_datamodule(record["config"])
    with torch.no_grad():
        expected = torch.cat([module(b["input_ids"], b["padding_mask"]).argmax(-1) for b in dm.val_dataloader()])
    assert [int(line.split("\t")[1]) for line in lines[1:]] == expected.tolist()
    labels = torch.tensor(dm.raw()["validation"]["label"])
    assert found.accuracy == pytest.approx(float((expected == labels).float().mean()))


def test_the_command_reads_glue_test_tsv_and_writes_nothing_else(
    run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    test = tmp_path / "in" / "test.tsv"
    test.parent.mkdir()
    test.write_text("index\tsentence\n0\ta great warm film\n1\ta dull , tedious movie\n7\tthe cast\n")
    out = tmp_path / "out"
    out.mkdir()
    cwd = os.getcwd()
    os.chdir(out)
    try:
        main(["predict", str(run), str(test)])
    finally:
        os.chdir(cwd)
    assert sorted(p.name for p in out.iterdir()) == ["SST-2.tsv"]  # no tokenizer.json dropped beside it
    lines = (out / "SST-2.tsv").read_text().splitlines()
    assert lines[0] == SUBMISSION_HEADER and [line.split("\t")[0] for line in lines[1:]] == ["0", "1", "7"]
    printed = capsys.readouterr().out
    assert "wrote 3 predictions" in printed and "accuracy" not in printed


def test_bad_input_is_one_line(run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.tsv"
    bad.write_text("text\tscore\nhello\t3\n")
    latin = tmp_path / "latin.tsv"
    latin.write_bytes("index\tsentence\n0\tfine\n1\tun film tr\xe8s dr\xf4le\n".encode("latin-1"))
    for args, message in (
        ([str(run), str(latin)], f"{latin}:3: not UTF-8 text (byte 0xe8 at column 13"),
        ([str(tmp_path / "nowhere"), str(bad)], "run: "),
        ([str(run), str(tmp_path / "absent.tsv")], "tsv: "),
        ([str(run), str(bad)], f"{bad}:1: expected the header"),
    ):
        with pytest.raises(SystemExit) as exc:
            main(["predict", *args, "--out", str(tmp_path / "p.tsv")])
        err = capsys.readouterr().err.strip().splitlines()
        assert exc.value.code == 2 and len(err) == 1 and err[0].startswith(f"normbench: error: {message}"), err
    assert not (tmp_path / "p.tsv").exists()


def test_the_output_is_checked_before_anything_is_predicted(
    run: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import shutil
    from collections import namedtuple

    import normbench.training.predict as predict_module

    test = tmp_path / "test.tsv"
    test.write_text("index\tsentence\n0\ta great warm film\n")
    board = tmp_path / "results" / "sst2" / "leaderboard.md"
    board.parent.mkdir(parents=True)
    board.write_text(f"{SUBMISSION_HEADER}\n")  # even one that looks like predictions: results/ is committed
    notes = tmp_path / "notes.txt"
    notes.write_text("my notes\n")
    locked, full = tmp_path / "locked", tmp_path / "full"
    locked.mkdir()
    full.mkdir()
    real_access, real_usage = os.access, shutil.disk_usage
    monkeypatch.setattr(os, "access", lambda p, mode: False if Path(p) == locked else real_access(p, mode))
    usage = namedtuple("usage", "total used free")
    monkeypatch.setattr(shutil, "disk_usage", lambda p: usage(1, 1, 0) if Path(p) == full else real_usage(p))
    real_load = predict_module.load_run
    monkeypatch.setattr(predict_module, "load_run", lambda ckpt: pytest.fail("the run was loaded before the check"))
    monkeypatch.chdir(tmp_path)
    for out, message in (
        (notes, f"out: {notes} exists and is not a predictions file (index<TAB>prediction); choose another --out"),
        (Path("results/sst2/leaderboard.md"), "out: results/sst2/leaderboard.md exists and lies under results/"),
        (tmp_path, f"out: {tmp_path} is a folder"),
        (locked / "p.tsv", f"out: {locked} is not writable"),
        (full / "p.tsv", f"out: the disk of {full} is full (0 MiB free"),
    ):
        with pytest.raises(SystemExit) as exc:
            main(["predict", str(run), str(test), "--out", str(out)])
        err = capsys.readouterr().err.strip().splitlines()
        assert exc.value.code == 2 and len(err) == 1 and err[0].startswith(f"normbench: error: {message}"), err
    assert notes.read_text() == "my notes\n" and board.read_text() == f"{SUBMISSION_HEADER}\n"
    assert list(locked.iterdir()) == [] and list(full.iterdir()) == []

    monkeypatch.setattr(predict_module, "load_run", real_load)
    main(["predict", str(run), str(test), "--out", str(notes), "--force", "true"])  # asked for: replaced
    assert notes.read_text().splitlines()[0] == SUBMISSION_HEADER
    main(["predict", str(run), str(test), "--out", str(notes)])  # earlier predictions: replaced without --force
    assert len(notes.read_text().splitlines()) == 2
