"""``normbench card``: a report card for a normalization layer (:mod:`normbench.cards`)."""

from __future__ import annotations

from normbench.sweep.options import BakeOptions


def card(
    norm: str,
    tasks: str | None = None,
    placements: str = "pre",
    options: str | None = None,
    bake_options: BakeOptions | None = None,
    dry_run: bool = False,
) -> None:
    """A report card for a norm: its facts and its runs on every task against LayerNorm and RMSNorm.

    The card holds the norm's measured facts, and its runs on every task beside the published LayerNorm and RMSNorm
    runs, judged against both (``results/cards/<norm>/card.md``; its boards ``results/cards/<norm>/<task>/``).

    Args:
        norm: a registered norm (``dyt``), an entry point's name, or an import path ``package.module:Class``.
        tasks: comma-separated tasks (default majority,lm,sst2).
        placements: where the norm goes: pre, or pre,post to add post-LN (against the published post-LN LayerNorm
            and RMSNorm runs, at the shared learning rate).
        options: the norm's constructor keywords in every slot, comma-separated key=value (values read as YAML,
            e.g. alpha_init=0.0); part of its runs' identity and of its card's name (also --norm_options).
        bake_options: how the card's runs train, as a bake's (:class:`normbench.sweep.options.BakeOptions`; ``--train
            false`` writes the card from the runs the archive holds, its boards rebuilt; ``--pages true`` also
            rewrites the project's pages from it: its docs page, the cards index, the norm leaderboard; by default
            the card writes under its own folder only, and its runs into the archive).
        dry_run: import and build the norm, print its card's folder, the probe's result, every run it trains and the
            time per task on this machine; train and write nothing.
    """
    from normbench.cards.make import make_card

    make_card(norm, tasks, bake_options, dry_run=dry_run, placements=placements, options=options)
