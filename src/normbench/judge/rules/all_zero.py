"""The ``all_zero`` rule: every seed (and layer, for a metric with ``{layer}``) of every variant named measures
exactly 0; a seed without a value makes a reproduced inconclusive, diverged seeds do not count."""

from __future__ import annotations

from normbench.judge.entries import ClaimEntry, JudgedEntry
from normbench.judge.rows import VariantRow
from normbench.judge.stats import values_of
from normbench.judge.verdicts.counting import counted, counted_note, finished_seeds, reasons
from normbench.judge.verdicts.describe import fmt_value


def judge_all_zero(claim: ClaimEntry, variants: dict[str, VariantRow]) -> JudgedEntry:
    """Every seed (and layer, for a metric with ``{layer}``) of every named variant measures exactly 0."""
    template, roles = claim["metric"], claim["variants"]
    cells: list[tuple[str, list[float | None]]] = []
    notes: list[str] = []
    for name in roles.values():
        variant = variants.get(name) or {}
        keep, note = finished_seeds(variant, geometric=True)
        notes += [f"{name}: {note}"] if note else []
        n_layers = int(variant.get("n_layers") or 1)
        for layer in range(1, n_layers + 1) if "{layer}" in template else [0]:
            metric = (variant.get("metrics") or {}).get(template.format(layer=layer)) or {}
            label = f"{name} L{layer}" if layer else name
            cells.append((label, counted(list(metric.get("per_seed") or [None]), keep)))
    measured = [(c, values_of(v)) for c, v in cells if values_of(v)]
    incomplete = [c for c, v in cells if len(values_of(v)) < len(v)]
    held = [c for c, v in measured if all(x == 0 for x in v)]
    broken = [c for c, v in measured if any(x != 0 for x in v)]
    verdict = (
        "not run" if not measured else "not reproduced" if broken else "inconclusive" if incomplete else "reproduced"
    )
    text = (
        "reproduced if the metric is exactly 0 in every seed (and layer) of every variant named; not reproduced "
        "if any seed measures more; a seed without a value makes a reproduced inconclusive; diverged seeds do not "
        "count"
    ) + counted_note(notes)
    exceptions = [
        f"{c}: {' / '.join(fmt_value(x) if x is not None else '–' for x in v)}"
        for c, v in cells
        if c not in held or c in incomplete
    ]
    entry: JudgedEntry = {
        "id": claim["id"],
        "owner": claim["owner"],
        "source": claim["source"],
        "statement": claim.get("statement", ""),
        "metric": template,
        "metrics": {},
        "variants": roles,
        "paper": claim.get("paper") or {},
        "measured": {"cells judged": len(cells), "zero in every seed": len(held)},
        "per_seed": {},
        "difference": None,
        "verdict": verdict,
        "rule": text,
        "layers": dict(cells),
        "explanation": (
            f"{len(held)} of {len(cells)} cells are 0 in every seed"
            + (f"; the others: {'; '.join(exceptions)}" if exceptions else "")
        ),
    }
    entry.update(reasons(claim))
    return entry
