"""The board views' registry: a new view is one module of normbench.render.views and the task YAML that asks for it;
the board is built, drawn, re-read and rendered with it, and a bad spec stops a sweep before it trains."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

import normbench.render.views as views_package
from normbench.archive import dumps_board, parse_board
from normbench.publish.report_kinds import Sweep, draw
from normbench.render.board import render
from normbench.render.views import check_views, views
from normbench.sweep.plan import plan_runs
from tests.factories import make_board, make_variant

NEW_VIEW = '''
"""Seeds per variant (bench.seed_counts): a table and a bar chart."""

from pathlib import Path

from normbench.render.views import View


def check(spec):
    if not isinstance(spec, dict) or not isinstance(spec.get("title"), str):
        raise ValueError(f"bench.seed_counts.title: must be a text, got {spec!r}")


def build(inputs):
    return {"title": inputs.spec["title"], "rows": [[v["name"], len(v["seeds"])] for v in inputs.variants]}


def render(doc):
    if doc is None:
        return []
    return [f"## {doc['title']}", "", "| variant | seeds |", "|---|---|"] + [f"| {n} | {k} |" for n, k in doc["rows"]]


def plot(inputs, doc, out):
    path = Path(out) / "seed_counts.png"
    path.write_bytes(b"png")
    return [path]


VIEW = View("seed_counts", order=40, check=check, build=build, render=render, plot=plot)
'''


@pytest.fixture
def new_view(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """A view module written beside the package's own, found as theirs are."""
    folder = tmp_path / "views"
    folder.mkdir()
    (folder / "seed_counts.py").write_text(textwrap.dedent(NEW_VIEW), encoding="utf-8")
    monkeypatch.setattr(views_package, "__path__", [*views_package.__path__, str(folder)])
    views.cache_clear()
    yield
    views.cache_clear()


def test_the_shipped_views_are_registered_in_their_order() -> None:
    assert [v.key for v in views()] == ["matrix", "width", "grid_plot"]


def test_a_new_view_module_is_built_drawn_kept_and_rendered(new_view: None, tmp_path: Path) -> None:
    run = {"git_commits": ["abc"], "dirty": False, "dates": ["2026-01-01", "2026-01-01"], "wall_time_s": 1.0}
    board = make_board(
        [make_variant("pre/both", [0, 1], provenance=run), make_variant("pre/scale", [0], provenance=run)]
    )
    bench = {"seed_counts": {"title": "Seeds per variant"}}
    plots, added = draw(board, bench, [], Sweep("majority", "quick", tmp_path, 2), ["loss.png"])
    assert [Path(p).name for p in plots] == ["loss.png", "seed_counts.png"]
    assert added["seed_counts"] == {"title": "Seeds per variant", "rows": [["pre/both", 2], ["pre/scale", 1]]}
    built = parse_board(board).with_keys(**added)  # as the writer adds the drawn fields
    read = parse_board(json.loads(dumps_board(built)))  # written and read back: the view is kept
    markdown = render(read)
    assert "## Seeds per variant" in markdown and "| pre/scale | 1 |" in markdown


def test_a_new_views_bad_spec_stops_the_sweep_before_it_trains(new_view: None, tmp_path: Path) -> None:
    config = tmp_path / "mine.yaml"
    config.write_text("extends: majority\nbench:\n  seed_counts: {title: 3}\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"^bench.seed_counts.title: must be a text, got \{'title': 3\}$"):
        plan_runs(config_path=config, preset="quick", runs_dir=str(tmp_path / "runs"))
    with pytest.raises(ValueError, match="bench.matrix.headline: must be a non-empty list"):
        check_views({"matrix": {"headline": []}})
    with pytest.raises(ValueError, match="bench.grid_plot.goal: must be min or max"):
        check_views({"grid_plot": {"goal": "up"}})
    check_views({"grid_plot": True, "matrix": None})
