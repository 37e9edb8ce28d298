"""Training: the LightningCLI over the task configs (``cli``) and one run trained to its record (``fit``), a run's own
files (``run/``), stopping and resuming (``stopping/``), what a run shows while it trains (``monitoring/``), task
configs and the reproducibility contract."""
