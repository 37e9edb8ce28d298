"""``normbench bake``: train the bake queue's runs under a time budget (:mod:`normbench.sweep.bake`)."""

from __future__ import annotations

QUEUE = "results/bake.yaml"  # normbench.sweep.bake.QUEUE (imported when the bake runs: torch)


def bake(
    queue: str = QUEUE,
    budget: float | None = None,
    gpus: str | None = None,
    workers: int | None = None,
    nice: int = 10,
    runs_dir: str = "runs",
    results_dir: str = "results",
    uncommitted: bool = False,
    dry_run: bool = False,
) -> None:
    """Train the queued runs the published boards want, in priority order, within a time budget; add them to the run
    archive (finished, or unfinished with their checkpoints) and rebuild the boards whose runs changed.

    Args:
        queue: the queue file (``results/bake.yaml``: a list of board, task, preset, variants, seeds).
        budget: minutes of training (default: until the queue is done); every run started is checkpointed at the end.
        gpus: comma-separated GPU ids; ``workers`` runs per GPU (default 4 per GPU).
        workers: concurrent runs (default: one per CPU core, 4 per GPU with ``gpus``).
        nice: CPU priority increment of the bake and its runs (default 10: trains in the background; 0: normal).
        runs_dir: where the runs train.
        results_dir: the results root: the run archive (``archive/``) and the boards.
        uncommitted: archive runs trained from uncommitted code and show them on the rebuilt boards (which say so).
        dry_run: print where each queued run stands; train nothing.
    """
    from normbench.sweep.bake import bake as bake_queue

    bake_queue(queue, budget, gpus, workers, nice, runs_dir, results_dir, uncommitted, dry_run)
