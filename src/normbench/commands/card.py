"""``normbench card``: a report card for a normalization layer (:mod:`normbench.cards`)."""

from __future__ import annotations


def card(
    norm: str,
    tasks: str | None = None,
    budget: float | None = None,
    gpus: str | None = None,
    workers: int | None = None,
    nice: int = 10,
    runs_dir: str = "runs",
    results_dir: str = "results",
    uncommitted: bool = False,
    train: bool = True,
) -> None:
    """Write the report card of a norm: its measured facts, and its runs on every task beside the published LayerNorm
    and RMSNorm runs, judged against both (``results/cards/<norm>/card.md``; its boards
    ``results/<task>/card-<norm>/``).

    Args:
        norm: a registered norm (``dyt``), an entry point's name, or an import path ``package.module:Class``.
        tasks: comma-separated tasks (default majority,lm,sst2).
        budget: minutes of training (default: until every run is done); runs started are checkpointed at the end, and
            the same command continues them.
        gpus: comma-separated GPU ids; ``workers`` runs per GPU.
        workers: concurrent runs (default: one per CPU core, 4 per GPU with ``gpus``).
        nice: CPU priority increment of the runs (default 10: trains in the background; 0: normal).
        runs_dir: where the runs train.
        results_dir: the results root: the run archive, the boards and the cards.
        uncommitted: archive runs trained from uncommitted code and show them on the card's boards (which say so).
        train: ``false``: train nothing; write the card from the runs the archive holds (its boards rebuilt).
    """
    from normbench.cards.make import make_card

    make_card(
        norm,
        tasks,
        results_dir,
        budget=budget,
        gpus=gpus,
        workers=workers,
        nice=nice,
        runs_dir=runs_dir,
        uncommitted=uncommitted,
        train=train,
    )
