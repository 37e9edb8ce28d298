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
platform is added beside the first, never over it; the first finished replicate added is *canonical*, its name
written into ``canonical`` when it is added (a maintainer may name another there; an older folder without one shows
its first finished replicate by name), so the published numbers change only when the canonical runs do.
Every file is read as untrusted input, within limits (:mod:`normbench.archive.files`), and written atomically
(:func:`write_file`: a full disk is one ``OSError`` naming the file, and no record is left half-written).
An unfinished replicate (a bake stopped by its budget) keeps its checkpoint here and is continued from it on any
machine; its record then names every platform that trained a segment of it (``segments``).
"""

from __future__ import annotations

import errno
import gzip
import json
import os
import re
import shutil
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from normbench import MKL_CBWR_DEFAULT
from normbench.archive.files import ArchiveError, Unreadable, check_no_links, read_capped, read_json
from normbench.io import atomic_write, atomic_write_json, dumps_json

__all__ = ["ArchiveError", "Archive", "Replicate", "Unreadable", "read_record"]

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
# weights of a finished run): normbench.training.run.rundir names the first four, run_analyses.sentence_tokens the last
ANALYSES = ("decomposition.json", "key_sets.json", "class_keys.json", "head_keys.json", "sentence_tokens.json")
MAX_CHECKPOINT_BYTES = 2 * 2**20  # an unfinished run's checkpoint is committed only for small models
MAX_NAME_BYTES = 1024  # a ``canonical`` file holds one replicate's name
# the keys of an analysis (or a record) that hold a path of the machine it was computed on
PATH_KEYS = ("run", "checkpoint", "log_dir", "resumed_from", "record_path", "runs_dir")


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
    """A record (``record.json``, or gzipped ``record.json.gz``) as JSON data, read within the archive's limits
    (:func:`normbench.archive.files.read_json`); one line naming the file when it is not a JSON object."""
    doc = read_json(path)
    if not isinstance(doc, dict):
        raise Unreadable(Path(path), f"a JSON {type(doc).__name__}, not a run record")
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

    def checked(self, path: Path) -> Path:
        """``path``, once no folder between the archive's root and it is a symbolic link (an :class:`Unreadable`
        naming the link otherwise: a link may point out of the archive, and is never followed)."""
        check_no_links(self.root, path)
        return path

    def replicates(self, task: str, config_hash: str, seed: int) -> list[Replicate]:
        """Every replicate of a run, oldest name first (a folder or record that is a symbolic link: one line)."""
        folder = self.seed_dir(task, config_hash, seed)
        if not (folder.is_dir() or folder.is_symlink()):
            return []
        self.checked(folder)
        out = []
        for p in sorted(folder.iterdir()):
            if p.is_symlink() or (p / RECORD).is_symlink():
                self.checked(p / RECORD)
            if p.is_dir() and (p / RECORD).is_file():
                out.append(Replicate(task, config_hash, seed, p.name, p))
        return out

    def published_elsewhere(self, task: str, config_hash: str, seed: int) -> bool:
        """Whether the run's canonical values are those its board published before the archive existed (its record
        was not kept): ``<task>/published.json`` lists such runs, and no replicate added later replaces them."""
        return int(seed) in (self.published_runs(task).get(config_hash) or [])

    def published_runs(self, task: str) -> dict[str, list[int]]:
        """``<task>/published.json``'s runs: config hash -> the seeds whose values their board published."""
        path = self.root / task / PUBLISHED
        if not (path.is_file() or path.is_symlink()):
            return {}
        doc = read_json(self.checked(path))
        runs = doc.get("runs") if isinstance(doc, dict) else None
        if not isinstance(runs, dict) or not all(isinstance(v, list) for v in runs.values()):
            raise Unreadable(path, "holds no 'runs' object of config hash -> seeds; restore it from git")
        return runs

    def published_values_path(self, task: str, config_hash: str, seed: int) -> Path:
        """Where the values a board published for a run before the archive existed are kept, once taken from it."""
        return self.seed_dir(task, config_hash, seed) / PUBLISHED_VALUES

    def published_values(self, task: str, config_hash: str, seed: int) -> dict[str, Any] | None:
        """The kept values of a run published before the archive (:meth:`published_values_path`), or ``None``."""
        path = self.published_values_path(task, config_hash, seed)
        if not (path.is_file() or path.is_symlink()):
            return None
        try:
            doc = read_json(self.checked(path))
        except Unreadable as exc:
            raise ArchiveError(f"archive: {path} is unreadable ({exc.reason}); restore it from git") from None
        if not isinstance(doc, dict) or not isinstance(doc.get("published"), dict):
            raise ArchiveError(f"archive: {path} holds no 'published' block; restore it from git")
        return doc

    def canonical_name(self, task: str, config_hash: str, seed: int) -> str | None:
        """The replicate its ``canonical`` file names (``None`` without one)."""
        chosen = self.seed_dir(task, config_hash, seed) / CANONICAL
        if not (chosen.is_file() or chosen.is_symlink()):
            return None
        raw = read_capped(self.checked(chosen), MAX_NAME_BYTES)
        try:
            return raw.decode("utf-8").strip()
        except UnicodeDecodeError:
            raise Unreadable(chosen, "not UTF-8 text (it holds one replicate's name)") from None

    def canonical(self, task: str, config_hash: str, seed: int) -> Replicate | None:
        """The replicate the boards show: the one ``canonical`` names (written when the first finished replicate was
        added, or by a maintainer), else (an older folder) the first finished one by name; ``None`` for a run whose
        published board values are canonical (:meth:`published_elsewhere`) unless ``canonical`` names one."""
        folder = self.seed_dir(task, config_hash, seed)
        reps = self.replicates(task, config_hash, seed)
        name = self.canonical_name(task, config_hash, seed)
        if name is not None:
            for rep in reps:
                if rep.name == name:
                    return rep
            raise ArchiveError(f"archive: {folder / CANONICAL} names replicate {name!r}, which is not in {folder}")
        if self.published_elsewhere(task, config_hash, seed):
            return None
        return first_finished(reps)

    def pin_canonical(self, task: str, config_hash: str, seed: int, before: list[Replicate]) -> Path | None:
        """Write ``canonical`` for a run that has none, naming the replicate the boards show: the first finished of
        ``before`` (the replicates there before the one just added; today's choice for an older folder), else the
        first finished now. Nothing for a run whose published board values are canonical. Returns the file written."""
        folder = self.seed_dir(task, config_hash, seed)
        if (folder / CANONICAL).exists() or self.published_elsewhere(task, config_hash, seed):
            return None
        first = first_finished(before) or first_finished(self.replicates(task, config_hash, seed))
        if first is None:
            return None
        return write_file(folder / CANONICAL, lambda tmp: Path(tmp).write_text(first.name + "\n", encoding="utf-8"))

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
        carried further from its checkpoint: its record is replaced by the longer one, with the platforms of both
        segments), ``restarted`` (this platform's unfinished replicate replaced by a run that trained from the start:
        it names only its own segment), ``same`` (this platform's replicate already holds these numbers) or ``kept``
        (the archived replicate of this platform is finished and differs: nothing replaced, the new numbers go
        beside it as ``<name>-2``). The first finished replicate of a run is named in its ``canonical`` file.
        ``checkpoint``: keep the run's ``checkpoints/last.ckpt`` when it is unfinished (a bake's run). A file that
        cannot be written (a full disk) is an ``OSError`` naming it, and no record is left half-written.
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
        before = self.replicates(task, config_hash, seed)
        placed = self.place(run_dir, record, {r.name: r for r in before})
        if isinstance(placed, Replicate):
            return placed, "same"
        target_name, outcome, record = placed
        target = self.seed_dir(task, config_hash, seed) / target_name
        write_replicate(target, run_dir, record, checkpoint=checkpoint)
        rep = Replicate(task, config_hash, seed, target_name, target)
        if record.get("status") in FINISHED:
            self.pin_canonical(task, config_hash, seed, [r for r in before if r.name != target_name])
        return rep, outcome

    def place(
        self, run_dir: Path, record: dict[str, Any], existing: dict[str, Replicate]
    ) -> Replicate | tuple[str, str, dict[str, Any]]:
        """Where a run's ``record`` goes among a run's ``existing`` replicates: (the replicate's name, the outcome,
        the record to write), or the replicate that already holds it (nothing to write; its analyses joined)."""
        name = platform_slug(record["provenance"])
        marker = run_dir / RESTORED
        restored_from = marker.read_text(encoding="utf-8").strip() if marker.is_file() else None
        restored = existing.get(restored_from) if restored_from else None
        if restored is not None and not restored.finished:
            old = restored.record()
            if continues(old, record):
                if steps_done(record) < steps_done(old):
                    return restored
                return restored.name, "continued", with_segments(old, record)
            forget_dead_checkpoint(restored)  # restarted from the start: that checkpoint did not load
        mine = existing.get(name)
        if mine is None:
            return name, "added", record
        old = mine.record()
        if old.get("status") not in FINISHED:
            if continues(old, record):
                return (
                    (name, "continued", with_segments(old, record)) if steps_done(record) >= steps_done(old) else mine
                )
            if record.get("status") in FINISHED or steps_done(record) >= steps_done(old) or dead_checkpoint(mine):
                return name, "restarted", record
            return mine
        if same_numbers(old, record):  # trained again: the analyses its first training did not keep join it
            self.attach_analyses(run_dir, mine)
            return mine
        k = 2
        while f"{name}-{k}" in existing:
            k += 1
        return f"{name}-{k}", "kept", record

    def attach_analyses(self, run_dir: str | Path, rep: Replicate) -> list[str]:
        """Copy the analyses of a run (computed from its checkpoint) that its replicate lacks; returns their names.
        An analysis already archived is never replaced."""
        added = []
        for name in ANALYSES:
            src, dst = Path(run_dir) / name, rep.path / name
            if src.is_file() and not dst.exists():
                write_file(dst, analysis_writer(src, Path(run_dir)))
                added.append(name)
        return added

    def restore(self, rep: Replicate, run_dir: str | Path) -> Path:
        """Put an unfinished archived replicate where a sweep resumes it: ``<run_dir>/record.json`` and
        ``<run_dir>/checkpoints/last.ckpt``. Returns the run directory."""
        run_dir = Path(run_dir)
        (run_dir / "checkpoints").mkdir(parents=True, exist_ok=True)
        atomic_write_json(run_dir / RUN_RECORD, rep.record())

        def write_name(tmp: Path) -> None:
            tmp.write_text(rep.name + "\n", encoding="utf-8")

        def copy_checkpoint(tmp: Path) -> None:
            shutil.copyfile(rep.checkpoint, tmp)

        atomic_write(run_dir / RESTORED, write_name)
        if rep.checkpoint.is_file():
            atomic_write(run_dir / "checkpoints" / CHECKPOINT, copy_checkpoint)
        return run_dir


def first_finished(reps: list[Replicate]) -> Replicate | None:
    """The first finished replicate of ``reps`` (by name), or ``None``."""
    return next((r for r in reps if r.finished), None)


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


def continues(old: dict[str, Any], new: dict[str, Any]) -> bool:
    """Whether ``new`` trained on from ``old``'s checkpoint: its record names ``old``'s segments (the steps they
    reached aside) before its own. A run that started from the beginning names no earlier segment."""

    def who(segments: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return [{k: v for k, v in s.items() if k != "to_step"} for s in segments]

    earlier = list(old.get("segments") or [segment(old)])
    named = list(new.get("segments") or [])
    return len(named) > len(earlier) and who(named[: len(earlier)]) == who(earlier)


def with_segments(old: dict[str, Any], new: dict[str, Any]) -> dict[str, Any]:
    """The longer record of a run continued elsewhere, naming every segment's platform in order."""
    segments = list(old.get("segments") or [segment(old)])
    latest = segment(new)
    if segments[-1] != latest:
        segments.append(latest)
    return {**new, "segments": segments}


def dead_checkpoint(rep: Replicate) -> bool:
    """Whether an unfinished replicate's checkpoint is missing or cannot be read (nothing can continue from it)."""
    if not rep.checkpoint.is_file():
        return True
    try:
        checkpoint_state(rep.checkpoint)
    except ArchiveError:
        return True
    return False


def forget_dead_checkpoint(rep: Replicate) -> None:
    """Remove an unfinished replicate's checkpoint that cannot be read: a run restored from it started from the
    beginning, and every later bake would restore it again. Its record stays."""
    if rep.checkpoint.is_file() and dead_checkpoint(rep):
        rep.checkpoint.unlink()


def write_file(path: Path, write: Callable[[Path], object]) -> Path:
    """``write`` into a temporary file beside ``path``, then renamed onto it (:func:`normbench.io.atomic_write`); an
    ``OSError`` (a full disk) names ``path``, the file that could not be written, and leaves it as it was. What
    ``write`` returns (``Path.write_bytes``'s count, ``shutil.copyfile``'s path) is not used."""

    def write_tmp(tmp: Path) -> None:
        write(tmp)

    try:
        return atomic_write(path, write_tmp)
    except OSError as exc:
        code = exc.errno if exc.errno is not None else errno.EIO
        raise OSError(code, exc.strerror or os.strerror(code), str(path)) from None


def local_path(value: str, runs_root: Path) -> str:
    """A path a run wrote as it is kept in the archive: one under its runs folder relative to that folder's parent
    (``runs/majority/<run>/seed0``, as a run trained with ``--runs_dir runs`` names it), any other absolute path cut
    to its file name; a relative path as it is."""
    path = Path(value)
    if not path.is_absolute():
        return value
    try:
        return str(Path(runs_root.name) / path.relative_to(runs_root))
    except ValueError:
        return path.name


def without_local_paths(doc: Any, runs_root: Path) -> Any:
    """``doc`` (an analysis, as JSON data) with the value of each :data:`PATH_KEYS` key made local
    (:func:`local_path`); series are left as they are."""
    if isinstance(doc, dict):
        return {
            k: local_path(v, runs_root)
            if k in PATH_KEYS and isinstance(v, str)
            else (v if k == "series" else without_local_paths(v, runs_root))
            for k, v in doc.items()
        }
    if isinstance(doc, list):
        return [without_local_paths(v, runs_root) for v in doc]
    return doc


def runs_root_of(run_dir: Path) -> Path:
    """The runs folder a run directory ``<runs>/<task>/<run>/seed<k>`` lies in."""
    return Path(os.path.abspath(run_dir)).parents[2]


def analysis_writer(src: Path, run_dir: Path) -> Callable[[Path], None]:
    """Writes the analysis ``src`` of the run at ``run_dir`` as it is archived (:func:`archived_analysis`) into the
    file it is given (for :func:`write_file`)."""

    def write(tmp: Path) -> None:
        tmp.write_bytes(archived_analysis(src, run_dir))

    return write


def archived_analysis(src: Path, run_dir: Path) -> bytes:
    """The bytes an analysis of the run at ``run_dir`` is archived as: its JSON with no absolute local path
    (:func:`without_local_paths`), the file as it is when it holds none."""
    raw = src.read_bytes()
    try:
        doc = json.loads(raw)
    except (UnicodeDecodeError, ValueError, RecursionError):
        raise ArchiveError(f"archive: {src} is not valid JSON; compute the analysis again") from None
    kept = without_local_paths(doc, runs_root_of(run_dir))
    return raw if kept == doc else (dumps_json(kept, indent=2, sort_keys=False) + "\n").encode("utf-8")


def write_replicate(target: Path, run_dir: Path, record: dict[str, Any], *, checkpoint: bool) -> None:
    """Write one replicate folder atomically per file (:func:`write_file`): the record last, so a reader never sees
    a record whose analyses or checkpoint are missing. An analysis holds no absolute local path (:func:`local_path`);
    the record is kept as the run wrote it (a board built from it shows its ``log_dir`` as the run named it)."""
    target.mkdir(parents=True, exist_ok=True)
    for name in ANALYSES:
        src = run_dir / name
        if src.is_file():
            write_file(target / name, analysis_writer(src, run_dir))
    ckpt = run_dir / "checkpoints" / CHECKPOINT
    unfinished = record.get("status") not in FINISHED
    if checkpoint and unfinished and ckpt.is_file():
        size = ckpt.stat().st_size
        if size > MAX_CHECKPOINT_BYTES:
            raise ArchiveError(
                f"archive: {ckpt} is {size / 2**20:.1f} MiB, over the {MAX_CHECKPOINT_BYTES // 2**20} MiB an "
                f"archived checkpoint may have; finish this run where it is"
            )
        write_file(target / CHECKPOINT, lambda tmp: shutil.copyfile(ckpt, tmp))
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
    """``obj`` as strict JSON, gzipped with no timestamp (the same object gives the same bytes), atomically
    (:func:`write_file`: a full disk is one ``OSError`` naming ``path``)."""
    data = gzip.compress((dumps_json(obj, indent=None, sort_keys=False) + "\n").encode("utf-8"), mtime=0)
    write_file(path, lambda tmp: Path(tmp).write_bytes(data))
