"""What a sweep is asked to do: the options of ``normbench sweep`` and ``normbench bench``, in one dataclass.

Every other ``--section.key VALUE`` on their command line is an override of every run's config (the
syntax of ``normbench fit``); :func:`split_overrides` tells the two apart.
"""

from __future__ import annotations

import ast
import dataclasses
import difflib
import functools
import os
import re
import sys
from dataclasses import dataclass
from importlib import metadata

NO_CONFIG = "config: --config <task or file> is required (e.g. --config majority)"
#: the sections a sweep's config override may name (``--compile``: normbench fit's own option)
OVERRIDE_SECTIONS = ("model", "data", "trainer", "compile")


def override_section(key: str, what: str = "override") -> str:
    """The section of a config override (``--model.arch.attn_norm.component`` -> ``model``; ``init_args`` may be
    spelled out), or a one-line error naming it and the sections allowed: checked before anything heavy is
    imported, so a mistyped option is reported at once (its key within the section is checked against the classes
    when the runs are planned)."""
    parts = key.removeprefix("--").split("=")[0].split(".")
    if parts[0] not in OVERRIDE_SECTIONS or (parts[0] == "compile" and len(parts) > 1):
        raise ValueError(
            f"{what}: {key.split('=')[0]!r} is not an option of a sweep; give model.*, data.* or trainer.* "
            f"keys, or --compile (seeds: --seeds)"
        )
    if parts[0] == "trainer" and len(parts) == 2:
        check_trainer_key(parts[1].rstrip("+"), what)
    return parts[0]


@functools.cache
def trainer_keys() -> frozenset[str]:
    """The keywords of Lightning's ``Trainer`` (what ``--trainer.<key>`` may name), read from its source without
    importing it (a second, where the import takes ten); empty where the source is not found."""
    try:
        path = metadata.distribution("lightning").locate_file("lightning/pytorch/trainer/trainer.py")
        tree = ast.parse(open(str(path), encoding="utf-8").read())
    except (metadata.PackageNotFoundError, OSError, SyntaxError, ValueError):
        return frozenset()
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef) and node.name == "Trainer":
            for item in node.body:
                if isinstance(item, ast.FunctionDef) and item.name == "__init__":
                    return frozenset(a.arg for a in [*item.args.args, *item.args.kwonlyargs][1:])
    return frozenset()


def check_trainer_key(name: str, what: str = "override") -> None:
    """A one-line error for ``--trainer.<name>`` where Lightning's ``Trainer`` takes no such keyword, with the
    closest it takes (nothing where its keywords could not be read)."""
    keys = trainer_keys()
    if keys and name not in keys:
        close = difflib.get_close_matches(name, sorted(keys), n=1)
        hint = f"did you mean trainer.{close[0]}?" if close else "see `normbench fit --config <task> --help`"
        raise ValueError(f"{what}: 'trainer.{name}' is not an option of Lightning's Trainer; {hint}")


@dataclass(frozen=True)
class SweepOptions:
    """Options of a sweep: which runs, where they train, where their leaderboard goes.

    Args:
        config: a registered task's name (e.g. ``majority``) or a task config file.
        preset: preset of the config (e.g. ``quick``, ``paper``; default: its ``default_preset``).
        grid: grid axes ``AXIS=V1,V2``, e.g. ``model.arch.attn_norm.component=both,project,scale,none``.
        seeds: e.g. ``0-9`` or ``0,3,5`` (default: the preset's ``bench.seeds``).
        variants: named variants of the config, ``a,b`` (default: ``bench.default_variants``, else all).
        workers: concurrent runs on the CPU, threads split between them (default: one per available CPU
            core; with ``gpus`` one per GPU group; with ``vectorize`` 1).
        gpus: comma-separated GPU ids, e.g. ``0,1,2,3``: one concurrent run per GPU (or per ``gpus_per_run``).
        gpus_per_run: GPUs given to each run (for DDP inside a run).
        shard: ``I/N``: every N-th planned run from the I-th (job arrays); writes no leaderboard.
        vectorize: ``K``: K seeds of a variant trained as one stacked model, ``workers`` (or one per GPU of
            ``gpus``) stacks at a time; ``auto``: K and the stacks per GPU from the devices' memory and the
            model (``--dry_run`` prints the plan).
        runs_dir: root of logs, checkpoints and run records.
        results_dir: leaderboards go to ``RESULTS_DIR/<task>/[NAME]``.
        name: leaderboard subfolder (default: none for the task's own bench, the preset's name when only the
            preset differs, else ``<preset>-<hash of what differs>``), or a board key of the task: the board's
            folder under ``RESULTS_DIR`` (a report card's ``cards/<card>/<task>/lr``).
        leaderboard: write the leaderboard.
        progress: progress bars (on a terminal).
        force: replace the published leaderboard even when this sweep lacks some of its finished runs or
            settings (refused by default, before anything trains); implies ``uncommitted``.
        uncommitted: archive and publish runs trained from uncommitted code (the board then says so), without
            leave to replace a published leaderboard.
        archive: add the finished runs to the run archive (``RESULTS_DIR/archive``: one replicate per platform,
            never replacing one) and show on the board each run's canonical replicate where it has one.
    """

    config: str | None = None
    preset: str | None = None
    grid: list[str] | None = None
    seeds: str | None = None
    variants: str | None = None
    workers: int | None = None
    gpus: str | None = None
    gpus_per_run: int = 1
    shard: str | None = None
    vectorize: str = "1"
    runs_dir: str = "runs"
    results_dir: str = "results"
    name: str | None = None
    leaderboard: bool = True
    progress: bool = True
    force: bool = False
    uncommitted: bool = False
    archive: bool = True

    @property
    def writes_board(self) -> bool:
        """Whether the sweep writes its leaderboard: ``leaderboard``, and no ``shard`` (a shard writes none)."""
        return self.leaderboard and self.shard is None

    @property
    def publishes_uncommitted(self) -> bool:
        """Whether runs trained from uncommitted code may be archived and shown: ``uncommitted``, or ``force``."""
        return self.force or self.uncommitted

    def gpu_ids(self) -> list[int] | None:
        """``gpus`` as a list of ids, each a GPU visible here (:func:`visible_gpus`), or a one-line error."""
        if self.gpus is None or self.gpus == "":
            return None
        text = str(self.gpus).strip("[] ").replace(" ", "")
        if not re.fullmatch(r"\d+(,\d+)*", text):
            raise ValueError(f"gpus: {self.gpus!r} must be comma-separated GPU ids, e.g. 0,1,2,3")
        ids = [int(g) for g in text.split(",")]
        visible = visible_gpus()
        absent = [g for g in ids if g not in visible]
        if absent:
            seen = f"{len(visible)} GPU{'s' if len(visible) != 1 else ''} visible here"
            seen += f" (ids {', '.join(map(str, visible))})" if visible else " (CUDA finds none)"
            raise ValueError(
                f"gpus: --gpus {text} asks for GPU {absent[0]}, but {seen}; "
                f"{'drop --gpus to train on the CPU' if not visible else 'give ids of visible GPUs'}"
            )
        return ids

    def stack_size(self) -> int | str:
        """``vectorize`` as K >= 1 or ``"auto"``, or a one-line error."""
        text = str(self.vectorize)
        if text == "auto":
            return text
        if not re.fullmatch(r"\d+", text) or int(text) < 1:
            raise ValueError(f"vectorize: {text!r} is not allowed; give K >= 1 seeds per stacked model, or auto")
        return int(text)

    @property
    def config_path(self) -> str:
        """``config``, which every sweep names (a one-line error otherwise)."""
        if not self.config:
            raise ValueError(NO_CONFIG)
        return self.config

    def check(self, overrides: list[str]) -> None:
        """One-line error for options that cannot go together (before anything is planned)."""
        if not self.config:
            raise ValueError(NO_CONFIG)
        self.gpu_ids()
        vectorize = self.stack_size()
        if self.workers is not None and self.workers < 1:
            raise ValueError(f"workers: must be >= 1, got {self.workers}")
        if self.gpus_per_run < 1:
            raise ValueError(f"gpus_per_run: must be >= 1, got {self.gpus_per_run}")
        if vectorize != 1 and any(a == "--compile" or a.startswith("--compile=") for a in overrides):
            raise ValueError("compile: stacked seeds train uncompiled; drop --compile or use --vectorize 1")
        if vectorize != 1 and self.gpus_per_run != 1:
            raise ValueError("gpus_per_run: a stack of seeds trains on one GPU; drop --gpus_per_run with --vectorize")


def visible_gpus() -> list[int]:
    """The GPU ids ``--gpus`` may name: those ``CUDA_VISIBLE_DEVICES`` lists (when it lists numbers), else
    ``0 .. n-1`` for the n GPUs CUDA finds; none when it finds none."""
    import torch

    count = torch.cuda.device_count()
    if count == 0:
        return []
    listed = os.environ.get("CUDA_VISIBLE_DEVICES", "").replace(" ", "")
    if re.fullmatch(r"\d+(,\d+)*", listed):
        return [int(g) for g in listed.split(",")][:count]
    return list(range(count))


OPTION_NAMES = frozenset(f.name for f in dataclasses.fields(SweepOptions))


@dataclass(frozen=True)
class BakeOptions:
    """How a bake trains its runs: the options ``normbench bake`` and ``normbench card`` share.

    Args:
        budget: minutes of training (default: until every run is done); every run started is checkpointed at
            the end, and the same command continues it.
        gpus: comma-separated GPU ids; ``workers`` runs per GPU (default 4 per GPU).
        workers: concurrent runs (default: one per CPU core, 4 per GPU with ``gpus``).
        nice: CPU priority increment of the bake and its runs (default 10: trains in the background; 0: normal).
        runs_dir: where the runs train.
        results_dir: the results root: the run archive (``archive/``), the boards and the cards.
        uncommitted: archive runs trained from uncommitted code and show them on the rebuilt boards (which say
            so); a published board is never replaced with fewer runs or other values.
        train: ``false``: train nothing; rebuild every queued board that has a run held (archived or finished here)
            from the archive (a card: written from the runs the archive holds).
        pages: rewrite the norm leaderboard and the project's docs pages from the rebuilt boards (default: a bake
            does; a card does only when asked, so that it writes under its own folder).
    """

    budget: float | None = None
    gpus: str | None = None
    workers: int | None = None
    nice: int = 10
    runs_dir: str = "runs"
    results_dir: str = "results"
    uncommitted: bool = False
    train: bool = True
    pages: bool | None = None

    def check(self) -> None:
        """One-line error for a ``budget`` or ``nice`` a bake cannot take (before anything is planned)."""
        if self.budget is not None and self.budget <= 0:
            raise ValueError(f"budget: {self.budget} must be a positive number of minutes")
        if self.nice < 0:
            raise ValueError(f"nice: {self.nice} must be >= 0 (a bake never raises its priority)")

    def gpu_ids(self) -> list[str]:
        """The GPU ids ``gpus`` names (``"0,1"``), each one CUDA sees here (:func:`visible_gpus`); a one-line error
        ``bake: --gpus ...: ...`` otherwise, before anything is planned (the runs could not train, and only their logs
        would say why)."""
        ids = [g for g in str(self.gpus or "").replace(" ", "").strip("[]").split(",") if g]
        if not ids:
            return []
        flag = f"--gpus {','.join(ids)}"
        if not all(g.isdigit() for g in ids):
            raise ValueError(f"bake: {flag}: not GPU ids; give comma-separated ids, e.g. 0,1")
        visible = visible_gpus()
        absent = [g for g in ids if int(g) not in visible]
        if absent:
            seen = f"the GPUs visible here are {', '.join(map(str, visible))}" if visible else "CUDA finds no GPU here"
            fix = "give the ids of visible GPUs" if visible else "drop --gpus to train on the CPU"
            raise ValueError(f"bake: {flag}: GPU {absent[0]} is not visible ({seen}); {fix}")
        return ids

    def planned_gpu_ids(self) -> list[str]:
        """The GPU ids a dry run plans for: those ``gpus`` names, said in one line where this machine lacks them (a
        queue may be planned here for a GPU machine; a bake that trains refuses, :meth:`gpu_ids`)."""
        try:
            return self.gpu_ids()
        except ValueError as exc:
            print(f"normbench: dry run: {exc} (planned as given; a bake that trains here refuses)", file=sys.stderr)
            return [g for g in str(self.gpus or "").replace(" ", "").strip("[]").split(",") if g]


BAKE_OPTION_NAMES = frozenset(f.name for f in dataclasses.fields(BakeOptions))


def split_overrides(argv: list[str], own: frozenset[str] = OPTION_NAMES) -> tuple[list[str], list[str]]:
    """``argv`` -> (the command's own options, every run's config overrides).

    An option is the command's own when its name (``--name`` or ``--name=value``, before any dot) is in
    ``own``, or is ``-h``/``--help``; everything else (``--trainer.max_steps 100``, ``--compile default``)
    is an override, with the value that follows it. A bare token before any option is the command's own
    (e.g. the task of ``normbench bench majority``).
    """
    mine: list[str] = []
    rest: list[str] = []
    tokens = list(argv)
    target = mine
    while tokens:
        token = tokens.pop(0)
        if token.startswith("--") or token == "-h":
            name = token[2:].partition("=")[0].split(".")[0].removesuffix("+").replace("-", "_")
            own_option = name in own or (name.startswith("no_") and name[3:] in own)
            target = mine if own_option or token in ("-h", "--help") else rest
        target.append(token)
    return mine, rest
