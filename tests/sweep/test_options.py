"""Sweep options checked before anything is planned: --gpus names GPUs that are visible here."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from normbench.cli import main
from normbench.sweep.options import SweepOptions


@pytest.mark.parametrize(
    ("count", "listed", "gpus", "error"),
    [
        (0, None, "0", "gpus: --gpus 0 asks for GPU 0, but 0 GPUs visible here (CUDA finds none); drop --gpus"),
        (2, None, "0,1", None),
        (2, None, "0,3", "gpus: --gpus 0,3 asks for GPU 3, but 2 GPUs visible here (ids 0, 1); give ids of visible"),
        (2, "2,3", "2,3", None),
        (1, "5", "0", "gpus: --gpus 0 asks for GPU 0, but 1 GPU visible here (ids 5)"),
    ],
)
def test_gpus_must_be_visible(
    count: int, listed: str | None, gpus: str, error: str | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(torch.cuda, "device_count", lambda: count)
    if listed is None:
        monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    else:
        monkeypatch.setenv("CUDA_VISIBLE_DEVICES", listed)
    options = SweepOptions("majority", gpus=gpus)
    if error is None:
        assert options.gpu_ids() == [int(g) for g in gpus.split(",")]
    else:
        with pytest.raises(ValueError) as err:
            options.gpu_ids()
        assert str(err.value).startswith(error)


def test_gpus_without_a_gpu_is_one_line_before_anything_trains(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 0)
    with pytest.raises(SystemExit) as exc:
        main(["sweep", "--config", "majority", "--gpus", "0", f"--runs_dir={tmp_path}"])
    assert exc.value.code == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert line.startswith("normbench: error: gpus: --gpus 0 asks for GPU 0, but 0 GPUs visible here")
    assert list(tmp_path.iterdir()) == []
