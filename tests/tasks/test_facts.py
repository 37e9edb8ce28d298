"""What a task is lives on its registered Task, and agrees with its config: the tasks a report card runs on, how its
unselectable-key analysis forms its key sets, which table of the SST-2 token report shows its runs."""

from __future__ import annotations

import pytest

from normbench.cards.protocol import tasks_with_cards
from normbench.tasks import get_task, registered_tasks, task_names
from normbench.training.config import load_config


def test_the_built_in_tasks_are_registered_in_their_order() -> None:
    assert [t.name for t in registered_tasks()][:3] == ["majority", "lm", "sst2"]
    assert sorted(t.name for t in registered_tasks()) == task_names()


@pytest.mark.parametrize("name", task_names())
def test_a_task_runs_a_report_card_where_its_config_declares_one(name: str) -> None:
    assert get_task(name).card == ("card" in (load_config(name).get("bench") or {}))


def test_a_report_card_runs_on_every_task_in_registration_order() -> None:
    assert tasks_with_cards() == ("majority", "lm", "sst2")


@pytest.mark.parametrize("name", task_names())
def test_a_task_whose_key_sets_have_one_size_names_its_data_field(name: str) -> None:
    field = get_task(name).analysis_set_size
    if field is not None:
        assert isinstance((load_config(name)["data"]["init_args"]).get(field), int)


def test_each_task_says_what_its_key_sets_are() -> None:
    assert {name: get_task(name).analysis_sets for name in ("majority", "lm", "sst2")} == {
        "majority": "sequences",
        "lm": "sequences",
        "sst2": "dev sentences",
    }
    assert [n for n in task_names() if get_task(n).analysis_set_size] == ["lm"]
    assert [n for n in task_names() if get_task(n).sentence_encoder] == ["sst2"]


def test_the_token_report_reads_the_tasks_that_name_its_tables() -> None:
    """Table 4 is the task whose config declares the token report; Table 3 the task its ``bench.token_report``
    names (``lm: {preset, variant, reference}``); a bake keeps the token analyses of exactly these tasks' runs."""
    from normbench.sweep.bake import TOKEN_TASKS

    tables = {name: get_task(name).token_table for name in task_names() if get_task(name).token_table}
    (own,) = [name for name, table in tables.items() if table == 4]
    spec = load_config(own)["bench"]["token_report"]
    assert [name for name, table in tables.items() if table == 3] == [n for n in task_names() if n in spec]
    assert set(tables) == set(TOKEN_TASKS)
    for name in task_names():
        assert ("token_report" in (load_config(name).get("bench") or {})) == (tables.get(name) == 4)
