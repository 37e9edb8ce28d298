"""The choice of a grid value (bench.choice): rows per value, the argmin of the mean, the Markdown."""

from __future__ import annotations

import pytest

from normbench.boards.build import build
from normbench.judge.choice import build_choice, split_name
from normbench.judge.choice_text import render_choice
from normbench.publish import leaderboard as lb
from tests.factories import make_record

METRICS = {
    "final_val_loss": {"series": "val/loss", "at_step": "last"},
    "analysis_loss": {"series": "test/loss", "at_step": "last"},
}
SPEC = {"axis": "alpha0", "metric": "final_val_loss", "goal": "min", "report": ["analysis_loss"]}


def record(variant: str, seed: int, val: float, test: float) -> dict:
    config = {"model": {"init_args": {"arch": {"n_layers": 1}}}}
    series = {"val/loss": [[10, val]], "test/loss": [[10, test]]}
    return make_record(variant, seed, task="lm", series=series, config=config)


def grid_records() -> list[dict]:
    losses = {"0.5": [6.44, 6.44], "2.0": [6.1, 6.2], "10.0": [6.05, 6.07], "5.0": [6.0, 6.02]}
    return [record(f"pre/dyt,alpha0={a}", s, v, v + 0.1) for a, vs in losses.items() for s, v in enumerate(vs)]


def test_split_name_reads_the_axis_out_of_a_variant_name() -> None:
    assert split_name("pre/dyt,alpha0=2.0", "alpha0") == ("pre/dyt", "2.0")
    assert split_name("pre/dyt,arch.d_model=8,alpha0=1.0", "alpha0") == ("pre/dyt,arch.d_model=8", "1.0")
    assert split_name("pre/dyt", "alpha0") is None


def test_the_choice_is_the_value_with_the_lowest_mean() -> None:
    board = build("lm", "dyt-alpha", grid_records(), {"metrics": METRICS, "choice": SPEC})
    choice = board.choice
    (group,) = choice["groups"]
    assert group["base"] == "pre/dyt" and [r["value"] for r in group["rows"]] == ["0.5", "2.0", "5.0", "10.0"]
    assert group["chosen"] == "5.0" and group["chosen_variant"] == "pre/dyt,alpha0=5.0"
    assert group["rows"][2]["metric"]["mean"] == pytest.approx(6.01)
    assert group["rows"][2]["report"]["analysis_loss"]["mean"] == pytest.approx(6.11)
    md = lb.render_markdown(board, [])
    assert "## Choice of `alpha0`" in md
    assert "| `pre/dyt` | 5.0 | 2 | 6.010 ± 0.014 | 6.110 ± 0.014 | – | **chosen** |" in md
    assert (
        "- `pre/dyt`: `alpha0` = 5.0 (lowest mean `final_val_loss` of the values where no seed diverged or failed" in md
    )
    assert group["at_edge"] is False and "beyond the grid" not in md
    maximum = build_choice({**SPEC, "goal": "max"}, board.to_json()["variants"], METRICS)
    assert maximum["groups"][0]["chosen"] == "0.5" and maximum["groups"][0]["at_edge"] is True


def test_a_choice_at_the_end_of_the_grid_says_so() -> None:
    records = [r for r in grid_records() if "alpha0=5.0" not in r["variant"]]  # 10.0 is now the best and the largest
    board = build("lm", "dyt-alpha", records, {"metrics": METRICS, "choice": SPEC})
    (group,) = board.choice["groups"]
    assert group["chosen"] == "10.0" and group["at_edge"] is True
    assert "It is the grid's largest value: a value beyond the grid may be better." in lb.render_markdown(board, [])


def test_on_an_axis_of_several_keys_the_edge_is_taken_in_each_key() -> None:
    """alpha0 per position (attention;FFN;final; one number: the same in each): 50;20;20 lies inside the grid in every
    key (attention 5-200, the others 5-100) and is no edge; 200;100;100 is the largest in both; 20;5;5 is the
    smallest in the FFN and final keys only, and the board names them."""
    losses = {
        "5.0": 6.3,
        "10.0": 5.7,
        "100.0": 6.2,
        "20.0;5.0;5.0": 6.0,
        "50.0;20.0;20.0": 5.5,
        "200.0;100.0;100.0": 6.4,
    }

    def chosen(best: str) -> tuple[dict, str]:
        recs = [record(f"pre/dyt,alpha0={a}", s, (5.0 if a == best else v) + s / 100, v) for a, v in losses.items()
                for s in (0, 1)]  # fmt: skip
        board = build("lm", "dyt-recipe", recs, {"metrics": METRICS, "choice": SPEC})
        (group,) = board.choice["groups"]
        assert group["chosen"] == best
        return group, lb.render_markdown(board, [])

    group, md = chosen("50.0;20.0;20.0")
    assert group["at_edge"] is False and "edge" not in md
    group, md = chosen("200.0;100.0;100.0")
    assert group["at_edge"] is True
    assert (
        "It lies on the grid's edge (the largest in every key of the grid): a value beyond the grid may be better."
        in md
    )
    group, md = chosen("20.0;5.0;5.0")
    assert group["at_edge"] is True and "its value 2 of 3 is the smallest; its value 3 of 3 is the smallest" in md
    assert "value 1 of 3" not in md
    group, md = chosen("10.0")  # 10 in every key: inside the grid in each
    assert group["at_edge"] is False
    group, md = chosen("5.0")  # 5 in every key: the smallest in each
    assert group["at_edge"] is True and "(the smallest in every key of the grid)" in md


def test_a_value_where_a_seed_diverged_is_not_chosen_and_the_table_says_why() -> None:
    """The best mean over a value's surviving seeds does not win: a diverged seed makes that value unstable, and the
    table names the seed and its step instead of hiding it behind a smaller seed count."""
    records = grid_records()
    diverged = next(r for r in records if r["variant"] == "pre/dyt,alpha0=5.0" and r["seed"] == 1)
    diverged.update(status="diverged", diverged_at_step=261)
    board = build("lm", "dyt-alpha", records, {"metrics": METRICS, "choice": SPEC})
    (group,) = board.choice["groups"]
    row = next(r for r in group["rows"] if r["value"] == "5.0")
    assert row["diverged"] == {"1": 261} and row["metric"]["mean"] == pytest.approx(6.0)  # the lowest mean left
    assert group["unstable"] == ["5.0"] and group["chosen"] == "10.0"
    md = lb.render_markdown(board, [])
    assert "| `pre/dyt` | 5.0 | 2 | 6.000 | 6.100 | seed 1 diverged at step 261 |  |" in md
    assert (
        "5.0 had a lower mean over its other seeds (6.000) but is unstable there (seed 1 diverged at step 261)." in md
    )


def test_no_value_is_chosen_where_a_seed_diverged_at_every_value() -> None:
    records = grid_records()
    for r in records:
        if r["seed"] == 0:
            r.update(status="diverged", diverged_at_step=40)
    board = build("lm", "dyt-alpha", records, {"metrics": METRICS, "choice": SPEC})
    (group,) = board.choice["groups"]
    assert group["chosen"] is None and group["unstable"] == ["0.5", "2.0", "5.0", "10.0"]
    assert "no `alpha0` chosen (a seed diverged or failed at every value trained: 0.5, 2.0, 5.0, 10.0)" in (
        lb.render_markdown(board, [])
    )


def test_each_base_variant_gets_its_own_choice() -> None:
    recs = grid_records() + [record(f"pre/dyt+embscale,alpha0={a}", 0, v, v) for a, v in (("1.0", 5.9), ("5.0", 6.3))]
    recs.append(record("pre/both", 0, 5.3, 5.4))  # not on the grid: not in the choice
    choice = build("lm", "dyt-alpha", recs, {"metrics": METRICS, "choice": SPEC}).choice
    assert {g["base"]: g["chosen"] for g in choice["groups"]} == {"pre/dyt": "5.0", "pre/dyt+embscale": "1.0"}


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ({"metric": "final_val_loss"}, "bench.choice.axis"),
        ({"axis": "alpha0", "metric": "nope"}, "bench.choice.metric: 'nope'"),
        ({"axis": "alpha0", "metric": "final_val_loss", "report": ["nope"]}, "bench.choice.report: 'nope'"),
        ({"axis": "alpha0", "metric": "final_val_loss", "goal": "lowest"}, "bench.choice.goal: must be min or max"),
    ],
)
def test_bad_choice_declarations_are_one_line_errors(spec: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        build("lm", "dyt-alpha", grid_records(), {"metrics": METRICS, "choice": spec})


def test_one_measured_value_is_no_choice() -> None:
    """A grid with one value trained so far chooses nothing and says why."""
    board = build("lm", "dyt-alpha", [record("pre/dyt,alpha0=5.0", 0, 5.86, 5.9)], {"metrics": METRICS, "choice": SPEC})
    (group,) = board.choice["groups"]
    assert group["chosen"] is None and group["measured"] == 1
    assert "no `alpha0` chosen (only one value has a mean `final_val_loss`" in lb.render_markdown(board, [])


# The learning-rate grids' rule (bench.choice.rule: robust) and the tuning budget a task declares.

ACC = {"val_acc": {"series": "val/acc", "at_step": "last"}}
CHANCE = {"metric": "val_acc", "at_most": 0.55}
ROBUST = {"axis": "lr", "metric": "val_acc", "goal": "max", "report": [], "rule": "robust", "min_seeds": 2}
RATES = ("0.0003", "0.0006", "0.001", "0.002", "0.004")


def acc_record(variant: str, seed: int, acc: float) -> dict:
    return make_record(variant, seed, task="sst2", series={"val/acc": [[100, acc]]}, config={})


def robust_board(accs: dict[str, list[float]], spec: dict = ROBUST, seeds: list[int] | None = None):
    """A SST-2-like grid of ``pre/both`` over ``RATES``, tuning seeds 100, 101, ... (accuracy <= 0.55: at chance)."""
    records = [acc_record(f"pre/both,lr={lr}", 100 + s, a) for lr, values in accs.items() for s, a in enumerate(values)]
    names = [f"pre/both,lr={lr}" for lr in RATES]
    bench = {"metrics": ACC, "chance": CHANCE, "choice": spec, "seeds": seeds or [100, 101]}
    return build("sst2", "lr", records, bench, names)


GRID = {  # 2e-3 has the best mean over its seeds, but seed 101 stays at chance at 4e-3
    "0.0003": [0.70, 0.71],
    "0.0006": [0.76, 0.77],
    "0.001": [0.78, 0.785],
    "0.002": [0.80, 0.79],
    "0.004": [0.81, 0.52],
}


def test_a_rate_where_one_tuning_seed_is_at_chance_is_not_chosen_nor_its_neighbour() -> None:
    board = robust_board({**GRID, "0.004": [0.90, 0.52]})  # 4e-3 has the best mean (0.71 would lose anyway: 0.90)
    (group,) = board.choice["groups"]
    assert next(r for r in group["rows"] if r["value"] == "0.004")["collapsed"] == ["101"]
    assert [e["value"] for e in group["excluded"]] == ["0.002", "0.004"]
    assert group["chosen"] == "0.001" and group["final"] is True
    md = lb.render_markdown(board, [])
    assert "Rule `robust`, the same for every variant" in md
    assert "| `pre/both` | 0.004 | 2 | 0.710 ± 0.269 | seed 101 collapsed or at chance | excluded |" in md
    assert "| `pre/both` | 0.002 | 2 | 0.795 ± 0.007 | – | excluded |" in md
    assert "| `pre/both` | 0.001 | 2 | 0.782 ± 0.004 | – | **chosen** |" in md
    assert (
        "Excluded: 0.002 (next to 0.004 in the grid, where a tuning seed failed); "
        "0.004 (seed 101 collapsed or at chance)." in md
    )
    assert "0.002 had a higher mean (0.795 ± 0.007) but is excluded (next to 0.004" in md


def test_the_neighbour_of_a_failing_rate_is_not_chosen_however_good_its_mean() -> None:
    """2e-3 wins its grid by a hair, all its seeds trained; its neighbour 4e-3 has a seed at chance: 2e-3 lies on the
    edge of stability, so the rule chooses 1e-3 (under the stable rule 2e-3 would win, at-chance seeds counting)."""
    robust = robust_board(GRID).choice["groups"][0]
    assert robust["chosen"] == "0.001" and "0.002" in [e["value"] for e in robust["excluded"]]
    stable = robust_board(GRID, {**ROBUST, "rule": "stable"}).choice["groups"][0]
    assert stable["chosen"] == "0.002" and stable["excluded"] == []


def test_a_failing_rate_at_the_grid_end_excludes_one_neighbour_and_a_failing_middle_two() -> None:
    middle = robust_board({**GRID, "0.004": [0.81, 0.80], "0.001": [0.78, 0.50]}).choice["groups"][0]
    assert [e["value"] for e in middle["excluded"]] == ["0.0006", "0.001", "0.002"]
    assert middle["chosen"] == "0.004" and middle["at_edge"] is True
    first = robust_board({**GRID, "0.0003": [0.5, 0.5]}).choice["groups"][0]
    assert [e["value"] for e in first["excluded"]] == ["0.0003", "0.0006", "0.002", "0.004"]


def test_a_rate_not_trained_yet_separates_its_neighbours() -> None:
    """The grid's order is the planned grid's: 1e-3 without runs lies between 6e-4 and 2e-3, so a failing 6e-4 does
    not exclude 2e-3."""
    accs = {k: v for k, v in GRID.items() if k != "0.001"} | {"0.0006": [0.5, 0.77], "0.004": [0.7, 0.7]}
    group = robust_board(accs).choice["groups"][0]
    assert [e["value"] for e in group["excluded"]] == ["0.0003", "0.0006"]
    assert group["chosen"] == "0.002" and group["final"] is False  # 1e-3 has no run yet


def test_every_rate_excluded_chooses_nothing_and_says_so() -> None:
    board = robust_board({lr: [0.8, 0.5] for lr in RATES})
    (group,) = board.choice["groups"]
    assert group["chosen"] is None
    assert "no `lr` chosen (the rule excludes every value trained)." in lb.render_markdown(board, [])


def test_a_grid_short_of_its_declared_tuning_seeds_is_not_final() -> None:
    """The budget declares tuning seeds 100-102 (at least 3 a rate): with 100-101 trained the choice leads, it does not
    choose, and the board says which seed it waits for."""
    spec = {**ROBUST, "min_seeds": 3}
    board = robust_board(GRID, spec, seeds=[100, 101, 102])
    (group,) = board.choice["groups"]
    assert group["final"] is False and group["chosen"] == "0.001"
    assert [m["lacking"] for m in group["missing"]] == [["102"]] * 5
    md = "\n".join(render_choice(board.choice))  # every planned run finished: only the budget is short
    assert "**The tuning budget is not spent yet: nothing is chosen.**" in md and "**chosen**" not in md
    assert "| `pre/both` | 0.001 | 2 | 0.782 ± 0.004 | – | **leading** |" in md
    assert "`lr` = 0.001 leads so far" in md
    assert (
        "Not final: waiting for tuning seed 102 (at every value; the budget: seeds 100-102, at least 3 per value)."
        in md
    )
    assert (
        "Tuning budget (declared once by the task, the same for every variant): 5 values of `lr` (0.0003 to 0.004)"
        in md
    )
    third = [acc_record(f"pre/both,lr={lr}", 102, 0.78) for lr in RATES]
    records = [acc_record(f"pre/both,lr={lr}", 100 + s, a) for lr, v in GRID.items() for s, a in enumerate(v)]
    bench = {"metrics": ACC, "chance": CHANCE, "choice": spec, "seeds": [100, 101, 102]}
    done = build("sst2", "lr", records + third, bench).choice["groups"][0]
    assert done["final"] is True and done["missing"] == []


def test_min_seeds_counts_where_no_tuning_seeds_are_declared() -> None:
    records = [acc_record(f"pre/both,lr={lr}", 100 + s, a) for lr, v in GRID.items() for s, a in enumerate(v)]
    variants = build("sst2", "lr", records, {"metrics": ACC}).to_json()["variants"]
    choice = build_choice({**ROBUST, "min_seeds": 3}, variants, ACC)
    assert choice["groups"][0]["final"] is False and choice["groups"][0]["missing"][0]["have"] == 2


BUDGET_YAML = """
seeds: [100, 101, 102]
metrics: {val_acc: {series: val/acc, at_step: last}, val_loss: {series: val/loss, at_step: last}}
grid: {model.init_args.optim.lr: [3.0e-4, 6.0e-4, 1.0e-3, 2.0e-3, 4.0e-3]}
grid_labels: {model.init_args.optim.lr: lr}
choice: {axis: lr, metric: val_acc, goal: max, report: [val_loss], rule: robust, min_seeds: 3}
"""


def test_the_tuning_budget_is_read_from_the_task_yaml() -> None:
    import yaml

    from normbench.judge.choice import budget

    found = budget(yaml.safe_load(BUDGET_YAML))
    assert found["seeds"] == ["100", "101", "102"] and found["min_seeds"] == 3 and found["rule"] == "robust"
    assert found["values"] == [3.0e-4, 6.0e-4, 1.0e-3, 2.0e-3, 4.0e-3] and found["goal"] == "max"


def test_sst2_tunes_on_three_seeds_with_the_robust_rule_and_every_task_declares_its_budget() -> None:
    from normbench.judge.choice import budget
    from normbench.training.config import load_config

    budgets = {task: budget(load_config(task, "lr")["bench"]) for task in ("majority", "lm", "sst2")}
    assert {t: b["rule"] for t, b in budgets.items()} == dict.fromkeys(budgets, "robust")
    assert budgets["sst2"]["min_seeds"] == 3 and budgets["sst2"]["seeds"] == ["100", "101", "102"]
    assert all(len(b["seeds"]) >= b["min_seeds"] >= 2 for b in budgets.values())


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (("choice", "min_seeds", 0), "bench.choice.min_seeds: must be a whole number of tuning seeds >= 1, got 0"),
        (("choice", "min_seeds", "three"), "bench.choice.min_seeds: must be a whole number"),
        (("choice", "min_seeds", 4), "bench.choice.min_seeds: 4 tuning seeds per value, but bench.seeds declares 3"),
        (("choice", "rule", "best"), "bench.choice.rule: must be stable or robust, got 'best'"),
        (("choice", "goal", "up"), "bench.choice.goal: must be min or max"),
        (("choice", "metric", "acc"), "bench.choice.metric: 'acc' is not a leaderboard metric"),
        ((None, "seeds", "100-102"), "bench.seeds: the tuning seeds must be a list of whole numbers"),
        (
            (None, "grid_labels", {"model.init_args.optim.lr": "rate"}),
            "bench.grid_labels: no grid key is labelled 'lr'",
        ),
        ((None, "grid", {"model.init_args.optim.lr": [1.0e-3]}), "bench.grid.model.init_args.optim.lr: a choice needs"),
    ],
)
def test_a_malformed_budget_is_a_one_line_error_naming_the_field(edit: tuple, message: str) -> None:
    import re

    import yaml

    from normbench.judge.choice import budget

    bench = yaml.safe_load(BUDGET_YAML)
    where, key, value = edit
    (bench[where] if where else bench)[key] = value
    with pytest.raises(ValueError, match=re.escape(message)) as caught:
        budget(bench)
    assert "\n" not in str(caught.value)
