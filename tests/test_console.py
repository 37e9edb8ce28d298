"""A command prints normbench's own lines: no Lightning device banners, tips or ``\\r``-joined bars in a log file,
unless ``--verbose`` asks for them."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from normbench.io import show_bars
from tests.tiny_runs import sweep_args, tiny_config

CHATTER = ("GPU available", "TPU available", "Tip:", "Seed set to", "`Trainer.fit` stopped", "Total params", "LeafSpec")


@pytest.mark.parametrize("verbose", [False, pytest.param(True, marks=pytest.mark.slow)], ids=["quiet", "verbose"])
def test_a_sweep_log_holds_no_third_party_chatter(tmp_path: Path, verbose: bool) -> None:
    config = tiny_config(tmp_path)  # one run, still in a subprocess of its own (--workers=2)
    # the config as a user writes it: Lightning's model summary left at normbench's default
    text = yaml.safe_load(config.read_text())
    text["presets"]["quick"]["trainer"].pop("enable_model_summary")
    config.write_text(yaml.safe_dump(text, sort_keys=False))
    args = [a for a in sweep_args(config, tmp_path) if a not in ("--workers=1", "--no-progress")]
    cmd = [sys.executable, "-m", "normbench", *(["--verbose"] if verbose else []), *args, "--workers=2"]
    done = subprocess.run(cmd, cwd=tmp_path, capture_output=True, text=True, timeout=600)  # stderr: a pipe, no tty
    assert done.returncode == 0, done.stderr[-3000:]
    logs = done.stdout + done.stderr + "".join(p.read_text() for p in (tmp_path / "runs").rglob("sweep.log"))
    found = [text for text in CHATTER[:6] if text in logs]
    if verbose:
        assert "GPU available" in found and "Total params" in found
    else:
        assert found == [] and "\r" not in done.stderr
        assert "normbench: progress pre/both seed 0" in done.stderr  # the sweep's own progress lines remain


def test_bars_only_on_a_terminal(tmp_path: Path) -> None:
    with open(tmp_path / "log", "w") as log:
        assert not show_bars(True, log)
    assert not show_bars(False)
