"""Collect benchmark minima and report each candidate's ratio to its baseline from the same run.

The ratio uses each benchmark's minimum round time, the estimate least disturbed by other load.

A benchmark declares ``benchmark.extra_info = {"pair": <group>, "role": "baseline" | <candidate name>}``.
At the end of the session the ratios (candidate time / baseline time, lower is faster) are printed
and written to ``results/perf/ratios.json`` and ``ratios.md`` with provenance.
"""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path

import pytest

from normbench.io import atomic_write_json, atomic_write_text
from normbench.training.run.records import provenance

RESULTS: dict[str, dict[str, float]] = defaultdict(dict)
GOALS: dict[str, str] = {}
TOKENS: dict[str, int] = {}
OUT = Path(__file__).resolve().parents[1] / "results" / "perf"
# Figures that are not ratios (a wall time, memory per seed): key -> (value, unit, what, goal); a figure whose
# benchmark could not run here (no GPU) is written as "not measured", unless an earlier run measured it.
FIGURES: dict[str, dict] = {}
NOT_MEASURED: dict[str, dict] = {}


@pytest.fixture
def record_figure():  # noqa: ANN201
    """``record_figure(key, value, unit, what, goal="")``: one measured figure of this run."""

    def record(key: str, value: float, unit: str, what: str, goal: str = "") -> None:
        FIGURES[key] = {"key": key, "value": value, "unit": unit, "what": what, "goal": goal}

    return record


def not_measured(key: str, unit: str, what: str, goal: str, why: str) -> None:
    """Declare that figure ``key`` could not be measured in this run (e.g. no GPU), and why."""
    NOT_MEASURED[key] = {
        "key": key,
        "value": None,
        "unit": unit,
        "what": what,
        "goal": goal,
        "status": f"not measured: {why}",
    }


def merged_figures(previous: list[dict], prov: dict) -> list[dict]:
    """This run's figures over the earlier ones; "not measured" only where no run ever measured the figure."""
    figures = {f["key"]: f for f in previous}
    for key, fig in FIGURES.items():
        figures[key] = {
            **fig,
            "status": "measured",
            "git_commit": prov.get("git_commit"),
            "date": prov["date"],
            "platform": platform_name(prov),
        }
    for key, fig in NOT_MEASURED.items():
        if key not in FIGURES and (figures.get(key) or {}).get("status") != "measured":
            figures[key] = {
                **fig,
                "git_commit": prov.get("git_commit"),
                "date": prov["date"],
                "platform": platform_name(prov),
            }
    return sorted(figures.values(), key=lambda f: f["key"])


@pytest.fixture
def record_pair(benchmark):  # noqa: ANN001, ANN201 - pytest-benchmark fixture
    """Call after ``benchmark(...)``: ``record_pair(pair, role, goal=None, per=1)``; the minimum is
    divided by ``per`` (e.g. the optimizer steps of one round)."""

    def record(pair: str, role: str, goal: str | None = None, per: int = 1, tokens_per_step: int | None = None) -> None:
        if benchmark.stats is None:  # --benchmark-disable: the code ran once, nothing was timed
            return
        RESULTS[pair][role] = benchmark.stats.stats.min / per
        if tokens_per_step:
            benchmark.extra_info["tokens_per_s"] = tokens_per_step * per / benchmark.stats.stats.min
        if goal:
            GOALS[pair] = goal
        if tokens_per_step:
            TOKENS[pair] = tokens_per_step

    return record


def platform_name(prov: dict) -> str:
    """The machine a row was measured on, in words: ``cpu: AMD EPYC (AVX2), 2 threads`` or ``cuda: <GPU name>``."""
    plat = prov.get("platform") or {}
    if plat.get("gpu"):
        return f"cuda: {plat['gpu']}"
    return f"cpu: {plat.get('cpu', 'unknown')} ({plat.get('cpu_capability', '?')}), {prov.get('threads')} threads"


def pytest_terminal_summary(terminalreporter, exitstatus, config) -> None:  # noqa: ANN001
    rows = []
    for pair, roles in sorted(RESULTS.items()):
        base = roles.get("baseline")
        for role, best in sorted(roles.items()):
            if role == "baseline" or base is None:
                continue
            row = {
                "pair": pair,
                "candidate": role,
                "baseline_min_s": base,
                "candidate_min_s": best,
                "ratio": best / base,
                "goal": GOALS.get(pair, ""),
            }
            if pair in TOKENS:
                row["baseline_tokens_per_s"] = TOKENS[pair] / base
                row["candidate_tokens_per_s"] = TOKENS[pair] / best
            rows.append(row)
    if config.option.collectonly or getattr(config.option, "benchmark_disable", False):
        return  # nothing was measured: results/perf stays as it is
    if not rows and not FIGURES and not NOT_MEASURED:
        return
    prov = provenance()
    for r in rows:
        r["git_commit"], r["date"], r["platform"] = prov.get("git_commit"), prov["date"], platform_name(prov)
    # rows of benchmarks not run this time are kept (each row carries its own commit and date)
    before = json.loads((OUT / "ratios.json").read_text()) if (OUT / "ratios.json").is_file() else {}
    previous = before.get("rows", [])
    for r in previous:
        r.setdefault("git_commit", (before.get("provenance") or {}).get("git_commit"))
        r.setdefault("date", (before.get("provenance") or {}).get("date", ""))
    ran = {(r["pair"], r["candidate"]) for r in rows}
    rows = [r for r in previous if (r["pair"], r["candidate"]) not in ran] + rows
    tr = terminalreporter
    tr.section("normbench speed ratios (candidate time / baseline time; < 1 is faster)")
    for r in rows:
        tr.write_line(
            f"{r['pair']:<40} {r['candidate']:<28} {r['ratio']:7.3f}x  "
            f"({r['candidate_min_s'] * 1e3:9.2f} ms vs {r['baseline_min_s'] * 1e3:9.2f} ms)  {r['goal']}"
        )
    figures = merged_figures(before.get("figures", []), prov)
    for f in figures:
        value = "not measured" if f["value"] is None else f"{f['value']:,.3g} {f['unit']}"
        tr.write_line(f"{f['key']:<40} {value:<28} {f['status']}")
    doc = {"provenance": prov, "rows": rows, "figures": figures}
    atomic_write_json(OUT / "ratios.json", doc)
    lines = [
        "# normbench speed ratios",
        "",
        f"Written by `nox -s bench-perf` at commit `{(doc['provenance'].get('git_commit') or 'unknown')[:12]}`"
        f" on {doc['provenance']['device']} with {doc['provenance']['threads']} threads, {doc['provenance']['date']}.",
        "Ratio = candidate minimum time / baseline minimum time in the same run (< 1 is faster).",
        "The `both` and `scale` components call the same fused kernels as their baselines, so their",
        "distance from 1.0 is the noise floor of the machine that ran this.",
        "",
        "Rows of benchmarks that were not run again keep the commit and date they were measured at.",
        "",
        "| benchmark | candidate | candidate (ms) | baseline (ms) | ratio "
        "| tokens/s (candidate vs baseline) | goal | platform | commit, date |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        tokens = (
            f"{r['candidate_tokens_per_s']:,.0f} vs {r['baseline_tokens_per_s']:,.0f}"
            if "candidate_tokens_per_s" in r
            else ""
        )
        when = f"`{(r.get('git_commit') or 'unknown')[:12]}`, {r.get('date', '')[:10]}"
        lines.append(
            f"| {r['pair']} | {r['candidate']} | {r['candidate_min_s'] * 1e3:.2f} | "
            f"{r['baseline_min_s'] * 1e3:.2f} | {r['ratio']:.3f} | {tokens} | {r['goal']} | "
            f"{r.get('platform', 'not recorded')} | {when} |"
        )
    lines += [
        "",
        "## Figures",
        "",
        "Wall times and memory, each measured in one run; a figure no run has measured (its benchmark needs a",
        "GPU, or is opt-in) says so and why. No figure here is estimated.",
        "",
        "| figure | value | what | goal | status | platform | commit, date |",
        "|---|---|---|---|---|---|---|",
    ]
    for f in figures:
        value = "not measured" if f["value"] is None else f"{f['value']:,.4g} {f['unit']}"
        when = f"`{(f.get('git_commit') or 'unknown')[:12]}`, {f.get('date', '')[:10]}"
        lines.append(
            f"| `{f['key']}` | {value} | {f['what']} | {f['goal']} | {f['status']} | {f['platform']} | {when} |"
        )
    atomic_write_text(OUT / "ratios.md", "\n".join(lines) + "\n")
