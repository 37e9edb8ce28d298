"""TensorBoard as users open it: HParams bound to final metrics, the custom-scalars layout, run names, lr.

The end-to-end test trains a tiny two-variant, two-seed sweep, reads its event files, then starts
a real ``tensorboard`` server on the logs and asks its HTTP data API what the browser would show.
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
from tensorboard.plugins.custom_scalar import layout_pb2
from tensorboard.plugins.hparams import plugin_data_pb2

from normbench.nn.config import ArchConfig
from normbench.nn.gpt import GPTConfig
from normbench.nn.norms import NormSpec
from normbench.training.monitoring.tensorboard import headline_metrics, metric_values, run_hparams, scalars_layout
from normbench.training.run.rundir import override_items, run_label

VARIANTS = ["pre/both", "pre/scale"]


def test_every_run_of_a_task_has_the_same_hparam_keys() -> None:
    pre = GPTConfig()
    peri = GPTConfig(placement="peri", qk_norm=True, attn_out_norm=NormSpec(component="scale"))
    names = list(GPTConfig.NORM_ROLES)
    a = run_hparams({"model": {"init_args": {"optim": {"lr": 1e-3}}}}, pre, names, "pre/both", "quick", "h1")
    b = run_hparams({"model": {"init_args": {"optim": {"lr": 3e-4}}}}, peri, names, "peri/both", None, "h2")
    assert set(a) == set(b) and a["optim.lr"] == 1e-3 and b["optim.lr"] == 3e-4
    assert a["arch.attn_out_norm"] == "absent" and b["arch.attn_out_norm"].startswith("scale")
    assert a["arch.qk_norm"] is False and b["arch.qk_norm"] is True and b["preset"] == "none"
    assert all(isinstance(v, (bool, int, float, str)) for v in [*a.values(), *b.values()])
    assert isinstance(pre, ArchConfig)
    assert "seed" not in a  # a variant's seeds share their hyperparameters: one session group, their mean shown
    assert list(a)[: 1 + len(names)] == ["variant", *(f"arch.{n}" for n in names)]  # the variant and its norms first


def test_headline_metrics_are_the_leaderboard_columns_read_as_the_leaderboard_reads_them() -> None:
    bench = {
        "metrics": {
            "acc@2": {"series": "test/acc", "at_step": 2},
            "u_L{layer}": {"series": "a/L{layer}"},
            "hidden": {"series": "x"},
        },
        "columns": ["acc@2", "u_L{layer}"],
    }
    metrics = headline_metrics(bench, n_layers=2)
    assert list(metrics) == ["acc@2", "u_L1", "u_L2"] and metrics["u_L2"]["series"] == "a/L2"
    assert metric_values({"test/acc": [[1, 0.5], [2, 0.7], [3, 0.9]], "a/L1": [[3, 0.1]]}, metrics) == {
        "acc@2": 0.7,
        "u_L1": 0.1,
    }  # u_L2 never logged: left out, not zero
    layout = scalars_layout("lm", metrics)
    assert list(layout) == ["lm: every variant and seed"]
    charts = layout["lm: every variant and seed"]
    assert {"train/loss_step", "test/acc", "a/L1", "a/L2", "learning rate"} <= set(charts)


def test_run_names_carry_the_overrides_that_change_the_run() -> None:
    args = [
        "--config",
        "x.yaml",
        "--trainer.max_steps",
        "100",
        "--model.init_args.arch.d_model=16",
        "--model.init_args.arch.attn_norm.component=scale",
        "--seed_everything=3",
        "--variant=pre/scale",
        "--trainer.enable_progress_bar=false",
        "--runs_dir=/tmp/r",
        "--trainer.max_steps=200",
    ]
    items = override_items(args)
    assert items == [("d_model", "16"), ("max_steps", "200")]  # norms are in the label already; last value wins
    arch = {"placement": "pre", "attn_norm": {"component": "scale", "affine": False}}
    assert run_label(arch, items) == "pre-attn_scale-d_model=16-max_steps=200"
    assert run_label(arch) == "pre-attn_scale"  # no overrides: the name runs have always had
    assert override_items(["--data.init_args.data_dir=/a/b", "--data.cache_dir", "/c"]) == []  # locations
    many = run_label(arch, [(f"key{i}", "1234567890") for i in range(40)])
    assert len(many) <= 160 and many.endswith("_more") and "key0=1234567890" in many


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def fetch(url: str, body: dict | None = None) -> dict:
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(url, data=data, headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=10) as response:
        return json.loads(response.read())


@pytest.fixture(scope="module")
def sweep_logs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("tb")
    cmd = [
        sys.executable,
        "-m",
        "normbench",
        "sweep",
        "--config",
        "majority",
        "--variants",
        f"[{', '.join(VARIANTS)}]",
        "--seeds",
        "0,1",
        "--trainer.max_steps",
        "12",
        "--trainer.log_every_n_steps",
        "2",
        "--workers",
        "1",
        "--data.init_args.num_sequences",
        "600",
        "--data.init_args.eval_batch_size",
        "120",
        "--no-progress",
        f"--runs_dir={root / 'runs'}",
        f"--results_dir={root / 'results'}",
    ]
    done = subprocess.run(cmd, cwd=root, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    return root / "runs" / "majority"


def test_event_files_hold_the_hparams_and_the_layout(sweep_logs: Path) -> None:
    runs = sorted(p for p in sweep_logs.glob("*/seed*") if p.is_dir())
    assert len(runs) == 4 and all("num_sequences=600" in p.parent.name for p in runs)
    for run in runs:
        events = EventAccumulator(str(run), size_guidance={"tensors": 0, "scalars": 0})
        events.Reload()
        content = events.PluginTagToContent("hparams")
        start = plugin_data_pb2.HParamsPluginData.FromString(content["_hparams_/session_start_info"])
        hparams = {
            k: v.string_value or v.number_value or v.bool_value for k, v in start.session_start_info.hparams.items()
        }
        record = json.loads((run / "record.json").read_text())
        assert hparams["variant"] == record["variant"] and hparams["config_hash"] == record["config_hash"]
        assert hparams["arch.attn_norm"] == record["variant"].split("/")[1] and hparams["trainer.max_steps"] == 12
        experiment = plugin_data_pb2.HParamsPluginData.FromString(content["_hparams_/experiment"]).experiment
        assert {m.name.tag for m in experiment.metric_infos} == {
            f"hparams/{c}" for c in record["config"]["bench"]["columns"]
        }
        final_loss = [e.value for e in events.Scalars("hparams/final_train_loss")]
        assert final_loss == pytest.approx([record["series"]["train/loss_epoch"][-1][1]])
        assert "lr" in events.Tags()["scalars"]
        layout = layout_pb2.Layout.FromString(events.Tensors("custom_scalars__config__")[0].tensor_proto.string_val[0])
        assert [c.title for c in layout.category] == ["majority: every variant and seed"]


def test_a_tensorboard_server_shows_hparams_sessions_and_the_layout(sweep_logs: Path) -> None:
    port = free_port()
    server = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "tensorboard.main",
            "--logdir",
            str(sweep_logs),
            "--port",
            str(port),
            "--host",
            "127.0.0.1",
            "--reload_interval",
            "1",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    base = f"http://127.0.0.1:{port}/data/plugin"
    try:
        groups: list = []
        deadline = time.monotonic() + 120

        def complete(groups: list) -> bool:  # every session listed, each with its metrics loaded
            return len(groups) == 2 and all(
                len(g.get("sessions", [])) == 2 and all(s.get("metricValues") for s in g["sessions"]) for g in groups
            )

        while time.monotonic() < deadline and not complete(groups):
            time.sleep(1)
            try:
                groups = fetch(
                    f"{base}/hparams/session_groups",
                    {
                        "experimentName": "",
                        "startIndex": 0,
                        "sliceSize": 100,
                        "colParams": [],
                        "allowedStatuses": ["STATUS_UNKNOWN", "STATUS_SUCCESS", "STATUS_FAILURE", "STATUS_RUNNING"],
                    },
                ).get("sessionGroups", [])
            except OSError:
                continue
        # one session group per variant, its two seeds the sessions, the group's value their mean
        assert len(groups) == 2, f"the HParams tab lists {len(groups)} session groups, not 2"
        assert sorted(g["hparams"]["variant"] for g in groups) == sorted(VARIANTS)
        for group in groups:
            assert sorted(s["name"].rsplit("/", 1)[-1] for s in group["sessions"]) == ["seed0", "seed1"]
            per_seed = [
                next(m["value"] for m in s["metricValues"] if m["name"]["tag"] == "hparams/final_train_loss")
                for s in group["sessions"]
            ]
            mean = next(m["value"] for m in group["metricValues"] if m["name"]["tag"] == "hparams/final_train_loss")
            assert mean == pytest.approx(sum(per_seed) / 2)
        experiment = fetch(f"{base}/hparams/experiment", {"experimentName": ""})
        names = [h["name"] for h in experiment["hparamInfos"]]
        assert "seed" not in names and {"variant", "arch.attn_norm", "optim.lr"} <= set(names)
        axes = [h["name"] for h in experiment["hparamInfos"] if h.get("differs")]
        assert {"variant", "arch.attn_norm", "arch.ffn_norm"} <= set(axes)  # the ablated axes, declared so
        assert all(a == "variant" or a.endswith("_norm") for a in axes) and "optim.lr" not in axes
        assert names[: len(axes)] == axes, names[:6]  # and listed first: the tab opens on the variant and its norms
        layout = fetch(f"{base}/custom_scalars/layout")
        (category,) = layout["category"]
        titles = [c["title"] for c in category["chart"]]
        assert {"train/loss_step", "test/acc", "learning rate"} <= set(titles) and len(titles) == len(set(titles))
    finally:
        server.terminate()
        server.wait(timeout=30)
