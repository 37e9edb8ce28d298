"""Vectorized seeds: K seeds of one variant trained as one stacked model, one vmapped step for all of them, each seed
keeping what it has when trained alone (its initialisation, data order and Adam state) and its own record and final
checkpoint."""
