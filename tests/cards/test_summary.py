"""A card's summary: each value as ``mean ± std (n)`` to the std's second digit, with its variant's failed seeds."""

from __future__ import annotations

import pytest

from normbench.cards.summary import fmt, value_text


@pytest.mark.parametrize(
    ("metric", "shown"),
    [
        ({"mean": 0.93731, "std": 0.00088391, "n": 10}, "0.93731 ± 0.00088 (n = 10)"),
        ({"mean": 1031.2, "std": 116.4, "n": 10}, "1031 ± 116 (n = 10)"),
        ({"mean": 73.453, "std": 3.259, "n": 10}, "73.5 ± 3.3 (n = 10)"),
        ({"mean": 5.2281, "std": 0.0, "n": 3}, "5.2281 ± 0.0000 (n = 3)"),
        ({"mean": 5.2281, "std": None, "n": 1}, "5.228 (n = 1)"),
        ({"mean": -1e-5, "std": 0.01, "n": 3}, "0.000 ± 0.010 (n = 3)"),
        ({"mean": 0.5, "std": 1e-18, "n": 3}, "0.5000000000 ± 0.0000000000 (n = 3)"),
        ({"mean": 0.5, "std": float("inf"), "n": 3}, "0.5 ± inf (n = 3)"),
        ({"mean": None, "note": "not run"}, "not run"),
        (None, "–"),
    ],
)
def test_a_card_value_shows_its_std_to_two_digits_and_the_mean_to_the_same_place(metric: dict, shown: str) -> None:
    assert fmt(metric) == shown


def test_a_value_says_its_failed_seeds_once() -> None:
    """Beside a mean, its variant's failed seeds; a value that is only a note (no seed finished) keeps the note alone."""
    row = {"mean": 0.9, "std": 0.01, "n": 7}
    assert value_text(row, [3, 10]) == "0.900 ± 0.010 (n = 7); 3 of 10 seeds failed"
    assert value_text(row, None) == "0.900 ± 0.010 (n = 7)"
    gone = {"mean": None, "note": "no seed finished without diverging"}
    assert value_text(gone, [10, 10]) == "no seed finished without diverging"
    assert value_text(None, [2, 2]) == "–; 2 of 2 seeds failed"
