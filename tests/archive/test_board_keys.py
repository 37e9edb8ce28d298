"""Board keys: a board's folder under the results root names it, and its task is read from it."""

from __future__ import annotations

from pathlib import Path

import pytest

from normbench.archive.board_keys import (
    board_folder,
    board_task,
    card_key,
    card_queue_folder,
    key_of_folder,
    migrated_key,
    migrated_text,
    parse_key,
    queues_folder,
    results_root,
    task_key,
)


@pytest.mark.parametrize(
    ("key", "task", "name", "card", "kind"),
    [
        ("majority", "majority", None, None, ""),
        ("majority/lr", "majority", "lr", None, ""),
        ("cards/dyt/majority", "majority", None, "dyt", ""),
        ("cards/dyt/majority/lr", "majority", None, "dyt", "lr"),
        ("cards/mynorm-alpha_init=0.0/sst2/post", "sst2", None, "mynorm-alpha_init=0.0", "post"),
    ],
)
def test_a_key_names_its_task_and_its_folder(
    key: str, task: str, name: str | None, card: str | None, kind: str
) -> None:
    parsed = parse_key(key)
    assert (parsed.task, parsed.name, parsed.card, parsed.kind) == (task, name, card, kind)
    assert board_task(key) == task and board_folder("results", key) == Path("results") / key


@pytest.mark.parametrize(
    "key", ["", "cards", "cards/dyt", "majority/a/b", "cards/a/b/c/d", "../x", "majority/..", "a b"]
)
def test_a_malformed_key_is_one_line_naming_the_forms(key: str) -> None:
    with pytest.raises(ValueError, match=r"^board: .* must be <task>, <task>/<name>, cards/<card>/<task> or ") as exc:
        parse_key(key)
    assert "\n" not in str(exc.value)


def test_keys_are_built_and_read_back(tmp_path: Path) -> None:
    assert (
        card_key("dyt", "majority") == "cards/dyt/majority" and card_key("dyt", "lm", "tuned") == "cards/dyt/lm/tuned"
    )
    assert task_key("majority") == "majority" and task_key("majority", "lr") == "majority/lr"
    assert task_key("majority", "cards/dyt/majority/lr") == "cards/dyt/majority/lr"
    with pytest.raises(ValueError, match=r"^name: 'cards/dyt/lm' is a board of task lm, not of majority$"):
        task_key("majority", "cards/dyt/lm")
    results = tmp_path / "results"
    assert key_of_folder(results, results / "cards" / "dyt" / "lm" / "lr") == "cards/dyt/lm/lr"
    assert key_of_folder(results, results / "cards" / "dyt") is None and key_of_folder(results, tmp_path) is None
    assert results_root(results / "cards" / "dyt" / "lm" / "lr", "lm") == results.resolve()
    assert results_root(results / "lm" / "lr", "lm") == results.resolve()
    assert results_root(results / "lm" / "lr", "majority") is None
    assert queues_folder(results) == tmp_path / "queues" and queues_folder("results") == Path("queues")
    assert card_queue_folder(results, "dyt") == tmp_path / "queues" / "cards" / "dyt"


def test_the_keys_of_the_old_layout_migrate() -> None:
    assert migrated_key("majority/card-dyt") == "cards/dyt/majority"
    assert migrated_key("lm/lr-card-pnorm") == "cards/pnorm/lm/lr"
    assert migrated_key("sst2/post-card-pnorm") == "cards/pnorm/sst2/post"
    assert migrated_key("majority/lr") == "majority/lr" and migrated_key("lm/dyt-judged") == "lm/dyt-judged"
    text = (
        "chosen on results/majority/lr-card-dyt/ (tuned-card-dyt: majority/tuned-card-dyt); "
        "config: results/cards/dyt/majority.yaml, queue results/bake.yaml; results/cards/dyt/card.md"
    )
    assert migrated_text(text, ("majority",)) == (
        "chosen on results/cards/dyt/majority/lr/ (tuned-card-dyt: cards/dyt/majority/tuned); "
        "config: queues/cards/dyt/majority.yaml, queue queues/bake.yaml; results/cards/dyt/card.md"
    )
