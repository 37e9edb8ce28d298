"""The ``attention_feed`` rule: Brody et al.'s geometry at every placement. The norm that feeds each layer's
attention input (:func:`attention_feed`) decides what its unselectable-key fraction must be: 0 in every seed where a
scaling norm feeds it, above 0 (the 95% interval of the mean over seeds excluding 0) where none does."""

from __future__ import annotations

from typing import cast

from normbench.judge.entries import ClaimEntry, JudgedEntry
from normbench.judge.rows import VariantRow
from normbench.judge.stats import mean_interval, values_of
from normbench.judge.verdicts.counting import counted, counted_note, finished_seeds, reasons
from normbench.judge.verdicts.describe import fmt_value
from normbench.nn.norms import get_component
from normbench.nn.placement import NormRole, attention_input_norm


def attention_feed(variant: VariantRow, layer: int) -> str | None:
    """The component of the norm whose output is layer ``layer``'s attention input in a leaderboard
    variant (its ``placement``, ``norms`` and ``norm_roles``), ``None`` where the residual stream or
    the raw embedding is. A one-line error for a variant that does not record its norms' roles."""
    roles = variant.get("norm_roles")
    if not roles or variant.get("placement") is None:
        raise ValueError(
            f"variant {variant.get('name')!r}: its records name no norm roles or placement; "
            "rebuild its leaderboard from the run records"
        )
    components = {f"{k}_norm": spec["component"] for k, spec in (variant.get("norms") or {}).items()}
    # a record names each of its norms by its role in the architecture (normbench.tasks.norm_roles)
    present = cast("dict[str, NormRole]", {f"{k}_norm": role for k, role in roles.items() if f"{k}_norm" in components})
    # an import path names a plug-in module: never the identity, never a known scaling (and not imported here)
    identity = {name for name, c in components.items() if ":" not in c and get_component(c).identity}
    name = attention_input_norm(cast(str, variant["placement"]), layer, present, identity)  # checked above
    return None if name is None else components[name]


FEED_EXPECTATIONS = ("scaled", "unscaled")


def above_zero(values: list[float]) -> bool:
    """Whether the 95% t-interval of the mean of ``values`` (two at least) lies above 0."""
    interval = mean_interval(values)
    return interval is not None and interval.low is not None and interval.low > 0


def judge_attention_feed(claim: ClaimEntry, variants: dict[str, VariantRow]) -> JudgedEntry:
    """Brody et al.'s geometry at every placement: for every variant and layer, the norm that feeds the
    attention (:func:`attention_feed`) decides what is expected of its unselectable-key fraction.

    ``expect: scaled``: where a scaling component (``Component.scales``) feeds it, 0 in every seed;
    reproduced if that holds everywhere, not reproduced if any seed has an unselectable key there.
    ``expect: unscaled``: where no scaling norm feeds it, > 0 in every seed; reproduced if that
    holds everywhere, not reproduced if some layer has none in every seed, else inconclusive.
    Judged over the variants with finished runs; a seed without a value is listed and makes a
    "reproduced" inconclusive. The metric may hold ``{layer}`` (one per layer); without it, layer 1's.
    """
    rule, template = claim["rule"], claim["metric"]
    if rule.get("expect") not in FEED_EXPECTATIONS:
        raise ValueError(
            f"claim {claim['id']}: rule.expect must be one of {', '.join(FEED_EXPECTATIONS)}, "
            f"got {rule.get('expect')!r}"
        )
    scaled = rule["expect"] == "scaled"
    cells: list[tuple[str, list[float | None]]] = []
    notes: list[str] = []
    for name, variant in variants.items():
        n_layers = int(variant.get("n_layers") or 1)
        keep, note = finished_seeds(variant, geometric=True)
        if keep and not any(keep):  # no seed counts (all diverged or collapsed): no cell to judge
            notes.append(f"{name}: {note}")
            continue
        judged = False
        for layer in range(1, n_layers + 1) if "{layer}" in template else [1]:
            feed = attention_feed({**variant, "name": name}, layer)
            if (feed is not None and ":" not in feed and get_component(feed).scales) != scaled:
                continue
            judged = True
            metric = (variant.get("metrics") or {}).get(template.format(layer=layer)) or {}
            cells.append(
                (f"{name} L{layer} ({feed or 'no norm'})", counted(list(metric.get("per_seed") or [None]), keep))
            )
        notes += [f"{name}: {note}"] if note and judged else []
    measured_cells = [(c, values_of(v)) for c, v in cells if values_of(v)]
    incomplete = [c for c, v in cells if len(values_of(v)) < len(v)]
    if scaled:
        text = (
            "every (variant, layer) whose attention input a scaling norm feeds: reproduced if 0 unselectable keys "
            "in every seed; not reproduced if any seed has one"
        )
        held = [c for c, v in measured_cells if all(x == 0 for x in v)]
        broken = [c for c, v in measured_cells if any(x > 0 for x in v)]
        verdict = "not reproduced" if broken else "reproduced"
    else:
        text = (
            "every (variant, layer) whose attention input no scaling norm feeds: reproduced if > 0 unselectable "
            "keys in every seed and the 95% interval of the mean over seeds excludes 0; not reproduced if a layer "
            "has none in every seed; inconclusive otherwise"
        )
        held = [c for c, v in measured_cells if all(x > 0 for x in v) and above_zero(v)]
        broken = [c for c, v in measured_cells if all(x == 0 for x in v)]
        verdict = "reproduced" if len(held) == len(measured_cells) else "not reproduced" if broken else "inconclusive"
    if not measured_cells:
        verdict = "not run"
    elif verdict == "reproduced" and incomplete:
        verdict = "inconclusive"
    text += (
        "; judged over the variants with finished runs (diverged seeds do not count), a seed without a value "
        "makes a reproduced inconclusive"
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
        "variants": {"cells": f"{'scaled' if scaled else 'unscaled'} attention inputs"},
        "paper": claim.get("paper") or {},
        "measured": {"layers judged": len(cells), "as expected in every seed": len(held)},
        "per_seed": {},
        "difference": None,
        "verdict": verdict,
        "rule": text,
        "layers": {c: v for c, v in cells},
        "explanation": (
            f"{len(held)} of {len(cells)} (variant, layer) cells as expected in every seed"
            + (f"; the others and those missing a seed: {'; '.join(exceptions)}" if exceptions else "")
        ),
    }
    entry.update(reasons(claim))
    return entry
