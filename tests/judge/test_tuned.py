"""Claims at a shared and at tuned learning rates (bench.tuned): the view from a choice board, the points a sweep
keeps, every claim judged at both rates, the Markdown and the one-line errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from normbench.archive.board import dumps_board
from normbench.boards import build as builder
from normbench.judge import claims as claims_module
from normbench.judge import tuned
from normbench.judge.claims import board_claims
from normbench.publish import leaderboard as lb
from tests.factories import make_record

RESULTS = Path(__file__).resolve().parents[2] / "results"
METRICS = {"acc": {"series": "test/acc", "at_step": "last"}}
CHOICE = {"axis": "lr", "metric": "acc", "goal": "max", "report": []}
CLAIM = {
    "id": "x.ordering",
    "owner": "normbench",
    "source": "test",
    "statement": "a is more accurate than b",
    "why": "test",
    "metric": "acc",
    "variants": {"first": "pre/a", "second": "pre/b"},
    "rule": {"kind": "ordering", "lower": "second"},
}
NAMES = [f"pre/{b},lr={r}" for b in ("a", "b") for r in ("0.001", "0.003", "0.01")]


def record(variant: str, seed: int, acc: float) -> dict:
    return make_record(variant, seed, series={"test/acc": [[100, acc]]}, config={})


def choice_board(tmp_path: Path, accs: dict[str, list[float]]) -> Path:
    """results/majority/lr/leaderboard.json: a choice over ``lr`` from tuning seeds 100-101."""
    records = [record(name, 100 + s, a) for name, values in accs.items() for s, a in enumerate(values)]
    board = builder.build("majority", "lr", records, {"metrics": METRICS, "choice": CHOICE})
    folder = tmp_path / "majority" / "lr"
    folder.mkdir(parents=True)
    (folder / "leaderboard.json").write_text(dumps_board(board), encoding="utf-8")
    return tmp_path


TUNING = {
    "pre/a,lr=0.001": [0.80, 0.82],
    "pre/a,lr=0.003": [0.90, 0.92],
    "pre/a,lr=0.01": [0.85, 0.86],
    "pre/b,lr=0.001": [0.70, 0.71],
    "pre/b,lr=0.003": [0.75, 0.76],
    "pre/b,lr=0.01": [0.95, 0.96],
}


def test_the_view_names_each_base_shared_and_chosen_point(tmp_path: Path) -> None:
    view = tuned.resolve({"choice": "majority/lr", "shared": 1.0e-3}, NAMES, choice_board(tmp_path, TUNING))
    assert view["axis"] == "lr" and view["shared"] == "0.001" and view["metric"] == "acc"
    a, b = view["bases"]
    assert (a["base"], a["shared"], a["chosen"], a["tuned"]) == ("pre/a", "pre/a,lr=0.001", "0.003", "pre/a,lr=0.003")
    assert a["at_edge"] is False and a["tuning_seeds"] == ["100", "101"] and a["tuning_value"] == pytest.approx(0.91)
    assert b["chosen"] == "0.01" and b["at_edge"] is True
    assert tuned.select(view, [*NAMES, "none/none"]) == [
        "pre/a,lr=0.001",
        "pre/a,lr=0.003",
        "pre/b,lr=0.001",
        "pre/b,lr=0.01",
        "none/none",
    ]


def test_a_base_the_choice_has_not_chosen_trains_neither_point_yet(tmp_path: Path) -> None:
    """Its shared and its tuned point are judged together, once its own grid is whole: none of its runs trains
    before (a shared point alone would be judged beside nothing at its tuned rate)."""
    only_a = {k: v for k, v in TUNING.items() if k.startswith("pre/a")}
    view = tuned.resolve({"choice": "majority/lr", "shared": 0.001}, NAMES, choice_board(tmp_path, only_a))
    b = view["bases"][1]
    assert b["chosen"] is None and b["tuned"] is None and b["waiting"] == "its grid is not trained yet"
    assert [n for n in tuned.select(view, NAMES) if n.startswith("pre/b")] == []


def test_a_base_whose_whole_grid_failed_is_final_with_no_rate_and_keeps_its_shared_point(tmp_path: Path) -> None:
    """Every value failed (a diverged seed at each): the choice is made, and it is none; the shared point is judged
    (its failures counted), the tuned one is "no rate chosen"."""
    from normbench.archive import load_board

    results = choice_board(tmp_path, TUNING)
    path = results / "majority" / "lr" / "leaderboard.json"
    board = load_board(path)
    groups = [
        {**g, "chosen": None, "chosen_variant": None} if g["base"] == "pre/b" else g for g in board.choice["groups"]
    ]
    path.write_text(dumps_board(board.replace(choice={**board.choice, "groups": groups})), encoding="utf-8")
    b = tuned.resolve({"choice": "majority/lr", "shared": 0.001}, NAMES, results)["bases"][1]
    assert b["chosen"] is None and "waiting" not in b
    view = tuned.resolve({"choice": "majority/lr", "shared": 0.001}, NAMES, results)
    assert [n for n in tuned.select(view, NAMES) if n.startswith("pre/b")] == ["pre/b,lr=0.001"]


@pytest.mark.parametrize(
    ("spec", "field", "message"),
    [
        ({"choice": "lr", "shared": 0.001}, "choice", "must name the board"),
        ({"choice": "majority/lr"}, "shared", "must be the grid value"),
        ({"choice": "majority/lr", "shared": 0.001, "metric": "x"}, "metric", "not a setting"),
        ({"choice": "majority/nothing", "shared": 0.001}, "choice", "does not exist; train that board's grid first"),
        ({"choice": "majority/lr", "shared": 0.002}, "shared", "0.002 is not a point of the lr grid"),
    ],
)
def test_bad_specs_are_one_line(tmp_path: Path, spec: dict, field: str, message: str) -> None:
    results = choice_board(tmp_path, TUNING)
    with pytest.raises(ValueError, match=rf"^bench\.tuned\.{field}: ") as info:
        tuned.resolve(spec, NAMES, results)
    assert message in str(info.value) and "\n" not in str(info.value)


def test_a_board_without_a_choice_table_is_refused(tmp_path: Path) -> None:
    board = builder.build("majority", "quick", [record("pre/a,lr=0.001", 0, 0.8)], {"metrics": METRICS})
    (tmp_path / "majority" / "lr").mkdir(parents=True)
    (tmp_path / "majority" / "lr" / "leaderboard.json").write_text(dumps_board(board), encoding="utf-8")
    with pytest.raises(ValueError, match="has no choice table"):
        tuned.resolve({"choice": "majority/lr", "shared": 0.001}, NAMES, tmp_path)


def judging_board(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """Seeds 0-4 at both rates: a ahead of b at the shared rate, b ahead of a at the tuned rates."""
    monkeypatch.setattr(claims_module, "claims_file", lambda name: {"claims": [CLAIM]})
    view = tuned.resolve({"choice": "majority/lr", "shared": 0.001}, NAMES, choice_board(tmp_path, TUNING))
    accs = {
        "pre/a,lr=0.001": [0.80, 0.81, 0.82, 0.80, 0.81],
        "pre/b,lr=0.001": [0.70, 0.71, 0.72, 0.70, 0.71],
        "pre/a,lr=0.003": [0.90, 0.91, 0.92, 0.90, 0.91],
        "pre/b,lr=0.01": [0.95, 0.96, 0.97, 0.95, 0.96],
    }
    records = [record(name, s, a) for name, values in accs.items() for s, a in enumerate(values)]
    bench = {"metrics": METRICS, "claims": "test", "tuned": view}
    return builder.build("majority", "tuned", records, bench), bench


def test_every_claim_is_judged_at_the_shared_and_at_the_tuned_rates(tmp_path: Path, monkeypatch) -> None:
    board, bench = judging_board(tmp_path, monkeypatch)
    (shared,), (at_tuned,) = board.claims, board.tuned_claims
    assert shared.verdict == "reproduced" and at_tuned.verdict == "not reproduced"
    assert shared.measured == pytest.approx({"first": 0.808, "second": 0.708})
    assert at_tuned.measured == pytest.approx({"first": 0.908, "second": 0.958})
    assert shared.rates == {"first": "0.001", "second": "0.001"}
    assert at_tuned.rates == {"first": "0.003", "second": "0.01"}
    assert board.tuned == bench["tuned"]
    # the same function judges a rejudged board: the same verdicts from the board's own values
    again = board_claims(bench, board.to_json()["variants"], {})
    assert [c["verdict"] for c in again.claims + again.tuned] == ["reproduced", "not reproduced"]


def test_a_base_without_a_tuned_point_is_not_run_at_the_tuned_rates(tmp_path: Path, monkeypatch) -> None:
    board, bench = judging_board(tmp_path, monkeypatch)
    variants = [v for v in board.to_json()["variants"] if v["name"] != "pre/b,lr=0.01"]
    bench["tuned"]["bases"][1].update(chosen=None, tuned=None)
    judged = board_claims(bench, variants, {})
    assert judged.claims[0]["verdict"] == "reproduced" and judged.tuned[0]["verdict"] == "not run"
    assert judged.tuned[0]["rates"] == {"first": "0.003"}


def test_the_markdown_shows_the_rates_and_both_verdicts_side_by_side(tmp_path: Path, monkeypatch) -> None:
    board, _ = judging_board(tmp_path, monkeypatch)
    md = lb.render_markdown(board, [])
    assert "## Tuned `lr`" in md
    assert "| `pre/a` | 0.001 | 0.003 | 100, 101 | 0.910 |" in md
    edge = "0.01 (the grid's edge: a value beyond it may be better)"
    assert f"| `pre/b` | 0.001 | {edge} | 100, 101 | 0.955 |" in md
    assert "## Claims at the shared and the tuned `lr`" in md
    row = next(line for line in md.splitlines() if line.startswith("| `x.ordering` |"))
    assert "[**reproduced**](#claim-shared-x-ordering)" in row
    assert "[**not reproduced**](#claim-tuned-x-ordering)" in row and "(at first 0.003, second 0.01)" in row
    assert '<details markdown="1" id="claim-shared-x-ordering">' in md
    assert '<details markdown="1" id="claim-tuned-x-ordering">' in md
    assert "- **learning rates**: first = 0.003, second = 0.01" in md


def test_a_board_without_tuned_rates_renders_as_before(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(claims_module, "claims_file", lambda name: {"claims": [CLAIM]})
    records = [record(v, s, 0.8 - 0.1 * (v == "pre/b") + 0.01 * s) for v in ("pre/a", "pre/b") for s in range(3)]
    board = builder.build("majority", "quick", records, {"metrics": METRICS, "claims": "test"})
    md = lb.render_markdown(board, [])
    assert board.tuned is None and board.tuned_claims is None
    assert "Tuned" not in md and '<details markdown="1" id="claim-x-ordering">' in md


def test_each_base_is_chosen_on_its_own_grid_and_the_board_waits_only_while_none_is(tmp_path: Path) -> None:
    """Each base is tuned on its own budget: a base whose grid is whole is chosen while another still trains (its
    tuned point waits, saying why); the board waits only while no base is chosen, or the choice board is missing."""
    short_b = {k: v for k, v in TUNING.items() if k != "pre/b,lr=0.01"}
    results = choice_board(tmp_path, short_b)
    view = tuned.resolve({"choice": "majority/lr", "shared": 0.001}, NAMES, results)
    a, b = view["bases"]
    assert a["chosen"] == "0.003" and "waiting" not in a
    assert b["chosen"] is None and b["tuned"] is None and b["tuning_seeds"] == []
    assert b["waiting"] == "chosen on 2 of the 3 grid values (not 0.01)"
    assert tuned.select(view, NAMES) == ["pre/a,lr=0.001", "pre/a,lr=0.003"]  # pre/b's two points wait together
    grown = NAMES + ["pre/a,lr=0.03"]
    with pytest.raises(tuned.ChoiceNotReady, match=r"has chosen no lr yet \(pre/a: chosen on 3 of the 4") as e:
        tuned.resolve({"choice": "majority/lr", "shared": 0.001}, grown, results)
    assert e.value.board == "majority/lr" and "\n" not in str(e.value)
    with pytest.raises(tuned.ChoiceNotReady, match="does not exist"):
        tuned.resolve({"choice": "majority/other", "shared": 0.001}, NAMES, results)


def test_a_choice_made_on_a_smaller_grid_than_the_configs_waits_for_the_new_values(tmp_path: Path) -> None:
    """A grid that grew (a rate added to the config) makes the published choice stale, complete as that board is:
    the tuned runs of the bases it grew for wait until the choice is made again on their whole grid."""
    results = choice_board(tmp_path, TUNING)
    grown = NAMES + ["pre/a,lr=0.03", "pre/b,lr=0.03"]
    with pytest.raises(
        tuned.ChoiceNotReady, match=r"chosen no lr yet \(pre/a: chosen on 3 of the 4 grid values \(not 0\.03\)"
    ) as e:
        tuned.resolve({"choice": "majority/lr", "shared": 0.001}, grown, results)
    assert e.value.board == "majority/lr"
    assert tuned.resolve({"choice": "majority/lr", "shared": 0.001}, NAMES, results)["bases"][0]["chosen"] == "0.003"


def test_a_tuned_board_whose_choice_moved_supersedes_the_old_points_with_a_generated_reason(tmp_path: Path) -> None:
    """The choice board chose again (its grid grew): the published tuned board's old tuned point gives way to the new
    one, with a sentence naming the move; a point still chosen, and a declared reason about it, stay as they were."""
    from normbench.publish import files as publish

    view = tuned.resolve({"choice": "majority/lr", "shared": 0.001}, NAMES, choice_board(tmp_path, TUNING))
    was = {**view, "bases": [{**view["bases"][0]}, {**view["bases"][1], "chosen": "0.003", "tuned": "pre/b,lr=0.003"}]}
    names = ["pre/a,lr=0.001", "pre/a,lr=0.003", "pre/b,lr=0.001", "pre/b,lr=0.003"]
    records = [record(n, s, 0.9) for n in names for s in (0, 1)]
    records = [{**r, "config_hash": f"h{names.index(r['variant'])}"} for r in records]
    old = builder.build("majority", "tuned", records, {"metrics": METRICS}).with_keys(tuned=was)
    path = tmp_path / "published.json"
    path.write_text(dumps_board(old), encoding="utf-8")

    bench = tuned.with_rechosen({"tuned": view}, path)
    assert bench["superseded"] == {
        "why": "majority/lr chose again on its grown grid: pre/b lr=0.01 (was 0.003)",
        "configs": ["h3"],
    }
    assert tuned.with_rechosen({"tuned": was}, path) == {"tuned": was}  # the same choices: nothing superseded
    assert tuned.with_rechosen({"tuned": view}, tmp_path / "absent.json") == {"tuned": view}
    declared = {"why": "the seven-rate grid", "configs": ["h3", "elsewhere"]}
    assert tuned.with_rechosen({"tuned": view, "superseded": declared}, path)["superseded"] == {
        "why": "majority/lr chose again on its grown grid: pre/b lr=0.01 (was 0.003)",
        "configs": ["h3", "elsewhere"],
    }
    declared = {"why": "a pipeline change.", "configs": ["h0"]}  # about a config this board shows: its reason stays
    assert tuned.with_rechosen({"tuned": view, "superseded": declared}, path)["superseded"]["why"] == (
        "a pipeline change; majority/lr chose again on its grown grid: pre/b lr=0.01 (was 0.003)"
    )

    # the publishing rule: the old point's runs may be missing from the new build, no other run may
    superseded = publish.superseded_configs(bench)
    old_runs = {(r["variant"], r["seed"]): r["config_hash"] for r in records}
    new = {run: digest for run, digest in old_runs.items() if run[0] != "pre/b,lr=0.003"}
    new |= {("pre/b,lr=0.01", s): "h4" for s in (0, 1)}
    publish.check_runs(path, old_runs, {}, new, {}, "--name", superseded=superseded)
    with pytest.raises(publish.Refused, match="missing: pre/b,lr=0.003 seed 0"):
        publish.check_runs(path, old_runs, {}, new, {}, "--name")


def test_a_headline_board_names_where_its_claims_are_judged_again_and_no_other_board_inherits_it() -> None:
    """``bench.protocol.see_also`` is keyed by preset: the quick board points at its ten-seed and tuned boards;
    quick-10 (which extends quick) points at the tuned board only; a report card's board of the quick preset
    judges no claims and gets none of it."""
    from normbench.boards.paper import build_protocol

    spec = {"notes": ["n"], "see_also": {"quick": ["q1", "q2"], "quick-10": ["t"]}}
    assert build_protocol(spec, {}, [], preset="quick")["notes"] == ["n", "q1", "q2"]
    assert build_protocol(spec, {}, [], preset="quick-10")["notes"] == ["n", "t"]
    assert build_protocol(spec, {}, [], preset="matrix")["notes"] == ["n"]
    assert build_protocol(spec, {}, [], preset="quick", judges_claims=False)["notes"] == ["n"]
    for task in ("majority", "lm", "sst2"):
        board = json.loads((RESULTS / task / "leaderboard.json").read_text(encoding="utf-8"))
        assert any(f"results/{task}/tuned/" in note for note in board["protocol"]["notes"]), task


def test_a_board_judged_at_tuned_rates_waits_for_the_declared_tuning_seeds(tmp_path: Path) -> None:
    """The task declares tuning seeds 100-102: a choice board built from 100-101 has chosen nothing yet, so the board
    judged at its values waits (ChoiceNotReady names the seed); a base's third seed makes its own choice final."""
    records = [record(name, 100 + s, a) for name, values in TUNING.items() for s, a in enumerate(values)]
    bench = {"metrics": METRICS, "choice": {**CHOICE, "rule": "robust", "min_seeds": 3}, "seeds": [100, 101, 102]}
    folder = tmp_path / "majority" / "lr"
    folder.mkdir(parents=True)
    (folder / "leaderboard.json").write_text(
        dumps_board(builder.build("majority", "lr", records, bench)), encoding="utf-8"
    )
    with pytest.raises(tuned.ChoiceNotReady, match=r"chosen no lr yet \(pre/a: waiting for tuning seed 102") as e:
        tuned.resolve({"choice": "majority/lr", "shared": 1.0e-3}, NAMES, tmp_path)
    assert e.value.board == "majority/lr" and "\n" not in str(e.value)
    third_a = [record(name, 102, values[0]) for name, values in TUNING.items() if name.startswith("pre/a")]
    (folder / "leaderboard.json").write_text(
        dumps_board(builder.build("majority", "lr", records + third_a, bench)), encoding="utf-8"
    )
    a, b = tuned.resolve({"choice": "majority/lr", "shared": 1.0e-3}, NAMES, tmp_path)["bases"]
    assert a["tuning_seeds"] == ["100", "101", "102"] and b["tuned"] is None
    assert b["waiting"].startswith("waiting for tuning seed 102")
    third = [record(name, 102, values[0]) for name, values in TUNING.items()]
    (folder / "leaderboard.json").write_text(
        dumps_board(builder.build("majority", "lr", records + third, bench)), encoding="utf-8"
    )
    view = tuned.resolve({"choice": "majority/lr", "shared": 1.0e-3}, NAMES, tmp_path)
    assert view["rule"] == "robust" and view["bases"][0]["tuning_seeds"] == ["100", "101", "102"]
