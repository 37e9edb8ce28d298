"""A config's ``fit --help`` is built once and kept, keyed by what it is built from."""

from __future__ import annotations

from pathlib import Path

import pytest

from normbench.commands.help_cache import asks_config_help, config_help, help_file


def test_a_config_s_help_is_built_once_then_read_and_built_again_when_what_it_reads_changes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("NORMBENCH_CACHE", str(tmp_path / "cache"))
    config = tmp_path / "mine.yaml"
    config.write_text("model: {}\n")
    built: list[list[str]] = []

    def build(args: list[str]) -> None:
        built.append(args)
        print(f"usage: normbench fit {' '.join(args)}")
        raise SystemExit(0)

    args = ["--config", str(config), "--help"]
    assert config_help(args, build) == f"usage: normbench fit {' '.join(args)}\n" and len(built) == 1
    assert config_help(args, build) == f"usage: normbench fit {' '.join(args)}\n" and len(built) == 1  # kept
    assert help_file(args).is_file()
    config.write_text("model: {init_args: {}}\n")  # the config changed: built again
    config_help(args, build)
    assert len(built) == 2
    config_help(["--config", "majority", "--help"], build)  # other arguments: built again
    assert len(built) == 3


def test_a_help_that_fails_is_not_kept_and_exits_as_it_did(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NORMBENCH_CACHE", str(tmp_path / "cache"))

    def broken(args: list[str]) -> None:
        print("error: config: no such file")
        raise SystemExit(2)

    args = ["--config", "nowhere.yaml", "--help"]
    with pytest.raises(SystemExit) as stopped:
        config_help(args, broken)
    assert stopped.value.code == 2 and not help_file(args).exists()


def test_only_a_config_s_help_is_kept() -> None:
    assert asks_config_help(["--config", "majority", "--help"]) and asks_config_help(["-c", "x.yaml", "-h"])
    assert not asks_config_help(["--help"]) and not asks_config_help(["--config", "majority"])
