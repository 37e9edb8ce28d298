"""Whether a run's own files are what they claim: its record matched to its run, its final checkpoint readable.

A record belongs to a run by the config hash recomputed from the record's own config
(:func:`normbench.training.run.rundir.record_config_hash`), the hash the planner gives that run; a
``config_hash`` field that says otherwise was edited. A finished (``done``) run's final checkpoint,
the one its record names, must be there, readable and the run's (:func:`check_checkpoint`: the config
hash stored in it is the record's): every analysis of the run reads it. A sweep redoes a run whose files
fail these checks; a leaderboard and every analysis name the file and the fix.
"""

from __future__ import annotations

from pathlib import Path

from normbench.archive.files.reading import check_no_links, read_json
from normbench.archive.record import RecordDocument
from normbench.archive.replicate import ANALYSES, Replicate
from normbench.training.run.checkpointing import checkpoint_config_hash, checkpoint_model_args
from normbench.training.run.records import FINISHED, read_record
from normbench.training.run.rundir import checkpoint_of, record_config_hash


def check_record(record: RecordDocument, path: str | Path, config_hash: str | None = None) -> None:
    """One-line ``ValueError`` naming ``path`` unless the record is its run's (``config_hash``: the planned
    hash, when known) and, when ``done``, its final checkpoint is readable."""
    try:
        found = record_config_hash(record)
    except ValueError as exc:
        raise ValueError(f"run record {path}: {exc}") from None
    if record.get("config_hash") != found:
        raise ValueError(
            f"run record {path}: config_hash {record.get('config_hash')!r} is not the hash of its config ({found})"
        )
    if config_hash is not None and found != config_hash:
        raise ValueError(f"run record {path}: holds a run of config {found}, not {config_hash}")
    if record.get("status") == "done" and record.get("checkpoint") and not record.get("archived"):
        check_checkpoint(checkpoint_of(record, Path(path).parent), record, path)


def check_checkpoint(ckpt: Path, record: RecordDocument, path: str | Path) -> None:
    """One-line ``ValueError`` unless checkpoint ``ckpt`` is readable and holds the run of ``record`` (read
    from ``path``): the config hash stored in it is the record's; an older checkpoint without one is
    matched by its saved model arguments (the record's config with the checkpoint's model, hashed)."""
    stored = checkpoint_config_hash(Path(ckpt))
    expected = record.get("config_hash")
    if stored is None:
        saved = checkpoint_model_args(Path(ckpt))
        model = (record.get("config") or {}).get("model") or {}
        config = {
            **record["config"],
            "model": {
                "class_path": saved.get("_class_path", model.get("class_path")),
                "init_args": {k: v for k, v in saved.items() if not k.startswith("_")},
            },
        }
        try:
            stored = record_config_hash({**record, "config": config})
        except ValueError as exc:
            raise ValueError(f"checkpoint {ckpt} does not match the run of {path}: its saved model {exc}") from None
    if stored != expected:
        raise ValueError(
            f"checkpoint {ckpt} does not match the run: it holds a model of config {stored}, its run record "
            f"{path} one of config {expected}"
        )


def finished_status(path: str | Path, config_hash: str | None) -> str | None:
    """The status of the finished run recorded at ``path`` for ``config_hash`` (``done``, ``diverged``),
    ``None`` when there is none; raises ``ValueError`` naming the file when the record or the final
    checkpoint is broken (the run is then redone)."""
    path = Path(path)
    if not path.exists():
        return None
    record = read_record(path)
    if record.get("status") not in FINISHED:
        return None
    check_record(record, path, config_hash)
    return record["status"]


def check_archived(rep: Replicate, config_hash: str | None = None) -> RecordDocument:
    """The record of an archived replicate once it is its run's, else a one-line ``ValueError`` naming the file.

    What a bake counts as done and a leaderboard shows are the same check: the record reads back within the archive's
    limits, names the run of the folder it lies in (task, config hash, seed), is its run's (:func:`check_record`:
    the config hash recomputed from its config is its own and, where given, the planned ``config_hash``), an
    unfinished one has its checkpoint beside it, and every analysis beside it reads as JSON within the limits."""
    path = rep.record_path
    record = read_record(path)
    named = (record.get("task"), record.get("config_hash"), record.get("seed"))
    if named != (rep.task, rep.config_hash, rep.seed):
        task, digest, seed = named
        raise ValueError(f"run record {path}: names run {task}/{digest}/seed{seed}, not the run of its folder")
    for name in ANALYSES:
        if (rep.path / name).is_file() or (rep.path / name).is_symlink():
            check_no_links(rep.path, rep.path / name)
            read_json(rep.path / name)
    check_record(record, path, config_hash)
    if record.get("status") not in FINISHED and not rep.checkpoint.is_file():
        raise ValueError(f"run record {path}: an unfinished run without its checkpoint {rep.checkpoint}")
    return record
