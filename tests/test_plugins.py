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

import yaml

from normbench.tasks import get_task

PLUGIN = '''
"""A third-party task and norm component for normbench."""
from pathlib import Path

import torch.nn.functional as F

from normbench.data.majority import MajorityDataModule
from normbench.nn.norms import Component
from normbench.tasks.majority import MajorityModule
from normbench.tasks.registry import Task


class TinyModule(MajorityModule):
    """The majority module under another name: a task defined outside normbench."""


def _half_rms(norm, x):
    return F.rms_norm(x, norm.shape, eps=norm.spec.eps) / 2


def _half_rms_shift_and_scale(norm, x):
    return x * 0, (x.pow(2).mean(-1, keepdim=True) + norm.spec.eps).rsqrt() / 2


HALF_RMS = Component("half_rms", _half_rms, _half_rms_shift_and_scale, uses_eps=True)
TASK = Task(name="tinytask", module=TinyModule, datamodule=MajorityDataModule,
            description="a plug-in task", config=Path(__file__).with_name("tinytask.yaml"))
'''

ENTRY_POINTS = """
[normbench.tasks]
tinytask = nbplugin:TASK

[normbench.norms]
half_rms = nbplugin:HALF_RMS
"""


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
    return subprocess.run([sys.executable, "-m", "normbench", *args], env=env, cwd=cwd, capture_output=True,
                          text=True, timeout=600)


def test_a_plugin_task_and_norm_register_and_train(tmp_path: Path) -> None:
    env = install_plugin(tmp_path / "site")
    listed = normbench(env, tmp_path, "tasks")
    assert listed.returncode == 0, listed.stderr[-2000:]
    assert [line.split("\t")[0] for line in listed.stdout.splitlines()] == ["lm", "majority", "sst2", "tinytask"]

    fit = normbench(env, tmp_path, "fit", "--config", "tinytask", "--preset", "quick",
                    "--model.arch.attn_norm.component", "half_rms", "--trainer.enable_progress_bar=false",
                    f"--runs_dir={tmp_path / 'runs'}")
    assert fit.returncode == 0, fit.stderr[-3000:]
    (record_path,) = (tmp_path / "runs" / "tinytask").rglob("record.json")
    record = json.loads(record_path.read_text())
    assert record["status"] == "done" and record["final_step"] == 6 and record["task"] == "tinytask"
    assert record["norms"]["attn_norm"] == {"component": "half_rms", "affine": False, "eps": 0.0}
    assert record["series"]["test/acc"] and record["series"]["geometry/L1.attn_norm/input_std"]


def test_an_unknown_component_is_one_line_naming_the_plugins(tmp_path: Path) -> None:
    env = install_plugin(tmp_path / "site")
    bad = normbench(env, tmp_path, "fit", "--config", "majority", "--model.arch.attn_norm.component", "layer",
                    f"--runs_dir={tmp_path / 'runs'}")
    assert bad.returncode == 2
    last = bad.stderr.strip().splitlines()[-1]
    assert last.startswith("normbench: error:") and "'layer' is not allowed" in last and "half_rms" in last
    assert not (tmp_path / "runs").exists()
