"""How a run stops before its end and resumes: Ctrl-C and SIGTERM recorded as ``interrupted``, and a bake's deadline,
each leaving a checkpoint the same command continues from."""
