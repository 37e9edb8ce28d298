"""How far replicates of one run drift apart: ``results/reproducibility.{md,json}``, generated from the archive.

For every published board, every run it shows (variant, config hash, seed) and every replicate of that run in the
run archive trained on another platform than the values the board shows, each metric of the board is read off the
replicate's series and archived analyses (the board's own metric spec) and compared with the published per-seed
value. Per metric, the table gives the largest absolute drift, in units of the declared cross-platform tolerance
(:func:`normbench.training.reproducibility.tolerance`) and of the smallest seed std of the boards compared.

The rule the tolerances are held to: each at least 3x the largest drift measured (on two CPU vendors, and a GPU
where one ran), and at most a tenth of the seed std of every board. The table says, per metric, whether the drift
measured so far allows it; a metric where both cannot hold is chaotic and compared by distribution.

The parts: :mod:`~normbench.boards.replicates.rows` (the rows of ``reproducibility.json``),
:mod:`~normbench.boards.replicates.compare` (the values compared, the reported drift and the seeds' spread),
:mod:`~normbench.boards.replicates.drift` (per metric, the drift against its tolerance) and
:mod:`~normbench.boards.replicates.report` (the files written); ``python -m normbench.boards.replicates [RESULTS_DIR]``
writes them.
"""
