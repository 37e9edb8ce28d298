"""Sweeps: planning (variant x grid x seed), backends (in-process, subprocesses, GPUs, shards), stacked seeds."""
