"""Boards are views of the run archive: each headline board, rebuilt from the committed archive alone (a fresh clone,
no runs directory, no corpus), comes out byte for byte as committed, and no other file under ``results/`` changes."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def files(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in root.rglob("*") if p.is_file()}


@pytest.mark.slow  # the language model's board takes minutes: its matched nulls are drawn again
@pytest.mark.parametrize("task", ["majority", "lm", "sst2"])
def test_a_rebuild_from_the_archive_alone_leaves_the_published_results(
    task: str,
    tmp_path: Path,
    normbench_in_process,  # noqa: ANN001
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # no corpus, and no hub: what a board reads of its data comes from the archive's data facts
    monkeypatch.setenv("NORMBENCH_DATA_DIR", str(tmp_path / "no-corpora"))
    for offline in ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE"):
        monkeypatch.setenv(offline, "1")
    results = tmp_path / "results"  # beside no runs/, as in a fresh clone; paths the boards print are relative
    shutil.copytree(REPO / "results", results)
    before = files(results)
    done = normbench_in_process("leaderboard", task, "--results_dir=results", "--runs_dir=runs", cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    after = files(results)
    assert sorted(name for name in before.keys() | after.keys() if before.get(name) != after.get(name)) == []


def values_and_verdicts(results: Path) -> dict[str, object]:
    """Every board under ``results`` as what it claims: each variant's per-seed values of every metric, and each
    claim's verdict (the shared-rate, tuned-rate and against-chance claims)."""
    from normbench.archive import load_board

    out: dict[str, object] = {}
    for path in sorted(results.rglob("leaderboard.json")):
        if "archive" in path.relative_to(results).parts:
            continue
        board = load_board(path)
        claims = [*board.claims, *(board.tuned_claims or ()), *(board.against_chance or ())]
        out[str(path.parent.relative_to(results))] = {
            "variants": {v.name: {m: metric.per_seed for m, metric in v.metrics.items()} for v in board.variants},
            "verdicts": sorted((c.id, c.verdict) for c in claims),
        }
    return out


@pytest.mark.slow  # every queued board, cards included: most of an hour where the random-key nulls are not cached
def test_rebuilding_every_board_from_the_archive_keeps_its_values_and_verdicts_and_writes_no_byte(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The bake queue names every published board (the task boards and every card's): rebuilt from the committed
    archive alone, each keeps its values and verdicts, and no file under ``results/`` changes (so a rebuild adds no
    object to the repository's history)."""
    from normbench.sweep.bake import bake
    from normbench.sweep.options import BakeOptions

    monkeypatch.setenv("NORMBENCH_DATA_DIR", str(tmp_path / "no-corpora"))
    monkeypatch.setenv("NORMBENCH_TRUST_RECORD_CODE", "1")  # the cards' queue configs name the example norms
    for offline in ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE"):
        monkeypatch.setenv(offline, "1")
    for folder in ("results", "queues", "examples"):
        shutil.copytree(REPO / folder, tmp_path / folder)
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))  # examples.* as the command line finds them
    before, claimed = files(tmp_path / "results"), values_and_verdicts(tmp_path / "results")
    bake("queues/bake.yaml", BakeOptions(nice=0, results_dir="results", runs_dir="runs", train=False))
    assert values_and_verdicts(tmp_path / "results") == claimed
    after = files(tmp_path / "results")
    assert sorted(name for name in before.keys() | after.keys() if before.get(name) != after.get(name)) == []
