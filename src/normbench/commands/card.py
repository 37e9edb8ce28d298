"""``normbench card``: a report card for a normalization layer (:mod:`normbench.cards`)."""

from __future__ import annotations

import dataclasses

from normbench.sweep.options import BakeOptions


def card(
    norm: str,
    tasks: str | None = None,
    placements: str = "pre",
    train: bool = True,
    options: BakeOptions | None = None,
    dry_run: bool = False,
) -> None:
    """Write the report card of a norm: its measured facts, and its runs on every task beside the published LayerNorm
    and RMSNorm runs, judged against both (``results/cards/<norm>/card.md``; its boards
    ``results/<task>/card-<norm>/``).

    Args:
        norm: a registered norm (``dyt``), an entry point's name, or an import path ``package.module:Class``.
        tasks: comma-separated tasks (default majority,lm,sst2).
        placements: where the norm goes: pre, or pre,post to add post-LN (against the published post-LN LayerNorm
            and RMSNorm runs, at the shared learning rate).
        train: ``false``: train nothing; write the card from the runs the archive holds (its boards rebuilt).
        options: how the card's runs train, as a bake's (:class:`normbench.sweep.options.BakeOptions`).
        dry_run: import and build the norm, print where each of the card's runs stands; train and write nothing.
    """
    from normbench.cards.make import make_card

    bake = dataclasses.asdict(options or BakeOptions())
    make_card(norm, tasks, bake.pop("results_dir"), train=train, dry_run=dry_run, placements=placements, **bake)
