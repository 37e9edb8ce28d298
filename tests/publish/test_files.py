"""One publishing rule for every writer under results/: a published board is replaced only by a build that
covers its finished runs and its settings; otherwise nothing is written, and --force replaces it."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from normbench.archive import load_board
from normbench.publish import files as publish
from normbench.publish.files import Refused
from tests.factories import make_board, make_variant

ROOT = Path(__file__).resolve().parents[2]
SETTINGS = {"task": "majority", "preset": "quick", "overrides": [], "grid": [], "config_file": None}


def board(tmp_path: Path, runs: dict[tuple[str, int], str], **settings) -> Path:
    """A leaderboard.json in ``tmp_path`` showing ``runs`` (variant, seed -> config hash)."""
    variants: dict[str, dict] = {}
    for (name, seed), digest in runs.items():
        variants.setdefault(name, make_variant(name, [], digest))["seeds"].append(seed)
    s = {**SETTINGS, **settings}
    doc = make_board(
        list(variants.values()),
        task=s["task"],
        preset=s["preset"],
        sweep={k: s[k] for k in ("overrides", "grid", "config_file")},
    )
    (tmp_path / "leaderboard.json").write_text(json.dumps(doc))
    return tmp_path


FULL = {(v, s): f"hash-{v}" for v in ("pre/both", "pre/scale", "pre/none") for s in (0, 1, 2)}


def test_a_build_that_covers_the_board_replaces_it(tmp_path: Path) -> None:
    out = board(tmp_path, FULL)
    publish.check_leaderboard(out, dict(FULL), dict(SETTINGS))  # the same build again
    publish.check_leaderboard(out, {**FULL, ("pre/scale", 3): "hash-pre/scale", ("post/both", 0): "x"}, dict(SETTINGS))
    publish.check_leaderboard(tmp_path / "nothing-here", {}, dict(SETTINGS))  # nothing published: nothing to protect


def test_a_build_with_fewer_finished_runs_is_refused_naming_them(tmp_path: Path) -> None:
    out = board(tmp_path, FULL)
    with pytest.raises(Refused) as info:
        publish.check_leaderboard(out, {("pre/both", 0): "hash-pre/both"}, dict(SETTINGS))
    assert str(info.value) == (
        f"results_dir: {out / 'leaderboard.json'} holds 9 finished runs; this build has 1 (8 missing: pre/both seed 1, "
        "pre/both seed 2, pre/scale seed 0, pre/scale seed 1, ...); rebuild with every run, write elsewhere with "
        "--results_dir/--name, or pass --force to replace it"
    )
    with pytest.raises(Refused, match="this sweep plans 3 "):  # checked before training, from the plan
        publish.check_leaderboard(out, {k: v for k, v in FULL.items() if k[1] == 0}, dict(SETTINGS), planned=True)
    publish.check_leaderboard(out, {("pre/both", 0): "hash-pre/both"}, dict(SETTINGS), force=True)


def test_a_build_with_other_settings_is_refused(tmp_path: Path) -> None:
    out = board(tmp_path, FULL)
    with pytest.raises(Refused, match=r"built with other settings \(preset 'quick', this build 'paper'\)"):
        publish.check_leaderboard(out, dict(FULL), {**SETTINGS, "preset": "paper"})
    with pytest.raises(Refused, match=r"overrides \[\], this build \['--trainer.max_steps=5'\]"):
        publish.check_leaderboard(out, dict(FULL), {**SETTINGS, "overrides": ["--trainer.max_steps=5"]})
    with pytest.raises(
        Refused, match=r"\(config of pre/scale hash-pre/scale, this build other\); rebuild it with its settings"
    ):
        publish.check_leaderboard(out, {**FULL, ("pre/scale", 1): "other"}, dict(SETTINGS))
    publish.check_leaderboard(out, dict(FULL), {**SETTINGS, "preset": "paper"}, force=True)
    # a board from before sweeps were recorded: its task and preset are its settings
    (out / "leaderboard.json").write_text(json.dumps(make_board([])))
    publish.check_leaderboard(out, {}, {**SETTINGS, "overrides": ["x"]})


@pytest.mark.parametrize("text", ["{", "[]", '{"variants": 3}', '{"variants": [{"name": "a"}]}'])
def test_an_unreadable_board_is_reported_not_replaced(tmp_path: Path, text: str) -> None:
    (tmp_path / "leaderboard.json").write_text(text)
    with pytest.raises(
        Refused,
        match=rf"^results_dir: {tmp_path / 'leaderboard.json'} exists but is unreadable "
        r"\(.*\); restore it, write elsewhere with --results_dir/--name, or pass "
        "--force to replace it$",
    ):
        publish.check_leaderboard(tmp_path, {}, dict(SETTINGS))
    publish.check_leaderboard(tmp_path, {}, dict(SETTINGS), force=True)


def test_a_random_grid_is_replaced_only_by_one_that_contains_it(tmp_path: Path) -> None:
    (tmp_path / "random_grid.json").write_text(
        json.dumps({"ns": list(range(3, 61)), "ds": list(range(3, 16)), "runs": 100, "seed": 0})
    )
    ns, ds = list(range(3, 61)), list(range(3, 16))
    publish.check_random_grid(tmp_path, ns, ds, 100, 0)
    publish.check_random_grid(tmp_path, list(range(1, 80)), list(range(2, 20)), 200, 0)
    with pytest.raises(Refused) as info:
        publish.check_random_grid(tmp_path, ns, list(range(3, 9)), 20, 0)
    assert str(info.value) == (
        f"results_dir: {tmp_path / 'random_grid.json'} holds n = 3..60, d = 3..15, 100 runs per cell, seed 0; "
        "this build has n = 3..60, d = 3..8, 20 runs per cell, seed 0 (d = 9..15 missing, 80 fewer runs per cell); "
        "run a grid that covers it, write elsewhere with --results_dir, or pass --force to replace it"
    )
    with pytest.raises(Refused, match=r"\(n = 3..4 missing, another seed\)"):
        publish.check_random_grid(tmp_path, list(range(5, 61)), ds, 100, 1)
    publish.check_random_grid(tmp_path, [3], [3], 1, 7, force=True)
    (tmp_path / "random_grid.json").write_text('{"ns": [3]}')
    with pytest.raises(Refused, match="exists but is unreadable"):
        publish.check_random_grid(tmp_path, ns, ds, 100, 0)


def test_the_geometry_pictures_are_replaced_only_by_ones_of_the_same_runs(tmp_path: Path) -> None:
    (tmp_path / "geometry.json").write_text(
        json.dumps({"pre/both": {"seed": 0, "config_hash": "a"}, "pre/none": {"seed": 0, "config_hash": "b"}})
    )
    publish.check_geometry(tmp_path, {("pre/both", 0): "a", ("pre/none", 0): "b"})
    with pytest.raises(Refused, match=r"holds 2 finished runs; this build draws 1 \(1 missing: pre/none seed 0\)"):
        publish.check_geometry(tmp_path, {("pre/both", 0): "a"})
    with pytest.raises(Refused, match="other settings"):
        publish.check_geometry(tmp_path, {("pre/both", 0): "a", ("pre/none", 0): "c"})
    publish.check_geometry(tmp_path, {("pre/both", 1): "a"}, force=True)
    (tmp_path / "geometry.json").write_text('{"pre/both": 3}')
    with pytest.raises(Refused, match="exists but is unreadable"):
        publish.check_geometry(tmp_path, {("pre/both", 0): "a"})


def test_the_token_report_is_replaced_only_by_one_that_reads_its_runs(tmp_path: Path) -> None:
    """sst2's Tables 3-4 read sst2 runs and the lm task's runs: losing either is refused."""
    from normbench.publish.token_runs import published_runs
    from normbench.publish.tokens import TOKEN_REPORT

    config = {"bench": {"token_report": {"variant": "none/none"}}}
    (tmp_path / TOKEN_REPORT).write_text(
        json.dumps(
            {
                "sections": {
                    "table4": {"per_seed": {"0": {}, "1": {}}},
                    "table3:pre/project:seed0": {},
                    "table3:pre/both:seed0": {},
                }
            }
        )
    )
    read = lambda doc: published_runs(doc, config)  # noqa: E731
    every = {
        ("sst2 none/none", 0): None,
        ("sst2 none/none", 1): None,
        ("lm pre/project", 0): None,
        ("lm pre/both", 0): None,
    }
    publish.check_report(tmp_path / TOKEN_REPORT, read, every)
    with pytest.raises(
        Refused,
        match=r"holds 4 finished runs; this build has 2 \(2 missing: lm pre/project seed 0, "
        r"lm pre/both seed 0\)",
    ):
        publish.check_report(tmp_path / TOKEN_REPORT, read, {k: v for k, v in every.items() if k[0].startswith("sst2")})


def test_every_published_board_is_covered_by_itself() -> None:
    """The readers understand every committed board: rebuilding one from the same runs replaces it."""
    boards = sorted((ROOT / "results").rglob("leaderboard.json"))
    assert boards
    for path in boards:
        doc = json.loads(path.read_text())
        if "random grid" in str(doc.get("preset")):
            grid = json.loads((path.parent / "random_grid.json").read_text())
            publish.check_random_grid(path.parent, grid["ns"], grid["ds"], grid["runs"], grid["seed"])
            continue
        settings = publish.sweep_settings(doc["task"], doc["preset"], doc.get("sweep"))
        publish.check_leaderboard(path.parent, publish.leaderboard_runs(load_board(path)), settings)
    geometry = json.loads((ROOT / "results" / "majority" / "geometry.json").read_text())
    publish.check_geometry(ROOT / "results" / "majority", publish.geometry_runs(geometry))
    from normbench.publish.token_runs import published_runs
    from normbench.publish.tokens import TOKEN_REPORT

    tokens = ROOT / "results" / "sst2" / TOKEN_REPORT
    config = {"bench": {"token_report": {"variant": "none/none"}}}
    runs = published_runs(json.loads(tokens.read_text()), config)
    assert len(runs) == 15  # Table 4: 5 sst2 seeds; Table 3: 2 lm models x 5 seeds
    publish.check_report(tokens, lambda doc: published_runs(doc, config), runs)


def finish(run) -> None:  # noqa: ANN001 - a normbench.sweep.plan.Run
    """Write a finished record for ``run``: its own resolved config and hash, no checkpoint (nothing to analyse)."""
    from normbench.sweep.plan import quiet_lightning
    from normbench.training.cli import NormbenchCLI
    from normbench.training.run.rundir import record_config_hash

    with quiet_lightning():
        config = NormbenchCLI(args=run.args).resolved_config()
    assert record_config_hash({"config": config}) == run.config_hash
    run.record_path.parent.mkdir(parents=True, exist_ok=True)
    run.record_path.write_text(
        json.dumps({"status": "done", "seed": run.seed, "config": config, "config_hash": run.config_hash, "series": {}})
    )


def test_a_sweep_whose_runs_fail_keeps_the_board_it_would_shrink(tmp_path: Path, monkeypatch) -> None:
    """Refused before training when the plan differs from the board; after training when runs failed."""
    from normbench.sweep import run as pipeline
    from normbench.sweep.backends import Outcome
    from normbench.sweep.folders import sweep_definition, sweep_key
    from normbench.sweep.options import SweepOptions
    from normbench.sweep.plan import plan_runs

    _, runs = plan_runs("majority", "quick", "0-1", ["pre/both"], None, str(tmp_path / "runs"))
    out = tmp_path / "results" / "majority" / "pub"
    definition = sweep_definition("quick", runs, None, None, None)
    out.mkdir(parents=True)
    board(out, {(r.variant, r.seed): r.config_hash for r in runs})
    doc = json.loads((out / "leaderboard.json").read_text())
    (out / "leaderboard.json").write_text(json.dumps({**doc, "sweep_key": sweep_key(definition), "sweep": definition}))
    published = (out / "leaderboard.json").read_bytes()
    trained: list[int] = []

    def execute(planned, **kw) -> Outcome:  # seed 0 finishes, seed 1 fails
        finish(planned[0])
        trained.append(len(planned))
        return Outcome(trained=planned[:1], failed=[(planned[1], "boom")])

    monkeypatch.setattr(pipeline, "execute", execute)
    kw = {
        "seeds": "0-1",
        "variants": ["pre/both"],
        "runs_dir": str(tmp_path / "runs"),
        "results_dir": str(tmp_path / "results"),
        "name": "pub",
        "progress": False,
        "workers": 1,
    }
    with pytest.raises(
        pipeline.SweepFailed,
        match=r"^runs: 1 of 2 failed; .*; results_dir: .* holds 2 finished runs; "
        r"this build has 1 \(1 missing: pre/both seed 1\);.*--force",
    ):
        pipeline.run_sweep(SweepOptions("majority", "quick", **kw))
    assert trained == [2] and (out / "leaderboard.json").read_bytes() == published

    mine = json.loads(published)
    mine["variants"][0]["config_hash"] = "000000000000"  # built from other configs: refused before training
    (out / "leaderboard.json").write_text(json.dumps(mine))
    with pytest.raises(Refused, match="built with other settings \\(config of pre/both 000000000000"):
        pipeline.run_sweep(SweepOptions("majority", "quick", **kw))
    assert trained == [2]


# -- acceptance: the commands in a clone of the repository leave every committed file as it is --


@pytest.fixture
def clone(tmp_path: Path) -> Path:
    """A fresh clone of this repository (its committed results/)."""
    if not (ROOT / ".git").exists() or shutil.which("git") is None:
        pytest.skip("needs the git repository")
    target = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", "--no-hardlinks", str(ROOT), str(target)], check=True, timeout=120)
    return target


def porcelain(repo: Path) -> str:
    return subprocess.run(
        ["git", "status", "--porcelain", "--untracked-files=all"], cwd=repo, check=True, capture_output=True, text=True
    ).stdout


def last_line(stderr: str) -> str:
    return stderr.strip().splitlines()[-1]


def test_leaderboard_with_missing_runs_leaves_the_published_board(
    clone: Path, tmp_path: Path, normbench_in_process
) -> None:
    results, runs = clone / "results", tmp_path / "runs"
    runs.mkdir()
    empty = normbench_in_process(
        "leaderboard", "majority", "--runs_dir", str(runs), "--results_dir", str(results), cwd=tmp_path
    )
    # its runs were published before the run archive kept records: with none here it stands as published
    assert empty.returncode == 0 and "leaderboard.json stands as published: its 18 runs" in empty.stdout
    assert porcelain(clone) == ""

    # 1 of 18 runs trained again here: a replicate of a published run, whose published values stay canonical
    from normbench.sweep.plan import plan_runs

    finish(plan_runs("majority", "quick", [0], ["pre/both"], None, str(runs))[1][0])
    one = normbench_in_process(
        "leaderboard", "majority", "--runs_dir", str(runs), "--results_dir", str(results), cwd=tmp_path
    )
    assert one.returncode == 0 and "leaderboard.json stands as published: its 18 runs" in one.stdout
    assert porcelain(clone) == ""


def test_a_smaller_random_grid_leaves_the_published_one_and_force_replaces_it(
    clone: Path, normbench_in_process
) -> None:
    results = clone / "results"
    small = normbench_in_process("random_grid", "--d_max", "5", "--runs", "5", "--results_dir", str(results), cwd=clone)
    assert small.returncode == 2 and porcelain(clone) == ""
    line = last_line(small.stderr)
    assert line.startswith(
        f"normbench: error: results_dir: {results / 'unselectable' / 'random_grid.json'} holds "
        "n = 3..60, d = 3..15, 100 runs per cell, seed 0; this build has n = 3..60, d = 3..5, "
        "5 runs per cell"
    ) and line.endswith("or pass --force to replace it")

    forced = normbench_in_process(
        "random_grid",
        "--n_max",
        "5",
        "--d_max",
        "4",
        "--runs",
        "2",
        "--progress",
        "false",
        "--force",
        "--results_dir",
        str(results),
        cwd=clone,
    )
    assert forced.returncode == 0, forced.stderr
    grid = json.loads((results / "unselectable" / "random_grid.json").read_text())
    assert grid["ns"] == [3, 4, 5] and grid["ds"] == [3, 4] and grid["runs"] == 2
    assert " M results/unselectable/random_grid.json" in porcelain(clone).splitlines()


def test_a_superseded_board_is_replaced_by_the_same_runs_under_todays_hashes(tmp_path: Path) -> None:
    from normbench.publish import files as publish

    out = tmp_path / "board"
    out.mkdir()
    (out / "leaderboard.json").write_text(
        json.dumps(make_board([make_variant("post/both", [0, 1], "old")], task="sst2", preset="quick"))
    )
    today = {("post/both", 0): "new", ("post/both", 1): "new"}
    with pytest.raises(publish.Refused, match="other settings"):
        publish.check_leaderboard(out, today, {})
    publish.check_leaderboard(out, today, {}, superseded=True)
    with pytest.raises(
        publish.AwaitingReplacements,
        match=r"stands as published: 1 of its 2 runs, trained on a superseded pipeline, has no replacement yet "
        r"\(post/both seed 1; this build has 1 finished\)",
    ):
        publish.check_leaderboard(out, {("post/both", 0): "new"}, {}, superseded=True)


def test_a_superseded_board_stands_until_every_planned_replacement_has_finished(tmp_path: Path) -> None:
    """Superseded runs of a variant the build still plans wait for their replacements (the board is never shown with
    fewer runs); those of a variant it no longer plans (a tuned board's old point) may go; other runs never."""
    from normbench.publish import files as publish

    out = tmp_path / "board"
    out.mkdir()
    old = [make_variant("pre/both", [0, 1], "kept"), make_variant("pre/none", [0, 1], "old")]
    (out / "leaderboard.json").write_text(json.dumps(make_board(old, task="sst2", preset="matrix")))
    finished = {("pre/both", 0): "kept", ("pre/both", 1): "kept"}
    listed = frozenset({"old"})
    with pytest.raises(publish.AwaitingReplacements, match="2 of its 4 runs"):
        publish.check_leaderboard(out, finished, {}, superseded=listed, variants={"pre/both", "pre/none"})
    publish.check_leaderboard(out, finished, {}, superseded=listed, variants={"pre/both"})  # pre/none dropped
    with pytest.raises(publish.Refused, match="1 missing: pre/both seed 1") as refused:
        publish.check_leaderboard(out, {("pre/both", 0): "kept"}, {}, superseded=listed, variants={"pre/both"})
    assert not isinstance(refused.value, publish.AwaitingReplacements)


def test_a_clean_build_replaces_one_from_uncommitted_code_that_says_the_same() -> None:
    volatile = ("provenance", "generated_at")
    dirty = {"claims": [1], "provenance": {"git_commit": "a", "dirty": True}, "generated_at": "then"}
    clean = {"claims": [1], "provenance": {"git_commit": "b", "dirty": False}, "generated_at": "now"}
    assert publish.says_the_same(clean, {**clean, "generated_at": "later"}, volatile)
    assert publish.says_the_same(dirty, {**dirty, "generated_at": "later"}, volatile)
    assert publish.says_the_same(clean, dirty, volatile)  # a dirty build never replaces a clean one for nothing
    assert not publish.says_the_same(dirty, clean, volatile)
    assert not publish.says_the_same(clean, {**clean, "claims": [2]}, volatile)


def test_no_published_report_was_built_from_uncommitted_code() -> None:
    """The SST-2 token report and the cards (boards: tests/publish/test_uncommitted.py)."""
    results = Path(__file__).resolve().parents[2] / "results"
    reports = [*results.glob("*/unselectable_tokens.json"), *results.glob("cards/*/card.json")]
    assert reports
    assert [str(p) for p in reports if publish.built_from_uncommitted_code(json.loads(p.read_text()))] == []
