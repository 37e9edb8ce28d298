"""Which results folder a sweep writes: only the task's own bench replaces results/<task>/."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from normbench.sweep.folders import results_folder
from tests.factories import make_board, make_variant

CONFIG = {"default_preset": "quick", "bench": {"seeds": [0, 1, 2], "variants": {"pre/both": {}, "pre/scale": {}}}}


def folder(**kw):
    args = {
        "config": CONFIG,
        "preset": "quick",
        "seeds": None,
        "variants": None,
        "overrides": None,
        "grid": None,
        "name": None,
        **kw,
    }
    return results_folder(**args)


def test_only_the_shipped_config_at_its_defaults_is_the_tasks_own_bench() -> None:
    assert folder() is None
    assert folder(seeds="0-2", variants=["pre/both", "pre/scale"]) is None  # the defaults, spelled out
    assert folder(preset="paper") == "paper"
    assert folder(name="mine") == "mine"
    smoke = folder(overrides=["--trainer.max_steps=20"], variants=["pre/both"], seeds="0")
    assert smoke.startswith("quick-") and smoke != folder(overrides=["--trainer.max_steps=30"])


def test_a_config_file_of_ones_own_gets_a_folder_named_after_it() -> None:
    assert folder(config_file="/somewhere/my majority.yaml") == "my-majority"
    assert folder(config_file="exp.yaml", overrides=["--trainer.max_steps=20"]).startswith("exp-quick-")
    assert folder(config_file="exp.yaml", name="given") == "given"


def test_a_folder_stays_with_the_command_that_wrote_it_across_code_versions(tmp_path) -> None:
    import json

    import pytest

    from normbench.sweep.folders import check_results_owner, sweep_definition, sweep_key
    from normbench.sweep.plan import Run

    runs = [Run("pre/both", 0, [], config_hash="new-code-hash"), Run("pre/none", 0, [], config_hash="x")]
    key = sweep_key(sweep_definition("geometry", runs, None, None, None))
    # written by an older version (run keys differed, no `sweep` block): the same preset, variants and seeds own it
    (tmp_path / "leaderboard.json").write_text(
        json.dumps(
            make_board(
                [make_variant("pre/both", [0]), make_variant("pre/none", [0])],
                preset="geometry",
                sweep_key="old-hash-key",
            )
        )
    )
    check_results_owner(tmp_path, key, "geometry", runs)
    with pytest.raises(ValueError, match="holds the leaderboard of another sweep"):
        check_results_owner(tmp_path, key, "geometry", runs[:1])
    # written with a definition: only the same definition owns it, whatever the code's run keys
    (tmp_path / "leaderboard.json").write_text(json.dumps(make_board(sweep_key=key, sweep={})))
    check_results_owner(
        tmp_path,
        sweep_key(
            sweep_definition(
                "geometry", [Run("pre/both", 0, [], config_hash="other"), Run("pre/none", 0, [])], None, None, None
            )
        ),
        "geometry",
        runs,
    )
    with pytest.raises(ValueError, match="another sweep"):
        check_results_owner(
            tmp_path,
            sweep_key(sweep_definition("geometry", runs, ["--trainer.max_steps=5"], None, None)),
            "geometry",
            runs,
        )


def test_a_tuned_sweep_is_named_by_its_base_variants_and_owns_its_board_named_by_old_points(tmp_path) -> None:
    """A board judged at tuned rates is the same sweep whatever its choice board chose: its definition names the
    base variants (as its command does), and a board written when the definition named the chosen points is its own;
    a board of other base variants is not."""
    import json

    from normbench.sweep.folders import check_results_owner, sweep_definition, sweep_key
    from normbench.sweep.plan import Run

    bench = {"bench": {"tuned": {"choice": "majority/lr", "shared": 0.001}}}

    def runs_at(*names: str) -> list:
        return [Run(n, s, [], config=bench) for n in names for s in (0, 1)]

    now = runs_at("pre/both,lr=0.001", "pre/both,lr=0.006", "pre/scale,lr=0.001", "pre/scale,lr=0.025")
    definition = sweep_definition("tuned", now, None, None, None)
    assert definition["variants"] == ["pre/both", "pre/scale"]
    then = {
        **definition,
        "variants": ["pre/both,lr=0.001", "pre/both,lr=0.006", "pre/scale,lr=0.001", "pre/scale,lr=0.006"],
    }
    (tmp_path / "leaderboard.json").write_text(json.dumps(make_board(sweep_key=sweep_key(then), sweep=then)))
    check_results_owner(tmp_path, sweep_key(definition), "tuned", now, definition)
    other = runs_at("pre/both,lr=0.001", "pre/both,lr=0.006", "pre/none,lr=0.001", "pre/none,lr=0.025")
    other_definition = sweep_definition("tuned", other, None, None, None)
    with pytest.raises(ValueError, match="another sweep"):
        check_results_owner(tmp_path, sweep_key(other_definition), "tuned", other, other_definition)
    untuned = [Run(r.variant, r.seed, []) for r in now]  # the same points, not judged at tuned rates: named by points
    assert sweep_definition("tuned", untuned, None, None, None)["variants"] == then["variants"][:2] + [
        "pre/scale,lr=0.001",
        "pre/scale,lr=0.025",
    ]


@pytest.mark.parametrize("task", ["majority", "lm", "sst2"])
def test_the_published_leaderboard_is_still_the_default_bench(task: str) -> None:
    """Other sweeps (the matrix, presets) add variants to a task's YAML; the task's own bench must keep its
    sweep and its runs, or `results/<task>/` would no longer be what its command trains."""
    from normbench.sweep.folders import sweep_definition, sweep_key
    from normbench.sweep.plan import plan_runs

    board = json.loads((Path(__file__).resolve().parents[2] / "results" / task / "leaderboard.json").read_text())
    config, runs = plan_runs(task, board["preset"])
    assert sweep_key(sweep_definition(board["preset"], runs, None, None, None)) == board["sweep_key"]
    from normbench.publish.files import superseded_configs

    published = {v["name"]: v["config_hash"] for v in board["variants"]}
    superseded = superseded_configs(config.get("bench") or {}) or frozenset()
    if superseded is True:  # every published run superseded: the same runs, under today's pipeline's hashes
        assert {r.variant for r in runs} == set(published)
        assert all(r.config_hash != published[r.variant] for r in runs)
        return
    assert {r.variant for r in runs} == set(published)
    assert {r.variant: r.config_hash for r in runs if published[r.variant] not in superseded} == {
        name: digest for name, digest in published.items() if digest not in superseded
    }


def test_a_dry_run_says_which_runs_resume_and_which_restart(tmp_path, capsys) -> None:
    """An unfinished run resumes only from a checkpoint; without one it is trained again from the start."""
    from normbench.sweep.plan import Run
    from normbench.sweep.run import print_plan
    from normbench.training.run.rundir import LAST_CHECKPOINT

    states = {
        "done": "finished",
        "diverged": "finished",
        "running": "to restart",
        "resumable": "to resume",
        "corrupt": "to restart",
        "new": "to train",
    }
    runs = []
    for seed, name in enumerate(states):
        record = tmp_path / f"seed{seed}" / "record.json"
        if name != "new":
            record.parent.mkdir()
            record.write_text(
                "{"
                if name == "corrupt"
                else json.dumps({"status": "running" if name == "resumable" else name, "series": {}})
            )
        if name in ("resumable", "corrupt"):  # a checkpoint beside an unreadable record is not resumed
            (record.parent / LAST_CHECKPOINT).parent.mkdir(parents=True)
            (record.parent / LAST_CHECKPOINT).write_bytes(b"")
        runs.append(Run(variant="pre/both", seed=seed, args=[], record_path=record))
    print_plan(runs, "majority", "quick", None, workers=2)
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("normbench: dry run of majority (preset quick): 6 runs, 2 at a time")
    assert [line.split("\t")[2] for line in lines[1:]] == list(states.values())


def test_a_board_whose_dropped_variant_is_declared_superseded_is_still_this_sweeps(tmp_path) -> None:
    """A card whose named variant was chosen again (pre/x replaced by pre/y) owns its board when its config declares
    pre/x's config hash superseded; without that sentence, or with another hash, the board is another sweep's."""
    import json

    from normbench.sweep.folders import check_results_owner, sweep_definition, sweep_key
    from normbench.sweep.plan import Run

    published = make_board(
        [make_variant("pre/both", [0, 1], config_hash="b"), make_variant("pre/x", [0, 1], config_hash="old")],
        preset="quick",
        sweep_key="then",
        sweep={},
    )
    (tmp_path / "leaderboard.json").write_text(json.dumps(published))

    def runs(bench: dict) -> list:
        return [Run(v, s, [], config_hash=h, config={"bench": bench}) for v, h in (("pre/both", "b"), ("pre/y", "new"))
                for s in (0, 1)]  # fmt: skip

    declared = runs({"superseded": {"why": "pre/y is the card's variant now", "configs": ["old"]}})
    check_results_owner(tmp_path, sweep_key(sweep_definition("quick", declared, None, None, None)), "quick", declared)
    for bench in ({}, {"superseded": {"why": "another", "configs": ["other"]}}):
        with pytest.raises(ValueError, match="another sweep"):
            check_results_owner(tmp_path, "now", "quick", runs(bench))
