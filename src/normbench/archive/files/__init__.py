"""The run archive's files: read as untrusted input, bounded and never following a link out of it
(:mod:`normbench.archive.files.reading.reading`), and a replicate folder's files written as the archive writes them
(:mod:`normbench.archive.files.reading.writing`)."""
