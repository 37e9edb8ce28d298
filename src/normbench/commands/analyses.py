"""Commands that analyse trained runs or random keys: the decomposition, the d = 3 geometry, the random grid.

As in :mod:`normbench.commands.boards`, each function imports what it runs, so that the command line's
parsers (built from these signatures) and ``--help`` need no torch.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from collections.abc import Sequence
from pathlib import Path

from normbench.publish import files as publish


def decompose(ckpt: str | None = None, sequences: int = 256, out: str | None = None) -> None:
    """Additive decomposition e = i + h + f + c of a trained run's hidden states (Mickus et al. 2022).

    Writes ``decomposition.json`` (mean importance of each term per layer over held-out sequences,
    float64) and ``decomposition.png`` (like Mickus et al. Figure 3).

    Args:
        ckpt: a run's checkpoint, ``<runs_dir>/<task>/<label>-<hash>/seed<k>/checkpoints/last.ckpt``.
        sequences: validation sequences to decompose.
        out: output directory (default: the run's directory).
    """
    if not ckpt:
        raise ValueError("ckpt: --ckpt <run>/checkpoints/last.ckpt is required")
    if sequences < 1:
        raise ValueError(f"sequences: must be >= 1, got {sequences}")
    from normbench.io import check_writable
    from normbench.run_analyses.decomposition import decompose_checkpoint
    from normbench.training.run.loading import record_for_checkpoint
    from normbench.training.run.rundir import run_of_checkpoint

    record_for_checkpoint(Path(ckpt))  # the checkpoint and its record are there
    check_writable(out or run_of_checkpoint(ckpt), "out")  # before the work, not after it
    folder = decompose_checkpoint(ckpt, sequences, out)
    print(f"normbench: wrote {folder / 'decomposition.json'} and {folder / 'decomposition.png'}")


def geometry(
    preset: str = "geometry",
    seed: int = 0,
    variants: str | None = None,
    runs_dir: str = "runs",
    results_dir: str = "results",
    force: bool = False,
    overrides: Sequence[str] = (),
) -> None:
    """Figure 1a/1b of Brody et al.: 3-D keys and queries of the d = 3 majority models, and query angles over training.

    Reads the runs of ``normbench sweep --config tasks/majority.yaml --preset geometry`` and writes
    ``geometry_3d.png``, ``query_angle_histograms.png`` and ``geometry.json`` into ``<results_dir>/majority/``.

    Args:
        preset: preset of tasks/majority.yaml whose runs are drawn (its d_model must be 3).
        seed: which seed of each variant to draw.
        variants: variants to draw, ``a,b`` (default: the preset's).
        runs_dir: root of the run records.
        results_dir: the figures go to ``<results_dir>/majority/``.
        force: replace the published pictures even when these do not draw every (variant, seed) they drew,
            from runs of the same config.
        overrides: the config overrides the runs were trained with (``--section.key VALUE`` on the command
            line; they are part of the runs' keys).
    """
    from normbench.io import atomic_files
    from normbench.render.plots import GEOMETRY_FIGURES
    from normbench.run_analyses.geometry import write_geometry
    from normbench.sweep.plan import parse_names, plan_runs

    config, runs = plan_runs(
        "majority", preset, [seed], parse_names(variants, "variants"), list(overrides) or None, runs_dir
    )
    d = config["model"]["init_args"]["arch"]["d_model"]
    if d != 3:
        raise ValueError(f"preset: {preset!r} has model.arch.d_model={d}; the 3-D views need 3 (use --preset geometry)")
    missing = [str(r.record_path) for r in runs if r.record_path is None or not r.record_path.is_file()]
    if missing:
        raise FileNotFoundError(
            f"runs_dir: no run record {missing[0]}; run `normbench sweep --config "
            f"majority --preset {preset} --name {preset}` first"
        )
    out = Path(results_dir) / "majority"
    publish.check_geometry(out, {(r.variant, r.seed): r.config_hash for r in runs}, force)
    published = out / "geometry.json"
    old = json.loads(published.read_text(encoding="utf-8")) if published.is_file() and not force else None
    with tempfile.TemporaryDirectory(dir=out.parent if out.parent.is_dir() else None) as tmp:
        summary = write_geometry({r.variant: r.record_path for r in runs}, Path(tmp))
        if old is not None and comparable(old) == comparable(summary):
            print(f"normbench: {published} is unchanged (same runs and values)")
            return
        if old is not None:  # replicates of the published runs, trained on another platform or commit
            print(
                f"normbench: {published} and its figures kept: this machine's runs of the same configs give other "
                f"values (the d = 3 geometry is chaotic across platforms); {publish.FORCE}"
            )
            return
        with atomic_files(out, last=("geometry.json",)) as stage:
            for name in (*GEOMETRY_FIGURES, "geometry.json"):
                shutil.copyfile(Path(tmp) / name, stage / name)
    print(f"normbench: wrote {', '.join(str(out / name) for name in GEOMETRY_FIGURES)} and {out / 'geometry.json'}")
    for variant, s in summary.items():
        print(
            f"  {variant}: class-query angle to the normal {s['class_query_angle_to_normal_deg']:.1f} deg, "
            f"max |key . normal| {s['max_abs_key_component_along_normal']:.2e}"
        )


def comparable(summary: dict) -> str:
    """A geometry summary without where its runs lie (the run folders differ between machines)."""
    return json.dumps({k: {f: x for f, x in v.items() if f != "run"} for k, v in summary.items()}, sort_keys=True)


def random_grid(
    n_min: int = 3,
    n_max: int = 60,
    d_min: int = 3,
    d_max: int = 15,
    runs: int = 100,
    seed: int = 0,
    results_dir: str = "results",
    progress: bool = True,
    force: bool = False,
) -> None:
    """Figure 1c/1d: unselectable keys among random N(0, I) keys, raw and after LayerNorm.

    Writes ``<results_dir>/unselectable/``: random_grid.json, two heatmaps and a leaderboard. A published
    grid is replaced only by one that contains its n and d ranges, with as many runs per cell and its seed
    (checked before the grid is computed).

    Args:
        n_min, n_max: range of keys per set (inclusive).
        d_min, d_max: range of dimensions (inclusive).
        runs: random sets per (d, n) cell.
        seed: seed of the keys.
        results_dir: root of the results.
        progress: show a progress bar.
        force: replace the published grid even when this one does not cover it.
    """
    if not (1 <= n_min <= n_max and 1 <= d_min <= d_max):
        raise ValueError(
            f"n_min..n_max and d_min..d_max: need 1 <= min <= max, got {n_min}..{n_max} and {d_min}..{d_max}"
        )
    if runs < 1:
        raise ValueError(f"runs: must be >= 1 random sets per cell, got {runs}")
    out = Path(results_dir) / "unselectable"
    from normbench.analysis.random_grid import random_grid as run_grid
    from normbench.io import check_writable
    from normbench.publish.unselectable import write_random_grid

    publish.check_random_grid(out, list(range(n_min, n_max + 1)), list(range(d_min, d_max + 1)), runs, seed, force)
    check_writable(out, "results_dir")  # before the grid is computed, not after it
    grid = run_grid(range(n_min, n_max + 1), range(d_min, d_max + 1), runs, seed, progress)
    board = write_random_grid(grid, out)
    print(f"normbench: random grid in {grid['wall_time_s']:.1f} s; wrote {Path(results_dir) / 'unselectable'}")
    for claim in board["claims"]:
        print(f"  {claim['id']}: {claim['verdict']} (measured {claim['measured']})")
