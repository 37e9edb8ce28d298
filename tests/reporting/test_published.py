"""Stand-in records: runs published before the archive kept records, shown from the boards that published them."""

from __future__ import annotations

from types import SimpleNamespace

from normbench.reporting.canonical import Shown
from normbench.reporting.published import stand_in, value_of


def shown(board: str, seeds: list[int], metrics: dict) -> Shown:
    return Shown(board, "2026-11-01T00:00:00Z", {"seeds": seeds, "status": "done", "metrics": metrics})


def test_a_metric_the_earliest_board_lacks_is_read_from_a_later_board_of_the_same_run() -> None:
    """The earliest board that shows a run may not have run an analysis (its preset did not ask for it); the value
    a later board of the same run and seed shows is the run's, so a stand-in keeps it instead of losing it."""
    run = SimpleNamespace(variant="pre/both", seed=1, config_hash="h", config={})
    first = shown(
        "lm/width",
        [0, 1],
        {
            "loss": {"per_seed": [5.0, 5.1]},
            "mu_i@out": {"per_seed": [None, None]},
            "steps_to_0.2": {"per_seed": [None, None], "note": "not reached by step 5000"},
        },
    )
    later = shown(
        "lm",
        [1, 2],
        {
            "loss": {"per_seed": [9.9, 9.8]},
            "mu_i@out": {"per_seed": [0.3, 0.4]},
            "steps_to_0.2": {"per_seed": [None, None]},
            "heads": {"per_seed": [0.93, 0.94]},
        },
    )
    record = stand_in("lm", run, first, [later])
    assert value_of(record, "loss") == (5.1, None)  # the earliest board's value stands
    assert value_of(record, "mu_i@out") == (0.3, None)  # filled from the later board, seed 1's
    assert value_of(record, "heads") == (0.93, None)
    assert value_of(record, "steps_to_0.2") == (None, None)
    assert record["published"]["notes"] == {"steps_to_0.2": "not reached by step 5000"}
    assert record["published"]["board"] == "lm/width"
    assert value_of(stand_in("lm", run, first), "mu_i@out") == (None, None)
