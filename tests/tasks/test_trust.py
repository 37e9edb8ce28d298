"""Run records and checkpoints are data: reading one never imports a class or a norm it names unless it is
registered (or the user passes --trust_record_code true). Every command that reads records is checked with a
crafted record or checkpoint naming a module whose import leaves a mark."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
import torch

from normbench.sweep.options import SweepOptions
from normbench.sweep.run import run_sweep
from normbench.tasks.trust import record_class, registered_classes, trust_record_code, untrusted_norms
from normbench.training.run.rundir import record_config_hash
from tests.tiny_runs import copy_of

MODULE = "normbench_crafted_side_effect"  # a module a crafted record names; importing it writes MARK


@pytest.fixture
def crafted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A module on the path whose import writes ``<tmp>/imported`` (the mark that code ran); returns the mark."""
    mark = tmp_path / "imported"
    code = tmp_path / "crafted_code"
    code.mkdir()
    (code / f"{MODULE}.py").write_text(
        "import pathlib, torch.nn as nn, lightning as L\n"
        f"pathlib.Path({str(mark)!r}).write_text('ran')\n"
        "class Data(L.LightningDataModule):\n    pass\n"
        "class Module(L.LightningModule):\n    pass\n"
        "class Evil(nn.Identity):\n    def __init__(self, d, **kw):\n        super().__init__()\n"
    )
    monkeypatch.syspath_prepend(str(code))
    monkeypatch.delitem(sys.modules, MODULE, raising=False)
    monkeypatch.delenv("NORMBENCH_TRUST_RECORD_CODE", raising=False)
    return mark


def edit_record(run: Path, **sections: str) -> None:
    """Point the record's ``<section>.class_path`` at ``value`` for each ``section=value``."""
    path = run / "record.json"
    record = json.loads(path.read_text())
    for section, value in sections.items():
        record["config"][section]["class_path"] = value
    path.write_text(json.dumps(record))


def edit_checkpoint(run: Path, component: str) -> None:
    """The checkpoint's saved hyperparameters name ``component`` as the attention norm."""
    path = run / "checkpoints" / "last.ckpt"
    ckpt = torch.load(path, map_location="cpu", weights_only=False)
    ckpt["hyper_parameters"]["arch"]["attn_norm"]["component"] = component
    torch.save(ckpt, path)


def one_error_line(err: str, *needles: str) -> None:
    lines = err.strip().splitlines()
    assert lines and lines[-1].startswith("normbench: error: "), err[-2000:]
    assert "Traceback" not in err
    for needle in needles:
        assert needle in lines[-1], lines[-1]


def test_registered_classes_resolve_and_others_are_refused(crafted: Path) -> None:
    for path, cls in registered_classes().items():
        assert record_class(path, "data" if "data" in path else "model") is cls
    for bad in ("os.system", "subprocess.Popen", f"{MODULE}.Data", "builtins.eval"):
        with pytest.raises(ValueError, match=r"^data\.class_path: .*--trust_record_code true"):
            record_class(bad, "data")
    assert not crafted.exists() and MODULE not in sys.modules


def test_trusting_records_imports_what_they_name(crafted: Path) -> None:
    trust_record_code()
    try:
        assert record_class(f"{MODULE}.Data", "data").__name__ == "Data"
        with pytest.raises(ValueError, match="is not a LightningDataModule class"):
            record_class("os.path", "data")
    finally:
        trust_record_code(False)
    assert crafted.read_text() == "ran"


def test_an_import_path_norm_is_refused_inside_untrusted_norms(crafted: Path) -> None:
    from normbench.nn.norms import get_component

    with untrusted_norms(), pytest.raises(ValueError, match=r"^component: .*import path, not a registered norm"):
        get_component(f"{MODULE}:Evil")
    assert not crafted.exists()


def test_record_config_hash_imports_no_model_class(tiny_sweep: Path, tmp_path: Path, crafted: Path) -> None:
    _, run = copy_of(tiny_sweep, tmp_path)
    edit_record(run, model=f"{MODULE}.Module")
    with pytest.raises(ValueError, match=r"model\.class_path: .*not a registered task's model class"):
        record_config_hash(json.loads((run / "record.json").read_text()))
    assert not crafted.exists()


@pytest.mark.parametrize("section", ["data", "model"])
def test_decompose_refuses_a_crafted_record(
    tiny_sweep: Path, tmp_path: Path, crafted: Path, section: str, normbench_in_process
) -> None:  # noqa: ANN001
    _, run = copy_of(tiny_sweep, tmp_path)
    edit_record(run, **{section: f"{MODULE}.{'Data' if section == 'data' else 'Module'}"})
    ckpt = run / "checkpoints" / "last.ckpt"
    out = normbench_in_process("analyze", "decompose", "--ckpt", str(ckpt), "--sequences", "4", cwd=tmp_path)
    if section == "data":  # the data module is built from the record's config
        assert out.returncode == 2
        one_error_line(out.stderr, "data.class_path", MODULE, "--trust_record_code true")
    assert not crafted.exists()
    if section == "data":
        trusted = normbench_in_process(
            "analyze", "decompose", "--ckpt", str(ckpt), "--sequences", "4", "--trust_record_code", "true", cwd=tmp_path
        )
        assert crafted.exists(), trusted.stderr[-2000:]  # the user's explicit trust imports it


def test_decompose_and_predict_refuse_a_crafted_checkpoint(
    tiny_sweep: Path, tmp_path: Path, crafted: Path, normbench_in_process
) -> None:  # noqa: ANN001
    _, run = copy_of(tiny_sweep, tmp_path)
    edit_checkpoint(run, f"{MODULE}:Evil")
    ckpt = run / "checkpoints" / "last.ckpt"
    tsv = tmp_path / "test.tsv"
    tsv.write_text("index\tsentence\n0\ta fine film\n")
    for args in (("analyze", "decompose", "--ckpt", str(ckpt)), ("predict", str(run), str(tsv), "--out", "p.tsv")):
        out = normbench_in_process(*args, cwd=tmp_path)
        assert out.returncode == 2
        one_error_line(out.stderr, MODULE, "not a registered norm")
    assert not crafted.exists() and not (tmp_path / "p.tsv").exists()


def test_geometry_refuses_a_crafted_checkpoint(tiny_sweep: Path, tmp_path: Path, crafted: Path) -> None:
    from normbench.run_analyses.geometry import write_geometry

    _, run = copy_of(tiny_sweep, tmp_path)
    edit_checkpoint(run, f"{MODULE}:Evil")
    with pytest.raises(ValueError, match="not a registered norm"):
        write_geometry({"pre/both": run / "record.json"}, tmp_path / "out")
    assert not crafted.exists() and not (tmp_path / "out").exists()


def test_the_leaderboard_refuses_a_crafted_record(tiny_sweep: Path, tmp_path: Path, crafted: Path) -> None:
    config, run = copy_of(tiny_sweep, tmp_path)
    edit_record(run, model=f"{MODULE}.Module")
    with pytest.raises(ValueError, match=rf"model\.class_path: '{MODULE}.Module' is not a registered"):
        run_sweep(
            SweepOptions(str(config), runs_dir=str(tmp_path / "runs"), results_dir=str(tmp_path / "results")),
            train=False,
        )
    assert not crafted.exists() and not (tmp_path / "results").exists()
