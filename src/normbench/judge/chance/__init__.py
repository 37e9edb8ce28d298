"""The random-key null beside every unselectable-key fraction: the same count on i.i.d. Gaussian keys of the same
width and key-set sizes (:mod:`~normbench.judge.chance.null`), the keys a leaderboard column counts, read from a
run's config (:mod:`~normbench.judge.chance.columns`), the nulls drawn to a board's precision and printed beside its
columns (:mod:`~normbench.judge.chance.board`), and the claims judged against them
(:mod:`~normbench.judge.chance.rules`)."""
