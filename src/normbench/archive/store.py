"""The run archive: every published run's record, committed with the code, append-only.

Layout (under ``results/archive/``)::

    <task>/<config hash>/seed<k>/<replicate>/record.json.gz   the run record, series included (gzip)
                                            /<analysis>.json   what the boards read beside it (key sets, tokens, ...)
                                            /last.ckpt         an unfinished run's checkpoint (small models only)
    <task>/<config hash>/seed<k>/canonical                     the replicate the boards show (one line)
    <task>/published.json                                      runs published before the archive: their board's
                                                               values are canonical

A *replicate* is one training of a ``(config hash, seed)`` on one platform: its name says the platform class
(:func:`~normbench.archive.replicate.platform_slug`: CPU vendor and vector width with threads, or the GPU). The same
run trained on another platform is added beside the first, never over it; the first finished replicate added is
*canonical*, its name written into ``canonical`` when it is added (a maintainer may name another there; an older
folder without one shows its first finished replicate by name), so the published numbers change only when the
canonical runs do. Every file is read as untrusted input, within limits (:mod:`normbench.archive.files.reading`),
and written atomically (:func:`~normbench.archive.files.writing.write_file`: a full disk is one ``OSError`` naming the
file, and no record is left half-written). An unfinished replicate (a bake stopped by its budget) keeps its checkpoint
here and is continued from it on any machine; its record then names every platform that trained a segment of it
(``segments``).
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import cast

from normbench.archive.files.reading import ArchiveError, Unreadable, check_no_links, read_capped, read_json
from normbench.archive.files.writing import (
    analysis_writer,
    checkpoint_state,
    dead_checkpoint,
    forget_dead_checkpoint,
    write_file,
    write_replicate,
)
from normbench.archive.record import RecordDocument
from normbench.archive.replicate import (
    ANALYSES,
    CHECKPOINT,
    FINISHED,
    RECORD,
    Replicate,
    continues,
    first_finished,
    platform_slug,
    read_record,
    same_numbers,
    steps_done,
    with_segments,
)
from normbench.io import atomic_write, atomic_write_json

__all__ = ["ArchiveError", "Archive", "Unreadable"]

ARCHIVE = "archive"
RUN_RECORD = "record.json"  # in a run directory
RESTORED = "archive_replicate"  # in a run directory restored from the archive: the replicate it continues
CANONICAL = "canonical"
PUBLISHED = "published.json"  # per task: runs whose canonical values are their board's (records not kept)
PUBLISHED_VALUES = "published-values.json"  # per such run and seed: those values, taken once from the boards
MAX_NAME_BYTES = 1024  # a ``canonical`` file holds one replicate's name


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

    def published_values(self, task: str, config_hash: str, seed: int) -> RecordDocument | None:
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
        return cast(RecordDocument, doc)  # a stand-in record, less its run fields, as written: its JSON, unchecked

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
        task, config_hash, seed = str(record["task"]), str(record["config_hash"]), int(record.get("seed") or 0)
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
        self, run_dir: Path, record: RecordDocument, existing: dict[str, Replicate]
    ) -> Replicate | tuple[str, str, RecordDocument]:
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
