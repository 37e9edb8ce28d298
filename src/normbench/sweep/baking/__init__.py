"""A bake's parts (the bake itself is :func:`normbench.sweep.bake.bake`): the queue, the runs it wants and where each
stands (:mod:`normbench.sweep.baking.queue`), and the queued runs launched and watched under the time budget
(:mod:`normbench.sweep.baking.launch`)."""
