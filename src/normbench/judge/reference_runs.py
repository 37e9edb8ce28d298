"""A board's runs beside another code's runs of the same protocol (``bench.reference_runs``), seed by seed.

The other code's per-seed values are measured data shipped with the package (``references/<name>.json``: what was
run, where, and what was checked, then one entry per run). For each variant the board's per-seed values of
``metric`` are compared with the reference runs of the matching group: the difference of means with its 95% Welch
interval and p-value, so a reader sees whether the two codes differ by more than their seeds do. A reference run
trained on the same data and initial weights as a board seed (its ``data_seed`` is that seed) is shown beside that
seed's value, and all such pairs are summarised together: the paired difference d_s = board_s − reference_s, its
mean with a 95% t-interval, and its largest |d_s| beside the board's own spread over seeds. Where the codes are the
same computation up to the order of floating-point sums, |d_s| is far below that spread.

Spec::

    reference_runs:
      file: majority_exp                 # references/majority_exp.json
      metric: test_acc@1000              # the board's metric
      value: test_acc.1000               # where a reference run holds it (dotted path)
      group: layer_norm                  # the reference run's field naming its variant
      variants: {WITH_PROJ: pre/both, WITHOUT_PROJ: pre/paper_no_projection}
      seeded_by: data_seed               # a run with this field set used the board's data of that seed
"""

from __future__ import annotations

import json
import statistics
from collections.abc import Mapping
from importlib import resources
from typing import Any, TypedDict, cast

from normbench.archive.documents.views import PairDifference as PairDifference
from normbench.archive.documents.views import Paired, ReferenceDoc, ReferenceRow, ReferenceScript, SeededPair, Side
from normbench.judge.rows import rows_by_name
from normbench.judge.stats import difference_interval, mean_interval, values_of

KEYS = {"file", "metric", "value", "group", "variants", "seeded_by"}


class ReferenceSpec(TypedDict, total=False):
    """``bench.reference_runs`` (the module's docstring): the reference ``file``, the board's ``metric``, where a
    reference run holds it (``value``, a dotted path), the run's field naming its group (``group``), group -> the
    board's variant (``variants``) and the field naming the board seed whose data a run used (``seeded_by``)."""

    file: str
    metric: str
    value: str
    group: str
    variants: dict[str, str]
    seeded_by: str


class Reference(TypedDict):
    """A reference file (``references/<name>.json``): ``what`` was run, the ``script``, what was ``checked`` beside it
    and one entry per run (``runs``: its fields as the other code names them, read by the spec's paths)."""

    what: str
    script: ReferenceScript
    checked: list[str]
    runs: list[Mapping[str, object]]


def load_reference(name: str) -> Reference:
    """``references/<name>.json`` of the package; a missing file is one ``ValueError`` naming the choices."""
    folder = resources.files("normbench.judge") / "references"
    path = folder / f"{name}.json"
    if not path.is_file():
        known = sorted(p.name.removesuffix(".json") for p in folder.iterdir() if p.name.endswith(".json"))
        raise ValueError(f"bench.reference_runs.file: {name!r} is not a reference; choose one of {', '.join(known)}")
    return json.loads(path.read_text(encoding="utf-8"))


def dotted(run: Mapping[str, object], path: str) -> float | None:
    """The value at ``a.b`` of a run's entry (``None`` where it has none)."""
    node: Any = run
    for part in path.split("."):
        if not isinstance(node, dict) or part not in node:
            return None
        node = node[part]
    return None if node is None else float(node)


def check_spec(spec: Mapping[str, object]) -> None:
    """One line for a spec that is not one :func:`build_reference` can read."""
    unknown = set(spec) - KEYS
    missing = {"file", "metric", "value", "group", "variants"} - set(spec)
    if unknown or missing:
        raise ValueError(
            f"bench.reference_runs: {'unknown ' + ', '.join(sorted(unknown)) if unknown else ''}"
            f"{'; ' if unknown and missing else ''}{'missing ' + ', '.join(sorted(missing)) if missing else ''}; "
            f"it holds {', '.join(sorted(KEYS))}"
        )


def build_reference(spec: ReferenceSpec, variants: Mapping[str, Mapping[str, object]]) -> ReferenceDoc:
    """The comparison (JSON): the reference's provenance, then one row per variant with both sides' seeds, means,
    spreads and the Welch difference (board − reference), and the seeded pairs. ``variants``: the board's rows by
    name (:func:`normbench.judge.rows.rows_by_name`)."""
    variants = rows_by_name(variants)
    check_spec(spec)
    ref = load_reference(spec["file"])
    seeded_by = spec.get("seeded_by")
    rows: list[ReferenceRow] = []
    for group, name in spec["variants"].items():
        metric = ((variants.get(name) or {}).get("metrics") or {}).get(spec["metric"]) or {}
        seeds: list[object] = list((variants.get(name) or {}).get("seeds") or [])
        ours = list(metric.get("per_seed") or [])
        runs = [r for r in ref["runs"] if r.get(spec["group"]) == group]
        theirs = [
            (r.get("seed"), dotted(r, spec["value"])) for r in runs if not (seeded_by and r.get(seeded_by) is not None)
        ]
        pairs: list[SeededPair] = [
            {
                "seed": r[seeded_by],
                "reference": dotted(r, spec["value"]),
                "board": ours[seeds.index(r[seeded_by])] if r[seeded_by] in seeds else None,
            }
            for r in runs
            if seeded_by and r.get(seeded_by) is not None
        ]
        diff = difference_interval(ours, [v for _, v in theirs], ("board", "reference"))
        own, other = mean_interval(ours), mean_interval([v for _, v in theirs])
        rows.append(
            {
                "variant": name,
                "group": group,
                "board": {"n": own.n[0] if own else 0, "mean": own.estimate if own else None, "std": std(ours)},
                "reference": {
                    "n": other.n[0] if other else 0,
                    "mean": other.estimate if other else None,
                    "std": std([v for _, v in theirs]),
                    "seeds": [s for s, _ in theirs],
                },
                "difference": diff.as_dict() if diff else None,
                "seeded": pairs,
            }
        )
    return {
        "file": spec["file"],
        "metric": spec["metric"],
        "what": ref.get("what"),
        "script": ref.get("script"),
        "checked": ref.get("checked") or [],
        "rows": rows,
        "paired": paired(rows),
    }


def paired(rows: list[ReferenceRow]) -> Paired | None:
    """Every seeded pair of every row together: d_s = board_s − reference_s (rows' order, then the pairs'), the
    mean of d with its 95% t-interval, the largest |d|, and the board's sample std over seeds per variant with a
    pair (the spread the pairs are measured against); ``None`` without a complete pair."""
    complete = [
        (row, p) for row in rows for p in row["seeded"] if p["board"] is not None and p["reference"] is not None
    ]
    if not complete:
        return None
    differences = [cast(float, p["board"]) - cast(float, p["reference"]) for _, p in complete]  # complete: both there
    interval = mean_interval(differences)
    spreads = {row["variant"]: row["board"]["std"] for row, _ in complete}
    return {
        "n": len(differences),
        "pairs": [
            {"variant": row["variant"], "seed": p["seed"], "difference": d}
            for (row, p), d in zip(complete, differences, strict=True)
        ],
        "mean": interval.as_dict() if interval else None,
        "max_abs": max(abs(d) for d in differences),
        "board_std": spreads,
    }


def std(values: list[float | None]) -> float | None:
    """The sample standard deviation of the finite values (``None`` with fewer than two)."""
    finite = values_of(values)
    return statistics.stdev(finite) if len(finite) > 1 else None


def render_reference(reference: Mapping[str, object] | None) -> list[str]:
    """The board's section: the comparison table, the seeded pairs and what the reference is (``reference``: a board's
    ``reference_runs``, :class:`ReferenceDoc` as :class:`normbench.archive.Board` keeps it, a JSON object)."""
    reference = cast("ReferenceDoc | None", reference)
    if not reference:
        return []
    script = reference.get("script") or {}
    source = f"`{script.get('repository')}` at `{script.get('commit')}`, `{script.get('file')}`" if script else "?"
    lines = [
        "",
        "## Beside another code's runs",
        "",
        f"`{reference['metric']}` of this board's seeds beside the runs of {source} "
        f"(`src/normbench/judge/references/{reference['file']}.json`: {reference.get('what')}). "
        "Difference: this board minus the reference, with its 95% Welch interval over both codes' seeds.",
        "",
        "| variant | reference runs | this board | the reference | difference [95% CI] | p |",
        "|---|---|---|---|---|---|",
    ]
    for row in reference["rows"]:
        d = row["difference"] or {}
        interval = f"[{d['low']:+.4f}, {d['high']:+.4f}]" if d.get("low") is not None else "–"
        estimate = f"{d['estimate']:+.4f} {interval}" if d.get("estimate") is not None else "–"
        p = f"{d['p_value']:.2f}" if d.get("p_value") is not None else "–"
        sides = f"{side(row['board'])} | {side(row['reference'])}"
        lines.append(f"| `{row['variant']}` | `{row['group']}` | {sides} | {estimate} | {p} |")
    pairs = [(row, pair) for row in reference["rows"] for pair in row["seeded"]]
    if pairs:
        lines += ["", "The reference trained on this board's data and initial weights of a seed:", ""]
        lines += [
            f"- `{row['variant']}` seed {pair['seed']}: the reference {value(pair['reference'])}, this board "
            f"{value(pair['board'])}"
            for row, pair in pairs
        ]
    lines += render_paired(reference.get("paired"))
    if reference.get("checked"):
        lines += ["", "Checked beside it:", ""] + [f"- {c}" for c in reference["checked"]]
    if script.get("changes"):
        lines += ["", f"Run as: {script.get('options')}; {script['changes']}; on {script.get('platform')}."]
    return lines


def render_paired(summary: Paired | None) -> list[str]:
    """One paragraph: the paired differences against the board's seed spread."""
    if not summary:
        return []
    m = summary["mean"] or {}
    interval = f" [{m['low']:+.4f}, {m['high']:+.4f}]" if m.get("low") is not None else ""
    spreads = [v for v in summary["board_std"].values() if v is not None]
    spread = (
        f"; this board's spread over seeds (sample std) is {min(spreads):.4f}"
        + (f" to {max(spreads):.4f}" if max(spreads) != min(spreads) else "")
        + f", {min(spreads) / summary['max_abs']:.0f} times the largest paired difference or more"
        if spreads and summary["max_abs"] > 0
        else ""
    )
    return [
        "",
        f"Paired over the {summary['n']} seeded run{'s' if summary['n'] != 1 else ''} (same data and initial weights): "
        f"this board − the reference = {m.get('estimate', 0):+.4f}{interval} on average, at most "
        f"{summary['max_abs']:.4f} in one pair{spread}.",
    ]


def side(s: Side) -> str:
    if s.get("mean") is None:
        return "–"
    spread = f" ± {s['std']:.4f}" if s.get("std") is not None else ""
    return f"{s['mean']:.4f}{spread} (n = {s['n']})"


def value(v: float | None) -> str:
    return "–" if v is None else f"{v:.4f}"
