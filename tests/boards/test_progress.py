"""Runs in progress on a board: the steps planned by a protocol, and the rows."""

from __future__ import annotations

from normbench.boards.progress import planned_steps, render_progress


def test_planned_steps_of_the_paper_protocol_and_of_a_step_budget() -> None:
    paper = {
        "trainer": {"max_steps": -1, "max_epochs": 1000},
        "data": {"init_args": {"num_sequences": 100000, "test_fraction": 0.2, "batch_size": 6000}},
    }
    assert planned_steps(paper) == 14000  # 1000 epochs of ceil(80,000 / 6000) = 14 steps
    assert planned_steps({"trainer": {"max_steps": 5000}}) == 5000
    assert planned_steps({"trainer": {"max_epochs": 3}, "data": {"init_args": {}}}) is None


def test_a_run_in_progress_is_a_row_with_its_step_and_platforms() -> None:
    rows = [
        {
            "variant": "pre/both",
            "seed": 0,
            "step": 8500,
            "of": 14000,
            "platforms": ["gpu-nvidia-h200", "cpu-amd-epyc-avx2-t1"],
            "checkpoint_archived": True,
        }
    ]
    text = "\n".join(render_progress(rows))
    assert (
        "| `pre/both` | 0 | step 8,500 of 14,000 | `gpu-nvidia-h200`, then `cpu-amd-epyc-avx2-t1` | archived |" in text
    )
    assert render_progress([]) == []


def test_a_run_continued_here_names_the_platforms_of_its_archived_segments(tmp_path) -> None:
    import json

    import torch

    from normbench.archive.store import Archive
    from normbench.boards.progress import in_progress

    gpu = {"cpu": "Intel(R) Xeon(R)", "cpu_capability": "AVX512", "threads": 4, "gpu": "NVIDIA H200"}
    cpu = {"cpu": "AMD EPYC", "cpu_capability": "AVX2", "threads": 1, "gpu": None}
    started = tmp_path / "gpu"
    (started / "checkpoints").mkdir(parents=True)
    record = {
        "task": "majority",
        "variant": "pre/both",
        "seed": 0,
        "config_hash": "abc123",
        "status": "interrupted",
        "provenance": {"dirty": False, "threads": 4, "platform": gpu},
        "series": {"train/loss_step": [[100, 0.5]]},
    }
    (started / "record.json").write_text(json.dumps(record))
    torch.save({"global_step": 100}, started / "checkpoints" / "last.ckpt")
    archive = Archive(tmp_path / "results")
    archive.add(started, checkpoint=True)
    here = tmp_path / "runs" / "seed0"
    here.mkdir(parents=True)
    local = {**record, "provenance": {"dirty": False, "threads": 1, "platform": cpu}, "final_step": 150}
    (here / "record.json").write_text(json.dumps(local))

    class Run:
        variant, seed, config_hash = "pre/both", 0, "abc123"
        record_path = here / "record.json"
        config = {"trainer": {"max_steps": 1000}}

    (row,) = in_progress("majority", [Run()], archive, set())
    assert (row["step"], row["of"]) == (150, 1000)
    assert row["platforms"] == ["gpu-nvidia-h200", "cpu-amd-epyc-avx2-t1"] and row["checkpoint_archived"]
