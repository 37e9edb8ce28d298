"""Bakes: the queue file, a budget, runs stopped at the deadline with their checkpoint, the archive and the board."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from normbench.archive.board_keys import board_task, parse_key
from normbench.archive.store import Archive
from normbench.sweep.bake import bake
from normbench.sweep.baking.queue import load_queue
from normbench.sweep.options import BakeOptions
from normbench.training.run.records import read_record
from normbench.training.stopping.deadline import STOP_AT
from tests.tiny_runs import sweep_args, tiny_config


def queue_file(folder: Path, config: Path, seeds: str = "0-1", board: str = "majority/tiny") -> Path:
    path = folder / "bake.yaml"
    path.write_text(
        f"queue:\n  - board: {board}\n    task: majority\n    config: {config}\n    preset: quick\n"
        f"    variants: [pre/both]\n    seeds: {seeds}\n"
    )
    return path


def bake_seeds(tmp_path: Path, config: Path, seeds: str, runs: str, results: str):
    """Bake the tiny queue at ``seeds`` in this process, on one worker, at normal priority."""
    queue = str(queue_file(tmp_path, config, seeds=seeds))
    return bake(queue, BakeOptions(workers=1, nice=0, runs_dir=runs, results_dir=results, uncommitted=True))


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("queue: []\n", "needs a non-empty list"),
        ("queue:\n  - {board: majority, task: majority, preset: quick, variants: [pre/both]}\n", "field 'seeds'"),
        ("queue:\n  - {board: lm/x, task: majority, preset: q, variants: [a], seeds: 0}\n", "board 'lm/x'"),
        ("queue:\n  - {board: cards/x/lm, task: majority, preset: q, variants: [a], seeds: 0}\n", "board 'cards/x/lm'"),
        (
            "queue:\n  - {board: majority/a/b, task: majority, preset: q, variants: [a], seeds: 0}\n",
            "board: 'majority/a/b'",
        ),
        ("queue:\n  - {board: cards/x, task: majority, preset: q, variants: [a], seeds: 0}\n", "board: 'cards/x'"),
        (
            "queue:\n  - {board: majority/.., task: majority, preset: q, variants: [a], seeds: 0}\n",
            "board: 'majority/..'",
        ),
        ("queue:\n  - {board: majority, task: majority, preset: q, variants: [a], seeds: 0, gpu: 1}\n", "'gpu'"),
        ("queue:\n  - {board: majority, task: majority, preset: q, variants: [a], seeds: x}\n", "seeds 'x'"),
        ("queue: [\n", "line 2 is not valid YAML"),
    ],
)
def test_a_bad_queue_is_one_line_naming_the_item_and_field(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "bake.yaml"
    path.write_text(text)
    with pytest.raises(ValueError, match=message) as info:
        load_queue(path)
    assert "\n" not in str(info.value) and str(path) in str(info.value)


def test_a_queue_takes_every_kind_of_board_key(tmp_path: Path) -> None:
    """A task's own board, another of its boards, and a report card's boards (cards/<card>/<task>[/<kind>])."""
    keys = ["majority", "majority/lr", "cards/x/majority", "cards/x/majority/lr", "cards/x/majority/tuned"]
    items = "".join(f"  - {{board: {k}, task: majority, preset: q, variants: [a], seeds: 0}}\n" for k in keys)
    path = tmp_path / "bake.yaml"
    path.write_text("queue:\n" + items)
    loaded = load_queue(path)
    assert [i.board for i in loaded] == keys
    assert [i.folder for i in loaded] == [None, *keys[1:]]  # the sweep's name: a key of the task


def test_the_shipped_queue_is_ten_quick_seeds_the_learning_rates_more_seeds_the_matrix_then_the_paper_protocol() -> (
    None
):
    items = load_queue(Path(__file__).parents[2] / "queues" / "bake.yaml")
    blocks = ["majority/lr-blocks", "majority/tuned-blocks"] * 3  # the norm leaderboard's majority whole-block models
    boards = ["majority/quick-10", "majority/lr", "majority/tuned", *blocks, "lm", "majority/paper-1000", "lm/lr",
              "lm/tuned", "sst2/lr", "sst2/tuned", "sst2", "sst2/matrix", "sst2/matrix", "lm/modern", "lm/matrix",
              "lm/stability", "lm/dyt-recipe", "lm/dyt-judged", "lm/width", "lm/width", "majority/paper",
              "majority/paper"]  # fmt: skip
    assert [i.board for i in items][: len(boards)] == boards
    rest = [i.board for i in items][len(boards) :]  # then the published report cards' runs, then the whole-block
    cards = [b for b in rest if parse_key(b).card]  # models of the language model and SST-2
    tail = [b for b in rest if b.endswith("-blocks")]
    assert cards and tail and rest == cards + tail and {board_task(b) for b in tail} == {"lm", "sst2"}
    assert [i.seeds for i in items][: len(boards)] == [tuple(range(10)), (100, 101), tuple(range(10)),
                                        *[(100, 101), tuple(range(10))] * 3, tuple(range(5)),
                                        tuple(range(10)), (100, 101), tuple(range(5)), (100, 101, 102), tuple(range(5)),
                                        tuple(range(5)), (0, 1, 2), (3, 4), tuple(range(5)), tuple(range(5)), (0, 1), (3, 4), (0, 1, 2, 5, 6),
                                        (0, 1, 2), (3, 4), (0, 1, 2), tuple(range(3, 10))]  # fmt: skip


def test_a_run_a_board_published_before_the_archive_is_finished_not_retrained(tmp_path: Path) -> None:
    from normbench.sweep.baking.queue import survey

    queue = load_queue(queue_file(tmp_path, tiny_config(tmp_path), seeds="0-1"))
    archive = Archive(tmp_path / "results")
    slots = survey(queue, archive, str(tmp_path / "runs"))
    assert [s.state for s in slots] == ["not started", "not started"]
    (archive.root / "majority").mkdir(parents=True)
    published = {"runs": {str(slots[0].run.config_hash): [1]}}
    (archive.root / "majority" / "published.json").write_text(json.dumps(published))
    assert [s.state for s in survey(queue, archive, str(tmp_path / "runs"))] == ["not started", "finished"]


def test_a_bake_trains_the_queue_into_the_archive_and_builds_the_board_once(tmp_path: Path, capsys) -> None:
    """A bake trains the queue into the archive and builds its board; again, it trains and rewrites nothing; the board
    rebuilds from the archive alone; a queue naming more seeds grows it, one naming fewer leaves it as published."""
    config = tiny_config(tmp_path)
    queue = queue_file(tmp_path, config)
    runs, results = str(tmp_path / "runs"), str(tmp_path / "results")
    report = bake(str(queue), BakeOptions(workers=1, nice=0, runs_dir=runs, results_dir=results, uncommitted=True))
    assert (report.finished_now, report.not_started, report.in_progress) == (2, 0, [])
    archive = Archive(results)
    reps = list(archive.runs("majority"))
    assert len(reps) == 2 and all(r.finished for r in reps)
    # no budget, on the CPU, at a small batch: the two seeds of the variant trained as one stack
    assert all(r.record()["vectorized"] == {"stack_size": 2, "seeds": [0, 1]} for r in reps)
    board = json.loads((Path(results) / "majority" / "tiny" / "leaderboard.json").read_text())
    assert board["variants"][0]["seeds"] == [0, 1]
    assert "2 of 2 queued runs finished (2 now); the queue is done" in capsys.readouterr().out
    # again: nothing trains, the board is not rewritten
    stamp = (Path(results) / "majority" / "tiny" / "leaderboard.json").stat().st_mtime_ns
    report = bake(
        str(queue),
        BakeOptions(workers=1, nice=0, runs_dir=str(tmp_path / "elsewhere"), results_dir=results, uncommitted=True),
    )
    assert (report.finished_before, report.finished_now) == (2, 0)
    assert (Path(results) / "majority" / "tiny" / "leaderboard.json").stat().st_mtime_ns == stamp
    assert not (tmp_path / "elsewhere").exists() or not any((tmp_path / "elsewhere").rglob("record.json"))
    # a board is a view of the archive: rebuilt with no runs at all, it says the same, and is not rewritten
    assert all((r.path / "decomposition.json").is_file() for r in reps)  # analyses kept beside the records
    from normbench.sweep.bake import rebuild

    rebuild(load_queue(queue)[0], load_queue(queue), str(tmp_path / "no-runs"), results)
    assert (Path(results) / "majority" / "tiny" / "leaderboard.json").stat().st_mtime_ns == stamp
    assert "is unchanged" in capsys.readouterr().out
    # a board the queue names that does not exist yet is built from the runs the archive holds, training nothing
    other = queue_file(tmp_path, config, board="majority/tiny-card")
    report = bake(
        str(other),
        BakeOptions(workers=1, nice=0, runs_dir=str(tmp_path / "elsewhere"), results_dir=results, uncommitted=True),
    )
    assert report.finished_now == 0 and report.boards == ["majority/tiny-card"]
    card = json.loads((Path(results) / "majority" / "tiny-card" / "leaderboard.json").read_text())
    assert card["variants"][0]["seeds"] == [0, 1]
    # a queue that names more seeds grows the board; one that names fewer of its runs rebuilds nothing over it
    bake_seeds(tmp_path, config, "0-2", runs, results)
    board_path = Path(results) / "majority" / "tiny" / "leaderboard.json"
    assert json.loads(board_path.read_text())["variants"][0]["seeds"] == [0, 1, 2]
    capsys.readouterr()
    report = bake(
        str(queue_file(tmp_path, config, seeds="0")),
        BakeOptions(workers=1, nice=0, runs_dir=runs, results_dir=results, uncommitted=True, train=False),
    )
    assert json.loads(board_path.read_text())["variants"][0]["seeds"] == [0, 1, 2] and report.boards == []
    assert "majority/tiny kept as published: " in capsys.readouterr().out


def test_a_budget_too_small_for_a_run_starts_none(tmp_path: Path, capsys) -> None:
    queue = queue_file(tmp_path, tiny_config(tmp_path))
    report = bake(
        str(queue),
        BakeOptions(
            budget=0.01,
            workers=1,
            nice=0,
            runs_dir=str(tmp_path / "runs"),
            results_dir=str(tmp_path / "results"),
            uncommitted=True,
        ),
    )
    assert (report.finished_now, report.not_started) == (0, 2)
    assert "2 not started; `normbench bake` continues them" in capsys.readouterr().out


def test_a_run_stopped_at_its_deadline_resumes_to_the_same_numbers(tmp_path: Path, monkeypatch) -> None:
    """NORMBENCH_STOP_AT in the past: the run checkpoints after its first step and stops as interrupted; run again
    without it, it finishes with the series of a run never stopped."""
    from normbench.cli import main

    config = tiny_config(tmp_path)
    monkeypatch.setenv(STOP_AT, "0")
    with pytest.raises(SystemExit) as info:
        main(sweep_args(config, tmp_path / "a"))
    assert info.value.code == 130
    (record_path,) = (tmp_path / "a" / "runs").rglob("record.json")
    stopped = read_record(record_path)
    assert stopped["status"] == "interrupted"
    assert (record_path.parent / "checkpoints" / "last.ckpt").is_file()
    monkeypatch.delenv(STOP_AT)
    main(sweep_args(config, tmp_path / "a"))
    main(sweep_args(config, tmp_path / "b"))
    resumed = read_record(record_path)
    (fresh_path,) = (tmp_path / "b" / "runs").rglob("record.json")
    fresh = read_record(fresh_path)
    assert resumed["status"] == fresh["status"] == "done"
    assert resumed["series"] == fresh["series"]


@pytest.mark.slow  # two bakes of the tiny config (about 45 s): the default run stays under its 10 minutes
def test_a_board_published_before_the_archive_grows_with_its_published_values(tmp_path: Path) -> None:
    """Seed 0 published before the archive (its record gone, listed in published.json): a bake adds seed 1, and the
    board shows seed 0's published values beside seed 1's record, judged over both; the figures draw seed 1."""
    import shutil

    config = tiny_config(tmp_path)
    runs, results = str(tmp_path / "runs"), str(tmp_path / "results")
    bake_seeds(tmp_path, config, "0", runs, results)
    path = Path(results) / "majority" / "tiny" / "leaderboard.json"
    before = json.loads(path.read_text())
    (rep,) = Archive(results).runs("majority")
    shutil.rmtree(rep.path.parent.parent)  # the run's record was never kept: only its board's values
    shutil.rmtree(runs)
    published = {"runs": {rep.config_hash: [0]}}
    (Path(results) / "archive" / "majority" / "published.json").write_text(json.dumps(published))
    bake_seeds(tmp_path, config, "0-1", runs, results)
    after = json.loads(path.read_text())
    (old,), (new,) = before["variants"], after["variants"]
    assert new["seeds"] == [0, 1] and new["published_seeds"] == {"majority/tiny": [0]}
    assert after["finished_runs"] == 2 and after["planned_runs"] == 2
    for metric, agg in old["metrics"].items():
        assert new["metrics"][metric]["per_seed"][0] == agg["per_seed"][0], metric
    shown = [m for m in new["metrics"].values() if m["per_seed"][1] is not None]
    assert shown and all(m["n"] == 2 for m in shown if m["per_seed"][0] is not None)
    md = path.with_suffix(".md").read_text()
    assert "- `pre/both`, seed 0: the values published on `results/majority/tiny/` before the run archive" in md


def test_a_board_waiting_for_its_tuning_grid_is_left_for_a_later_bake(tmp_path: Path, monkeypatch, capsys) -> None:
    from normbench.judge.tuned import ChoiceNotReady
    from normbench.sweep.baking import queue as queue_module

    def not_ready(*args, **kwargs):
        raise ChoiceNotReady("bench.tuned.choice: ...; (normbench bake)", "majority/lr", "it has 2 of its 4 runs")

    monkeypatch.setattr(queue_module, "plan_runs", not_ready)
    queue = load_queue(queue_file(tmp_path, tiny_config(tmp_path), board="majority/tuned"))
    assert queue_module.survey(queue, Archive(tmp_path / "results"), str(tmp_path / "runs")) == []
    err = capsys.readouterr().err  # what the bake will do, not what the user must: it trains the grid, then these
    assert "normbench: bake: results/majority/tuned/ (" in err and "runs at the tuned rates) waits for" in err
    assert "results/majority/lr/ (it has 2 of its 4 runs): the bake trains that grid first, then these runs" in err
    assert "(normbench bake)" not in err


def test_a_bake_that_trains_nothing_builds_a_waiting_board_once_its_grid_is_held(monkeypatch) -> None:
    """Runs trained elsewhere (a grid, then the runs at its chosen values): a bake told to train nothing rebuilds the
    grid's board, then plans the waiting board at the chosen values and rebuilds it from its held runs."""
    from types import SimpleNamespace

    from normbench.sweep import bake as bake_module
    from normbench.sweep.bake import release_waiting
    from normbench.sweep.baking.queue import QueueItem, Slot

    grid, tuned = (QueueItem(b, "majority", p, ("pre/both",), (0,), None) for b, p in (("majority/lr", "lr"),
                                                                                          ("majority/tuned", "tuned")))  # fmt: skip
    held = Slot(tuned, SimpleNamespace(config_hash="tuned-hash", seed=0), "finished")
    rebuilt: list[str] = []
    monkeypatch.setattr(bake_module, "rebuild", lambda item, *a, **k: rebuilt.append(item.board))
    monkeypatch.setattr(bake_module, "survey", lambda its, *a, **k: [held] if its == [tuned] else [])
    waiting = [(tuned, "majority/lr")]
    none = list(waiting)  # no run of the grid held: nothing is rebuilt, it still waits
    assert release_waiting(none, [], [grid, tuned], None, "runs", "results", held=set()) == [] and none == waiting
    assert release_waiting(waiting, [], [grid, tuned], None, "runs", "results", held={"majority/lr"}) == [held]
    assert rebuilt == ["majority/lr"] and waiting == []
    other = [(tuned, "majority/elsewhere")]  # a choice board this queue does not plan: it still waits
    assert release_waiting(other, [], [tuned], None, "runs", "results", held={"majority/elsewhere"}) == []
    assert other == [(tuned, "majority/elsewhere")]


def test_a_stopped_bake_stops_the_runs_it_started() -> None:
    """SIGTERM (or Ctrl-C) to a bake reaches its runs: each is terminated, and one that ignores it is killed."""
    import subprocess
    import sys

    from normbench.sweep.baking.launch import stop_runs

    polite = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    stubborn = subprocess.Popen(
        [sys.executable, "-c", "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); print(flush=True); "
         "time.sleep(60)"], stdout=subprocess.PIPE)  # fmt: skip
    stubborn.stdout.readline()  # its handler is in place
    stop_runs([polite, stubborn], grace_s=2.0)
    assert polite.returncode == -15 and stubborn.returncode == -9


@pytest.mark.slow  # four training processes (the stack, then each seed alone, at a minute); a rare fallback path
def test_seeds_their_stack_cannot_train_are_trained_alone(tmp_path: Path, monkeypatch) -> None:
    """A norm ``vmap`` cannot map (a host read in its forward pass) fails as a stack of seeds; the bake then trains
    each seed alone, and both finish. (The queue names a test's norm by import path: trusted, as its source is.)"""
    import yaml

    monkeypatch.setenv("NORMBENCH_TRUST_RECORD_CODE", "1")
    config = tiny_config(tmp_path)
    doc = yaml.safe_load(config.read_text())
    doc["bench"]["variants"]["pre/hostread"] = {
        "model.init_args.arch.attn_norm.component": "tests.unstackable_norm:HostReadNorm"
    }
    config.write_text(yaml.safe_dump(doc, sort_keys=False))
    queue = tmp_path / "bake.yaml"
    queue.write_text(
        f"queue:\n  - {{board: majority/tiny, task: majority, config: {config}, preset: quick, variants: [pre/hostread], "
        "seeds: 0-1}\n"
    )
    results = str(tmp_path / "results")
    report = bake(
        str(queue),
        BakeOptions(workers=1, nice=0, runs_dir=str(tmp_path / "runs"), results_dir=results, uncommitted=True),
    )
    assert (report.finished_now, report.not_started) == (2, 0)
    records = [r.record() for r in Archive(results).runs("majority")]
    assert len(records) == 2 and all(r["status"] == "done" and "vectorized" not in r for r in records)
    (log,) = [
        p for p in (tmp_path / "runs").rglob("bake.log") if p.parent.name == "seed0"
    ]  # the stack's, then seed 0's
    assert "1 of 1 failed" not in log.read_text() and "2 failed" in log.read_text()


def test_a_bake_keeps_the_token_analyses_or_says_in_one_line_why_not(tmp_path: Path, monkeypatch, capsys) -> None:
    """After training language-model or SST-2 runs, a bake computes the token analyses the sst2 report reads while
    the weights are here, once per task and preset with every seed queued; without the SST-2 dev sentences it says so
    and goes on."""
    from normbench.publish import tokens
    from normbench.sweep.bake import keep_token_analyses_here
    from normbench.sweep.baking.queue import QueueItem

    asked = []

    def missing(*args: object) -> tuple[int, int]:
        raise ValueError("data.data_dir: train.tsv, dev.tsv not found in 'x'\nmore")

    items = [
        QueueItem("lm", "lm", "quick", ("pre/both",), (0, 1)),
        QueueItem("lm", "lm", "quick", ("pre/project",), (3, 4)),
        QueueItem("majority", "majority", "quick", ("pre/both",), (0,)),
    ]
    archive = Archive(tmp_path / "results")
    monkeypatch.setattr(tokens, "keep_token_analyses", missing)
    keep_token_analyses_here(items, str(tmp_path / "runs"), str(tmp_path / "results"), archive)
    assert capsys.readouterr().out == (
        "normbench: bake: token analyses not computed: data.data_dir: train.tsv, dev.tsv not found in 'x'\n"
    )
    monkeypatch.setattr(tokens, "keep_token_analyses", lambda *args: asked.append(args[3:]) or (7, 5))
    keep_token_analyses_here(items, str(tmp_path / "runs"), str(tmp_path / "results"), archive)
    assert asked == [("lm", "quick", [0, 1, 3, 4])]
    assert "the sst2 token report reads 7 of the queued runs; 5 token analyses are kept" in capsys.readouterr().out


def test_a_board_waiting_for_its_grid_is_queued_once_the_grid_is_trained(monkeypatch, capsys) -> None:
    """When no run of the tuning grid is pending any more, the grid's board is rebuilt and the waiting board's runs
    join the queue where their item stands (before later items), in the same bake."""
    from types import SimpleNamespace

    from normbench.sweep import bake as bake_module
    from normbench.sweep.bake import release_waiting
    from normbench.sweep.baking.queue import QueueItem, Slot, in_queue_order

    grid, tuned, later = (
        QueueItem(board, "majority", preset, ("pre/both",), (0,), None)
        for board, preset in (("majority/lr", "lr"), ("majority/tuned", "tuned"), ("majority/more", "quick"))
    )
    items = [grid, tuned, later]

    def slot(item: QueueItem, seed: int, state: str = "not started") -> Slot:
        return Slot(item, SimpleNamespace(config_hash=f"{item.board}-hash", seed=seed), state)

    rebuilt: list[str] = []
    monkeypatch.setattr(bake_module, "rebuild", lambda item, *a, **k: rebuilt.append(item.board))
    monkeypatch.setattr(bake_module, "survey", lambda its, *a, **k: [slot(tuned, 0, "finished"), slot(tuned, 1)])
    waiting = [(tuned, "majority/lr")]
    assert release_waiting(waiting, [slot(grid, 101), slot(later, 0)], items, None, "runs", "results") == []
    assert waiting == [(tuned, "majority/lr")] and rebuilt == []  # a grid run still pending: it waits
    queue_left = [slot(later, 0)]
    new = release_waiting(waiting, queue_left, items, None, "runs", "results")
    assert [(s.item.board, s.run.seed) for s in new] == [("majority/tuned", 1)]  # the finished run is not queued
    assert waiting == [] and rebuilt == ["majority/lr"]
    assert "results/majority/lr/ is finished: 1 runs of results/majority/tuned/ queued" in capsys.readouterr().out
    in_queue_order(queue_left, new, items)
    assert [s.item.board for s in queue_left] == ["majority/tuned", "majority/more"]


def test_a_run_past_its_last_training_step_is_stopped_at_the_end_of_the_budget(monkeypatch, capsys, tmp_path) -> None:
    """The deadline stops training steps only: a run in its tests and analyses (minutes on a language model) when
    the budget ends is stopped then, so the bake ends within its budget instead of waiting for it."""
    import subprocess
    import sys
    import time
    from types import SimpleNamespace

    from normbench.sweep.baking import launch as launch_module
    from normbench.sweep.baking.launch import BakeState, Schedule, train_queue
    from normbench.sweep.baking.queue import BakeReport
    from normbench.sweep.options import BakeOptions

    procs: list[subprocess.Popen] = []

    def launch(command, cores, deadline, log):
        procs.append(subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"]))
        return procs[-1]

    monkeypatch.setattr(launch_module, "launch", launch)
    monkeypatch.setattr(launch_module, "run_command", lambda *args: [])
    monkeypatch.setattr(launch_module, "archive_runs", lambda *args, **kwargs: {})
    run = SimpleNamespace(record_path="/nonexistent/run/record.json", config_hash="x", trainer={}, config={})
    slot = SimpleNamespace(
        run=run, item=SimpleNamespace(board="majority/x", task="majority"), alone=True, state="not started"
    )  # fmt: skip
    state = BakeState([], Archive(tmp_path), BakeReport(finished_before=0), queue_left=[slot])
    schedule = Schedule([set()], [], deadline=time.time() + 3600, hard_stop=time.time() + 1.0)
    began = time.time()
    changed = train_queue(state, BakeOptions(uncommitted=True), schedule)
    assert changed == set() and len(procs) == 1 and procs[0].returncode == -15
    assert time.time() - began < 30
    assert "1 run(s) still going at the end of the budget" in capsys.readouterr().err


def test_a_bake_run_computes_its_analyses_where_it_trained(tmp_path: Path) -> None:
    """A bake's run (a sweep that writes no board) computes the analyses its board reads while its weights are at
    hand, so the archive keeps them even when the bake ends before rebuilding the board (stopped, killed)."""
    from normbench.cli import main
    from normbench.sweep.baking.launch import run_command
    from normbench.sweep.baking.queue import survey

    config = tiny_config(tmp_path)
    (slot,) = survey(load_queue(queue_file(tmp_path, config, seeds="0")), Archive(tmp_path / "results"), "unused")
    command = run_command([slot], str(tmp_path / "runs"), str(tmp_path / "results"), None)
    assert command[command.index("--leaderboard") + 1] == "false"
    main([*command[3:], "--workers", "1"])  # `python -m normbench sweep ...`, in this process
    (run,) = (tmp_path / "runs" / "majority").glob("*/seed0")
    assert (run / "decomposition.json").is_file()
    assert not (tmp_path / "results" / "majority" / "tiny").exists()  # no board: the bake builds it


@pytest.mark.slow  # two bakes over two boards: half a minute
def test_a_run_two_boards_show_is_trained_once_and_builds_both_boards(tmp_path: Path) -> None:
    """Two queued boards that plan the same run (a card's grid shares the task grid's LayerNorm runs): it trains once,
    and both boards are built from it, when it trains and when a bake that trains nothing rebuilds them."""
    config = tiny_config(tmp_path)
    queue = tmp_path / "two.yaml"
    item = f"task: majority\n    config: {config}\n    preset: quick\n    variants: [pre/both]\n    seeds: 0\n"
    queue.write_text(f"queue:\n  - board: majority/tiny\n    {item}  - board: majority/shares\n    {item}")
    runs, results = str(tmp_path / "runs"), str(tmp_path / "results")
    report = bake(str(queue), BakeOptions(workers=1, nice=0, runs_dir=runs, results_dir=results, uncommitted=True))
    assert report.finished_now == 1 and len(list(Archive(results).runs("majority"))) == 1
    assert report.boards == ["majority/tiny", "majority/shares"]
    shared = Path(results) / "majority" / "shares" / "leaderboard.json"
    assert json.loads(shared.read_text())["variants"][0]["seeds"] == [0]
    shared.unlink()
    report = bake(
        str(queue),
        BakeOptions(nice=0, runs_dir=str(tmp_path / "none"), results_dir=results, uncommitted=True, train=False),
    )
    assert shared.is_file() and report.boards == ["majority/tiny", "majority/shares"]


def test_a_bake_trains_the_runs_in_progress_first_those_with_fewest_steps_left_first_then_in_queue_order() -> None:
    """952 of an LM run's 2,000 steps finish before 2,000 of the paper protocol's 14,000: a bake that resumes both
    puts the one with fewer steps left first, whatever their steps done; runs not started keep the queue's order."""
    from types import SimpleNamespace

    from normbench.sweep.baking.queue import QueueItem, Slot, training_order

    paper, lm = (QueueItem(b, t, p, ("v",), (0,), None) for b, t, p in (("majority/paper", "majority", "paper"),
                                                                         ("lm/x", "lm", "quick")))  # fmt: skip

    def slot(item: QueueItem, seed: int, max_steps: int, step: int = 0) -> Slot:
        run = SimpleNamespace(config_hash=item.board, seed=seed, trainer={"max_steps": max_steps})
        return Slot(item, run, "in progress" if step else "not started", step)

    slots = [slot(paper, 0, 14000), slot(paper, 3, 14000, 2000), slot(lm, 1, 2000), slot(lm, 4, 2000, 952),
             slot(lm, 5, 2000, 1500)]  # fmt: skip
    order = [(s.item.board, s.run.seed) for s in training_order(slots)]
    assert order == [("lm/x", 5), ("lm/x", 4), ("majority/paper", 3), ("majority/paper", 0), ("lm/x", 1)]
    assert slot(lm, 4, 2000, 952).steps_left == 1048 and slot(lm, 4, 0, 952).steps_left == 0


def test_a_bake_prints_a_progress_line_per_run_with_the_bake_s_eta_and_a_line_as_each_ends(
    tmp_path: Path, monkeypatch, capsys
) -> None:
    """A person can follow a bake (a card's training): run k of n, its step and rate, the bake's ETA, at a steady
    interval; and one line as each run ends, with what the archive took."""
    from normbench.training.monitoring.progress import PROGRESS_ENV

    monkeypatch.setenv(PROGRESS_ENV, "0.5")
    queue = queue_file(tmp_path, tiny_config(tmp_path))
    options = BakeOptions(budget=30, workers=1, nice=0, runs_dir=str(tmp_path / "runs"),
                          results_dir=str(tmp_path / "results"), uncommitted=True)  # fmt: skip
    report = bake(str(queue), options)  # a budget: each run alone
    assert report.finished_now == 2
    out = capsys.readouterr().out.splitlines()
    going = [line for line in out if line.startswith("normbench: bake: run 1 of 2 (majority/tiny, pre/both seed 0): ")]
    assert going and all("; the bake: 0 of 2 done, ETA " in line for line in going)
    ended = [line for line in out if " ended after " in line]
    assert len(ended) == 2 and ended[0].startswith("normbench: bake: run 1 of 2 (majority/tiny, pre/both seed 0)")
    assert ended[0].endswith("(archive added: 1); 1 of 2 done") and ended[1].endswith("; 2 of 2 done")


def test_a_running_run_s_time_left_is_read_from_its_progress_line(tmp_path: Path) -> None:
    from types import SimpleNamespace

    from normbench.sweep.baking.progress import BakeProgress, Launched

    log = tmp_path / "bake.log"
    log.write_text("old\nnormbench: progress pre/both seed 0: step 100/1100 (9%), loss 0.5, 2.5 steps/s, ETA 6m40s\n")
    times = SimpleNamespace(expected_s=lambda slot: 99.0)
    run = Launched(1, [SimpleNamespace()], log, 0, 0.0)  # type: ignore[list-item]
    assert BakeProgress(times, 1, 30).left_s(run) == 1000 / 2.5  # type: ignore[arg-type]
    log.write_text("no progress yet\n")
    assert BakeProgress(times, 1, 30).left_s(run) == 0.0  # type: ignore[arg-type]  # expected 99 s, long past


def test_boards_a_spent_budget_leaves_are_owed_said_in_one_line_and_built_first_by_the_next_bake(
    tmp_path: Path, monkeypatch, capsys
) -> None:
    """The budget bounds the whole bake, its boards included: at the end the boards not built yet are owed (one line
    names them) and the next bake of a queue with them builds them; another queue's owed boards stay owed."""
    import time
    from types import SimpleNamespace

    from normbench.sweep import bake as module
    from normbench.sweep.baking.queue import QueueItem

    built: list[str] = []
    monkeypatch.setattr(module, "rebuild", lambda item, *args, **kwargs: built.append(item.board))
    items = [QueueItem(b, "majority", "quick", ("pre/both",), (0,)) for b in ("majority/a", "majority/b")]
    state = SimpleNamespace(items=items, slots=[], report=SimpleNamespace(boards=[]))
    options = BakeOptions(runs_dir=str(tmp_path / "runs"), results_dir=str(tmp_path / "results"))
    module.owe_boards(options.runs_dir, ["cards/x/lm"], [])  # another queue's
    module.rebuild_boards(state, options, {"majority/a", "majority/b"}, end=time.time() - 1)  # type: ignore[arg-type]
    assert built == [] and "the budget is spent: 2 board(s) not rebuilt yet (majority/a, majority/b)" in (
        capsys.readouterr().out
    )
    assert module.owed_boards(options.runs_dir, items) == {"majority/a", "majority/b"}
    module.rebuild_boards(state, options, module.owed_boards(options.runs_dir, items))  # type: ignore[arg-type]
    assert built == ["majority/a", "majority/b"] and "building results/majority/b/ (2 of 2)" in capsys.readouterr().out
    assert module.read_owed(module.owed_path(options.runs_dir)) == {"cards/x/lm"}
