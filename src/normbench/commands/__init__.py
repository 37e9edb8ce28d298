"""What each ``normbench`` command does, as library functions (the command line only parses and calls these).

A sweep and its leaderboard (:func:`sweep`, :func:`bench`: :func:`normbench.sweep.run.run_sweep`); the commands that
read trained runs or published boards (rebuild, re-judge, compare, cite, the analyses), bakes, cards and prediction.
Each function's signature is its command's options and its docstring its help; :data:`normbench.cli.COMMANDS` names
them. The command line's own parts live here too: an entry of that table (:mod:`~normbench.commands.entry`), a command
line's words before its parser reads them (:mod:`~normbench.commands.argv`) and the process around a command, its
errors ending in one line (:mod:`~normbench.commands.process`).
"""

from normbench.commands.analyses import decompose, geometry, random_grid
from normbench.commands.bake import bake
from normbench.commands.boards import bench, cite, compare, leaderboard, rejudge, sweep, tasks
from normbench.commands.card import card
from normbench.commands.norms import norms
from normbench.commands.predict import predict

__all__ = [
    "bake",
    "bench",
    "card",
    "cite",
    "compare",
    "decompose",
    "geometry",
    "leaderboard",
    "norms",
    "predict",
    "random_grid",
    "rejudge",
    "sweep",
    "tasks",
]
