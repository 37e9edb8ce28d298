"""The run archive: every published run's record, committed with the code, append-only.

Layout (under ``results/archive/``)::

    <task>/<config hash>/seed<k>/<replicate>/record.json.gz   the run record, series included (gzip)
                                            /<analysis>.json   what the boards read beside it (key sets, tokens, ...)
                                            /last.ckpt         an unfinished run's checkpoint (small models only)
    <task>/<config hash>/seed<k>/canonical                     the replicate the boards show (one line)
    <task>/published.json                                      runs published before the archive: their board's
                                                               values are canonical

A *replicate* is one training of a ``(config hash, seed)`` on one platform: its name says the platform class
(:func:`platform_slug`: CPU vendor and vector width with threads, or the GPU). The same run trained on another
platform is added beside the first, never over it; the first finished replicate added is *canonical* (a
maintainer may name another in ``canonical``), so the published numbers change only when the canonical runs do.
An unfinished replicate (a bake stopped by its budget) keeps its checkpoint here and is continued from it on any
machine; its record then names every platform that trained a segment of it (``segments``).
"""

from __future__ import annotations

import gzip
import json
import re
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from normbench import MKL_CBWR_DEFAULT
from normbench.io import atomic_write, atomic_write_json, dumps_json

ARCHIVE = "archive"
RECORD = "record.json.gz"  # gzip (mtime 0: the same record gives the same bytes); a record is mostly its series
RUN_RECORD = "record.json"  # in a run directory
CHECKPOINT = "last.ckpt"
RESTORED = "archive_replicate"  # in a run directory restored from the archive: the replicate it continues
CANONICAL = "canonical"
PUBLISHED = "published.json"  # per task: runs whose canonical values are their board's (records not kept)
PUBLISHED_VALUES = "published-values.json"  # per such run and seed: those values, taken once from the boards
FINISHED = ("done", "diverged")
# the analyses a board reads beside a record, computed from the final checkpoint where it was (the archive keeps no
# weights of a finished run): normbench.training.rundir names the first four, reporting.sentence_tokens the last
ANALYSES = ("decomposition.json", "key_sets.json", "class_keys.json", "head_keys.json", "sentence_tokens.json")
MAX_CHECKPOINT_BYTES = 2 * 2**20  # an unfinished run's checkpoint is committed only for small models


class ArchiveError(ValueError):
    """A record that cannot enter the archive (one line naming the run and why)."""


@dataclass(frozen=True)
class Replicate:
    """One archived training of a run: where it lies and what it says."""

    task: str
    config_hash: str
    seed: int
    name: str
    path: Path

    @property
    def record_path(self) -> Path:
        return self.path / RECORD

    @property
    def checkpoint(self) -> Path:
        return self.path / CHECKPOINT

    def record(self) -> dict[str, Any]:
        return read_record(self.record_path)

    @property
    def finished(self) -> bool:
        return self.record().get("status") in FINISHED


def read_record(path: Path) -> dict[str, Any]:
    """A record (``record.json``, or gzipped ``record.json.gz``) as JSON data; one line naming the file when it
    is not a JSON object."""
    try:
        raw = Path(path).read_bytes()
        doc = json.loads((gzip.decompress(raw) if str(path).endswith(".gz") else raw).decode("utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise ArchiveError(f"archive: {path} is not a readable run record ({exc})") from exc
    if not isinstance(doc, dict):
        raise ArchiveError(f"archive: {path} is a JSON {type(doc).__name__}, not a run record")
    return doc


def platform_slug(provenance: dict[str, Any]) -> str:
    """The platform class of a run, as a folder name: ``gpu-nvidia-h200``, ``cpu-amd-epyc-avx2-t1``.

    What decides a run's last bits: the GPU where there is one, else the CPU model, its vector width and the
    number of threads (a reduction splits by thread), and MKL's reproducibility mode where it is not normbench's
    (``...-mkl-cbwr-unset``: on an Intel CPU MKL then runs other kernels)."""
    plat = provenance.get("platform") or {}
    if plat.get("gpu"):
        name = f"gpu-{plat['gpu']}"
    else:
        threads = plat.get("threads", provenance.get("threads"))
        name = f"cpu-{cpu_family(plat.get('cpu') or 'unknown')}-{plat.get('cpu_capability') or 'unknown'}-t{threads}"
        cbwr = plat.get("mkl_cbwr")
        if cbwr is not None and cbwr != MKL_CBWR_DEFAULT:  # a record from before normbench set it names none
            name += f"-mkl-cbwr-{cbwr or 'unset'}"
    return re.sub(r"-{2,}", "-", re.sub(r"[^a-z0-9.+-]+", "-", name.lower())).strip("-")


def cpu_family(model: str) -> str:
    """A CPU model name without its marks, generic words and clock: ``Intel(R) Xeon(R) Processor`` -> ``Intel Xeon``."""
    model = re.sub(r"\((r|tm)\)|@\s*[\d.]+\s*[gm]hz|\b(processor|cpu)\b", " ", model, flags=re.IGNORECASE)
    return " ".join(model.split()) or "unknown"


def steps_done(record: dict[str, Any]) -> int:
    """The optimizer steps a run has done for good: an unfinished archived run's checkpoint step (where it
    continues from), else its final step, else the last step its series reached (0 for none)."""
    if record.get("status") not in FINISHED and record.get("checkpoint_step") is not None:
        return int(record["checkpoint_step"])
    if record.get("final_step") is not None:
        return int(record["final_step"])
    return max((int(points[-1][0]) for points in (record.get("series") or {}).values() if points), default=0)


class Archive:
    """The run archive under ``<results_dir>/archive``."""

    def __init__(self, results_dir: str | Path = "results") -> None:
        self.root = Path(results_dir) / ARCHIVE

    def seed_dir(self, task: str, config_hash: str, seed: int) -> Path:
        return self.root / task / config_hash / f"seed{seed}"

    def replicates(self, task: str, config_hash: str, seed: int) -> list[Replicate]:
        """Every replicate of a run, oldest name first."""
        folder = self.seed_dir(task, config_hash, seed)
        if not folder.is_dir():
            return []
        return [
            Replicate(task, config_hash, seed, p.name, p)
            for p in sorted(folder.iterdir())
            if p.is_dir() and (p / RECORD).is_file()
        ]

    def published_elsewhere(self, task: str, config_hash: str, seed: int) -> bool:
        """Whether the run's canonical values are those its board published before the archive existed (its record
        was not kept): ``<task>/published.json`` lists such runs, and no replicate added later replaces them."""
        return int(seed) in (self.published_runs(task).get(config_hash) or [])

    def published_runs(self, task: str) -> dict[str, list[int]]:
        """``<task>/published.json``'s runs: config hash -> the seeds whose values their board published."""
        path = self.root / task / PUBLISHED
        if not path.is_file():
            return {}
        return json.loads(path.read_text(encoding="utf-8")).get("runs") or {}

    def published_values_path(self, task: str, config_hash: str, seed: int) -> Path:
        """Where the values a board published for a run before the archive existed are kept, once taken from it."""
        return self.seed_dir(task, config_hash, seed) / PUBLISHED_VALUES

    def published_values(self, task: str, config_hash: str, seed: int) -> dict[str, Any] | None:
        """The kept values of a run published before the archive (:meth:`published_values_path`), or ``None``."""
        path = self.published_values_path(task, config_hash, seed)
        if not path.is_file():
            return None
        try:
            doc = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise ArchiveError(f"archive: {path} is unreadable ({exc}); restore it from git") from exc
        if not isinstance(doc, dict) or not isinstance(doc.get("published"), dict):
            raise ArchiveError(f"archive: {path} holds no 'published' block; restore it from git")
        return doc

    def canonical(self, task: str, config_hash: str, seed: int) -> Replicate | None:
        """The replicate the boards show: the one ``canonical`` names, else the first finished one; ``None`` for a
        run whose published board values are canonical (:meth:`published_elsewhere`) unless ``canonical`` names one."""
        folder = self.seed_dir(task, config_hash, seed)
        reps = self.replicates(task, config_hash, seed)
        chosen = folder / CANONICAL
        if chosen.is_file():
            name = chosen.read_text(encoding="utf-8").strip()
            for rep in reps:
                if rep.name == name:
                    return rep
            raise ArchiveError(f"archive: {chosen} names replicate {name!r}, which is not in {folder}")
        if self.published_elsewhere(task, config_hash, seed):
            return None
        finished = [r for r in reps if r.finished]
        return finished[0] if finished else None

    def in_progress(self, task: str, config_hash: str, seed: int) -> Replicate | None:
        """The unfinished replicate of a run that has a checkpoint to continue from (``None``: none)."""
        for rep in self.replicates(task, config_hash, seed):
            if not rep.finished and rep.checkpoint.is_file():
                return rep
        return None

    def runs(self, task: str | None = None) -> Iterator[Replicate]:
        """Every replicate in the archive (of one task)."""
        tasks = [self.root / task] if task else sorted(p for p in self.root.glob("*") if p.is_dir())
        for tdir in tasks:
            for hdir in sorted(p for p in tdir.glob("*") if p.is_dir()):
                for sdir in sorted(hdir.glob("seed*"), key=lambda p: int(p.name[4:]) if p.name[4:].isdigit() else -1):
                    if sdir.name[4:].isdigit():
                        yield from self.replicates(tdir.name, hdir.name, int(sdir.name[4:]))

    def add(self, run_dir: str | Path, *, checkpoint: bool = False) -> tuple[Replicate, str]:
        """Add a trained run (its directory: ``record.json``, analyses, checkpoint) to the archive.

        Returns the replicate and what happened: ``added`` (a new replicate), ``continued`` (an unfinished replicate
        carried further: its record is replaced by the longer one, with the platforms of both segments),
        ``same`` (this platform's replicate already holds these numbers) or ``kept`` (the archived replicate of
        this platform is finished and differs: nothing replaced, the new numbers go beside it as ``<name>-2``).
        ``checkpoint``: keep the run's ``checkpoints/last.ckpt`` when it is unfinished (a bake's run).
        """
        run_dir = Path(run_dir)
        record = read_record(run_dir / RUN_RECORD)
        missing = [k for k in ("task", "config_hash", "seed", "status", "provenance") if record.get(k) is None]
        if missing:
            raise ArchiveError(f"archive: {run_dir / RUN_RECORD} lacks {', '.join(missing)}")
        task, config_hash, seed = str(record["task"]), str(record["config_hash"]), int(record["seed"])
        ckpt = run_dir / "checkpoints" / CHECKPOINT
        if checkpoint and record.get("status") not in FINISHED and ckpt.is_file():
            # an unfinished run is archived as its checkpoint holds it: the steps and series it continues from
            step, series = checkpoint_state(ckpt)
            record = {**record, "checkpoint_step": step, "series": series if series is not None else record["series"]}
        name = platform_slug(record["provenance"])
        existing = {r.name: r for r in self.replicates(task, config_hash, seed)}
        marker = run_dir / RESTORED
        restored_from = marker.read_text(encoding="utf-8").strip() if marker.is_file() else None
        continuing = [r for r in existing.values() if not r.finished and r.name == restored_from]
        target_name, outcome = name, "added"
        if continuing:
            target_name, outcome = continuing[0].name, "continued"
            old = continuing[0].record()
            if steps_done(record) < steps_done(old):
                return continuing[0], "same"
            record = with_segments(old, record)
        elif name in existing:
            old = existing[name].record()
            if old.get("status") not in FINISHED:
                outcome = "continued"
                record = with_segments(old, record) if steps_done(record) >= steps_done(old) else old
            elif same_numbers(old, record):  # trained again: the analyses its first training did not keep join it
                self.attach_analyses(run_dir, existing[name])
                return existing[name], "same"
            else:
                k = 2
                while f"{name}-{k}" in existing:
                    k += 1
                target_name, outcome = f"{name}-{k}", "kept"
        target = self.seed_dir(task, config_hash, seed) / target_name
        write_replicate(target, run_dir, record, checkpoint=checkpoint)
        return Replicate(task, config_hash, seed, target_name, target), outcome

    def attach_analyses(self, run_dir: str | Path, rep: Replicate) -> list[str]:
        """Copy the analyses of a run (computed from its checkpoint) that its replicate lacks; returns their names.
        An analysis already archived is never replaced."""
        added = []
        for name in ANALYSES:
            src, dst = Path(run_dir) / name, rep.path / name
            if src.is_file() and not dst.exists():
                atomic_write(dst, lambda tmp, src=src: shutil.copyfile(src, tmp))
                added.append(name)
        return added

    def restore(self, rep: Replicate, run_dir: str | Path) -> Path:
        """Put an unfinished archived replicate where a sweep resumes it: ``<run_dir>/record.json`` and
        ``<run_dir>/checkpoints/last.ckpt``. Returns the run directory."""
        run_dir = Path(run_dir)
        (run_dir / "checkpoints").mkdir(parents=True, exist_ok=True)
        atomic_write_json(run_dir / RUN_RECORD, rep.record())
        atomic_write(run_dir / RESTORED, lambda tmp: Path(tmp).write_text(rep.name + "\n", encoding="utf-8"))
        if rep.checkpoint.is_file():
            atomic_write(run_dir / "checkpoints" / CHECKPOINT, lambda tmp: shutil.copyfile(rep.checkpoint, tmp))
        return run_dir


def same_numbers(a: dict[str, Any], b: dict[str, Any]) -> bool:
    """Whether two records of one run hold the same series, bit for bit."""
    return a.get("status") == b.get("status") and (a.get("series") or {}) == (b.get("series") or {})


def segment(record: dict[str, Any]) -> dict[str, Any]:
    """Who trained a record's steps: platform, commit, clean tree and the steps reached."""
    prov = record.get("provenance") or {}
    return {
        "platform": platform_slug(prov),
        "git_commit": prov.get("git_commit"),
        "dirty": prov.get("dirty"),
        "device": prov.get("device"),
        "threads": prov.get("threads"),
        "to_step": steps_done(record),
    }


def with_segments(old: dict[str, Any], new: dict[str, Any]) -> dict[str, Any]:
    """The longer record of a run continued elsewhere, naming every segment's platform in order."""
    segments = list(old.get("segments") or [segment(old)])
    latest = segment(new)
    if segments[-1] != latest:
        segments.append(latest)
    return {**new, "segments": segments}


def write_replicate(target: Path, run_dir: Path, record: dict[str, Any], *, checkpoint: bool) -> None:
    """Write one replicate folder atomically per file: the record last, so a reader never sees a record
    whose analyses or checkpoint are missing."""
    target.mkdir(parents=True, exist_ok=True)
    for name in ANALYSES:
        src = run_dir / name
        if src.is_file():
            atomic_write(target / name, lambda tmp, src=src: shutil.copyfile(src, tmp))
    ckpt = run_dir / "checkpoints" / CHECKPOINT
    unfinished = record.get("status") not in FINISHED
    if checkpoint and unfinished and ckpt.is_file():
        size = ckpt.stat().st_size
        if size > MAX_CHECKPOINT_BYTES:
            raise ArchiveError(
                f"archive: {ckpt} is {size / 2**20:.1f} MiB, over the {MAX_CHECKPOINT_BYTES // 2**20} MiB an "
                f"archived checkpoint may have; finish this run where it is"
            )
        atomic_write(target / CHECKPOINT, lambda tmp: shutil.copyfile(ckpt, tmp))
    elif not unfinished and (target / CHECKPOINT).is_file():
        (target / CHECKPOINT).unlink()  # finished: the weights the analyses need are summarised beside it
    kept = {k: v for k, v in record.items() if k not in ("record_path", "archived")}
    write_gzip_json(target / RECORD, kept)


def checkpoint_state(path: Path) -> tuple[int, dict[str, Any] | None]:
    """The optimizer steps a Lightning checkpoint holds and the run's series up to them (normbench's run state),
    read as tensors and plain data only: no code runs."""
    import torch  # only here: the archive's other readers need no torch

    try:
        data = torch.load(path, map_location="cpu", weights_only=True)
        return int(data["global_step"]), (data.get("normbench") or {}).get("series")
    except Exception as exc:  # noqa: BLE001 - any unreadable checkpoint is one line
        raise ArchiveError(f"archive: {path} is not a readable checkpoint ({type(exc).__name__})") from None


def checkpoint_step(path: Path) -> int:
    """The optimizer steps a Lightning checkpoint holds."""
    return checkpoint_state(path)[0]


def write_gzip_json(path: Path, obj: Any) -> None:
    """``obj`` as strict JSON, gzipped with no timestamp (the same object gives the same bytes), atomically."""
    data = gzip.compress((dumps_json(obj, indent=None, sort_keys=False) + "\n").encode("utf-8"), mtime=0)
    atomic_write(path, lambda tmp: Path(tmp).write_bytes(data))
