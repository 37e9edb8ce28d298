"""``normbench predict``: a trained sst2 run's predictions of a GLUE-layout file."""

from __future__ import annotations


def predict(
    run: str,
    tsv: str,
    out: str = "SST-2.tsv",
    batch_size: int = 256,
    accelerator: str = "auto",
    force: bool = False,
) -> None:
    """Predict the sentences of a GLUE-layout file with a trained sst2 run; write GLUE's submission format.

    The file is GLUE's unlabelled ``test.tsv`` (``index<TAB>sentence``) or a labelled file
    (``sentence<TAB>label`` or ``label<TAB>sentence``); with labels, the accuracy is printed too.

    Args:
        run: the run's folder (``runs/sst2/<label>-<hash>/seed<k>``) or one of its checkpoints.
        tsv: the sentences, a GLUE-layout TSV file.
        out: the predictions file (``index<TAB>prediction``; GLUE names SST-2's ``SST-2.tsv``).
        batch_size: sentences per batch.
        accelerator: Lightning's accelerator (``auto``, ``cpu``, ``gpu``, ...).
        force: replace ``out`` even when it exists and is not an earlier predictions file, or lies under
            ``results/`` (refused otherwise, before anything is predicted).
    """
    from normbench.training.predict import predict_file  # torch: not needed by `normbench predict --help`

    found = predict_file(run, tsv, out, batch_size=batch_size, accelerator=accelerator, force=force)
    accuracy = f"; accuracy {found.accuracy:.4f}" if found.accuracy is not None else ""
    print(f"normbench: wrote {found.rows} predictions to {found.path}{accuracy}")
