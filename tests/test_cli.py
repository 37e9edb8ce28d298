"""The `normbench` command end to end on a tiny config: records, leaderboard, figures, resume, and
published results that no later sweep can overwrite."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

import pytest
import yaml

from normbench.tasks import get_task
from normbench.training.config import deep_merge

TINY = {
    "trainer": {"max_steps": 20, "val_check_interval": 10},
    "data": {"init_args": {"num_sequences": 600, "batch_size": 64, "eval_batch_size": 300}},
    "bench": {"seeds": [0, 1], "default_variants": ["pre/both", "pre/paper_no_projection"]},
}


def tiny_config(tmp_path: Path) -> Path:
    """The majority config whose default preset (quick) is a 20-step run on 600 sequences."""
    config = yaml.safe_load(Path(str(get_task("majority").config_path)).read_text())
    config["presets"]["quick"] = deep_merge(config["presets"]["quick"], TINY)
    path = tmp_path / "majority-tiny.yaml"
    path.write_text(yaml.safe_dump(config, sort_keys=False))
    return path


def normbench(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    cmd = [
        sys.executable,
        "-m",
        "normbench.cli",
        *args,
        f"--runs_dir={tmp_path / 'runs'}",
        f"--results_dir={tmp_path / 'results'}",
        *(["--no-progress", "--workers=1"] if args[0] == "sweep" else ["--workers=1"] if args[0] == "bench" else []),
    ]
    return subprocess.run(cmd, cwd=tmp_path, capture_output=True, text=True, timeout=600)


def snapshot(root: Path, top_only: bool = False) -> dict[str, bytes]:
    """Every file under ``root`` (only its own files with ``top_only``) with its bytes."""
    files = root.iterdir() if top_only else root.rglob("*")
    return {str(p.relative_to(root)): p.read_bytes() for p in files if p.is_file()}


def test_bench_writes_leaderboard_and_resumes(tmp_path: Path, normbench_in_process) -> None:  # noqa: ANN001
    config = str(tiny_config(tmp_path))
    first = normbench(tmp_path, "sweep", "--config", config)
    assert first.returncode == 0, first.stderr[-3000:]
    # the config file's own bench (its default preset, seeds and variants) writes a folder named after the
    # file: a config of one's own never replaces the task's published results/majority/
    out = tmp_path / "results" / "majority" / "majority-tiny"
    assert not (tmp_path / "results" / "majority" / "leaderboard.json").exists()
    board = json.loads((out / "leaderboard.json").read_text())
    assert board["task"] == "majority" and board["preset"] == "quick" and board["sweep_key"]
    assert [v["name"] for v in board["variants"]] == ["pre/both", "pre/paper_no_projection"]
    for v in board["variants"]:
        assert v["seeds"] == [0, 1] and v["status"] == "done" and v["config_hash"]
        assert len(v["metrics"]["final_train_loss"]["per_seed"]) == 2
        assert v["metrics"]["test_acc@1000"]["mean"] is None  # 20-step runs never reach step 1000
        assert v["provenance"]["git_commits"] and v["provenance"]["world_sizes"] == [1]
        assert v["provenance"]["global_batch_sizes"] == [64]
    assert board["variants"][0]["norms"] == {
        "attn": {"component": "both", "affine": False, "eps": 0.0},
        "ffn": {"component": "both", "affine": True, "eps": 0.0},
    }
    verdicts = {c["id"]: c["verdict"] for c in board["claims"]}
    assert verdicts["brody2023.fig3.acc@1000"] == "not run"
    assert verdicts["brody2023.fig2b.query_angle"] in {"reproduced", "direction only", "inconclusive", "not reproduced"}
    for v in board["variants"]:  # decomposition shares at the output, per seed, sum to 1
        per_seed = zip(*(v["metrics"][f"mu_{t}@out"]["per_seed"] for t in "ihfc"), strict=False)
        assert all(abs(sum(shares) - 1) < 1e-6 for shares in per_seed)
    for png in ("loss.png", "accuracy.png", "angle.png", "decomposition.png"):
        assert (out / png).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    md = (out / "leaderboard.md").read_text()
    assert "pre/paper_no_projection" in md and "Claims" in md and "![angle](angle.png)" in md

    records = sorted((tmp_path / "runs").rglob("record.json"))
    assert len(records) == 4
    stamps = [r.stat().st_mtime_ns for r in records]
    second = normbench_in_process(  # the same runs again, found by their config: nothing trains, no new interpreter
        "bench",
        "majority",
        "--preset",
        "quick",
        "--seeds",
        "[0, 1]",
        "--variants",
        "[pre/both, pre/paper_no_projection]",
        "--data.init_args.num_sequences=600",
        "--data.init_args.batch_size=64",
        "--data.init_args.eval_batch_size=300",
        "--trainer.max_steps=20",
        "--trainer.val_check_interval=10",
        f"--runs_dir={tmp_path / 'runs'}",
        f"--results_dir={tmp_path / 'results'}",
        "--workers=1",
        cwd=tmp_path,
    )
    assert second.returncode == 0, second.stderr[-3000:]
    assert "4 of 4 runs already finished" in second.stderr + second.stdout  # the same runs, found by their config
    assert [r.stat().st_mtime_ns for r in records] == stamps  # nothing retrained
    (named,) = [p for p in out.parent.iterdir() if p.is_dir() and p != out]  # overrides: a folder of their own
    again = json.loads((named / "leaderboard.json").read_text())
    assert [v["metrics"] for v in again["variants"]] == [v["metrics"] for v in board["variants"]]


@pytest.mark.slow  # end to end, about a minute: the default run keeps its cheaper twins
def test_a_smoke_test_sweep_never_touches_published_runs_or_results(tmp_path: Path) -> None:
    config = str(tiny_config(tmp_path))
    assert normbench(tmp_path, "sweep", "--config", config).returncode == 0
    runs, results = tmp_path / "runs", tmp_path / "results" / "majority" / "majority-tiny"
    published_runs, published_results = snapshot(runs), snapshot(results, top_only=True)
    assert any(name.endswith(".ckpt") for name in published_runs)
    assert any("tfevents" in name for name in published_runs)
    assert "leaderboard.json" in published_results

    smoke = normbench(
        tmp_path,
        "sweep",
        "--config",
        config,
        "--preset",
        "quick",
        "--trainer.max_steps",
        "5",
        "--variants",
        "pre/both",
        "--seeds",
        "0",
    )
    assert smoke.returncode == 0, smoke.stderr[-3000:]
    after = snapshot(runs)
    assert {k: v for k, v in after.items() if k in published_runs} == published_runs  # byte-identical
    assert len(after) > len(published_runs)  # the 5-step run has a directory of its own
    assert snapshot(results, top_only=True) == published_results
    (folder,) = [p for p in results.parent.iterdir() if p.is_dir() and p != results]
    smoke_board = json.loads((folder / "leaderboard.json").read_text())
    assert [v["final_step"] for v in smoke_board["variants"]] == [5]

    # a different sweep under the same name is refused before anything trains
    clash = normbench(tmp_path, "sweep", "--config", config, "--seeds", "1", "--name", folder.name)
    assert clash.returncode == 2 and clash.stderr.strip().splitlines()[-1].startswith(
        f"normbench: error: name: {folder}"
    )
    assert snapshot(runs) == after

    # `normbench fit` of a finished configuration leaves it as it is
    fit = subprocess.run(
        [
            sys.executable,
            "-m",
            "normbench.cli",
            "fit",
            "--config",
            config,
            "--preset",
            "quick",
            "--variant",
            "pre/both",
            f"--runs_dir={runs}",
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert fit.returncode == 0 and "already holds a finished run" in fit.stderr
    assert snapshot(runs) == after


# --------------------------------------------------------------------------------------------- --help

HEAVY = ("torch", "lightning", "pytorch_lightning")
REPO = Path(__file__).resolve().parents[1]


def help_commands() -> list[list[str]]:
    """Every command line whose ``--help`` a user may ask for: normbench itself and each (sub)command."""
    from normbench.cli import ANALYSES, COMMANDS

    return [[], *([c] for c in COMMANDS), *(["analyze", a] for a in ANALYSES)]


def test_help_imports_no_torch_or_lightning() -> None:
    """``normbench --help`` and every ``normbench <command> --help`` answer without importing torch or Lightning
    (checked in a fresh interpreter: what it imported, not how long it took)."""
    script = f"""
import sys
from normbench.cli import main
for args in {help_commands()!r}:
    try:
        main([*args, "--help"])
    except SystemExit as exc:
        assert exc.code in (0, None), (args, exc.code)
print("HEAVY", sorted(m for m in {HEAVY!r} if m in sys.modules))
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "HEAVY []" in done.stdout.splitlines()
    assert "options of every command" in done.stdout and "normbench fit" in done.stdout


def test_cite_and_compare_import_no_torch_or_lightning() -> None:
    """``normbench cite`` and ``normbench compare`` read committed boards only: they answer without importing torch or
    Lightning (a fresh interpreter; what it imported, not how long it took)."""
    script = f"""
import sys
from normbench.cli import main
try:
    main(["cite", "majority"])
except SystemExit:  # a board rewritten by a bench in this checkout: nothing to cite, refused in one line
    pass
main(["compare", "majority", "pre/both", "pre/scale"])
print("HEAVY", sorted(m for m in {HEAVY!r} if m in sys.modules))
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300, cwd=REPO)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "HEAVY []" in done.stdout.splitlines() and "pre/scale" in done.stdout


def test_the_short_fit_help_names_options_that_fit_takes(normbench_in_process) -> None:  # noqa: ANN001
    """``normbench fit --help`` (no torch) names only options of LightningCLI's own parser for fit, which
    ``normbench fit --config <task> --help`` prints in full."""
    import re

    from normbench.cli import COMMON_OPTIONS, fit_help_parser
    from normbench.training.cli import COMPILE_MODES

    short = fit_help_parser().format_help()
    full = normbench_in_process("fit", "--config", "majority", "--help", cwd=Path.cwd())
    assert full.returncode == 0 and "--trainer.max_steps" in full.stdout
    named = set(re.findall(r"(?<![\w-])(--[a-z][\w]*)(?![\w.-])", short)) - {f"--{o}" for o in COMMON_OPTIONS}
    assert {"--config", "--preset", "--compile", "--seed_everything"} <= named
    assert all(re.search(rf"{o}(?![\w.-])", full.stdout) for o in named), named
    assert all(mode in short for mode in COMPILE_MODES)


def test_as_a_process_a_sigterm_leaves_at_once_with_143(monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    """``normbench`` as the process (no argv given): after SIGTERM's one line it ends with 143 without interpreter
    clean-up (which could outlast a scheduler's grace period); called with argv it raises SystemExit as before."""
    from normbench import cli
    from normbench.training.stopping.sigterm import Terminated

    def terminated(argv: list[str], dry: bool) -> None:
        """Stand in for fit."""
        raise Terminated

    left: list[int] = []
    monkeypatch.setitem(cli.COMMANDS, "fit", dataclasses.replace(cli.COMMANDS["fit"], function=terminated))
    monkeypatch.setattr(cli, "leave_now", left.append)
    monkeypatch.setattr(sys, "argv", ["normbench", "fit"])
    with pytest.raises(SystemExit) as info:
        cli.main()
    assert info.value.code == 143 and left == [143]
    assert capsys.readouterr().err.strip().startswith("normbench: terminated (SIGTERM)")
    with pytest.raises(SystemExit) as again:
        cli.main(["fit"])
    assert again.value.code == 143 and left == [143]


# --------------------------------------------------------------------------------------------- the command table


def greet(name: str, times: int = 1) -> None:
    """Greet someone: a command that writes nothing.

    Args:
        name: whom to greet.
        times: how many greetings.
    """
    print(" ".join([f"hello {name}"] * times))


def note(text: str, out: str = "note.txt", force: bool = False, overrides: Sequence[str] = ()) -> None:
    """Write a note, and the config overrides it was given.

    Args:
        text: the note.
        out: the file it goes to.
        force: replace an existing note.
        overrides: the config overrides (``--section.key VALUE``).
    """
    if Path(out).exists() and not force:
        raise ValueError(f"out: {out} exists; --force replaces it")
    Path(out).write_text(f"{text} {' '.join(overrides)}")


def test_one_entry_in_the_table_is_a_whole_command(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """A command is its function and one entry of ``normbench.cli.COMMANDS``: its line in ``normbench --help`` and
    its ``--help`` come from the docstring, its options from the signature; the entry says what it writes (a dry run
    of a command that writes nothing runs it) and that it takes config overrides."""
    from normbench import cli
    from normbench.commands.entry import Command

    monkeypatch.setitem(cli.COMMANDS, "greet", Command(greet))
    monkeypatch.setitem(cli.COMMANDS, "note", Command(note, writes="the note (--out)", overrides="train"))

    def run(*args: str) -> tuple[int | str | None, str, str]:
        code: int | str | None = 0
        try:
            cli.main(list(args))
        except SystemExit as exc:
            code = exc.code
        out = capsys.readouterr()
        return code, out.out, out.err

    code, out, _ = run("--help")
    assert code == 0 and "  greet        Greet someone: a command that writes nothing." in out
    assert "  note         Write a note, and the config overrides it was given." in out
    code, out, _ = run("greet", "--help")
    assert code in (0, None) and "--times TIMES" in out and "how many greetings" in out and "Writes nothing" in out
    code, out, _ = run("note", "--help")
    assert code in (0, None) and "Writes the note (--out)." in out and "--compile MODE" in out
    assert "overrides the config of every run" in out and "--overrides" not in out

    assert run("greet", "world", "--times", "2") == (0, "hello world hello world\n", "")
    assert run("greet", "world", "--dry_run") == (0, "hello world\n", "")  # it writes nothing: a dry run runs it
    code, _, err = run("greet", "world", "--times", "two")
    assert code == 2 and err.count("\n") == 1 and err.startswith("normbench: error: times:")
    code, _, err = run("greet")
    assert code == 2 and err == "normbench: error: the following arguments are required: greet.name\n"

    path = tmp_path / "note.txt"
    code, out, _ = run("note", "hi", f"--out={path}", "--trainer.max_steps", "3", "--dry_run")
    assert (code, out) == (0, "normbench: dry run: `normbench note` is valid\n") and not path.exists()
    assert run("note", "hi", "--out", str(path), "--trainer.max_steps", "3")[0] == 0
    assert path.read_text() == "hi --trainer.max_steps 3"
    code, _, err = run("note", "again", "--out", str(path))
    assert code == 2 and err == f"normbench: error: out: {path} exists; --force replaces it\n"
    assert run("note", "again", "--out", str(path), "--force")[0] == 0 and path.read_text() == "again "


def test_every_entry_of_the_table_is_parsed_from_its_function() -> None:
    """Each command's entry agrees with its function: a one-line summary, the arguments the entry gives it, and a
    parser built from its signature alone (the overrides are no option of its own)."""
    from normbench import cli
    from normbench.commands.entry import Command, Group

    def entries(table: dict, prefix: str = "") -> dict[str, Command]:
        out = {}
        for name, entry in table.items():
            if isinstance(entry, Group):
                out.update(entries(entry.commands, f"{prefix}{name} "))
            else:
                out[prefix + name] = entry
        return out

    every = entries(cli.COMMANDS)
    assert {"fit", "sweep", "bench", "analyze geometry", "analyze decompose", "norms", "card"} <= set(every)
    for name, command in every.items():
        assert command.summary and "\n" not in command.summary, name
        if command.raw:
            continue
        help_text = cli.command_parser(command).format_help()
        assert "--overrides" not in help_text and ("--compile" in help_text) == (command.overrides == "train"), name
    assert {n for n, c in every.items() if c.writes is None} == {"compare", "cite", "tasks"}
    assert {n for n, c in every.items() if c.overrides} == {"fit", "sweep", "bench", "analyze geometry"}


def test_version_names_the_package_version() -> None:
    from normbench import __version__

    for flag in ("--version", "-V"):
        done = subprocess.run([sys.executable, "-m", "normbench", flag], capture_output=True, text=True, timeout=120)
        assert done.returncode == 0 and done.stdout == f"normbench {__version__}\n", done.stderr


def main_in_fresh_interpreter(argv: list[str]) -> subprocess.CompletedProcess:
    """``normbench <argv>`` in a fresh interpreter that prints its exit status and the heavy modules it imported."""
    script = f"""
import sys
from normbench.cli import main
try:
    main({argv!r})
except SystemExit as exc:
    print("STATUS", exc.code)
print("HEAVY", sorted(m for m in {HEAVY!r} if m in sys.modules))
"""
    return subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)


@pytest.mark.parametrize("command", ["sweep --config majority", "bench majority"])
def test_a_mistyped_override_section_is_one_line_before_torch_is_imported(command: str) -> None:
    """An option that is neither the command's own nor a model/data/trainer override is reported before the
    command imports what it runs (checked in a fresh interpreter: what it imported, not how long it took)."""
    done = main_in_fresh_interpreter([*command.split(), "--seedz", "0-3"])
    assert "STATUS 2" in done.stdout and "HEAVY []" in done.stdout, done.stdout + done.stderr[-2000:]
    assert done.stderr.strip() == (
        "normbench: error: override: '--seedz' is not an option of a sweep; give model.*, data.* or trainer.* keys, "
        "or --compile (seeds: --seeds)"
    )


@pytest.mark.parametrize(
    ("command", "what"), [("fit --config majority", "fit"), ("sweep --config majority", "override")]
)
def test_a_mistyped_trainer_option_is_one_line_with_the_closest_before_lightning_is_imported(
    command: str, what: str
) -> None:
    """``--trainer.max_stepz``: Lightning's Trainer keywords are read from its source, not imported."""
    done = main_in_fresh_interpreter([*command.split(), "--trainer.max_stepz", "5"])
    assert "STATUS 2" in done.stdout and "HEAVY []" in done.stdout, done.stdout + done.stderr[-2000:]
    assert done.stderr.strip() == (
        f"normbench: error: {what}: 'trainer.max_stepz' is not an option of Lightning's Trainer; "
        "did you mean trainer.max_steps?"
    )


def test_every_trainer_keyword_a_config_uses_is_one_the_check_knows() -> None:
    """The keywords read from Lightning's source are its Trainer's (no valid option refused)."""
    import inspect

    import lightning as L

    from normbench.sweep.options import trainer_keys

    assert trainer_keys() == frozenset(inspect.signature(L.Trainer).parameters)
