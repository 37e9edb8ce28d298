"""A new norm's card trains only the new norm's runs: every LayerNorm and RMSNorm run its queue names, on every task,
at the shared learning rate, over the grid and at the baselines' tuned rates, is in the committed run archive, or
(a baseline whose protocol grew: the whole-block RMSNorm, the 5 judging seeds) in the repository's bake queue, which
trains it once for every card."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
import torch
import yaml
from torch import nn

from normbench.archive import load_board
from normbench.archive.board_keys import board_folder, card_key, queues_folder
from normbench.archive.store import Archive
from normbench.cards.make import plan_card
from normbench.cards.protocol import CardProtocol, board_of, card_variant, tasks_with_cards
from normbench.cards.protocol import slug as card_slug
from normbench.judge.tuned import ChoiceNotReady, resolve
from normbench.sweep.baking.queue import Slot, Waiting, load_queue, survey
from normbench.training.config import load_config

REPO = Path(__file__).resolve().parents[2]
RESULTS = REPO / "results"
NEW = "tests.cards.test_baselines:UnseenNorm"


class UnseenNorm(nn.Module):
    """A norm no card has trained: x / (1 + mean |x|), per vector."""

    def __init__(self, d: int) -> None:
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x / (1 + x.abs().mean(-1, keepdim=True))


def finished_grid(task: str) -> str:
    """A published card's learning-rate grid of ``task`` from which the task's ``bench.tuned`` resolves (its choice
    replaced), i.e. whose every run has finished (:func:`normbench.judge.tuned.resolve`), with a choice for both
    baselines: the choice every card's grid makes (the baselines' grid runs are the same runs on every card)."""
    protocol = CardProtocol.of(task)
    spec = load_config(task, protocol.tuned)["bench"]["tuned"]
    for slug in sorted(p.name for p in (RESULTS / "cards").iterdir() if (p / "card.json").is_file()):
        key = card_key(slug, task, "lr")
        if not (board_folder(RESULTS, key) / "leaderboard.json").is_file():
            continue
        try:
            rows = resolve({**spec, "choice": key}, list(load_board(board_folder(RESULTS, key)).by_name), RESULTS)[
                "bases"
            ]
        except ChoiceNotReady:
            continue
        if {protocol.layernorm, protocol.rmsnorm} <= {r["base"] for r in rows if r["chosen"] is not None}:
            return key
    raise AssertionError(f"{task}: no card's learning-rate grid is finished, so no baseline rate is chosen yet")


def card_slots(task: str, tmp_path: Path, tuned: bool) -> tuple[CardProtocol, list[Slot]]:
    """Where each run of a new norm's card on ``task`` stands against the committed archive: its headline and grid
    items, or (``tuned``) its items at the tuned rates, read off a finished grid's choice (the new norm's own grid is
    not trained here; the baselines' rates are the same on every card's grid)."""
    protocol = CardProtocol.of(task)
    queue, items = plan_card(NEW, [task], str(RESULTS), folder=tmp_path / "card")
    config = tmp_path / "card" / f"{task}.yaml"
    if tuned:
        doc = yaml.safe_load(config.read_text(encoding="utf-8"))
        assert doc["presets"][protocol.tuned]["bench"]["tuned"]["choice"] == board_of(task, card_slug(NEW), "lr")
        doc["presets"][protocol.tuned]["bench"]["tuned"]["choice"] = finished_grid(task)
        config.write_text(yaml.safe_dump(doc, sort_keys=False), encoding="utf-8")
    kept = [i for i in load_queue(queue) if (i.preset == protocol.tuned) == tuned]
    waiting: Waiting = []
    slots = survey(kept, Archive(RESULTS), str(tmp_path / "runs"), restore=False, waiting=waiting)
    assert not waiting and {s.item.board for s in slots} == {i.board for i in kept}
    return protocol, slots


def queued_runs(protocol: CardProtocol, tmp_path: Path) -> set[tuple[str, str, int]]:
    """The runs of the repository's bake queue (queues/bake.yaml) that train the baselines of ``protocol``'s task,
    as (task, config hash, seed); items waiting for a grid plan nothing yet."""
    wanted = {protocol.layernorm, protocol.rmsnorm}
    items = [
        i
        for i in load_queue(queues_folder(RESULTS) / "bake.yaml")
        if i.task == protocol.task and wanted & set(i.variants)
    ]
    items = [dataclasses.replace(i, variants=tuple(v for v in i.variants if v in wanted)) for i in items]
    slots = survey(items, Archive(RESULTS), str(tmp_path / "queued"), restore=False, waiting=[])
    return {s.key for s in slots}


def assert_only_the_new_norm_trains(
    protocol: CardProtocol, slots: list[Slot], at_least: int, queued: set[tuple[str, str, int]]
) -> None:
    baselines = [s for s in slots if s.run.variant.split(",")[0] in (protocol.layernorm, protocol.rmsnorm)]
    assert len(baselines) >= at_least
    missing = [
        f"{s.item.board} {s.run.variant} seed {s.run.seed}"
        for s in baselines
        if s.state != "finished" and s.key not in queued
    ]
    assert not missing, f"{len(missing)} baseline runs neither archived nor queued: {missing[:6]}"
    left = {s.run.variant.split(",")[0] for s in slots if s.state != "finished" and s.key not in queued}
    assert left <= {card_variant(NEW, protocol)[0]}


def surveyed(slow: set[str]) -> list[object]:
    """The tasks with cards, those in ``slow`` with the slow tests: surveying a task's whole bake queue plans every
    grid point it names (half a minute to over a minute per task); the tuned-rate survey of the language model and
    SST-2 stays in the default run."""
    return [pytest.param(t, marks=pytest.mark.slow) if t in slow else t for t in tasks_with_cards()]


@pytest.mark.parametrize("task", surveyed({"majority", "lm", "sst2"}))
def test_a_new_norms_card_finds_every_baseline_run_of_its_seeds_and_grid_in_the_archive(
    task: str, tmp_path: Path
) -> None:
    protocol, slots = card_slots(task, tmp_path, tuned=False)
    runs = protocol.new_norm_runs()
    queued = queued_runs(protocol, tmp_path)
    assert_only_the_new_norm_trains(protocol, slots, at_least=2 * (runs["headline"] + runs["grid"]), queued=queued)


@pytest.mark.parametrize("task", surveyed({"majority"}))
def test_a_new_norms_card_finds_the_baselines_runs_at_their_tuned_rates_in_the_archive(
    task: str, tmp_path: Path
) -> None:
    protocol = CardProtocol.of(task)
    try:
        finished_grid(task)
    except AssertionError:  # no card's grid has both baselines chosen yet: their tuned runs wait for the bake's grid
        queue = load_queue(queues_folder(RESULTS) / "bake.yaml")
        tuned = {v for i in queue if i.task == task and i.preset.startswith(protocol.tuned) for v in i.variants}
        grid = {v for i in queue if i.task == task and i.preset.startswith(protocol.grid or "") for v in i.variants}
        assert {protocol.layernorm, protocol.rmsnorm} <= tuned & grid, f"{task}: the baselines' tuning is not queued"
        return
    protocol, slots = card_slots(task, tmp_path, tuned=True)
    assert_only_the_new_norm_trains(
        protocol, slots, at_least=2 * len(protocol.seeds), queued=queued_runs(protocol, tmp_path)
    )


def test_the_docs_count_the_runs_of_a_whole_card_as_the_tasks_declare_them() -> None:
    runs = {task: CardProtocol.of(task).new_norm_runs() for task in tasks_with_cards()}
    text = " ".join((REPO / "docs" / "test-your-norm.md").read_text(encoding="utf-8").split())
    total = sum(sum(r.values()) for r in runs.values())
    majority, lm, sst2 = (runs[t] for t in ("majority", "lm", "sst2"))
    assert f"A whole card trains at most {total} runs of the new norm" in text
    assert f"on the majority task {majority['headline']} seeds, {majority['grid']} grid runs" in text
    assert f"and {majority['tuned']} at the tuned rate" in text
    assert f"on the language model {lm['headline']}, {lm['grid']} (" in text and f"and {lm['tuned']};" in text
    assert f"on SST-2 {sst2['headline']}, {sst2['grid']} (" in text and f"and {sst2['tuned']}." in text
