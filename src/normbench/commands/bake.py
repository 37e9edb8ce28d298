"""``normbench bake``: train the bake queue's runs under a time budget (:mod:`normbench.sweep.bake`)."""

from __future__ import annotations

from normbench.sweep.options import BakeOptions

QUEUE = "queues/bake.yaml"  # normbench.sweep.bake.QUEUE (imported when the bake runs: torch)


def bake(queue: str = QUEUE, bake_options: BakeOptions | None = None, dry_run: bool = False) -> None:
    """Train the bake queue's runs within a time budget, into the run archive (`normbench bake --budget 60`).

    The queued runs the published boards want train in priority order; finished ones, and unfinished ones with their
    checkpoints, go into the run archive, and the boards whose runs changed are rebuilt.

    Args:
        queue: the queue file (``queues/bake.yaml``: a list of board, task, preset, variants, seeds).
        bake_options: how the runs train (:class:`normbench.sweep.options.BakeOptions`: ``--budget``, ``--gpus``, ...).
        dry_run: print where each queued run stands; train nothing.
    """
    from normbench.sweep.bake import bake as bake_queue

    bake_queue(queue, bake_options or BakeOptions(), dry_run=dry_run)
