"""A bake queue and the configs it names are untrusted input (a pull request may bring them): planning from a queue
imports no class or norm its configs name unless it is registered, the project's own example, or the user passes
--trust_record_code true; without it, one line names the file, the field and what is allowed. And a bake asked for
GPUs this machine lacks refuses in one line."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import yaml

from normbench.sweep.baking.queue import load_queue
from normbench.tasks.trust import project_example

MODULE = "queue_crafted_side_effect"  # a module in the working directory; importing it writes the mark
CODE = (
    "import pathlib, torch.nn as nn, lightning as L\n"
    "pathlib.Path(__file__).with_name('imported').write_text('ran')\n"
    "class Data(L.LightningDataModule):\n    pass\n"
    "class Evil(nn.Identity):\n    def __init__(self, d, **kw):\n        super().__init__()\n"
)


@pytest.fixture
def crafted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """``<tmp>/queue_crafted_side_effect.py`` in the working directory of the command; returns its mark."""
    (tmp_path / f"{MODULE}.py").write_text(CODE)
    monkeypatch.delitem(sys.modules, MODULE, raising=False)
    monkeypatch.delenv("NORMBENCH_TRUST_RECORD_CODE", raising=False)
    return tmp_path / "imported"


def queue_with(folder: Path, config: dict) -> Path:
    """A queue of one tiny majority item whose config file is the majority task extended by ``config``."""
    (folder / "card.yaml").write_text(yaml.safe_dump({"extends": "majority", **config}, sort_keys=False))
    queue = folder / "bake.yaml"
    queue.write_text(
        "queue:\n  - {board: majority/x, task: majority, preset: quick, variants: [pre/both], seeds: '0', "
        "config: card.yaml}\n"
    )
    return queue


CRAFTED = {
    "data class": ({"data": {"class_path": f"{MODULE}.Data"}}, "data.class_path"),
    "data as a class path": ({"data": f"{MODULE}.Data"}, "data"),
    "a variant's norm": (
        {"bench": {"variants": {"pre/both": {"model.init_args.arch.attn_norm.component": f"{MODULE}:Evil"}}}},
        "bench.variants.pre/both.model.arch.attn_norm.component",
    ),
    "a norm written inline": (
        {"presets": {"quick": {"model": {"init_args": {"arch": {"ffn_norm": f"{{component: '{MODULE}:Evil'}}"}}}}}},
        "presets.quick.model.arch.ffn_norm.component",
    ),
    "a grid of norms": (
        {
            "bench": {
                "grid": {"model.arch.attn_norm.component,model.arch.ffn_norm.component": [["both", f"{MODULE}:Evil"]]}
            }
        },
        "model.arch.ffn_norm.component",
    ),
    "a callback": ({"trainer": {"callbacks": [{"class_path": f"{MODULE}.Data"}]}}, "trainer.callbacks.0.class_path"),
}


@pytest.mark.parametrize("case", list(CRAFTED))
def test_a_queue_config_naming_unregistered_code_is_one_line_and_imports_nothing(
    tmp_path: Path, crafted: Path, case: str, normbench_in_process
) -> None:  # noqa: ANN001
    config, field = CRAFTED[case]
    queue = queue_with(tmp_path, config)
    out = normbench_in_process(
        "bake", "--queue", str(queue), "--dry_run", "true", "--results_dir", "results", "--runs_dir", "runs",
        cwd=tmp_path,
    )  # fmt: skip
    lines = out.stderr.strip().splitlines()
    assert out.returncode == 2 and len(lines) == 1, out.stderr[-2000:]
    line = lines[0]
    assert line.startswith(f"normbench: error: queue: {queue} item 1: config ") and "card.yaml" in line, line
    assert f"{field}: " in line and "is not allowed: choose " in line and "--trust_record_code true" in line, line
    assert not crafted.exists() and MODULE not in sys.modules


def test_the_zen_of_python_is_never_imported_from_a_queue(tmp_path: Path, normbench_in_process) -> None:  # noqa: ANN001
    had = "this" in sys.modules
    queue = queue_with(tmp_path, {"data": {"class_path": "this.s"}})
    out = normbench_in_process("bake", "--queue", str(queue), "--dry_run", "true", cwd=tmp_path)
    assert out.returncode == 2 and "Beautiful is better than ugly" not in out.stdout + out.stderr
    assert "data.class_path: 'this.s' is not allowed: choose a registered task's data class (" in out.stderr
    assert "normbench.data.majority.MajorityDataModule" in out.stderr
    assert had or "this" not in sys.modules


def test_trusting_the_queue_imports_what_its_config_names(tmp_path: Path, crafted: Path, normbench_in_process) -> None:  # noqa: ANN001
    queue = queue_with(tmp_path, CRAFTED["a variant's norm"][0])
    normbench_in_process(
        "bake", "--queue", str(queue), "--dry_run", "true", "--trust_record_code", "true", "--results_dir", "results",
        "--runs_dir", "runs", cwd=tmp_path,
    )  # fmt: skip
    assert crafted.read_text() == "ran"  # the user's explicit trust, the same switch as for records


def test_the_shipped_queue_names_registered_code_and_the_projects_own_examples(monkeypatch) -> None:  # noqa: ANN001
    """The shipped queue's card configs name examples.pnorm_example:PNorm and examples.broken_norms:RunawayNorm: the
    project's own example norms, allowed without the flag, and checked without importing them."""
    monkeypatch.delenv("NORMBENCH_TRUST_RECORD_CODE", raising=False)
    root = Path(__file__).resolve().parents[3]
    monkeypatch.chdir(root)  # the queue names its configs from the repository root
    monkeypatch.syspath_prepend(str(root))
    before = {m for m in sys.modules if m.startswith("examples")}
    items = load_queue(root / "queues" / "bake.yaml")
    assert any(i.config for i in items)
    assert {m for m in sys.modules if m.startswith("examples")} == before
    assert project_example("examples.pnorm_example") and project_example("examples.broken_norms")
    assert not project_example("examples.not_there") and not project_example("examplesx.pnorm_example")


def test_a_folder_named_examples_elsewhere_is_not_the_projects(tmp_path: Path, monkeypatch) -> None:  # noqa: ANN001
    """A package ``examples`` that an import would find first (a regular package, whose ``__init__`` would run) is
    not the project's examples folder, whatever its files are called."""
    fake = tmp_path / "examples"
    fake.mkdir()
    (fake / "__init__.py").write_text(CODE)
    (fake / "pnorm_example.py").write_text(CODE)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "examples", raising=False)
    assert not project_example("examples.pnorm_example")
    assert not (tmp_path / "imported").exists()


def test_a_bake_asked_for_gpus_this_machine_lacks_refuses_in_one_line(
    tmp_path: Path, monkeypatch, normbench_in_process
) -> None:  # noqa: ANN001
    import torch

    monkeypatch.setattr(torch.cuda, "device_count", lambda: 0)
    queue = queue_with(tmp_path, {})
    out = normbench_in_process("bake", "--queue", str(queue), "--gpus", "0", "--budget", "1", cwd=tmp_path)
    assert out.returncode == 2, out.stderr[-2000:]
    assert out.stderr.strip().splitlines() == [
        "normbench: error: bake: --gpus 0: GPU 0 is not visible (CUDA finds no GPU here); drop --gpus to train on "
        "the CPU"
    ]
    assert not (tmp_path / "runs").exists()
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 1)
    out = normbench_in_process("bake", "--queue", str(queue), "--gpus", "0,1", "--budget", "1", cwd=tmp_path)
    assert out.returncode == 2 and "bake: --gpus 0,1: GPU 1 is not visible (the GPUs visible here are 0)" in out.stderr
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 0)  # a dry run may plan for another machine: it says so
    out = normbench_in_process("bake", "--queue", str(queue), "--gpus", "0", "--dry_run", "true", cwd=tmp_path)
    assert out.returncode == 0 and "normbench: dry run: bake: --gpus 0: GPU 0 is not visible" in out.stderr
