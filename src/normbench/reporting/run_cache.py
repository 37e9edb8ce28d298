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
from normbench.training.records import read_record
from normbench.training.rundir import checkpoint_of, record_path, run_of_checkpoint, run_of_record


def record_for_checkpoint(ckpt: Path) -> Path:
    """The run record of ``<run>/checkpoints/<name>.ckpt``: ``<run>/record.json``."""
    path = record_path(run_of_checkpoint(ckpt))
    if not Path(ckpt).is_file():
        raise FileNotFoundError(f"ckpt: {ckpt} does not exist")
    if not path.is_file():
        raise FileNotFoundError(f"ckpt: no run record {path} next to the checkpoint (expected <run>/checkpoints/*.ckpt)")
    return path


def build_datamodule(config: dict[str, Any], stage: str = "validate") -> Any:
    """The run's LightningDataModule from the ``data`` section of its resolved config, set up for ``stage``."""
    data = config["data"]
    module_name, _, cls_name = data["class_path"].rpartition(".")
    cls = getattr(importlib.import_module(module_name), cls_name)
    dm = cls(**(data.get("init_args") or {}))
    dm.prepare_data()
    dm.setup(stage)
    return dm


def load_run(ckpt: Path) -> tuple[dict[str, Any], Any]:
    """(run record, task module in eval mode on the CPU) of a run's checkpoint."""
    record = read_record(record_for_checkpoint(ckpt))
    module = get_task(record["task"]).module.load_from_checkpoint(ckpt, map_location="cpu").eval()
    return record, module


def checkpoint_stamp(ckpt: Path) -> dict[str, int]:
    """What identifies a checkpoint's content for the cache: its size and modification time."""
    stat = Path(ckpt).stat()
    return {"checkpoint_size": stat.st_size, "checkpoint_mtime_ns": stat.st_mtime_ns}


def cached_analysis(record: dict[str, Any], file_name: str, params: dict[str, Any],
                    compute: Callable[[Path], dict[str, Any]]) -> dict[str, Any] | None:
    """``<run>/<file_name>``: ``compute(final checkpoint)`` plus ``params``, recomputed when stale.

    ``None`` for a run without a final checkpoint.
    """
    run = run_of_record(record)
    ckpt = checkpoint_of(record, run)
    if ckpt is None or not ckpt.is_file():
        return None
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
