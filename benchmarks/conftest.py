"""Collect benchmark minima and report each candidate's ratio to its baseline from the same run.

The ratio uses each benchmark's minimum round time, the estimate least disturbed by other load.

A benchmark declares ``benchmark.extra_info = {"pair": <group>, "role": "baseline" | <candidate name>}``.
At the end of the session the ratios (candidate time / baseline time, lower is faster) are printed
and written to ``results/perf/ratios.json`` and ``ratios.md`` with provenance.
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

import pytest

from normbench.io import atomic_write_json, atomic_write_text
from normbench.records import provenance

RESULTS: dict[str, dict[str, float]] = defaultdict(dict)
GOALS: dict[str, str] = {}
OUT = Path(__file__).resolve().parents[1] / "results" / "perf"


@pytest.fixture
def record_pair(benchmark):  # noqa: ANN001, ANN201 - pytest-benchmark fixture
    """Call after ``benchmark(...)``: ``record_pair(pair, role, goal=None, per=1)``; the minimum is
    divided by ``per`` (e.g. the optimizer steps of one round)."""

    def record(pair: str, role: str, goal: str | None = None, per: int = 1) -> None:
        RESULTS[pair][role] = benchmark.stats.stats.min / per
        if goal:
            GOALS[pair] = goal

    return record


def pytest_terminal_summary(terminalreporter, exitstatus, config) -> None:  # noqa: ANN001
    rows = []
    for pair, roles in sorted(RESULTS.items()):
        base = roles.get("baseline")
        for role, best in sorted(roles.items()):
            if role == "baseline" or base is None:
                continue
            rows.append({"pair": pair, "candidate": role, "baseline_min_s": base, "candidate_min_s": best,
                         "ratio": best / base, "goal": GOALS.get(pair, "")})
    if not rows:
        return
    tr = terminalreporter
    tr.section("normbench speed ratios (candidate time / baseline time; < 1 is faster)")
    for r in rows:
        tr.write_line(f"{r['pair']:<40} {r['candidate']:<28} {r['ratio']:7.3f}x  "
                      f"({r['candidate_min_s'] * 1e3:9.2f} ms vs {r['baseline_min_s'] * 1e3:9.2f} ms)  {r['goal']}")
    doc = {"provenance": provenance(), "rows": rows}
    atomic_write_json(OUT / "ratios.json", doc)
    lines = ["# normbench speed ratios", "",
             f"Written by `nox -s bench-perf` at commit `{(doc['provenance'].get('git_commit') or 'unknown')[:12]}`"
             f" on {doc['provenance']['device']} with {doc['provenance']['threads']} threads, {doc['provenance']['date']}.",
             "Ratio = candidate minimum time / baseline minimum time in the same run (< 1 is faster).",
             "The `both` and `scale` components call the same fused kernels as their baselines, so their",
             "distance from 1.0 is the noise floor of the machine that ran this.", "",
             "| benchmark | candidate | candidate (ms) | baseline (ms) | ratio | goal |", "|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['pair']} | {r['candidate']} | {r['candidate_min_s'] * 1e3:.2f} | "
                     f"{r['baseline_min_s'] * 1e3:.2f} | {r['ratio']:.3f} | {r['goal']} |")
    atomic_write_text(OUT / "ratios.md", "\n".join(lines) + "\n")
