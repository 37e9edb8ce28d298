"""The GPU path: fit, test and every analysis of each task on ``cuda``, and 2-GPU DDP.

The ``cuda`` cases are skipped where no GPU is present (``-m cuda`` selects them). Each task
trains a few steps on one device; its record must say which; then the trained network, loaded
onto that device, runs every analysis (query angles, unselectable keys per layer, the additive
decomposition) on inputs there, and every result must stay on it. The same checks run on the CPU
for one variant per task, so the test itself is exercised on every machine. With two GPUs,
2-process NCCL DDP at batch b must train what one GPU trains at batch 2b.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import torch
import yaml

from normbench.analysis.angles import attention_normals, query_angle_to_ones
from normbench.analysis.decompose import decompose
from normbench.analysis.hooks import attention_modules, capture_attention_inputs
from normbench.analysis.model_keys import unselectable_per_layer
from normbench.nn.norms import NotShiftAndScale
from normbench.tasks import get_task
from normbench.training.fit import train
from normbench.training.reproducibility import agrees
from normbench.training.run.loading import build_datamodule
from normbench.training.run.records import read_record
from tests.lm_corpus import write_corpus
from tests.sst2_corpus import write_sst2
from tests.tasks.test_lm_task import tiny as tiny_lm
from tests.tasks.test_sst2_task import tiny as tiny_sst2

NO_GPU = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
ACCELERATOR = {"cpu": "cpu", "cuda": "gpu"}
MAJORITY = [
    "data.init_args.num_sequences=600",
    "data.init_args.batch_size=64",
    "data.init_args.eval_batch_size=200",
    "trainer.max_steps=12",
    "trainer.max_epochs=-1",
    "trainer.val_check_interval=6",
    "trainer.enable_progress_bar=false",
    "trainer.enable_model_summary=false",
]


def task_args(task: str, tmp: Path) -> list[str]:
    if task == "majority":
        options = MAJORITY
    elif task == "lm":
        write_corpus(tmp / "wikitext-2", articles=30)
        options = tiny_lm(tmp / "wikitext-2")
    else:
        options = tiny_sst2(write_sst2(tmp / "sst2", train=200, dev=40))
    return ["--config", str(get_task(task).config_path), "--preset", "quick", *(f"--{o}" for o in options)]


CASES = [
    ("majority", "pre/learned"),
    ("majority", "pre/paper_no_projection"),
    ("lm", "pre/project"),
    ("lm", "pre/learned"),
    ("sst2", "post/both"),
    ("sst2", "none/none"),
    ("majority", "peri/both"),
    ("majority", "pre/scalenorm"),
    ("lm", "pre/dyt"),
    ("lm", "pre/both+qknorm"),
]
# one case per task (and DyT) also on the CPU
ON_CPU = {("majority", "pre/learned"), ("lm", "pre/project"), ("sst2", "none/none"), ("lm", "pre/dyt")}


@pytest.mark.parametrize(
    ("task", "variant", "device"),
    [
        *[pytest.param(t, v, "cuda", marks=[pytest.mark.cuda, NO_GPU]) for t, v in CASES],
        *[(t, v, "cpu") for t, v in CASES if (t, v) in ON_CPU],
    ],
)
def test_fit_test_and_every_analysis_on_the_device(task: str, variant: str, device: str, tmp_path: Path) -> None:
    config = yaml.safe_load(Path(str(get_task(task).config_path)).read_text())
    variant_args = [f"--{k}={v}" for k, v in (config["bench"]["variants"][variant] or {}).items()]
    record = read_record(
        train(
            [
                *task_args(task, tmp_path),
                *variant_args,
                f"--trainer.accelerator={ACCELERATOR[device]}",
                "--trainer.devices=1",
                f"--runs_dir={tmp_path / 'runs'}",
            ]
        )
    )
    assert record["status"] == "done", record.get("error")
    assert record["provenance"]["device"] == (torch.cuda.get_device_name(0) if device == "cuda" else "cpu")
    assert any(k.startswith("geometry/") for k in record["series"])  # the monitor ran on GPU tensors
    if task != "majority":
        assert any(k.startswith("analysis/") for k in record["series"])  # the test stage ran

    module = get_task(task).module.load_from_checkpoint(record["checkpoint"], map_location=device).eval()
    model = module.model
    batch = next(iter(build_datamodule(record["config"]).val_dataloader()))
    batch = {k: v.to(device) for k, v in batch.items()} if isinstance(batch, dict) else [t.to(device) for t in batch]
    inputs, padding = module.model_inputs(batch)
    assert inputs[0].device.type == device

    with torch.no_grad(), capture_attention_inputs(model) as keys:
        model(*inputs)
    normals = attention_normals(model)
    for name, attn in attention_modules(model).items():
        angles = query_angle_to_ones(attn.effective_queries(keys[name]), direction=normals[name] / normals[name].norm())
        assert angles.device.type == normals[name].device.type == device and torch.isfinite(angles).all()

    layers = unselectable_per_layer(model, *inputs, key_padding_mask=padding)
    assert len(layers) == len(model.blocks)
    assert all(
        layer["positions_after"].device.type == layer["positions_heads"].device.type == device for layer in layers
    )

    if variant == "pre/dyt":  # DyT has no shift-and-scale form: the decomposition refuses it in one line
        with pytest.raises(NotShiftAndScale, match="not of the shift-and-scale form"):
            decompose(model.double(), *inputs)
        return
    dec = decompose(model.double(), *inputs)
    assert dec.max_error() < 1e-7
    assert all(terms.device.type == device for terms in dec.terms.values())


@pytest.mark.skipif(torch.cuda.device_count() < 2, reason="needs 2 GPUs")
def test_ddp_on_two_gpus_matches_one_gpu_with_the_same_global_batch(tmp_path: Path) -> None:
    common = [
        sys.executable,
        "-m",
        "normbench.cli",
        "fit",
        *task_args("majority", tmp_path),
        "--trainer.accelerator=gpu",
        "--trainer.log_every_n_steps=1",
        "--seed_everything=4",
    ]
    ddp = subprocess.run(
        [
            *common,
            "--data.init_args.batch_size=32",
            "--trainer.strategy=ddp",
            "--trainer.devices=2",
            f"--runs_dir={tmp_path / 'ddp'}",
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert ddp.returncode == 0, ddp.stderr[-3000:]
    single = subprocess.run(
        [*common, "--data.init_args.batch_size=64", "--trainer.devices=1", f"--runs_dir={tmp_path / 'single'}"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert single.returncode == 0, single.stderr[-3000:]
    (a_path,) = (tmp_path / "ddp").rglob("record.json")
    (b_path,) = (tmp_path / "single").rglob("record.json")
    a, b = read_record(a_path), read_record(b_path)
    assert a["world_size"] == 2 and a["global_batch_size"] == b["global_batch_size"] == 64
    assert a["config_hash"] != b["config_hash"]  # world size is part of a run's identity
    for name in b["series"]:
        steps_a, values_a = zip(*a["series"][name], strict=False)
        steps_b, values_b = zip(*b["series"][name], strict=False)
        assert steps_a == steps_b, name
        assert values_a == pytest.approx(values_b, abs=1e-4, rel=1e-4), name  # NCCL reduces in another order


@pytest.mark.cuda
@NO_GPU
def test_two_ddp_processes_sharing_one_gpu_match_one_process(tmp_path: Path) -> None:
    """The GPU DDP path where only one GPU is lent: two gloo processes on cuda:0 (each a "node" of one
    device, launched as a cluster launcher would) at batch 32 train what one process trains at batch 64."""
    import os
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    common = [
        sys.executable,
        "-m",
        "normbench.cli",
        "fit",
        *task_args("majority", tmp_path),
        "--trainer.accelerator=gpu",
        "--trainer.devices=1",
        "--trainer.log_every_n_steps=1",
        "--seed_everything=4",
    ]
    ddp = [
        *common,
        "--data.init_args.batch_size=32",
        "--trainer.num_nodes=2",
        "--trainer.strategy=lightning.pytorch.strategies.DDPStrategy",
        "--trainer.strategy.init_args.process_group_backend=gloo",
        f"--runs_dir={tmp_path / 'ddp'}",
    ]
    procs = [
        subprocess.Popen(
            ddp,
            cwd=tmp_path,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env={
                **os.environ,
                "MASTER_ADDR": "127.0.0.1",
                "MASTER_PORT": str(port),
                "NODE_RANK": str(rank),
                "RANK": str(rank),
                "LOCAL_RANK": "0",
                "WORLD_SIZE": "2",
            },
        )
        for rank in (0, 1)
    ]
    outs = [p.communicate(timeout=600) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], outs[0][1][-3000:] + outs[1][1][-3000:]
    single = subprocess.run(
        [*common, "--data.init_args.batch_size=64", f"--runs_dir={tmp_path / 'single'}"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert single.returncode == 0, single.stderr[-3000:]
    (a_path,) = (tmp_path / "ddp").rglob("record.json")
    (b_path,) = (tmp_path / "single").rglob("record.json")
    a, b = read_record(a_path), read_record(b_path)
    assert a["world_size"] == 2 and a["global_batch_size"] == b["global_batch_size"] == 64
    assert a["provenance"]["platform"]["gpu"] and a["status"] == b["status"] == "done"
    for name in b["series"]:
        steps_a, values_a = zip(*a["series"][name], strict=False)
        steps_b, values_b = zip(*b["series"][name], strict=False)
        assert steps_a == steps_b, name
        off = [(x, y) for x, y in zip(values_a, values_b, strict=False) if not agrees(name, x, y, bitwise=False)]
        assert not off, (name, off[:3])


@pytest.mark.cuda
@NO_GPU
def test_an_interrupted_gpu_run_resumes_bit_for_bit(tmp_path: Path) -> None:
    """As the CPU test (tests/training/run/test_checkpointing.py), on cuda with dropout: deterministic algorithms."""
    import tests.training.run.test_checkpointing as checkpointing
    from tests.training.run.test_checkpointing import test_interrupted_run_resumes_exactly

    cpu_fit = checkpointing.fit
    checkpointing.fit = lambda runs, *extra, **kw: cpu_fit(runs, *extra, "--trainer.accelerator=gpu", **kw)
    try:
        test_interrupted_run_resumes_exactly(tmp_path, ["--model.arch.dropout=0.1"], 4, 12)
    finally:
        checkpointing.fit = cpu_fit
    (record,) = tmp_path.rglob("record.json")
    platform = read_record(record)["provenance"]["platform"]
    assert platform["gpu"] and platform["deterministic_algorithms"] and platform["cudnn_deterministic"]


@pytest.mark.cuda
@NO_GPU
def test_stacked_seeds_on_the_gpu_match_the_seeds_trained_alone(tmp_path: Path) -> None:
    """``--vectorize`` on cuda (the math attention kernel under vmap), against lone GPU runs, within tolerance."""
    from tests.sweep.vectorized.test_fit import test_each_stacked_seed_matches_the_seed_trained_alone

    test_each_stacked_seed_matches_the_seed_trained_alone(tmp_path, ["--trainer.accelerator=gpu"])


@pytest.mark.cuda
@NO_GPU
def test_the_monitor_does_not_change_a_gpu_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import tests.training.test_cli as cli_tests
    from tests.training.monitoring.test_monitor import test_monitor_does_not_change_training

    cpu_fit = cli_tests.fit
    monkeypatch.setattr(
        "tests.training.monitoring.test_monitor.fit",
        lambda path, *extra: cpu_fit(path, *extra, "--trainer.accelerator=gpu"),
    )
    test_monitor_does_not_change_training(tmp_path, monkeypatch)
