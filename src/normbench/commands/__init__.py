"""What each ``normbench`` command does, as library functions (the command line only parses and calls these).

A sweep and its leaderboard: :func:`normbench.sweep.run.run_sweep`; these modules add the commands that read
trained runs or published boards (rebuild, re-judge, compare, cite, the analyses) and prediction.
"""

from normbench.commands.analyses import decompose, geometry, random_grid
from normbench.commands.bake import bake
from normbench.commands.boards import bench, cite, compare, leaderboard, rejudge, tasks
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
    "tasks",
]
