"""The key-set report: its spec check, metrics, table (paper values in a column of their own) and figure."""

from __future__ import annotations

from pathlib import Path

import pytest

from normbench.boards.paper import build_tables
from normbench.render.board_sections.paper import render_table
from normbench.run_analyses import key_sets

SPEC = {
    "sizes": [128, 64],
    "sequences": 10,
    "paper_column": "paper (768-1024 keys)",
    "rows": [
        {"label": "w/o scaling", "variant": "pre/project", "where": "after", "paper": [51.0, 32.2]},
        {"label": "LayerNorm before its norm", "variant": "pre/both", "where": "before"},
    ],
}


@pytest.mark.parametrize(
    "bad, field",
    [({"sizes": []}, "sizes"), ({"sizes": [64, 1]}, "sizes"), ({"sizes": [64], "sequences": 0}, "sequences")],
)
def test_bad_specs_name_the_field(bad: dict, field: str) -> None:
    with pytest.raises(ValueError, match=f"bench.key_sets.{field}"):
        key_sets.check_spec(bad)


def test_metrics_read_the_named_series() -> None:
    metrics = key_sets.metrics([64, 128], n_layers=2)
    assert len(metrics) == 2 * 2 * 2
    assert metrics["unselectable_after_k128_L2"] == {
        "series": "analysis/keys128/unselectable_after/L2",
        "at_step": "last",
    }


def variants() -> dict:
    def metric(values: list[float]) -> dict:
        return {"mean": sum(values) / len(values), "std": 0.0, "per_seed": values}

    return {
        "pre/project": {
            "metrics": {
                "unselectable_after_k64_L1": metric([0.1, 0.1]),
                "unselectable_after_k128_L1": metric([0.2, 0.2]),
                "unselectable_after_k64_L2": metric([0.05, 0.05]),
            }
        }
    }


def test_table_has_one_row_per_layer_and_the_paper_apart() -> None:
    spec = key_sets.table_spec(SPEC, n_layers=2)
    assert spec["columns"] == ["k64", "k128"]  # sorted sizes
    (table,) = build_tables({"key_sets": spec}, variants())
    first, second = table["rows"][:2]
    assert (first["label"], first["paper"]) == ("w/o scaling, L1", 51.0)
    assert [c["mean"] for c in first["measured"]] == pytest.approx([10.0, 20.0])
    assert second["measured"][1]["mean"] is None  # not measured: n/a, never 0
    md = "\n".join(render_table(table))
    assert "| model | k64 | k128 | paper (768-1024 keys) |" in md
    assert "| w/o scaling, L1 (`pre/project`) | 10.0 ± 0.0 | 20.0 ± 0.0 | 51 |" in md
    assert "| w/o scaling, L2 (`pre/project`) | 5.0 ± 0.0 | n/a | 32.2 |" in md
    assert "| LayerNorm before its norm, L1 (`pre/both`) | n/a | n/a | – |" in md


def test_figure_is_a_png(tmp_path: Path) -> None:
    path = key_sets.plot_key_sets(variants(), SPEC, n_layers=2, path=tmp_path / "key_sets.png")
    assert path.read_bytes()[:4] == b"\x89PNG"
