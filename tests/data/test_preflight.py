"""Data checked before any run: a missing or malformed data folder is one line; ``source: auto`` reads the folder
when it is there and picks the hub only when it is missing (no network here: the choice alone is tested)."""

from __future__ import annotations

from pathlib import Path

import pytest

from normbench.data.lm import LMDataModule
from normbench.data.majority import MajorityDataModule
from normbench.data.preflight import build_datamodule, check_data, check_data_configs
from normbench.data.sst2 import SST2DataModule
from normbench.data.text import resolve_source
from tests.lm_corpus import write_corpus
from tests.sst2_corpus import write_sst2


def test_a_missing_lm_folder_is_one_line(tmp_path: Path) -> None:
    with pytest.raises(ValueError) as err:
        check_data(LMDataModule(source="local", data_dir=str(tmp_path / "absent")))
    assert str(err.value).startswith(f"data.data_dir: '{tmp_path / 'absent'}' does not exist; point")


def test_a_malformed_sst2_file_is_one_line_naming_file_and_line(tmp_path: Path) -> None:
    folder = write_sst2(tmp_path / "sst2", train=20, dev=5)
    with open(folder / "dev.tsv", "a", encoding="utf-8") as f:
        f.write("2\tnot a label\n")
    with pytest.raises(ValueError, match=rf"{folder / 'dev.tsv'}:7: expected 'label<TAB>sentence'"):
        check_data(SST2DataModule(source="local", data_dir=str(folder), vocab_size=100))


def test_each_data_configuration_is_loaded_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[int] = []
    monkeypatch.setattr(MajorityDataModule, "setup", lambda self, stage=None: calls.append(self.spec.num_sequences))
    section = {
        "class_path": "normbench.data.majority.MajorityDataModule",
        "init_args": {"num_sequences": 300, "cache_dir": str(tmp_path)},
    }
    other = {**section, "init_args": {**section["init_args"], "num_sequences": 400}}
    assert check_data_configs([section, other, dict(section)]) == 2 and calls == [300, 400]
    with pytest.raises(ValueError, match="data.class_path: 'nowhere.Data' cannot be imported"):
        build_datamodule({"class_path": "nowhere.Data"})


def test_an_unexpected_error_is_one_line_naming_the_module(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("")
    with pytest.raises(
        ValueError,
        match=r"^data: MajorityDataModule could not load its data \((FileExistsError|"
        r"NotADirectoryError)",
    ):
        check_data(MajorityDataModule(num_sequences=300, cache_dir=str(tmp_path / "file")))


def test_auto_reads_the_folder_and_picks_the_hub_only_when_it_is_missing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE"):
        monkeypatch.delenv(name, raising=False)
    write_corpus(tmp_path / "wt")
    assert resolve_source("auto", tmp_path / "wt") == "local"
    assert resolve_source("auto", tmp_path / "absent") == "hub"
    assert resolve_source("local", tmp_path / "absent") == "local"
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")  # offline: the missing folder is what is reported
    assert resolve_source("auto", tmp_path / "absent") == "local"
    with pytest.raises(ValueError, match="data.source: 'web' is not allowed; choose one of auto, local, hub"):
        resolve_source("web", tmp_path)
    lm = LMDataModule(data_dir=str(tmp_path / "wt"))
    assert lm.source == "local" and lm.identity_args() == {"source": "local"}
    sst2 = SST2DataModule(data_dir=str(tmp_path / "absent"))
    assert sst2.identity_args() == {"source": "local"}
    with pytest.raises(ValueError, match="train.tsv, dev.tsv not found"):
        check_data(sst2)


def test_auto_keeps_the_identity_of_the_local_runs(tmp_path: Path) -> None:
    """A run of ``source: auto`` that reads the local folder is the run of ``source: local`` (one config hash),
    and its record names the source it read."""
    from normbench.tasks import get_task
    from normbench.training.cli import NormbenchCLI

    write_corpus(tmp_path / "wt")
    hashes, sources = [], []
    for source in ("auto", "local"):
        cli = NormbenchCLI(
            args=[
                "--config",
                str(get_task("lm").config_path),
                "--preset",
                "quick",
                f"--data.init_args.data_dir={tmp_path / 'wt'}",
                f"--data.init_args.source={source}",
                f"--runs_dir={tmp_path / 'runs'}",
            ]
        )
        hashes.append(cli.config_hash)
        sources.append(cli.recorder.meta["config"]["data"]["init_args"]["source"])
    assert hashes[0] == hashes[1] and sources == ["local", "local"]
