"""results/reproducibility.md: the drift between archived replicates and the published per-seed values."""

from __future__ import annotations

import json
from pathlib import Path

from normbench.archive.store import Archive
from normbench.boards.replicates.compare import comparisons
from normbench.boards.replicates.drift import summary
from normbench.boards.replicates.report import render, write_report

RESULTS = Path(__file__).parents[3] / "results"


def board(folder: Path, per_seed: list[float]) -> None:
    """A published board (a valid :class:`Board`) of one variant whose two seeds show ``per_seed``."""
    folder.mkdir(parents=True)
    metric = {"per_seed": per_seed, "n": 2, "mean": sum(per_seed) / 2, "std": 0.1}
    doc = {
        "task": "majority",
        "preset": "quick",
        "generated_at": "2026-01-01T00:00:00Z",
        "provenance": {},
        "metrics": {"final_train_loss": {"series": "train/loss_epoch", "at_step": "last"}},
        "reproducibility": {"platforms": [{"cpu": "AMD EPYC", "cpu_capability": "AVX2", "threads": 1}]},
        "variants": [
            {
                "name": "pre/both",
                "placement": "pre",
                "norms": {},
                "status": "done",
                "config_hash": "abc123",
                "seeds": [0, 1],
                "metrics": {"final_train_loss": metric},
            }
        ],
        "claims": [],
    }
    (folder / "leaderboard.json").write_text(json.dumps(doc))


def replicate(tmp_path: Path, results: Path, seed: int, loss: float) -> None:
    run = tmp_path / f"run{seed}"
    run.mkdir()
    platform = {"cpu": "Intel(R) Xeon(R)", "cpu_capability": "AVX512", "threads": 1, "gpu": None}
    record = {
        "task": "majority",
        "variant": "pre/both",
        "seed": seed,
        "config_hash": "abc123",
        "status": "done",
        "final_step": 10,
        "provenance": {"dirty": False, "threads": 1, "platform": platform},
        "series": {"train/loss_epoch": [[10, loss]]},
    }
    (run / "record.json").write_text(json.dumps(record))
    Archive(results).add(run)


def test_the_drift_of_each_metric_in_tolerances_and_seed_stds(tmp_path: Path) -> None:
    results = tmp_path / "results"
    board(results / "majority", [0.5, 0.6])
    # the board's runs were published before the archive: its values are canonical, the archived runs replicates
    (results / "archive" / "majority").mkdir(parents=True)
    (results / "archive" / "majority" / "published.json").write_text(json.dumps({"runs": {"abc123": [0, 1]}}))
    replicate(tmp_path, results, 0, 0.5)
    replicate(tmp_path, results, 1, 0.6 + 3e-6)
    rows = comparisons(results)
    assert [(r["seed"], r["replicate_platform"]) for r in rows] == [(0, "cpu-intel-xeon-avx512-t1")] * 1 + [
        (1, "cpu-intel-xeon-avx512-t1")
    ]
    spreads = [
        {
            "board": "majority",
            "task": "majority",
            "variant": "pre/both",
            "metric": "val_loss",
            "mean": 0.6,
            "std": 1e-3,
            "max_abs": 0.6,
        }
    ]
    rows = [{**r, "metric": "val_loss"} for r in rows]  # a metric held to its tolerance (1e-5 relative)
    (row,) = summary(rows, [], spreads)
    assert row["compared"] == 2 and row["bit_identical"] == 1 and row["vendors"] == ["Intel"]
    assert abs(row["max_drift"] - 3e-6) < 1e-12 and abs(row["needed"] - 9e-6) < 1e-12
    assert abs(row["drift_in_tolerances"] - 3e-6 / (1e-5 * 0.6)) < 1e-6
    assert row["ceiling"] == 1e-4 and row["status"] == "tolerance below 3x the drift"  # 6e-6 allowed < 9e-6
    assert "| `val_loss` | 2 | 1 |" in render(rows, [row])
    reported = [
        {
            "platform": "cpu-amd-epyc (reported)",
            "task": "majority",
            "preset": None,
            "runs": "seed 0",
            "pattern": "val_*",
            "absolute": None,
            "relative": 1e-6,
            "at_least": False,
            "note": "",
        }
    ]
    (row,) = summary(rows, reported, spreads)  # a smaller reported drift: the archive's stays the largest
    assert row["vendors"] == ["AMD", "Intel"] and abs(row["max_drift"] - 3e-6) < 1e-12
    reported[0]["relative"] = 1e-4  # 6e-5 reported: 1.8e-4 needed, above the ceiling: no tolerance can hold
    (row,) = summary(rows, reported, spreads)
    assert row["status"] == "tolerance below 3x the drift" and row["needed"] > row["ceiling"]
    assert "## Reported drift" in render(rows, [row], reported)
    chaos = [{**r, "metric": "val_acc", "chaotic": "why"} for r in rows]  # compared on chaotic configs only
    assert [r["metric"] for r in summary(rows + chaos, [], spreads)] == ["val_loss"]


def test_the_committed_report_is_generated_from_the_archive(tmp_path: Path) -> None:
    import shutil

    shutil.copytree(RESULTS, tmp_path / "results")
    write_report(tmp_path / "results")
    for name in ("reproducibility.md", "reproducibility.json"):
        assert (tmp_path / "results" / name).read_text() == (RESULTS / name).read_text(), name


def test_a_replicates_archived_decomposition_is_compared_with_the_published_shares(tmp_path: Path) -> None:
    """The decomposition's shares (mu_i@out ...) are read off a replicate's archived decomposition.json, as the board
    read them off its own run's."""
    results = tmp_path / "results"
    board(results / "majority", [0.5, 0.6])
    doc = json.loads((results / "majority" / "leaderboard.json").read_text())
    doc["metrics"]["mu_i@out"] = {"series": "decomposition/output/i", "at_step": "last"}
    doc["variants"][0]["metrics"]["mu_i@out"] = {"per_seed": [0.1175, 0.15], "n": 2, "mean": 0.13375, "std": 0.02}
    (results / "majority" / "leaderboard.json").write_text(json.dumps(doc))
    (results / "archive" / "majority").mkdir(parents=True)
    (results / "archive" / "majority" / "published.json").write_text(json.dumps({"runs": {"abc123": [0, 1]}}))
    replicate(tmp_path, results, 0, 0.5)
    shares = {"embed": {"i": 1.0, "h": 0.0}, "L1": {"i": 0.11752, "h": 0.8}}
    (rep,) = Archive(results).replicates("majority", "abc123", 0)
    (rep.path / "decomposition.json").write_text(json.dumps({"output_layer": "L1", "layers": shares}))
    rows = {r["metric"]: r for r in comparisons(results)}
    assert sorted(rows) == ["final_train_loss", "mu_i@out"]
    assert (rows["mu_i@out"]["published"], rows["mu_i@out"]["replicate"]) == (0.1175, 0.11752)
