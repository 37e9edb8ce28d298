"""Training: LightningCLI glue, a run's own files (``run/``), stopping and resuming (``stopping/``), what a run shows
while it trains (``monitoring/``), task configs and the reproducibility contract."""
