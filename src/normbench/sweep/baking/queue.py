"""The bake queue: its file (``queues/bake.yaml``), the runs it wants, and where each of them stands.

A queue lists, in priority order, the runs the published boards want (:class:`QueueItem`); :func:`survey` plans them
and tells where each stands (:class:`Slot`: finished in the archive, refused, finished here, in progress, not
started), restoring an unfinished archived run further than the local one. :class:`BakeReport` counts what a bake
did (:func:`archive_finished_here`, :func:`count_trained`). The bake itself is :func:`normbench.sweep.bake.bake`.
"""

from __future__ import annotations

import sys
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from normbench.archive.board_keys import parse_key
from normbench.archive.files.reading import ArchiveError
from normbench.archive.files.writing import checkpoint_step
from normbench.archive.record import RecordDocument
from normbench.archive.replicate import steps_done
from normbench.archive.store import Archive
from normbench.boards.progress import planned_steps, record_file
from normbench.judge.tuned import ChoiceNotReady
from normbench.sweep.archiving import archive_runs
from normbench.sweep.plan import Run, parse_seeds, plan_runs
from normbench.tasks.trust import check_config_code
from normbench.training.config import load_config
from normbench.training.run.records import FINISHED, read_record
from normbench.training.run.verify import check_archived, finished_status

ITEM_KEYS = ("board", "task", "preset", "variants", "seeds")
OPTIONAL_KEYS = ("config",)  # a config file of the task's (default: its shipped config)


@dataclass(frozen=True)
class QueueItem:
    """Runs wanted by one board: ``variants`` x ``seeds`` of ``task`` at ``preset``, shown on ``results/<board>/``
    (``board``: its key, :mod:`normbench.archive.board_keys`)."""

    board: str
    task: str
    preset: str
    variants: tuple[str, ...]
    seeds: tuple[int, ...]
    config: str | None = None

    @property
    def config_arg(self) -> str:
        """What ``--config`` names: the item's config file, else the task."""
        return self.config or self.task

    @property
    def folder(self) -> str | None:
        """The sweep's ``name`` of the board: its key (``None``: the task's own board)."""
        return None if parse_key(self.board).key == self.task else self.board


@dataclass
class BakeReport:
    """What a bake did and what is left."""

    finished_before: int = 0
    finished_now: int = 0
    in_progress: list[tuple[str, int, int, int | None]] = field(default_factory=list)  # variant, seed, step, of
    not_started: int = 0
    unarchived: int = 0  # finished here, but not in the archive (trained from uncommitted code, or refused)
    refused: int = 0  # archived, but the record fails its check (:func:`normbench.training.run.verify.check_archived`)
    archived: Counter = field(default_factory=Counter)
    boards: list[str] = field(default_factory=list)

    def line(self) -> str:
        """The one line a bake ends with: a run counts as finished only once its archived record is verified."""
        stuck = self.unarchived + self.refused
        total = self.finished_before + self.finished_now + len(self.in_progress) + self.not_started + stuck
        parts = [
            f"{self.finished_before + self.finished_now} of {total} queued runs finished ({self.finished_now} now)"
        ]
        if self.in_progress:
            shown = ", ".join(
                f"{v} seed {s} step {k:,}" + (f" of {n:,}" if n else "") for v, s, k, n in self.in_progress[:4]
            )
            more = f" and {len(self.in_progress) - 4} more" if len(self.in_progress) > 4 else ""
            parts.append(f"{len(self.in_progress)} in progress ({shown}{more})")
        if self.not_started:
            parts.append(f"{self.not_started} not started")
        if self.unarchived:
            parts.append(f"{self.unarchived} finished here but not in the archive (said above)")
        if self.refused:
            parts.append(f"{self.refused} archived but refused (named above: restore them from git)")
        left = self.not_started + len(self.in_progress)
        tail = "; `normbench bake` continues them" if left else "; the queue is not done" if stuck else ""
        tail = tail or "; the queue is done"
        return "normbench: bake: " + ", ".join(parts) + tail


def load_queue(path: str | Path) -> list[QueueItem]:
    """The queue file's items in order; a one-line error naming the file, the item and the field. A queue is
    untrusted input: the config file an item names may name registered code only, unless the user trusts it
    (:func:`normbench.tasks.trust.check_config_code`); nothing it names is imported before that check."""
    path = Path(path)
    try:
        doc = yaml.safe_load(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ValueError(f"queue: {path} cannot be read ({exc.strerror or exc})") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" line {mark.line + 1}" if mark is not None else ""
        raise ValueError(f"queue: {path}{where} is not valid YAML") from None
    items = (doc or {}).get("queue") if isinstance(doc, dict) else None
    if not isinstance(items, list) or not items:
        raise ValueError(f"queue: {path} needs a non-empty list `queue:` of items ({', '.join(ITEM_KEYS)})")
    out = []
    for i, item in enumerate(items):
        where = f"queue: {path} item {i + 1}"
        if not isinstance(item, dict):
            raise ValueError(f"{where} must be a mapping with {', '.join(ITEM_KEYS)}")
        unknown = sorted(set(item) - set(ITEM_KEYS) - set(OPTIONAL_KEYS))
        if unknown:
            raise ValueError(f"{where}: unknown field {unknown[0]!r}; allowed: {', '.join(ITEM_KEYS + OPTIONAL_KEYS)}")
        missing = [k for k in ITEM_KEYS if item.get(k) in (None, "", [])]
        if missing:
            raise ValueError(f"{where}: field {missing[0]!r} is required")
        board, task = str(item["board"]), str(item["task"])
        try:
            of_task = parse_key(board).task == task
        except ValueError as exc:
            raise ValueError(f"{where}: {exc}") from None
        if not of_task:
            raise ValueError(f"{where}: board {board!r} is not a board of task {task!r}")
        variants = item["variants"]
        if isinstance(variants, str):
            variants = [v for v in variants.split(",") if v]
        if not isinstance(variants, list) or not all(isinstance(v, str) for v in variants):
            raise ValueError(f"{where}: variants must be a list of variant names")
        try:
            seeds = tuple(parse_seeds(str(item["seeds"])) or ())  # a text names at least one seed
        except ValueError as exc:
            raise ValueError(f"{where}: seeds {item['seeds']!r}: {exc}") from None
        config = item.get("config")
        if config is not None and not (path.parent / str(config)).is_file() and not Path(str(config)).is_file():
            raise ValueError(f"{where}: config {config!r} is not a file")
        if config is not None and not Path(str(config)).is_file():
            config = str(path.parent / str(config))  # relative to the queue file
        if config is not None:  # before anything is planned: the code it names (normbench.tasks.trust)
            check_config_code(load_config(config), f"{where}: config {config}")
        out.append(QueueItem(board, task, str(item["preset"]), tuple(variants), seeds, config))
    return out


@dataclass
class Slot:
    """One run of the queue, where it stands."""

    item: QueueItem
    run: Run
    state: str  # finished (archived and verified) | refused | finished here (not archived) | in progress | not started
    step: int = 0
    alone: bool = False  # trained alone even where its seeds could be stacked (its stack did not train it)
    also: list[str] = field(default_factory=list)  # later items' boards that show this run too

    @property
    def boards(self) -> list[str]:
        """Every queued board that shows this run: its item's, then those of later items that plan it too."""
        return [self.item.board, *self.also]

    @property
    def steps_left(self) -> int:
        """The steps this run still trains: its ``trainer.max_steps`` less the steps done (0 where none is set)."""
        return max(int(self.run.trainer.get("max_steps") or 0) - self.step, 0)

    @property
    def key(self) -> tuple[str, str, int]:
        """The run's identity in the archive: (task, config hash, seed)."""
        return run_key(self.item, self.run)


def training_order(slots: list[Slot]) -> list[Slot]:
    """The order a bake trains ``slots`` in: runs in progress first (what is started finishes first), those with the
    fewest steps left (``trainer.max_steps`` less the steps done) before the others, then the queue's order (the sort
    is stable). Steps left, not steps done: 952 of an LM run's 2,000 finish before 2,000 of the paper protocol's
    14,000."""
    return sorted(slots, key=lambda s: (s.state != "in progress", s.steps_left if s.state == "in progress" else 0))


def run_key(item: QueueItem, run: Run) -> tuple[str, str, int]:
    """(task, config hash, seed): one run however many queue items ask for it."""
    return item.task, str(run.config_hash), run.seed


Waiting = list[tuple[QueueItem, str]]
"""Queue items judged at tuned values whose choice board (the second, ``majority/lr``) is not finished yet."""


def survey(
    items: list[QueueItem], archive: Archive, runs_dir: str, restore: bool = True, waiting: Waiting | None = None
) -> list[Slot]:
    """Every queued run in priority order (items in order; in each, seed by seed across the variants), with
    unfinished archived runs restored into ``runs_dir`` where they are further than the local ones. An item whose
    tuning grid is not finished is left out, said in one line, and added to ``waiting``."""
    slots: list[Slot] = []
    seen: dict[tuple[str, str, int], Slot] = {}
    for item in items:
        seeds = ",".join(map(str, item.seeds))
        try:
            _, runs = plan_runs(
                None if item.config else item.task,
                item.preset,
                seeds,
                list(item.variants),
                None,
                runs_dir,
                config_path=item.config,
                results_dir=archive.root.parent,
            )
        except ChoiceNotReady as exc:  # a board judged at tuned rates waits for its tuning grid
            count = len(item.variants) * len(item.seeds)
            print(
                f"normbench: bake: results/{item.board}/ ({count} runs at the tuned rates) waits for its tuning grid, "
                f"results/{exc.board}/ ({exc.reason}): the bake trains that grid first, then these runs",
                file=sys.stderr,
            )
            if waiting is not None:
                waiting.append((item, exc.board))
            continue
        order = {v: i for i, v in enumerate(item.variants)}
        for run in sorted(runs, key=lambda r: (r.seed, order.get(r.variant, len(order)))):
            key = run_key(item, run)
            if key in seen:  # trained once, shown on every board that plans it
                if item.board not in seen[key].boards:
                    seen[key].also.append(item.board)
                continue
            seen[key] = stand(item, run, archive, restore)
            slots.append(seen[key])
    return slots


def in_queue_order(queue_left: list[Slot], new: list[Slot], items: list[QueueItem]) -> None:
    """Put ``new`` slots into ``queue_left`` where their item stands in the queue (before later items' runs)."""
    rank = {id(item): i for i, item in enumerate(items)}
    for slot in new:
        at = next((k for k, s in enumerate(queue_left) if rank[id(s.item)] > rank[id(slot.item)]), len(queue_left))
        queue_left.insert(at, slot)


def local_steps(run: Run, record: RecordDocument) -> int:
    """The steps a local unfinished run continues from: its checkpoint's (0 without one, or with one that cannot be
    read: the run starts afresh)."""
    ckpt = record_file(run).parent / "checkpoints" / "last.ckpt"
    try:
        return checkpoint_step(ckpt) if ckpt.is_file() else 0
    except ArchiveError:
        return 0


def archived_state(archive: Archive, task: str, run: Run) -> tuple[str | None, str]:
    """Whether the archive holds a run done: ``("finished", "")`` when a board published it before the archive, or
    its canonical replicate passes the check a leaderboard makes of it (:func:`normbench.training.run.verify.
    check_archived`); ``("refused", why)`` when that replicate fails it (or a file of the run's folder cannot be
    read); ``(None, "")`` when the archive holds no finished replicate."""
    key = str(run.config_hash)
    try:
        rep = archive.canonical(task, key, run.seed)
        if rep is None:
            return ("finished" if archive.published_elsewhere(task, key, run.seed) else None), ""
        check_archived(rep, key)
    except ValueError as exc:
        return "refused", str(exc)
    return "finished", ""


def local_finished(run: Run) -> bool:
    """Whether the run's own folder holds it finished and its files pass the sweep's check (one that fails it is
    trained again, by its sweep)."""
    try:
        return run.record_path is not None and finished_status(run.record_path, str(run.config_hash)) is not None
    except ValueError:
        return False


def stand(item: QueueItem, run: Run, archive: Archive, restore: bool = True) -> Slot:
    """Where one queued run stands: finished when the archive holds it done (:func:`archived_state`), refused (said
    in one line) when its archived record fails that check, finished here when only its run folder holds it finished
    (the bake archives it); an archived unfinished replicate further than the local run is restored (``restore``)."""
    state, why = archived_state(archive, item.task, run)
    if state == "refused":
        print(f"normbench: bake: {why}; the run is not counted done (restore the file from git)", file=sys.stderr)
    if state is not None:
        return Slot(item, run, state)
    if local_finished(run):
        return Slot(item, run, "finished here")
    try:
        local = read_record(run.record_path) if run.record_path and Path(run.record_path).is_file() else None
    except ValueError:
        local = None  # its sweep redoes it
    step = local_steps(run, local) if local is not None else 0
    try:
        rep = archive.in_progress(item.task, str(run.config_hash), run.seed)
    except ValueError as exc:
        print(f"normbench: bake: {exc}; the run is not counted done (restore the file from git)", file=sys.stderr)
        return Slot(item, run, "refused")
    archived_step = steps_done(rep.record()) if rep is not None else 0
    if rep is not None and archived_step > step:
        step = archived_step
        if restore:
            archive.restore(rep, record_file(run).parent)
    return Slot(item, run, "in progress" if step else "not started", step)


def archive_finished_here(slots: list[Slot], archive: Archive, report: BakeReport, uncommitted: bool) -> set[str]:
    """Archive the runs their run folders hold finished that the archive lacks (a bake stopped while it archived
    them, by a full disk say); each one the archive then holds done counts as finished now, any other as finished
    here but not archived. Returns the boards of the runs added."""
    if not slots:
        return set()
    outcome = archive_runs(archive, [s.run for s in slots], uncommitted=uncommitted, checkpoint=True, quiet=True)
    report.archived.update(outcome)
    changed: set[str] = set()
    for slot in slots:
        if archived_state(archive, slot.item.task, slot.run)[0] == "finished":
            slot.state = "finished"
            report.finished_now += 1
            changed.update(slot.boards)
        else:
            report.unarchived += 1
    return changed


def count_trained(todo: list[Slot], archive: Archive, report: BakeReport) -> set[str]:
    """Count where the runs a bake trained stand now (finished: archived and verified; finished here but not
    archived; in progress; not started); returns the tasks with runs finished here."""
    finished_tasks: set[str] = set()
    for slot in todo:
        try:
            record = read_record(record_file(slot.run)) if record_file(slot.run).is_file() else None
        except ValueError:
            record = None
        if record is not None and record.get("status") in FINISHED:
            finished_tasks.add(slot.item.task)
            if archived_state(archive, slot.item.task, slot.run)[0] == "finished":
                report.finished_now += 1
            else:
                report.unarchived += 1
        elif record is not None and (step := local_steps(slot.run, record)) > 0:
            report.in_progress.append((slot.run.variant, slot.run.seed, step, planned_steps(slot.run.config)))
        else:
            report.not_started += 1
    return finished_tasks
