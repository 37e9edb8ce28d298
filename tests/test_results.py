"""normbench.results on the committed leaderboards: load matches the JSON value for value, compare matches the
JSON means and an independent Welch test, bad input gives one-line messages."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from scipy import stats as scipy_stats

from normbench import results

REPO = Path(__file__).resolve().parents[1]
RESULTS = REPO / "results"
MAJORITY = RESULTS / "majority" / "leaderboard.json"
MODERN = RESULTS / "majority" / "modern" / "leaderboard.json"


def board(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text(encoding="utf-8"))


def variant(b: dict[str, Any], name: str) -> dict[str, Any]:
    (v,) = [v for v in b["variants"] if v["name"] == name]
    return v


def one_line_error(excinfo: pytest.ExceptionInfo[BaseException]) -> str:
    message = str(excinfo.value)
    assert message and "\n" not in message, repr(message)
    return message


# ---------------------------------------------------------------------------------------------------------------
# load


def test_load_has_one_row_per_variant_and_seed_with_the_json_values() -> None:
    b = board(MAJORITY)
    df = results.load("majority", results_dir=RESULTS)
    metrics = list(b["metrics"])
    assert len(b["variants"]) >= 2 and metrics
    assert len(df) == sum(len(v["seeds"]) for v in b["variants"]) > 0
    assert list(df.columns) == [*results.ID_COLUMNS, *metrics]
    assert all(df[m].dtype == "float64" for m in metrics)
    compared = missing = 0
    for v in b["variants"]:
        rows = df[df["variant"] == v["name"]]
        assert rows["seed"].tolist() == v["seeds"]
        assert rows["status"].tolist() == [v["run_status"][str(s)] for s in v["seeds"]]
        assert (rows["task"] == b["task"]).all() and (rows["preset"] == b["preset"]).all()
        for m in metrics:
            for got, want in zip(rows[m].tolist(), v["metrics"][m]["per_seed"], strict=True):
                if want is None:
                    assert math.isnan(got)
                    missing += 1
                else:
                    assert got == want
                    compared += 1
    # both kinds of cell were checked (this board has values and metrics not reached / not logged)
    assert compared >= 100 and missing > 0


def test_load_keeps_the_provenance_in_attrs() -> None:
    b = board(MAJORITY)
    df = results.load("majority", results_dir=RESULTS)
    assert df.attrs["task"] == b["task"] == "majority"
    assert df.attrs["preset"] == b["preset"]
    assert df.attrs["generated_at"] == b["generated_at"]
    assert df.attrs["git_commit"] == b["provenance"]["git_commit"] and len(df.attrs["git_commit"]) == 40
    assert Path(df.attrs["source"]).resolve() == MAJORITY.resolve()
    assert df.attrs["variants"] == [v["name"] for v in b["variants"]]
    assert df.attrs["metrics"] == list(b["metrics"])


@pytest.mark.parametrize("source", [MAJORITY, str(MAJORITY), MAJORITY.parent, str(MAJORITY.parent), "majority"])
def test_path_folder_and_key_inputs_equal_the_task_name(source: Any) -> None:
    by_task = results.load("majority", results_dir=RESULTS)
    other = results.load(source, results_dir=RESULTS)
    pd.testing.assert_frame_equal(other, by_task)
    assert Path(other.attrs["source"]).resolve() == MAJORITY.resolve()


def test_name_loads_a_sub_leaderboard() -> None:
    b = board(MODERN)
    df = results.load("majority", name="modern", results_dir=RESULTS)
    assert Path(df.attrs["source"]).resolve() == MODERN.resolve()
    assert df.attrs["preset"] == b["preset"] == "modern"
    assert (df["preset"] == "modern").all() and (df["task"] == "majority").all()
    assert df.attrs["variants"] == [v["name"] for v in b["variants"]]
    assert len(df) == sum(len(v["seeds"]) for v in b["variants"])
    # the sub-leaderboard differs from the task's own bench (a variant only the modern preset has)
    own = results.load("majority", results_dir=RESULTS)
    assert "pre/dyt" in set(df["variant"]) and "pre/dyt" not in set(own["variant"])
    pd.testing.assert_frame_equal(results.load("majority/modern", results_dir=RESULTS), df)
    v = variant(b, "pre/dyt")
    got = df.loc[df["variant"] == "pre/dyt", "test_acc@5000"].tolist()
    assert got == v["metrics"]["test_acc@5000"]["per_seed"] and len(got) >= 2


def test_leaderboards_lists_own_benches_and_presets() -> None:
    keys = results.leaderboards(RESULTS)
    assert {"majority", "majority/modern", "lm", "lm/width"} <= set(keys)
    assert all((RESULTS / k / "leaderboard.json").is_file() for k in keys)


def test_status_and_flags_come_from_the_seed(tmp_path: Path) -> None:
    b = {
        "task": "toy",
        "preset": "quick",
        "generated_at": "2026-01-01T00:00:00Z",
        "provenance": {"git_commit": "abc", "dirty": True},
        "metrics": {"acc": {}, "loss": {}},
        "variants": [
            {
                "name": "pre/x",
                "placement": "pre",
                "norms": {},
                "seeds": [3, 7],
                "status": "mixed",
                "run_status": {"3": "done", "7": "diverged"},
                "flagged": {"7": "diverged at step 40"},
                "metrics": {
                    "acc": {"per_seed": [0.5, None], "n": 1, "mean": 0.5, "std": None},
                    "loss": {"per_seed": [1.0, 2.0], "n": 2, "mean": 1.5, "std": 0.7},
                    "extra": {"per_seed": [9.0, 8.0], "n": 2, "mean": 8.5, "std": 0.7},
                },
            }
        ],
        "claims": [],
    }
    (tmp_path / "leaderboard.json").write_text(json.dumps(b))
    df = results.load(tmp_path)
    assert df["seed"].tolist() == [3, 7]
    assert df["status"].tolist() == ["done", "diverged"]
    assert df["flagged"].tolist() == [None, "diverged at step 40"]
    assert list(df.columns) == [*results.ID_COLUMNS, "acc", "loss", "extra"]
    assert df["acc"].iloc[0] == 0.5 and math.isnan(df["acc"].iloc[1])
    assert df.attrs["git_commit"] == "abc" and df.attrs["dirty"] is True


# ---------------------------------------------------------------------------------------------------------------
# compare


def test_compare_matches_the_json_means_and_a_welch_test() -> None:
    b = board(MAJORITY)
    a_name, b_name = "pre/both", "pre/scale"
    va, vb = variant(b, a_name), variant(b, b_name)
    cmp = results.compare("majority", a_name, b_name, results_dir=RESULTS)
    assert list(cmp.index) == list(b["metrics"]) and list(cmp.columns) == list(results.COMPARE_COLUMNS)
    assert cmp.attrs["difference"] == "b - a" and cmp.attrs["a"] == a_name and cmp.attrs["b"] == b_name
    checked = 0
    for m, row in cmp.iterrows():
        ja, jb = va["metrics"][m], vb["metrics"][m]
        for side, j in (("a", ja), ("b", jb)):
            if j["mean"] is None:
                continue
            assert row[f"mean_{side}"] == pytest.approx(j["mean"], rel=1e-12, abs=1e-15)
            assert row[f"std_{side}"] == pytest.approx(j["std"], rel=1e-12, abs=1e-15)
            assert row[f"n_{side}"] == j["n"] == len(j["per_seed"])
        if ja["mean"] is None or jb["mean"] is None:
            continue
        # the difference is b − a and its interval contains it
        assert row["diff"] == pytest.approx(jb["mean"] - ja["mean"], rel=1e-9, abs=1e-12)
        assert row["ci_low"] < row["diff"] < row["ci_high"]
        # an independent Welch test agrees on the p-value and on significance
        p = scipy_stats.ttest_ind(jb["per_seed"], ja["per_seed"], equal_var=False).pvalue
        assert row["p_value"] == pytest.approx(p, rel=1e-6)
        assert row["significant"] == (row["ci_low"] > 0 or row["ci_high"] < 0) == (p < 0.05)
        checked += 1
    assert checked >= 5
    # test_acc@5000 is a clear gain of pre/scale over pre/both on this board: positive and significant
    assert cmp.loc["test_acc@5000", "diff"] > 0 and cmp.loc["test_acc@5000", "significant"]
    assert not cmp["significant"].all()
    # a metric no seed of either variant logged is NaN, not 0
    assert va["metrics"]["normal_angle"]["n"] == vb["metrics"]["normal_angle"]["n"] == 0
    assert cmp.loc["normal_angle", ["mean_a", "mean_b", "diff", "ci_low", "ci_high", "p_value"]].isna().all()
    assert cmp.loc["normal_angle", "n_a"] == 0


def test_compare_swapped_negates_the_difference_and_accepts_a_frame_and_metrics() -> None:
    df = results.load("majority", results_dir=RESULTS)
    ab = results.compare(df, "pre/both", "pre/scale", metrics=["test_acc@1000", "final_train_loss"])
    ba = results.compare(df, "pre/scale", "pre/both", metrics="test_acc@1000")
    assert list(ab.index) == ["test_acc@1000", "final_train_loss"] and list(ba.index) == ["test_acc@1000"]
    assert ba.loc["test_acc@1000", "diff"] == pytest.approx(-ab.loc["test_acc@1000", "diff"])
    assert ba.loc["test_acc@1000", "ci_low"] == pytest.approx(-ab.loc["test_acc@1000", "ci_high"])
    assert ba.loc["test_acc@1000", "mean_a"] == ab.loc["test_acc@1000", "mean_b"]


def test_compare_on_a_sub_leaderboard() -> None:
    b = board(RESULTS / "lm" / "width" / "leaderboard.json")
    names = [v["name"] for v in b["variants"]][:2]
    cmp = results.compare("lm", *names, name="width", results_dir=RESULTS, metrics=["final_val_loss"])
    want = [variant(b, n)["metrics"]["final_val_loss"]["mean"] for n in names]
    assert cmp.loc["final_val_loss", "mean_a"] == pytest.approx(want[0], rel=1e-12)
    assert cmp.loc["final_val_loss", "mean_b"] == pytest.approx(want[1], rel=1e-12)


@pytest.mark.parametrize(
    ("task", "name", "a", "b"),
    [
        ("majority", None, "pre/both", "pre/scale"),
        ("lm", "modern", "pre/both", "pre/dyt"),  # the modern preset measures no decomposition: mu_* are empty
    ],
)
def test_format_comparison_states_the_direction_and_lists_every_metric(
    task: str, name: str | None, a: str, b: str
) -> None:
    cmp = results.compare(task, a, b, name=name, results_dir=RESULTS)
    lines = results.format_comparison(cmp, a, b).splitlines()
    assert "b - a" in lines[0] and f"a = {a}" in lines[0] and f"b = {b}" in lines[0]
    unmeasured = [m for m in cmp.index if cmp.loc[m, "n_a"] == 0 and cmp.loc[m, "n_b"] == 0]
    for m in cmp.index:
        rows = [ln for ln in lines if ln.startswith(m + " ")]
        if m in unmeasured:
            assert not rows
            continue
        (line,) = rows
        if not math.isnan(cmp.loc[m, "diff"]):
            assert f"{cmp.loc[m, 'diff']:.4g}" in line
    if unmeasured:
        assert lines[-1] == f"not measured by either: {', '.join(unmeasured)}"
    else:
        assert lines[-1].startswith(cmp.index[-1])
    assert task == "majority" or unmeasured


# ---------------------------------------------------------------------------------------------------------------
# errors


def test_unknown_task_lists_the_leaderboards() -> None:
    with pytest.raises(ValueError) as e:
        results.load("no_such_task", results_dir=RESULTS)
    msg = one_line_error(e)
    assert "no_such_task" in msg and "majority" in msg and "lm/width" in msg


def test_unknown_name_lists_the_task_presets() -> None:
    with pytest.raises(ValueError) as e:
        results.load("majority", name="no_such_preset", results_dir=RESULTS)
    msg = one_line_error(e)
    assert msg.startswith("name:") and "no_such_preset" in msg and "modern" in msg


def test_unknown_variant_lists_the_variants() -> None:
    with pytest.raises(ValueError) as e:
        results.compare("majority", "pre/both", "pre/no_such_variant", results_dir=RESULTS)
    msg = one_line_error(e)
    assert msg.startswith("b:") and "pre/no_such_variant" in msg and "pre/scale" in msg and "pre/learned" in msg


def test_unknown_metric_lists_the_metrics() -> None:
    with pytest.raises(ValueError) as e:
        results.compare("majority", "pre/both", "pre/scale", results_dir=RESULTS, metrics=["acc"])
    msg = one_line_error(e)
    assert msg.startswith("metrics:") and "test_acc@1000" in msg


@pytest.mark.parametrize(
    "content", ['{"task": "x", "rows": []}', "[1, 2]", "not json {", '{"variants": [{"seeds": [0]}]}']
)
def test_a_file_that_is_not_a_leaderboard(tmp_path: Path, content: str) -> None:
    path = tmp_path / "leaderboard.json"
    path.write_text(content)
    with pytest.raises(ValueError) as e:
        results.load(path, results_dir=RESULTS)
    msg = one_line_error(e)
    assert "not a leaderboard" in msg and str(path) in msg


def test_a_path_that_is_not_a_leaderboard() -> None:
    with pytest.raises(ValueError) as e:  # a real file, but not a leaderboard
        results.load(REPO / "pyproject.toml", results_dir=RESULTS)
    assert "not a leaderboard" in one_line_error(e)
    with pytest.raises(FileNotFoundError) as e2:  # a real results folder without a leaderboard.json
        results.load(RESULTS / "perf", results_dir=RESULTS)
    msg = one_line_error(e2)
    assert "perf" in msg and "majority/modern" in msg
    with pytest.raises(FileNotFoundError) as e3:
        results.load(RESULTS / "no_such_folder", results_dir=RESULTS)
    assert "no_such_folder" in one_line_error(e3)
    with pytest.raises(ValueError) as e4:  # name= with a path is refused, not ignored
        results.load(MAJORITY.parent, name="modern", results_dir=RESULTS)
    assert one_line_error(e4).startswith("name:")
