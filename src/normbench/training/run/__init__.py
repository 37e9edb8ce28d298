"""A run's own files: where it lives and what it is (its directory and config hash), its record, its checkpoints, its
lock, the check that they are its own, and a trained run read back from them."""
