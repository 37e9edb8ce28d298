"""What a bake will cost: the runs per task, the tuned-rate runs that wait included, and their time from the
archive's per-run times, a new norm's as a range scaled by its measured speed."""

from __future__ import annotations

from types import SimpleNamespace

from normbench.sweep.baking.estimate import TaskEstimate, estimate, estimate_lines, span, waiting_runs
from normbench.sweep.baking.queue import QueueItem


class Times:
    """Seconds per step: 0.1 for the config ``timed``, 0.2 for the task at 100 steps, none for the LM."""

    def own_per_step(self, slot) -> float | None:  # noqa: ANN001
        return 0.1 if slot.run.config_hash == "timed" else None

    def task_per_step(self, task: str, max_steps: int) -> float | None:
        return 0.2 if task == "majority" and max_steps == 100 else None


def slot(task: str, variant: str, config_hash: str, steps_left: int = 100):  # noqa: ANN201
    item = QueueItem(f"{task}/x", task, "quick", (variant,), (0,))
    run = SimpleNamespace(variant=variant, config_hash=config_hash, trainer={"max_steps": 100})
    return SimpleNamespace(item=item, run=run, steps_left=steps_left)


def test_a_task_s_time_sums_its_runs_own_times_else_the_task_s_and_never_guesses() -> None:
    todo = [slot("majority", "pre/both", "timed"), slot("majority", "pre/mine", "new", 50), slot("lm", "pre/both", "x")]
    rows = estimate(todo, [], Times(), scale=lambda item, variant: 3.0 if variant == "pre/mine" else 1.0)  # type: ignore[arg-type]
    majority, lm = rows
    assert (majority.task, majority.runs, majority.unknown) == ("majority", 2, 0)
    assert majority.seconds == 0.1 * 100 + 0.2 * 50  # the new config at the task's seconds per step
    assert majority.scaled == 0.1 * 100 + 3.0 * 0.2 * 50  # its bound: scaled by the norm's speed; the timed one not
    assert (lm.runs, lm.unknown, lm.seconds) == (1, 1, 0.0)
    assert "no estimate" in lm.text(2) and "about" in majority.text(1)
    lines = estimate_lines(rows, 1, "cpu")
    assert lines[0].startswith("normbench: dry run: time on this machine's platform class (cpu, 1 at a time)")
    assert not any(line.strip().startswith("in all") for line in lines)  # a task with no estimate: no whole


def test_the_runs_waiting_for_their_grid_are_counted_at_most_and_timed_at_the_task_s_rate(monkeypatch) -> None:
    from normbench.sweep.baking import estimate as module

    monkeypatch.setattr(module, "load_config", lambda config, preset: {"trainer": {"max_steps": 100}})
    waiting = [(QueueItem("majority/tuned", "majority", "tuned", ("pre/both", "pre/mine"), (0, 1, 2)), "majority/lr")]
    assert waiting_runs(waiting) == [(waiting[0][0], "majority/lr", 6)]
    (row,) = estimate([], waiting, Times())  # type: ignore[arg-type]
    assert (row.runs, row.waiting, row.seconds) == (6, 6, 6 * 100 * 0.2)
    assert "(6 at the tuned rates)" in row.text(2)


def test_a_span_shows_the_bound_only_where_it_differs() -> None:
    assert span(7200, 7200, 2) == "about 1h00m"
    assert span(600, 1200, 1) == "about 10m00s to 20m00s"
    assert (
        TaskEstimate("sst2", runs=3, unknown=3)
        .text(2)
        .endswith("no estimate (no finished run of the task here to time)")
    )
