"""Third-party tasks and norm components register through the entry-point groups and then train.

A tiny installed distribution is faked on ``PYTHONPATH``: a package ``nbplugin`` and its
``dist-info`` whose ``entry_points.txt`` names a task (``normbench.tasks``) and a norm component
(``normbench.norms``). A fresh ``normbench`` process must list the task, resolve it by name and
train it with the plug-in norm in front of attention.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import yaml

from normbench.tasks import get_task

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"

PLUGIN = '''
"""A third-party task and norm component for normbench."""
from pathlib import Path

import torch.nn.functional as F
from torch import nn

from normbench.data.majority import MajorityDataModule
from normbench.nn.norms import Norm
from normbench.tasks.majority import MajorityModule
from normbench.tasks.registry import Task


class TinyModule(MajorityModule):
    """The majority module under another name: a task defined outside normbench."""


class HalfRMS(Norm):
    """A plug-in norm written as the built-ins are: RMSNorm halved, of the shift-and-scale form."""

    name = "half_rms"
    uses_eps = True

    def normalize(self, x):
        return F.rms_norm(x, self.shape, eps=self.eps) / 2

    def shift_and_scale(self, x):
        return x * 0, (x.pow(2).mean(-1, keepdim=True) + self.eps).rsqrt() / 2


class Halve(nn.Module):
    """A plug-in norm given as a plain nn.Module class: x / 2 (any constructor taking d)."""

    def __init__(self, d, factor=0.5):
        super().__init__()
        self.factor = factor

    def forward(self, x):
        return x * self.factor
TASK = Task(name="tinytask", module=TinyModule, datamodule=MajorityDataModule,
            description="a plug-in task", config=Path(__file__).with_name("tinytask.yaml"))
'''

ENTRY_POINTS = """
[normbench.tasks]
tinytask = nbplugin:TASK

[normbench.norms]
half_rms = nbplugin:HalfRMS
halve = nbplugin:Halve
"""


OLD_STYLE_NORM = '''
from torch import nn


class Halve(nn.Module):
    """A plug-in norm written without normbench: x * factor, any constructor taking d."""

    def __init__(self, d, factor=0.5):
        super().__init__()
        if factor <= 0:
            raise ValueError(f"options.factor: must be > 0, got {factor}")
        self.factor = factor

    def forward(self, x):
        return x * self.factor
'''


def install_plugin(root: Path) -> dict[str, str]:
    """Write the plug-in package and its dist-info under ``root``; the environment that sees them."""
    package = root / "nbplugin"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text(textwrap.dedent(PLUGIN))
    config = yaml.safe_load(Path(str(get_task("majority").config_path)).read_text())
    config["task"] = "tinytask"
    config["model"]["class_path"] = "nbplugin.TinyModule"
    config["presets"]["quick"]["trainer"].update(max_steps=6, val_check_interval=3)
    config["presets"]["quick"]["data"]["init_args"].update(num_sequences=600, batch_size=64, eval_batch_size=200)
    (package / "tinytask.yaml").write_text(yaml.safe_dump(config, sort_keys=False))
    dist = root / "nbplugin-0.1.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: nbplugin\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text(ENTRY_POINTS)
    return {**os.environ, "PYTHONPATH": os.pathsep.join([str(root), os.environ.get("PYTHONPATH", "")])}


def normbench(env: dict[str, str], cwd: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "normbench", *args], env=env, cwd=cwd, capture_output=True, text=True, timeout=600
    )


def test_a_plugin_task_and_norm_register_and_train(tmp_path: Path) -> None:
    """Entry points add a task and two norms (a function and a module's class with options): listed, and trained."""
    env = install_plugin(tmp_path / "site")
    listed = normbench(env, tmp_path, "tasks")
    assert listed.returncode == 0, listed.stderr[-2000:]
    assert [line.split("\t")[0] for line in listed.stdout.splitlines()] == ["lm", "majority", "sst2", "tinytask"]

    fit = normbench(
        env,
        tmp_path,
        "fit",
        "--config",
        "tinytask",
        "--preset",
        "quick",
        "--model.arch.attn_norm.component",
        "half_rms",
        "--model.arch.ffn_norm.component",  # an entry point naming a module's class, with options
        "halve",
        "--model.arch.ffn_norm.options",
        "{factor: 0.25}",
        "--trainer.enable_progress_bar=false",
        f"--runs_dir={tmp_path / 'runs'}",
    )
    assert fit.returncode == 0, fit.stderr[-3000:]
    (record_path,) = (tmp_path / "runs" / "tinytask").rglob("record.json")
    record = json.loads(record_path.read_text())
    assert record["status"] == "done" and record["final_step"] == 6 and record["task"] == "tinytask"
    # a plug-in norm's identity names its source (the defining module's bytes): editing it gives new runs
    source = record["norms"]["attn_norm"].pop("source")
    assert source.startswith("sha256:") and len(source) == len("sha256:") + 64
    assert record["norms"]["attn_norm"] == {"component": "half_rms", "affine": False, "eps": 0.0}
    assert record["norms"]["ffn_norm"].pop("source") == source  # both norms are defined in the plug-in's one module
    assert record["norms"]["ffn_norm"] == {
        "component": "halve",
        "affine": True,
        "eps": 0.0,
        "options": {"factor": 0.25},
    }
    assert record["series"]["test/acc"] and record["series"]["geometry/L1.attn_norm/input_std"]


def test_an_unknown_component_is_one_line_naming_the_plugins(tmp_path: Path) -> None:
    env = install_plugin(tmp_path / "site")
    bad = normbench(
        env,
        tmp_path,
        "fit",
        "--config",
        "majority",
        "--model.arch.attn_norm.component",
        "layer",
        f"--runs_dir={tmp_path / 'runs'}",
    )
    assert bad.returncode == 2
    last = bad.stderr.strip().splitlines()[-1]
    assert last.startswith("normbench: error:") and "'layer' is not allowed" in last and "half_rms" in last
    assert not (tmp_path / "runs").exists()


@pytest.mark.parametrize(
    ("component", "options", "message"),
    [
        (
            "nosuchpackage.norms:MyNorm",
            None,
            "model.arch.attn_norm.component: cannot import 'nosuchpackage.norms:MyNorm' (ModuleNotFoundError",
        ),
        ("pnorm_example:NoSuchNorm", None, "cannot import 'pnorm_example:NoSuchNorm' (AttributeError"),
        ("math:sqrt", None, "'math:sqrt' is builtin_function_or_method"),
        (
            "pnorm_example:PNorm",
            "{q: 3}",
            "model.arch.attn_norm.options: 'q' not allowed for component pnorm_example:PNorm; allowed: p",
        ),
        ("pnorm_example:PNorm", "{p: 0}", "model.arch.attn_norm.options.p: must be >= 1, got 0"),
        (
            "old_norm:Halve",
            "{q: 3}",
            "old_norm:Halve must accept (d, **options) with options {'q': 3}: got an unexpected keyword argument 'q'",
        ),
        (
            "old_norm:Halve",
            "{factor: 0}",
            "model.arch.attn_norm.component: old_norm:Halve(d=8, **{'factor': 0}) failed: "
            "ValueError: options.factor: must be > 0, got 0",
        ),
        ("broken_norm:Norm", None, "cannot import 'broken_norm:Norm' (RuntimeError: this plug-in fails on import)"),
    ],
)
def test_a_bad_import_path_or_signature_is_one_line_exit_2(
    tmp_path: Path,
    component: str,
    options: str | None,
    message: str,
    monkeypatch: pytest.MonkeyPatch,
    normbench_in_process,
) -> None:  # noqa: ANN001
    (tmp_path / "broken_norm.py").write_text("raise RuntimeError('this plug-in fails\\non import')\n")
    (tmp_path / "old_norm.py").write_text(OLD_STYLE_NORM)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.syspath_prepend(str(EXAMPLES))
    args = ["--model.arch.attn_norm.options", options] if options else []
    bad = normbench_in_process(
        "fit",
        "--config",
        "majority",
        "--model.arch.attn_norm.component",
        component,
        *args,
        f"--runs_dir={tmp_path / 'runs'}",
        cwd=tmp_path,
    )
    assert bad.returncode == 2
    errors = [line for line in bad.stderr.splitlines() if "rror" in line]
    assert len(errors) == 1 and errors[0].startswith("normbench: error:") and message in errors[0], bad.stderr[-2000:]
    assert bad.stderr.strip().splitlines()[-1] == errors[0]
    assert not (tmp_path / "runs").exists()


@pytest.mark.slow  # a sweep and its analyses through the example norm, which the documented card command trains too
def test_the_example_norm_is_benched_beside_layer_norm(tmp_path: Path) -> None:
    """examples/pnorm_example.py by import path through a sweep, its leaderboard and the class-key analyses
    (the decomposition's refusal is tested in tests/run_analyses/test_decomposition.py)."""
    env = {**os.environ, "PYTHONPATH": str(EXAMPLES)}
    sweep = normbench(
        env,
        tmp_path,
        "sweep",
        "--config",
        "majority",
        "--preset",
        "modern",
        "--seeds",
        "0",
        "--grid",
        "model.init_args.arch.attn_norm.component=both,pnorm_example:PNorm",
        "--trainer.max_steps=6",
        "--trainer.val_check_interval=3",
        "--data.init_args.num_sequences=600",
        "--data.init_args.batch_size=64",
        "--data.init_args.eval_batch_size=200",
        "--workers=1",
        "--no-progress",
        f"--runs_dir={tmp_path / 'runs'}",
        f"--results_dir={tmp_path / 'results'}",
        "--name=pnorm",
    )
    assert sweep.returncode == 0, sweep.stderr[-3000:]
    board = json.loads((tmp_path / "results" / "majority" / "pnorm" / "leaderboard.json").read_text())
    rows = {v["name"]: v for v in board["variants"]}
    assert set(rows) == {"arch.attn_norm.component=both", "arch.attn_norm.component=pnorm_example:PNorm"}
    plugin = rows["arch.attn_norm.component=pnorm_example:PNorm"]
    assert plugin["norms"]["attn"]["component"] == "pnorm_example:PNorm"
    for metric in ("test_acc@1000", "class_keys_unselectable", "class_keys_unselectable_heads"):
        assert metric in plugin["metrics"], metric
    assert plugin["metrics"]["class_keys_unselectable"]["per_seed"][0] is not None


def test_the_console_script_resolves_import_paths_against_the_current_directory(tmp_path: Path) -> None:
    """The installed ``normbench`` script, whose ``sys.path`` lacks the current directory (``python -m`` has it),
    resolves ``package.module:Class`` from the directory it runs in: ``normbench card examples.pnorm_example:PNorm``
    in a clone, or a user's own ``mynorms/pnorm.py``."""
    script = Path(sys.executable).parent / ("normbench.exe" if sys.platform == "win32" else "normbench")
    if not script.exists():
        pytest.skip("this environment has no normbench console script")
    (tmp_path / "mynorms").mkdir()
    (tmp_path / "mynorms" / "pnorm.py").write_text((EXAMPLES / "pnorm_example.py").read_text())
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"} | {"NORMBENCH_DRY_RUN": "1"}
    done = subprocess.run(
        [str(script), "fit", "--config", "majority", "--preset", "quick"]
        + ["--model.arch.attn_norm.component", "mynorms.pnorm:PNorm"],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,
        env=env,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert "dry run: pre-attn_mynorms.pnorm:PNorm" in done.stdout + done.stderr


def test_the_current_directory_comes_first_as_under_python_m(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The console script's parent process resolves import paths as the ``python -m`` runs it starts do: the current
    directory first, added once; not under ``-P``/``PYTHONSAFEPATH``."""
    from types import SimpleNamespace

    from normbench.commands.process import import_paths_from_here

    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", ["/installed/site-packages"])
    import_paths_from_here()
    import_paths_from_here()
    assert sys.path == [str(tmp_path), "/installed/site-packages"]
    monkeypatch.setattr(sys, "path", ["/installed/site-packages"])
    monkeypatch.setattr(sys, "flags", SimpleNamespace(safe_path=True, isolated=False))
    import_paths_from_here()
    assert sys.path == ["/installed/site-packages"]
