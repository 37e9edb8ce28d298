"""Training: LightningCLI glue, the run directory, records, checkpoint/resume, the monitor callback."""
