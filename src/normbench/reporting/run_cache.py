"""Per-run analyses computed once from a run's final checkpoint and cached as JSON in its run folder.

A cached result is valid while the checkpoint (its size and modification time) and the analysis'
parameters are the ones it was computed with; otherwise it is recomputed and rewritten atomically.
"""

from __future__ import annotations

import importlib
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from normbench.io import atomic_write_json
from normbench.tasks import get_task
from normbench.training.checkpointing import checkpoint_config_hash
from normbench.training.records import read_record
from normbench.training.rundir import checkpoint_of, record_path, run_of_checkpoint, run_of_record

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


def build_datamodule(config: dict[str, Any], stage: str = "validate") -> Any:
    """The run's LightningDataModule from the ``data`` section of its resolved config, set up for ``stage``.

    An init argument the config leaves out because it did not exist when the run trained takes the
    value the class names for such configs (``LEGACY_INIT_ARGS``), not today's default."""
    data = config["data"]
    module_name, _, cls_name = data["class_path"].rpartition(".")
    cls = getattr(importlib.import_module(module_name), cls_name)
    dm = cls(**{**getattr(cls, "LEGACY_INIT_ARGS", {}), **(data.get("init_args") or {})})
    dm.prepare_data()
    dm.setup(stage)
    return dm


def load_run(ckpt: Path) -> tuple[dict[str, Any], Any]:
    """(run record, task module in eval mode on the CPU) of a run's checkpoint."""
    record = read_record(record_for_checkpoint(ckpt))
    return record, load_module(ckpt, record["task"])


def load_module(ckpt: Path, task: str) -> Any:
    """Task ``task``'s module from checkpoint ``ckpt``, in eval mode on the CPU; a missing, truncated, empty or
    foreign file is one ``ValueError`` naming it and the fix."""
    try:
        checkpoint_config_hash(Path(ckpt))
        return get_task(task).module.load_from_checkpoint(ckpt, map_location="cpu").eval()
    except ValueError as exc:
        raise ValueError(f"{exc}; {REDO}") from None
    except Exception as exc:  # noqa: BLE001 - weights that do not fit the module: the file is not this run's
        first = (str(exc).strip().splitlines() or [""])[0]
        raise ValueError(f"checkpoint {ckpt}: unreadable ({type(exc).__name__}: {first}); {REDO}") from None


def checkpoint_stamp(ckpt: Path) -> dict[str, int]:
    """What identifies a checkpoint's content for the cache: its size and modification time."""
    stat = Path(ckpt).stat()
    return {"checkpoint_size": stat.st_size, "checkpoint_mtime_ns": stat.st_mtime_ns}


def cached_analysis(
    record: dict[str, Any], file_name: str, params: dict[str, Any], compute: Callable[[Path], dict[str, Any]]
) -> dict[str, Any] | None:
    """``<run>/<file_name>``: ``compute(final checkpoint)`` plus ``params``, recomputed when stale.

    ``None`` for a run without a final checkpoint; a final checkpoint its record names that is not
    there is one ``ValueError`` naming it (never an empty cell that reads "not logged").
    """
    run = run_of_record(record)
    ckpt = checkpoint_of(record, run)
    if ckpt is None:
        return None
    if not ckpt.is_file():
        raise ValueError(f"checkpoint {ckpt}: missing (the final checkpoint of {record_path(run)}); {REDO}")
    path = run / file_name
    key = {**checkpoint_stamp(ckpt), **params}
    if path.is_file():
        try:
            old = json.loads(path.read_text(encoding="utf-8"))
            if all(old.get(k) == v for k, v in key.items()):
                return old
        except ValueError:
            pass  # corrupt: recompute
    result = {**compute(ckpt), **key}
    atomic_write_json(path, result)
    return result


def with_final_values(record: dict[str, Any], values: dict[str, float]) -> dict[str, Any]:
    """``record`` with each of ``values`` (series name -> value) added as a one-point series at its final step."""
    step = int(record.get("final_step") or 0)
    return {**record, "series": {**record["series"], **{name: [[step, v]] for name, v in values.items()}}}
