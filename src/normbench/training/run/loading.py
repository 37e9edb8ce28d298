"""A trained run read back: its record and its task module from a checkpoint, its data module from its config."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from normbench.archive.record import RecordDocument
from normbench.io import Config
from normbench.tasks import get_task
from normbench.tasks.trust import record_class, untrusted_norms
from normbench.training.run.checkpointing import checkpoint_config_hash
from normbench.training.run.records import read_record
from normbench.training.run.rundir import record_path, run_of_checkpoint
from normbench.training.run.verify import check_checkpoint

REDO = "the sweep that trained the run redoes it (the same `normbench sweep` command)"


def record_for_checkpoint(ckpt: Path) -> Path:
    """The run record of ``<run>/checkpoints/<name>.ckpt``: ``<run>/record.json``."""
    path = record_path(run_of_checkpoint(ckpt))
    if not Path(ckpt).is_file():
        raise FileNotFoundError(f"ckpt: {ckpt} does not exist")
    if not path.is_file():
        raise FileNotFoundError(
            f"ckpt: no run record {path} next to the checkpoint (expected <run>/checkpoints/*.ckpt)"
        )
    return path


def build_datamodule(config: Config, stage: str = "validate") -> Any:
    """The run's LightningDataModule from the ``data`` section of its resolved config, set up for ``stage``.

    An init argument the config leaves out because it did not exist when the run trained takes the
    value the class names for such configs (``LEGACY_INIT_ARGS``), not today's default. The config is a
    run record's, so its class must be registered (:func:`normbench.tasks.trust.record_class`)."""
    data = config["data"]
    cls = record_class(data.get("class_path"), "data")  # the config is a record's: registered classes only
    dm = cls(**{**getattr(cls, "LEGACY_INIT_ARGS", {}), **(data.get("init_args") or {})})
    dm.prepare_data()
    dm.setup(stage)
    return dm


def load_run(ckpt: Path) -> tuple[RecordDocument, Any]:
    """(run record, task module in eval mode on the CPU) of a run's checkpoint, which must be the run's."""
    path = record_for_checkpoint(ckpt)
    record = read_record(path)
    return record, load_module(ckpt, record["task"], record, path)


def load_module(ckpt: Path, task: str, record: RecordDocument | None = None, path: Path | None = None) -> Any:
    """Task ``task``'s module from checkpoint ``ckpt``, in eval mode on the CPU; a missing, truncated, empty or
    foreign file is one ``ValueError`` naming it and the fix, and so is a checkpoint that is not the run of
    ``record`` (read from ``path``), when given (:func:`normbench.training.run.verify.check_checkpoint`)."""
    try:
        if record is not None:
            check_checkpoint(Path(ckpt), record, path or record_path(run_of_checkpoint(ckpt)))
        else:
            checkpoint_config_hash(Path(ckpt))
        with untrusted_norms():  # its hyperparameters name the norms: registered ones only
            return get_task(task).module.load_from_checkpoint(ckpt, map_location="cpu").eval()
    except ValueError as exc:
        raise ValueError(f"{exc}; {REDO}") from None
    except Exception as exc:  # noqa: BLE001 - weights that do not fit the module: the file is not this run's
        first = (str(exc).strip().splitlines() or [""])[0]
        raise ValueError(f"checkpoint {ckpt}: unreadable ({type(exc).__name__}: {first}); {REDO}") from None
