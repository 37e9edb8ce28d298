"""The publishing rule of every writer under ``results/``.

A published board is replaced only by a build that covers at least its finished runs and its
settings; anything else is refused with one line before anything is written (``--force`` replaces
it anyway). What a board is and what "covers" means, per writer:

* a leaderboard (``leaderboard.json``, with the figures and reports written beside it by the same
  build): every ``(variant, seed)`` finished there is finished in the new build with the same config
  hash, and the task, preset, overrides, grid and config file are the same;
* the random grid (``unselectable/random_grid.json``): the new grid's n and d ranges contain the
  published ones, with at least as many runs per cell and the same seed;
* the d = 3 geometry pictures (``geometry.json``): every ``(variant, seed)`` drawn there is drawn
  again, from a run with the same config hash;
* a report beside a leaderboard (``sst2/unselectable_tokens.json``, Tables 3-4): every run it read
  is read again (checked with the leaderboard, before either is written).

A missing board protects nothing. A board that exists but cannot be read (not JSON, or not the
shape its writer gives it) is not replaced silently: the refusal names it, and ``--force`` replaces it.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, TypedDict

from normbench.archive import Board, BoardError, load_board
from normbench.archive.board import SweepDefinition
from normbench.archive.compact import expand
from normbench.archive.record import RecordDocument
from normbench.errors import one_line
from normbench.publish.settings import Bench

Runs = dict[tuple[str, int], str | None]
"""Finished (or planned) runs of a build: ``(variant, seed)`` -> config hash (``None``: not known)."""

Document = dict[str, Any]
"""A JSON object read from a published file, whichever writer wrote it (a leaderboard, a token report, the geometry
pictures' or the random grid's data) and not checked against that writer's shape: its readers check what they read."""


class Settings(TypedDict, total=False):
    """What a leaderboard was built with (:func:`leaderboard_settings`): its ``task`` and ``preset`` and, on a board
    that records its sweep, the config ``overrides`` and ``grid`` axes of its command line and its ``config_file``."""

    task: str | None
    preset: str | None
    overrides: list[str] | None
    grid: list[str] | None
    config_file: str | None


FORCE = "pass --force to replace it"
ALLOW_UNCOMMITTED = "pass --uncommitted true to publish them"
SHOWN = 4  # missing runs named in a refusal; the rest are counted


class Refused(ValueError):
    """A build that may not replace the board in its way (one line: ``results_dir: ...``)."""


class AwaitingReplacements(Refused):
    """A board whose superseded runs are still planned and not yet retrained on today's pipeline: it stands as
    published until every replacement has finished (one line saying how many have)."""


def read_board(path: Path, elsewhere: str) -> Document | None:
    """The JSON object at ``path``, a compact board's shared blocks back in their places
    (:func:`normbench.archive.compact.expand`: the document whichever board format it is in); ``None`` when there is
    none; a :class:`Refused` line when it cannot be read."""
    if not path.exists():
        return None
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
        if not isinstance(doc, dict):
            raise ValueError(f"a JSON {type(doc).__name__}, not an object")
        doc = expand(doc)
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise unreadable(path, exc, elsewhere) from exc
    return doc


def read_if_readable(path: Path) -> Document | None:
    """The JSON object at ``path``, or ``None`` when there is none or it cannot be read as one: for what a build
    reads from a published report (its stand-ins' counts, its sentences), whose publishing check,
    :func:`check_report`, refuses an unreadable one before anything is written unless ``--force``."""
    try:
        return read_board(path, "--results_dir")
    except Refused:
        return None


def says_the_same(old: Mapping[str, Any], new: Mapping[str, Any], volatile: tuple[str, ...]) -> bool:
    """Whether two builds of a board or report say the same: equal once the ``volatile`` top-level keys (when and
    where they were built) are left out, so a build that says the same is not written again. A build from committed
    code never says the same as one from uncommitted code (``provenance.dirty``): it replaces it."""
    if built_from_uncommitted_code(old) and not built_from_uncommitted_code(new):
        return False
    strip = lambda doc: {k: v for k, v in doc.items() if k not in volatile}  # noqa: E731
    return json.loads(json.dumps(strip(old), default=str)) == json.loads(json.dumps(strip(new), default=str))


def built_from_uncommitted_code(doc: Mapping[str, Any]) -> bool:
    """Whether a board or report says it was built from a tree whose code differs from its commit."""
    provenance = doc.get("provenance")
    return isinstance(provenance, dict) and provenance.get("dirty") is True


def unreadable(path: Path, exc: Exception, elsewhere: str) -> Refused:
    """The refusal for a board that exists but cannot be read."""
    reason = one_line(str(exc))[:120]
    return Refused(
        f"results_dir: {path} exists but is unreadable ({reason}); restore it, write elsewhere "
        f"with {elsewhere}, or {FORCE}"
    )


def leaderboard_runs(board: Board) -> Runs:
    """The finished runs a leaderboard shows: each variant's seeds, with its config hash."""
    return {(v.name, int(seed)): v.config_hash for v in board.variants for seed in v.seeds}


def leaderboard_settings(board: Board) -> Settings:
    """The settings a leaderboard was built with: task, preset and, once boards recorded their
    sweep, its overrides, grid and config file."""
    return settings_of(board.task, board.preset, board.sweep)


def settings_of(task: str | None, preset: str | None, sweep: SweepDefinition | None) -> Settings:
    """The settings of a board of ``task`` at ``preset``, built by ``sweep`` (``None``: a board that does not record
    its sweep, whose settings are its task and preset only)."""
    settings: Settings = {"task": task, "preset": preset}
    if sweep is not None:
        settings.update(
            {"overrides": sweep.get("overrides"), "grid": sweep.get("grid"), "config_file": sweep.get("config_file")}
        )
    return settings


def sweep_settings(task: str, preset: str | None, definition: SweepDefinition | None) -> Settings:
    """A new leaderboard's settings, as :func:`leaderboard_settings` reads them from a board (a sweep without a
    definition has no overrides, grid or config file)."""
    if definition is None:
        return {"task": task, "preset": preset, "overrides": None, "grid": None, "config_file": None}
    return settings_of(task, preset, definition)


def describe_runs(runs: list[tuple[str, int]]) -> str:
    """``pre/both seed 1, pre/both seed 2, ...``: the first few runs by name."""
    shown = ", ".join(f"{variant} seed {seed}" for variant, seed in runs[:SHOWN])
    return shown + (", ..." if len(runs) > SHOWN else "")


def superseded_configs(bench: Bench) -> bool | frozenset[str]:
    """What ``bench.superseded`` declares superseded: every published config (a sentence saying why), or
    the config hashes it lists (``{why: ..., configs: [<hash>, ...]}``); ``False`` if nothing."""
    value = bench.get("superseded")
    if isinstance(value, dict):
        configs = value.get("configs")
        if not isinstance(value.get("why"), str) or not isinstance(configs, list) or not configs:
            raise ValueError("bench.superseded: give a sentence, or {why: <sentence>, configs: [<config hash>, ...]}")
        return frozenset(str(c) for c in configs)
    return bool(value)


def is_superseded(digest: str | None, superseded: bool | frozenset[str]) -> bool:
    """Whether a published run's config hash is superseded (``bench.superseded``: every config, or those listed)."""
    return superseded is True or (digest is not None and digest in (superseded or ()))


def dropped(run: tuple[str, int], digest: str | None, kept: set[str], superseded: bool | frozenset[str]) -> bool:
    """Whether a published run may be absent from a new build: its variant is gone from it (``kept``: the variants the
    build plans; a tuned board's point its choice board no longer chooses) and its config hash is among those
    declared superseded by name."""
    return run[0] not in kept and isinstance(superseded, frozenset) and digest in superseded


def check_runs(
    path: Path,
    old: Runs,
    old_settings: Mapping[str, object],
    new: Runs,
    new_settings: Mapping[str, object],
    elsewhere: str,
    noun: str = "this build has",
    superseded: bool | frozenset[str] = False,
    variants: set[str] | None = None,
) -> None:
    """Refuse (one line) unless ``new`` covers every run of ``old`` with the same config hash and the same settings.

    Only the settings the old board records are compared (older boards record fewer). ``superseded``: the
    task declares its published runs superseded by today's pipeline (``bench.superseded``, see
    :func:`superseded_configs`: all of them, or those of the config hashes listed), so a build of the
    same runs under today's config hashes may replace them, and a build without a variant whose config hash is
    listed (a tuned board's point its choice board no longer chooses: :func:`normbench.judge.tuned.rechosen`)
    may drop it. ``variants``: the variants the build plans (default: those of ``new``); a superseded run of one of
    them that ``new`` lacks is a replacement not finished yet, and the board stands (:class:`AwaitingReplacements`).
    """
    differ = [
        f"{key} {old_settings[key]!r}, this build {new_settings.get(key)!r}"
        for key in old_settings
        if key in new_settings and new_settings[key] != old_settings[key]
    ]
    changed: dict[str, str] = {}
    for (variant, seed), digest in old.items():
        now = new.get((variant, seed))
        if digest and now and now != digest and not is_superseded(digest, superseded):
            changed.setdefault(variant, f"config of {variant} {digest}, this build {now}")
    differ += list(changed.values())
    if differ:
        shown = "; ".join(differ[:3]) + ("; ..." if len(differ) > 3 else "")
        raise Refused(
            f"results_dir: {path} was built with other settings ({shown}); rebuild it with its "
            f"settings, write elsewhere with {elsewhere}, or {FORCE}"
        )
    kept = {variant for variant, _ in new} if variants is None else set(variants)
    missing = [run for run, digest in old.items() if run not in new and not dropped(run, digest, kept, superseded)]
    if missing and all(is_superseded(old[run], superseded) for run in missing):
        raise AwaitingReplacements(
            f"results_dir: {path} stands as published: {len(missing)} of its {len(old)} runs, trained on a "
            f"superseded pipeline, {'has' if len(missing) == 1 else 'have'} no replacement yet "
            f"({describe_runs(missing)}; this build has {len(new)} finished); `normbench bake` or `normbench sweep` "
            "trains them, and the board is rebuilt once every one has"
        )
    if missing:
        raise Refused(
            f"results_dir: {path} holds {len(old)} finished runs; {noun} {len(new)} ({len(missing)} "
            f"missing: {describe_runs(missing)}); rebuild with every run, write elsewhere with "
            f"{elsewhere}, or {FORCE}"
        )


def check_leaderboard(
    out: Path,
    runs: Runs,
    settings: Settings,
    force: bool = False,
    planned: bool = False,
    superseded: bool | frozenset[str] = False,
    variants: set[str] | None = None,
) -> None:
    """May a build with ``runs`` (finished, or with ``planned`` the sweep's planned ones) and ``settings``
    (:func:`sweep_settings`) replace ``out/leaderboard.json``? Refuses with one line if not (``variants``: the
    variants the build plans, :func:`check_runs`)."""
    if force:
        return
    path = Path(out) / "leaderboard.json"
    elsewhere = "--results_dir/--name"
    if not path.exists():
        return
    try:
        board = load_board(path)
        old = leaderboard_runs(board)
    except BoardError as exc:  # not JSON, or not the shape of a board
        raise unreadable(path, ValueError(exc.reason), elsewhere) from exc
    except (TypeError, ValueError) as exc:
        raise unreadable(path, exc, elsewhere) from exc
    check_runs(
        path,
        old,
        leaderboard_settings(board),
        runs,
        settings,
        elsewhere,
        "this sweep plans" if planned else "this build has",
        superseded,
        variants,
    )


UNCOMMITTED = "trained from uncommitted code"


def repository_root() -> Path | None:
    """The root of the git checkout normbench runs from (``None`` when it is not one: an installed package)."""
    here = Path(__file__).resolve().parent
    try:
        top = subprocess.run(
            ["git", "rev-parse", "--show-toplevel"], cwd=here, capture_output=True, text=True, check=True
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return None
    return Path(top).resolve() if top else None


def publishes(out: Path) -> bool:
    """Whether a board written to ``out`` is published: inside the checkout's own ``results/``, which is committed."""
    root = repository_root()
    return root is not None and Path(out).resolve().is_relative_to(root / "results")


def check_committed(out: Path, records: Sequence[RecordDocument], uncommitted: bool = False) -> bool:
    """May these runs be published at ``out``? A run trained from uncommitted code (a dirty tree, or one whose
    state is unknown) names code that no commit holds: refused with one line unless ``uncommitted``, which publishes
    the board marked as trained from uncommitted code. Returns whether the board must carry that mark."""
    dirty = [r for r in records if (r.get("provenance") or {}).get("dirty") is not False]
    if not dirty:
        return False
    if not publishes(out):
        return True
    if not uncommitted:
        runs = describe_runs(sorted({(r["variant"], int(r["seed"])) for r in dirty}))
        raise Refused(
            f"results_dir: {len(dirty)} runs of {out} were {UNCOMMITTED} ({runs}); commit and train them again, "
            f"or {ALLOW_UNCOMMITTED} marked as {UNCOMMITTED}"
        )
    return True


def check_report(
    path: Path,
    read_runs: Callable[[Document], Runs],
    runs: Runs | Callable[[], Runs],
    force: bool = False,
    elsewhere: str = "--results_dir",
    noun: str = "this build has",
    superseded: bool | frozenset[str] = False,
) -> None:
    """May a report built from ``runs`` replace the one at ``path``, whose runs ``read_runs(doc)`` gives? ``runs``
    may be a function giving them: called only when there is a published report to check against."""
    if force:
        return
    doc = read_board(path, elsewhere)
    if doc is None:
        return
    try:
        old = read_runs(doc)
    except (AttributeError, KeyError, TypeError, ValueError) as exc:
        raise unreadable(path, ValueError(f"not the report its writer gives: {exc!r}"), elsewhere) from exc
    check_runs(path, old, {}, runs() if callable(runs) else runs, {}, elsewhere, noun, superseded)


def geometry_runs(doc: Document) -> Runs:
    """The runs a ``geometry.json`` drew: one per variant, with its seed and config hash."""
    return {(variant, int(s["seed"])): s.get("config_hash") for variant, s in doc.items()}


def check_geometry(out: Path, runs: Runs, force: bool = False) -> None:
    """May pictures drawn from ``runs`` (variant, seed -> config hash) replace ``out/geometry.json`` and its figures?"""
    check_report(Path(out) / "geometry.json", geometry_runs, runs, force, noun="this build draws")


def span(values: list[int]) -> str:
    """``3..60`` for a contiguous range, else the values."""
    if not values:
        return "none"
    ordered = sorted(set(values))
    if ordered == list(range(ordered[0], ordered[-1] + 1)):
        return f"{ordered[0]}..{ordered[-1]}" if len(ordered) > 1 else str(ordered[0])
    return ",".join(map(str, ordered))


def check_random_grid(out: Path, ns: list[int], ds: list[int], runs: int, seed: int, force: bool = False) -> None:
    """May a grid over ``ns`` x ``ds`` with ``runs`` sets per cell and ``seed`` replace ``out/random_grid.json``?

    It may when it contains the published n and d ranges, has at least as many runs per cell and the same seed.
    """
    if force:
        return
    path = Path(out) / "random_grid.json"
    doc = read_board(path, "--results_dir")
    if doc is None:
        return
    try:
        old_ns, old_ds = [int(n) for n in doc["ns"]], [int(d) for d in doc["ds"]]
        old_runs, old_seed = int(doc["runs"]), int(doc["seed"])
    except (KeyError, TypeError, ValueError) as exc:
        raise unreadable(path, ValueError(f"not a random grid: {exc!r}"), "--results_dir") from exc
    short = [
        f"n = {span(sorted(set(old_ns) - set(ns)))} missing" if not set(old_ns) <= set(ns) else "",
        f"d = {span(sorted(set(old_ds) - set(ds)))} missing" if not set(old_ds) <= set(ds) else "",
        f"{old_runs - runs} fewer runs per cell" if runs < old_runs else "",
        "another seed" if seed != old_seed else "",
    ]
    short = [s for s in short if s]
    if short:
        raise Refused(
            f"results_dir: {path} holds n = {span(old_ns)}, d = {span(old_ds)}, {old_runs} runs per cell, "
            f"seed {old_seed}; this build has n = {span(ns)}, d = {span(ds)}, {runs} runs per cell, "
            f"seed {seed} ({', '.join(short)}); run a grid that covers it, write elsewhere with "
            f"--results_dir, or {FORCE}"
        )
