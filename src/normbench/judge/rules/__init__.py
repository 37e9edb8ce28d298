"""The claim rules, one module per kind (``values``, ``ratio``, ``ordering``, ``positive_zero``, ``equivalence``,
``all_zero``, ``attention_feed``, ``stability``, and ``grid`` for a random-grid board), with the seeds a
steps-to-threshold rule censors (:mod:`~normbench.judge.rules.censored`); :mod:`~normbench.judge.rules.registry`
maps each kind to its function and :func:`normbench.judge.claims.judge` is the one entry point that applies them."""
