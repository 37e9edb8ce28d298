"""End-to-end runs: fit, records, TensorBoard, determinism, CLI errors, 2-process DDP."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from normbench.archive import load_record
from normbench.tasks import get_task
from normbench.training.config import load_config, preset_args
from normbench.training.fit import train
from normbench.training.run.records import read_record

CONFIG = str(get_task("majority").config_path)
TINY = [
    "--data.init_args.num_sequences=600",
    "--data.init_args.batch_size=64",
    "--data.init_args.eval_batch_size=200",
    "--trainer.max_steps=12",
    "--trainer.max_epochs=-1",
    "--trainer.val_check_interval=6",
    "--trainer.enable_progress_bar=false",
    "--trainer.enable_model_summary=false",
]
TINY_LABEL = "num_sequences=600-batch_size=64-eval_batch_size=200-max_steps=12-max_epochs=-1-val_check_interval=6"


def fit(tmp_path: Path, *extra: str) -> dict:
    path = train(["--config", CONFIG, *TINY, f"--runs_dir={tmp_path / 'runs'}", *extra])
    return read_record(path)


def test_fit_writes_record_tensorboard_and_checkpoint(tmp_path: Path) -> None:
    rec = fit(tmp_path, "--model.arch.attn_norm.component=project", "--seed_everything=3")
    assert rec["status"] == "done" and rec["final_step"] == 12 and rec["seed"] == 3
    assert rec["config"]["model"]["init_args"]["arch"]["attn_norm"]["component"] == "project"
    # the run's name: its norms and every override that changes it (bookkeeping keys left out)
    assert rec["variant"] == f"pre-attn_project-ffn_both+affine-{TINY_LABEL}"
    for series in ("test/acc", "test/loss", "test/query_angle", "train/loss_step", "train/loss_epoch"):
        assert rec["series"][series], series
    assert [s for s, _ in rec["series"]["test/acc"]] == [6, 12]
    assert all(0 <= v <= 90 for _, v in rec["series"]["test/query_angle"])
    log_dir = Path(rec["log_dir"])
    assert log_dir.name == "seed3" and log_dir.parent.parent.name == "majority"
    assert log_dir.parent.name == f"pre-attn_project-ffn_both+affine-{TINY_LABEL}-{rec['config_hash']}"
    assert list(log_dir.glob("events.out.tfevents.*")) and (log_dir / "config.yaml").exists()
    assert Path(rec["checkpoint"]).exists()
    assert rec["provenance"]["torch"] and "git_commit" in rec["provenance"]
    typed = load_record(log_dir / "record.json")  # every key the trainer writes is a declared RunRecord field
    assert typed.extra == {} and typed.to_json() == rec and typed.finished


def test_same_seed_gives_identical_metrics(tmp_path: Path) -> None:
    a = fit(tmp_path / "a", "--seed_everything=5")
    b = fit(tmp_path / "b", "--seed_everything=5")
    c = fit(tmp_path / "c", "--seed_everything=6")
    assert a["series"]["test/acc"] == b["series"]["test/acc"]
    assert a["series"]["train/loss_step"] == b["series"]["train/loss_step"]
    assert a["config_hash"] == c["config_hash"]  # the seed is not part of the config hash
    assert a["series"]["train/loss_step"] != c["series"]["train/loss_step"]


def test_divergence_is_recorded(tmp_path: Path) -> None:
    rec = fit(
        tmp_path,
        "--model.optim.lr=1e30",
        "--model.arch.attn_norm.component=none",
        "--model.arch.ffn_norm.component=none",
    )
    assert rec["status"] == "diverged"
    assert rec["diverged_at_step"] < 12


@pytest.mark.parametrize("verbose", [False, True], ids=["quiet", "verbose"])
def test_the_model_summary_only_with_verbose(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, verbose: bool) -> None:
    """Lightning's model summary table ("Total FLOPs: 0") is printed by its ModelSummary callback: a run has one
    only with --verbose (NORMBENCH_VERBOSE=1), and an explicit --trainer.enable_model_summary wins."""
    from lightning.pytorch.callbacks import ModelSummary

    from normbench.training.cli import NormbenchCLI

    monkeypatch.setenv("NORMBENCH_VERBOSE", "1" if verbose else "0")
    base = ["--config", CONFIG, f"--runs_dir={tmp_path / 'runs'}"]

    def summaries(*extra: str) -> int:
        return sum(isinstance(c, ModelSummary) for c in NormbenchCLI(args=[*base, *extra]).trainer.callbacks)

    assert summaries() == int(verbose)
    assert summaries(f"--trainer.enable_model_summary={'false' if verbose else 'true'}") == int(not verbose)
    assert not (tmp_path / "runs").exists()


def test_command_lines_in_one_process_share_a_parser_and_keep_their_own_models(tmp_path: Path) -> None:
    """The parser is built once per process and reused; each command line still builds its own model, with its own
    saved hyperparameters and identity (the shared parser instantiates through the latest CLI)."""
    from normbench.training.cli import NormbenchCLI

    base = ["--config", CONFIG, f"--runs_dir={tmp_path / 'runs'}"]
    wide = NormbenchCLI(args=[*base, "--model.init_args.arch.d_model=16"])
    narrow = NormbenchCLI(args=[*base, "--model.init_args.arch.attn_norm.component=scale"])
    again = NormbenchCLI(args=[*base, "--model.init_args.arch.d_model=16"])
    assert narrow.parser is wide.parser is again.parser
    assert (wide.model.arch.d_model, narrow.model.arch.d_model) == (16, 8)
    assert narrow.model.hparams["arch"]["attn_norm"]["component"] == "scale"
    assert (
        wide.model.hparams["arch"]["attn_norm"]["component"] == "both" and wide.model.hparams["arch"]["d_model"] == 16
    )
    assert len({wide.config_hash, narrow.config_hash}) == 2 and again.config_hash == wide.config_hash
    assert not (tmp_path / "runs").exists()


def test_preset_is_merged_and_overrides_win() -> None:
    quick = load_config(CONFIG, "quick")
    assert quick["preset"] == "quick" and quick["trainer"]["max_steps"] == 5000
    assert quick["model"]["init_args"]["arch"]["d_model"] == 8  # untouched keys survive the merge
    args = preset_args(["--config", CONFIG, "--preset", "quick", "--trainer.max_steps=7"])
    assert args[0] == "--config" and "max_steps: 5000" in args[1] and args[-1] == "--trainer.max_steps=7"


def run_cli(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "normbench.cli", *args], cwd=cwd, capture_output=True, text=True, timeout=300
    )


@pytest.mark.parametrize(
    "args, message",
    [
        (
            ["--model.arch.attn_norm.component=layer"],
            "model.arch.attn_norm.component: 'layer' is not allowed; choose one of "
            "both, project, scale, none, paper_no_projection, learned, scalenorm, dyt, or an import path package.module:ClassName",
        ),
        (
            ["--model.arch.placement=middle"],
            "model.arch.placement: 'middle' is not allowed; choose one of pre, post, none",
        ),
        (["--model.arch.n_heads=3"], "model.arch.d_model=8 is not divisible by model.arch.n_heads=3"),
        (["--trainer.max_steps=0"], "trainer.max_steps: must be a positive integer or -1"),
        (["--data.init_args.batch_size=0"], "data.batch_size and data.eval_batch_size must be positive"),
        (["--preset=huge"], "preset: 'huge' is not defined"),
        (
            ["--model.init_args.attn_norm.component=project"],
            "model.attn_norm.component: not an option of normbench.tasks.majority.MajorityModule (`--print_config` "
            "lists the options); the architecture's options are under model.arch: --model.arch.attn_norm.component",
        ),
        (
            [
                '--trainer.logger={"class_path": "lightning.pytorch.loggers.CSVLogger", "init_args": {"save_dir": "csv"}}'
            ],
            "trainer.logger: normbench sets the loggers itself",
        ),
    ],
)
def test_fit_bad_input_is_one_line(tmp_path: Path, args: list[str], message: str, normbench_in_process) -> None:  # noqa: ANN001
    out = normbench_in_process("fit", "--config", CONFIG, f"--runs_dir={tmp_path / 'runs'}", *args, cwd=tmp_path)
    assert out.returncode == 2
    errors = [ln for ln in out.stderr.splitlines() if ln.startswith("normbench: error:")]
    assert len(errors) == 1 and message in errors[0], out.stderr
    assert "Traceback" not in out.stderr
    assert not (tmp_path / "runs").exists()


@pytest.mark.parametrize(
    "task, args, message",
    [
        (
            "sst2",
            ["--data.init_args.data_dir={missing}"],
            "data.data_dir: train.tsv, dev.tsv not found in '{missing}'; point data.data_dir",
        ),
        ("lm", ["--data.init_args.data_dir={missing}"], "data.data_dir: '{missing}' does not exist; point"),
        ("majority", ["--data.init_args.cache_dir={file}"], "data: MajorityDataModule could not load its data"),
        (
            "majority",
            ["--runs_dir={file}/runs"],
            "runs_dir: '{file}/runs' cannot be a folder: {file} is a file; choose another runs_dir",
        ),
    ],
)
def test_fit_finds_bad_data_and_outputs_before_it_writes(
    tmp_path: Path, task: str, args: list[str], message: str, normbench_in_process
) -> None:  # noqa: ANN001
    """Data that is missing or malformed, or a runs folder that cannot be written, is one line before the run's
    record or folder exists: nothing is written."""
    (tmp_path / "file").write_text("")
    where = {"missing": tmp_path / "absent", "file": tmp_path / "file"}
    out = normbench_in_process(
        "fit", "--config", task, f"--runs_dir={tmp_path / 'runs'}", *(a.format(**where) for a in args), cwd=tmp_path
    )
    assert out.returncode == 2, out.stderr[-2000:]
    assert out.stderr.strip().splitlines()[-1].startswith(f"normbench: error: {message.format(**where)}")
    assert "Traceback" not in out.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["file"]


@pytest.mark.parametrize(
    "args, message",
    [
        (["bench", "sentiment"], "task: 'sentiment' is not registered; choose one of lm, majority, sst2"),
        (["bench", "majority", "--preset", "huge"], "preset: 'huge' is not defined"),
        (["bench", "majority", "--variants", "[pre/layer]"], "variants: 'pre/layer' not defined"),
        (
            ["bench", "majority", "--model.arch.attn_norm.component", "bad"],
            "model.arch.attn_norm.component: 'bad' is not allowed",
        ),
    ],
)
def test_bench_bad_input_is_one_line_and_writes_nothing(
    tmp_path: Path, args: list[str], message: str, normbench_in_process
) -> None:  # noqa: ANN001
    out = normbench_in_process(
        *args, f"--runs_dir={tmp_path / 'runs'}", f"--results_dir={tmp_path / 'results'}", cwd=tmp_path
    )
    assert out.returncode == 2, out.stderr
    errors = [ln for ln in out.stderr.splitlines() if ln.startswith("normbench: error:")]
    assert len(errors) == 1 and message in errors[0], out.stderr
    assert not (tmp_path / "runs").exists() and not (tmp_path / "results").exists()


def test_ddp_two_processes_match_one_process_with_the_same_global_batch(tmp_path: Path) -> None:
    """2 gloo processes at batch 32 train exactly what 1 process at batch 64 trains (within 1e-5, or 1e-6 relative)."""
    common = [
        "fit",
        "--config",
        CONFIG,
        *TINY,
        "--trainer.accelerator=cpu",
        "--trainer.log_every_n_steps=1",
        "--seed_everything=4",
    ]
    ddp = run_cli(
        *common,
        "--data.init_args.batch_size=32",
        "--trainer.strategy=ddp",
        "--trainer.devices=2",
        f"--runs_dir={tmp_path / 'ddp'}",
        cwd=tmp_path,
    )
    assert ddp.returncode == 0, ddp.stderr[-3000:]
    single = run_cli(*common, "--data.init_args.batch_size=64", f"--runs_dir={tmp_path / 'single'}", cwd=tmp_path)
    assert single.returncode == 0, single.stderr[-3000:]
    (ddp_path,) = (tmp_path / "ddp").rglob("record.json")
    (single_path,) = (tmp_path / "single").rglob("record.json")
    a, b = read_record(ddp_path), read_record(single_path)
    assert a["status"] == b["status"] == "done" and a["final_step"] == b["final_step"] == 12
    assert a["config"]["trainer"]["strategy"] == "ddp" and str(a["config"]["trainer"]["devices"]) == "2"
    assert set(a["series"]) == set(b["series"])
    for name in b["series"]:
        steps_a, values_a = zip(*a["series"][name], strict=False)
        steps_b, values_b = zip(*b["series"][name], strict=False)
        assert steps_a == steps_b, name
        assert values_a == pytest.approx(values_b, abs=1e-5, rel=1e-6), name  # float32: ~1e-7 relative per ulp
