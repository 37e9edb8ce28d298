"""The typed JSON documents a board holds, beside its contract (:mod:`normbench.archive.board`): a variant's row and
its provenance (:mod:`~normbench.archive.documents.rows`), the views a sweep's config asks for
(:mod:`~normbench.archive.documents.views`) and the statistics a judged claim holds
(:mod:`~normbench.archive.documents.verdicts`). The judge and the renderers build them; the archive fixes their shape.
"""
