"""Test documents built in one place: :func:`make_record` gives a run record as the trainer writes it."""

from __future__ import annotations

from typing import Any

PROVENANCE = {
    "git_commit": "abc",
    "dirty": False,
    "torch": "2",
    "lightning": "2",
    "device": "cpu",
    "threads": 1,
    "date": "2026-01-01T00:00:00Z",
}


def make_record(
    variant: str,
    seed: int,
    *,
    task: str = "majority",
    status: str = "done",
    series: dict[str, list[list[Any]]] | None = None,
    config: dict[str, Any] | None = None,
    final_step: int | None = None,
    wall_time_s: float = 1.0,
    **extra: Any,
) -> dict[str, Any]:
    """A run record of ``variant`` and ``seed`` (a JSON object, :class:`normbench.archive.RunRecord`'s shape).

    ``config_hash`` is ``h-<variant>`` (one config per variant); ``final_step`` defaults to the last step
    of ``series``; ``extra`` adds or replaces any key (e.g. ``diverged_at_step``, ``error``, ``provenance``).
    """
    series = series if series is not None else {}
    steps = [point[0] for points in series.values() for point in points]
    record: dict[str, Any] = {
        "task": task,
        "variant": variant,
        "seed": seed,
        "status": status,
        "config_hash": f"h-{variant}",
        "final_step": final_step if final_step is not None else max(steps, default=0),
        "config": config if config is not None else {},
        "series": series,
        "provenance": dict(PROVENANCE),
        "wall_time_s": wall_time_s,
    }
    record.update(extra)
    return record


def make_variant(name: str, seeds: list[int], config_hash: str | None = None, **extra: Any) -> dict[str, Any]:
    """A board's variant entry (:class:`normbench.archive.VariantEntry`'s shape) with no metrics unless given."""
    entry: dict[str, Any] = {
        "name": name,
        "placement": name.split("/")[0] if "/" in name else None,
        "norms": {},
        "seeds": list(seeds),
        "status": "done",
        "metrics": {},
        "config_hash": config_hash,
    }
    entry.update(extra)
    return entry


def make_board(
    variants: list[dict[str, Any]] | None = None, *, task: str = "majority", preset: str | None = "quick", **extra: Any
) -> dict[str, Any]:
    """A leaderboard (:class:`normbench.archive.Board`'s shape): ``variants`` (:func:`make_variant`), no claims;
    ``extra`` adds or replaces any key (e.g. ``sweep``, ``sweep_key``)."""
    board: dict[str, Any] = {
        "task": task,
        "preset": preset,
        "generated_at": "2026-01-01T00:00:00Z",
        "provenance": dict(PROVENANCE, wall_time_s=0.0),
        "variants": list(variants or []),
        "claims": [],
    }
    board.update(extra)
    return board


def positive_zero_claim(metric: str, without: str, with_: str, claim_id: str = "x") -> dict[str, Any]:
    """A claims-file entry of the paper's Table 4 kind: ``metric`` is above 0 in every seed of the variant ``without``
    and exactly 0 in every seed of ``with_``."""
    return {
        "id": claim_id,
        "owner": "paper",
        "source": "s",
        "metric": metric,
        "variants": {"without": without, "with": with_},
        "paper": {"without": "> 0", "with": 0},
        "rule": {"kind": "positive_zero", "positive": "without", "zero": "with"},
    }
