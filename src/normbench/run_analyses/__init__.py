"""Analyses of a trained run that read its checkpoint or data, cached beside its record."""
