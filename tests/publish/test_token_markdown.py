"""The token report's Markdown: its seed tables (stand-ins on other sentences marked) and which run's sentences it
prints."""

from __future__ import annotations

from normbench.publish.token_markdown import pick_shown, seed_table
from normbench.publish.token_runs import TokenRun
from tests.token_reports import ANALYSIS, summary


def test_table3_lists_each_seed_and_marks_missing_ones() -> None:
    lines = seed_table("Table 3 over every seed", "lm", {"pre/project": {0: summary(3), 2: summary(1)}}, [0, 1, 2])
    assert "| `pre/project` | 3 / 100 (3.00%) | – | 1 / 100 (1.00%) |" in lines


def test_the_printed_sentences_come_from_the_named_seed_else_the_published_block_else_the_first_seed() -> None:
    analysed = TokenRun("sst2", "none/none", 3, "h", summary(1), {"log_dir": "runs/x"}, ANALYSIS)
    stand_in = TokenRun("sst2", "none/none", 0, "h", summary(2))
    old = {"seed": 0, "config_hash": "h", "lines": ["as published"]}
    make = lambda t: {"seed": t.seed}  # noqa: E731
    assert pick_shown([stand_in, analysed], 3, old, make) == {"seed": 3}
    assert pick_shown([stand_in, analysed], 0, old, make) is old
    assert pick_shown([stand_in, analysed], 0, {**old, "config_hash": "other"}, make) == {"seed": 3}
    assert pick_shown([stand_in], 0, None, make) is None


def test_counts_a_published_report_made_on_other_sentences_are_marked() -> None:
    """The published Table 3 was counted on GLUE's dev text as read; today's runs read it normalised: a seed table
    mixing the two marks the old counts and says on what they were made."""
    lines = seed_table(
        "Table 3 over every seed", "lm", {"pre/project": {0: summary(3), 3: summary(4)}}, [0, 3], {("pre/project", 0)},
        "text_normalization none",
    )  # fmt: skip
    assert "| `pre/project` | 3 / 100 (3.00%) † | 4 / 100 (4.00%) |" in lines
    assert any("other dev sentences (text_normalization none)" in line for line in lines)
    assert not any("†" in line for line in seed_table("t", "lm", {"pre/project": {0: summary(3)}}, [0]))
