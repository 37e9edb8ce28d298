"""The cells of a board's tables: a seed's value, ``mean ± std`` over seeds, a variant's seeds, status and norms."""

from __future__ import annotations

from normbench.archive import Metric, VariantEntry
from normbench.formatting import number
from normbench.judge.chance.board import chance_text
from normbench.judge.collapse import AT_CHANCE, COLLAPSED


def fmt_value(value: float | None) -> str:
    """One seed's value: 3 decimals, whole numbers from 100 up, ``–`` when missing."""
    return number(value, whole_from=100)


def fmt_metric(m: Metric) -> str:
    """``mean ± std`` (``± –`` when fewer than two seeds give a spread), with ``(n = k of s seeds)`` when
    some seeds (diverged) are not in the mean."""
    n_seeds = len(m.per_seed)
    if m.mean is not None:
        digits = 0 if abs(m.mean) >= 100 else 3
        std = "–" if m.std is None or m.n < 2 else f"{m.std:.{digits}f}"
        of = f" (n = {m.n} of {n_seeds} seeds)" if m.n < n_seeds else ""
        return f"{m.mean:.{digits}f} ± {std}{of}{chance_text(m.chance)}"
    if m.n:
        return f"{m.n}/{n_seeds} seeds only; others {m.note or 'missing'}"
    return m.note or "missing"


def diverged_text(seed: str | int, step: int | None) -> str:
    """``diverged at step k (seed s)``: k is the record's ``diverged_at_step``."""
    return f"diverged at step {step} (seed {seed})" if step is not None else f"diverged (seed {seed})"


def status_cell(variant: VariantEntry) -> str:
    """``done``, or e.g. ``diverged at step 37 (seed 1); failed (seed 2); 2 done`` when some seeds
    diverged or failed, with ``; collapsed (seeds 0, 2)`` when some collapsed and ``; at chance (seed 1)`` when some
    stayed at chance."""
    diverged = variant.diverged_at_step or {}
    failed = variant.failed or {}
    mark = "".join(f"; {what} ({seeds_text(seeds)})" for what, seeds in flagged_kinds(variant).items())
    if not diverged and not failed:
        return variant.status + mark
    parts = [diverged_text(seed, step) for seed, step in diverged.items()]
    parts += [f"failed (seed {seed})" for seed in failed]
    done = sum(s == "done" for s in (variant.run_status or {}).values())
    return "; ".join(parts + ([f"{done} done"] if done else [])) + mark


def flagged_kinds(variant: VariantEntry) -> dict[str, list[str]]:
    """The variant's seeds kept in its means but flagged, by why: ``{"collapsed": [...], "at chance": [...]}``."""
    kinds: dict[str, list[str]] = {}
    for seed in map(str, variant.collapsed or []):
        why = str((variant.flagged or {}).get(seed, COLLAPSED))
        kinds.setdefault(AT_CHANCE if why.startswith(AT_CHANCE) else COLLAPSED, []).append(seed)
    return kinds


def seeds_text(seeds: list[str]) -> str:
    """``seed 1`` or ``seeds 0, 2``."""
    return f"seed{'s' if len(seeds) > 1 else ''} {', '.join(seeds)}"


def seeds_cell(variant: VariantEntry) -> str:
    """The number of seeds with a finished run, ``+ k failed`` when some failed."""
    failed = len(variant.failed or {})
    return f"{len(variant.seeds)}" + (f" + {failed} failed" if failed else "")


def seed_status(variant: VariantEntry, seed: int | str) -> str:
    """One seed's status in the per-seed table: ``done``, ``diverged at step k (seed s)`` or why it is flagged."""
    key = str(seed)
    diverged = variant.diverged_at_step or {}
    if key in diverged:
        return diverged_text(key, diverged[key])
    status = (variant.run_status or {}).get(key, variant.status or "done")
    flag = (variant.flagged or {}).get(key)
    return f"{status}, {flag}" if flag else status


def norms_cell(variant: VariantEntry) -> str:
    """``attn: both, ffn: both+affine``, with ``, QK-norm`` when attention normalises queries and keys."""
    return ", ".join(
        f"{k}: {s.get('component')}{'+affine' if s.get('affine') and s.get('component') != 'none' else ''}"
        for k, s in variant.norms.items()
    ) + (", QK-norm" if variant.qk_norm else "")
