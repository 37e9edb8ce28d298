"""Where a sweep's leaderboard goes, and whether that folder is its own.

Only a task's own bench (its ``default_preset``, default seeds and variants, no overrides, no grid) writes
``results/<task>/``. Every other sweep writes ``results/<task>/<name>/``, ``name`` given with ``--name`` or derived
from what differs (:func:`results_folder`), or the folder of a board key ``--name`` gives (a report card's board:
``cards/<card>/<task>[/<kind>]``, :mod:`normbench.archive.board_keys`); a named folder keeps the key of the sweep
that wrote it (:func:`sweep_key` of its :func:`sweep_definition`), and a different sweep never replaces it
(:func:`check_results_owner`).
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from typing import Any

from normbench.archive import BoardError, load_board
from normbench.archive.board import SweepDefinition
from normbench.archive.board_keys import task_key
from normbench.publish import files as publish
from normbench.sweep.plan import Run, parse_seeds


def sweep_definition(
    preset: str | None, runs: list[Run], overrides: list[str] | None, grid: list[str] | None, config_file: str | None
) -> SweepDefinition:
    """What a sweep is, as its command says it: preset, variants, seeds, overrides, grid, config file.

    Independent of the code's run keys, so the same command keeps owning its folder across versions. A sweep judged
    at tuned values (``bench.tuned``) names its base variants, as its command does: its points move whenever the
    choice board chooses again (its grid grew), and it stays the same sweep.
    """
    at_tuned = judged_at_tuned_values(runs)
    return {
        "preset": preset,
        "variants": list(dict.fromkeys(r.variant.split(",")[0] if at_tuned else r.variant for r in runs)),
        "seeds": sorted({r.seed for r in runs}),
        "overrides": list(overrides or []),
        "grid": list(grid or []),
        "config_file": Path(config_file).name if config_file else None,
    }


def judged_at_tuned_values(runs: list[Run]) -> bool:
    """Whether the runs are a sweep whose config chooses its points on a choice board (``bench.tuned``)."""
    return any((r.config.get("bench") or {}).get("tuned") for r in runs)


def named_by_points(old: Any, definition: SweepDefinition | None) -> bool:
    """Whether ``old``, a tuned board's sweep definition written when such boards were named by their points
    (``pre/scale,lr=0.006``), is ``definition`` once its points are reduced to their base variants."""
    if not isinstance(old, dict) or definition is None:
        return False
    bases = list(dict.fromkeys(str(v).split(",")[0] for v in old.get("variants") or []))
    return {**old, "variants": bases} == definition


def sweep_key(definition: SweepDefinition) -> str:
    """12 hex digits naming a :func:`sweep_definition`."""
    return hashlib.sha256(json.dumps(definition, sort_keys=True, default=str).encode()).hexdigest()[:12]


def results_folder(
    config: dict[str, Any],
    preset: str | None,
    seeds: Any,
    variants: list[str] | None,
    overrides: list[str] | None,
    grid: list[str] | None,
    name: str | None,
    config_file: str | None = None,
) -> str | None:
    """The subfolder of ``results/<task>/`` a sweep's leaderboard goes to, or the key of its board elsewhere (``name``
    a key of the task's: ``cards/dyt/majority/lr``); ``None`` for the task's own bench.

        The task's own bench is its shipped config (``config_file`` ``None``) at its ``default_preset``
        with the preset's seeds and variants, no overrides and no grid. Any other sweep gets ``name``,
        else (another config file) the file's stem, else the preset's name when only the preset
        differs, else ``<preset>-<8 hex digits of what differs>``.
    """
    bench = config.get("bench") or {}
    default_seeds = list(bench.get("seeds") or [0])
    default_variants = bench.get("default_variants") or list(bench.get("variants") or {})
    same_seeds = seeds is None or parse_seeds(seeds) == default_seeds
    same_variants = variants is None or list(variants) == list(default_variants)
    if name is not None and "/" in name:  # a board key of the task (a report card's board)
        task_key(str(config.get("task")), name)
        return name
    if name is not None:
        if not re.fullmatch(r"[A-Za-z0-9_.+=-]+", name) or name in (".", ".."):
            raise ValueError(f"name: {name!r} must be a folder name (letters, digits, _ . + = -)")
        return name
    differs = not (same_seeds and same_variants) or bool(overrides) or bool(grid)
    if config_file is not None:  # a config of one's own never replaces the task's published results
        stem = re.sub(r"[^A-Za-z0-9_.+=-]+", "-", Path(config_file).stem).strip("-.") or "custom"
        if not differs and preset == config.get("default_preset"):
            return stem
        what = json.dumps([preset, parse_seeds(seeds), variants, overrides, grid], default=str)
        return f"{stem}-{preset or 'default'}-{hashlib.sha256(what.encode()).hexdigest()[:8]}"
    default_preset = config.get("default_preset")
    if not differs and preset == default_preset:
        return None
    if not differs:
        return preset or "default"
    what = json.dumps([preset, parse_seeds(seeds), variants, overrides, grid], default=str)
    return f"{preset or 'default'}-{hashlib.sha256(what.encode()).hexdigest()[:8]}"


def grows(doc: dict, preset: str | None, runs: list[Run]) -> bool:
    """Whether this sweep is the board's own with more seeds or variants: same preset, and every run the board shows
    (variant, seed, config hash) is one this sweep plans (the bake adds seeds to a published board this way), or one
    of a variant it no longer plans whose config hash its config declares superseded (:func:`publish.dropped`)."""
    superseded = publish.superseded_configs(runs[0].config.get("bench") or {}) if runs else False
    kept = {r.variant for r in runs}
    shown = {
        (v["name"], int(s), str(v.get("config_hash")))
        for v in doc.get("variants", [])
        for s in v.get("seeds", [])
        if not publish.dropped((v["name"], int(s)), v.get("config_hash"), kept, superseded)
    }
    planned = {(r.variant, int(r.seed), str(r.config_hash)) for r in runs}
    return doc.get("preset") == preset and bool(shown) and shown <= planned


def check_results_owner(
    out: Path, key: str, preset: str | None, runs: list[Run], definition: SweepDefinition | None = None
) -> None:
    """One-line error when ``out`` holds the leaderboard of another sweep (its ``sweep_key`` differs and it is not
    this sweep's board with fewer seeds or variants: :func:`grows`, nor this tuned sweep's board named by the points
    it chose then: :func:`named_by_points`).

    A leaderboard written before sweeps had a definition (no ``sweep`` block) belongs to this sweep
    when its preset, variants and seeds are this sweep's.
    """
    board = out / "leaderboard.json"
    if not board.is_file():
        return
    try:
        doc = load_board(board).to_json()
    except (OSError, BoardError) as exc:
        why = getattr(exc, "reason", exc)
        raise ValueError(f"name: {board} is unreadable ({why}); choose another --name, or {publish.FORCE}") from exc
    owner = doc.get("sweep_key")
    if "sweep" not in doc:
        planned = {(r.variant, r.seed) for r in runs}
        published = {(v["name"], s) for v in doc.get("variants", []) for s in v.get("seeds", [])}
        if doc.get("preset") == preset and planned == published:
            return
    elif owner == key or grows(doc, preset, runs):
        return
    elif judged_at_tuned_values(runs) and named_by_points(doc.get("sweep"), definition):
        return
    raise publish.Refused(
        f"name: {out} holds the leaderboard of another sweep (key {owner}, this one {key}); "
        f"choose another --name, or {publish.FORCE}"
    )
