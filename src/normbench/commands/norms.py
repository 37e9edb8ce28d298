"""``normbench norms``: the norm leaderboard, ``results/norms.md`` (+ ``norms.json``, ``norms-<task>.png``)."""

from __future__ import annotations


def norms(results_dir: str = "results", force: bool = False, dry_run: bool = False) -> None:
    """The norm leaderboard: which norm is better on each task, on equal terms (results/norms.md).

    Nothing is trained: every cell is read from the tuned boards under ``results_dir`` and the report cards
    (:mod:`normbench.boards.norm_board`). A build identical to the published one writes nothing; a build in which
    some cell has fewer finished seeds than the published one writes nothing and says so (``force``: write anyway).

    Args:
        results_dir: the folder holding the boards; the leaderboard is written there.
        force: replace the published leaderboard even where a cell lost finished seeds.
        dry_run: build it and say what would change; write nothing.
    """
    from normbench.render.norm_board_render import publish_norm_board

    print(f"normbench: {publish_norm_board(results_dir, force=force, dry_run=dry_run)}")
