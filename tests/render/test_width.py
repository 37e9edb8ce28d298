"""The width report: rows per (base variant, width), loss gaps to the reference, the figure."""

from __future__ import annotations

from pathlib import Path

import pytest

from normbench.render.width import build_width, plot_width, render_width

AXIS = "model.init_args.arch.d_model"


def entry(name: str, loss: list[float], unselectable: list[list[float]]) -> dict:
    metrics = {"final_val_loss": {"per_seed": loss, "mean": sum(loss) / len(loss), "std": 0.0}}
    for i, per_seed in enumerate(unselectable, start=1):
        metrics[f"unselectable_after_L{i}"] = {"per_seed": per_seed, "mean": sum(per_seed) / len(per_seed)}
    return {"name": name, "seeds": list(range(len(loss))), "n_layers": len(unselectable), "metrics": metrics}


def test_rows_gaps_and_figure(tmp_path: Path) -> None:
    names = {
        ("pre/both", 8): "pre/both,arch.d_model=8,arch.n_heads=4",
        ("pre/both", 16): "pre/both,arch.d_model=16,arch.n_heads=8",
        ("pre/project", 8): "pre/project,arch.d_model=8,arch.n_heads=4",
        ("pre/project", 16): "pre/project,arch.d_model=16,arch.n_heads=8",
    }
    variants = [
        entry(names[("pre/both", 8)], [5.0, 5.1], [[0.0, 0.0], [0.0, 0.0]]),
        entry(names[("pre/both", 16)], [4.0, 4.1], [[0.0, 0.0], [0.0, 0.0]]),
        entry(names[("pre/project", 8)], [5.2, 5.3], [[0.2, 0.4], [0.1, 0.3]]),
    ]
    records = [
        {"variant": v["name"], "config": {"model": {"init_args": {"arch": {"d_model": d}}}}}
        for (_, d), v in zip(list(names)[:3], variants, strict=False)
    ]
    planned = {name: [0, 1] for name in names.values()}
    width = build_width({"axis": AXIS, "reference": "pre/both"}, variants, records, planned)
    rows = {(r["base"], r["width"]): r for r in width["rows"]}
    assert [(r["base"], r["width"]) for r in width["rows"]] == list(names)
    project = rows[("pre/project", 8)]
    assert project["metrics"]["unselectable"]["mean"] == pytest.approx(0.25)  # layers averaged seed by seed
    assert project["loss_gap"]["estimate"] == pytest.approx(0.2)
    assert rows[("pre/both", 8)]["loss_gap"] is None
    assert rows[("pre/project", 16)]["metrics"] == {}  # planned, not run: shown, never dropped
    text = "\n".join(render_width(width))
    assert "| `pre/project` | 16 | 0 of 2 | not run |" in text and "+0.200" in text
    assert plot_width(width, tmp_path / "width.png").stat().st_size > 0


def test_a_bad_spec_is_one_line() -> None:
    with pytest.raises(ValueError, match=r"^bench.width.reference: must name a base variant"):
        build_width({"axis": AXIS}, [], [], {})
