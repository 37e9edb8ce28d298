"""A card section's protocol in Markdown: the preset and margin, the measured platform drift beside the margin, and
what each variant is, read from the model it builds (its placement, every norm, the trained parameters); the summary's
note where a baseline's attention and FFN norms differ."""

from __future__ import annotations

from normbench.boards.norm_board import drift_comparable
from normbench.cards.build import Card
from normbench.cards.document import CardSection
from normbench.cards.models import NormModuleFacts
from normbench.cards.verdicts import BASELINES
from normbench.render.markdown import Lines

NORM_NAMES = {"attn": "attention", "ffn": "FFN", "final": "final", "embed": "embedding"}


def norm_text(spec: NormModuleFacts) -> str:
    """``both (affine, eps 1e-05, 16 parameters)``: a norm as the built model has it (``eps unused`` where its map
    takes none; the trained values of one such norm)."""
    eps = "eps unused" if spec.get("eps") is None else f"eps {spec['eps']:g}"
    count = f", {spec['parameters']} parameters" if spec.get("parameters") is not None else ""
    frozen = f", own {', '.join(spec['frozen'])} frozen" if spec.get("frozen") else ""
    options = f", options {spec['options']}" if spec.get("options") else ""
    affine = "affine" if spec.get("affine") else "no affine"
    return f"`{spec.get('component')}` ({affine}, {eps}{count}{frozen}{options})"


def drift_text(t: CardSection) -> str:
    """The measured platform drift of each headline metric beside the margin (``results/reproducibility.md``): a
    drift above a tenth of the margin is *comparable* to it (a seed retrained elsewhere can move a verdict near the
    margin), so the card says so; ``""`` where no drift is measured."""
    said = []
    for metric, drift in (t.get("platform_drift") or {}).items():
        comparable = drift_comparable(drift["drift"], t["margin"])
        said.append(
            f"`{metric}` ends {drift['drift']:.2g} apart on another platform ({drift['where']}), "
            + (
                f"comparable to the margin: a verdict within {drift['drift']:.2g} of the margin may differ on another "
                "machine"
                if comparable
                else "far below the margin"
            )
        )
    return f" Measured platform drift (results/reproducibility.md): {'; '.join(said)}." if said else ""


def protocol_lines(t: CardSection) -> Lines:
    """What each variant of a task's section is, read from the model it builds: the placement, every norm of the
    network and the trained parameters (the baselines are the published variants; the new norm replaces the block
    norms of the LayerNorm one); then where the new norm trains parameters the baselines lack."""
    norms = t.get("norms") or {}
    kinds = list(dict.fromkeys(k for n in norms.values() for k in n["norms"]))
    head = f"**Protocol.** Preset `{t['preset']}`; equivalence margin {t['margin']:g} ({t['better']} is better)."
    head += drift_text(t)
    if not kinds:
        return [head, ""]
    lines = [
        f"{head} Each variant's norms and trained parameters, read from the model it builds (a norm's parameters: "
        "those of one layer's):",
        "",
        "| role | variant | placement | parameters | "
        + " | ".join(f"{NORM_NAMES.get(k, k)} norm" for k in kinds)
        + " |",
        "|---|---|---|---|" + "---|" * len(kinds),
    ]
    for role, n in norms.items():
        cells = [norm_text(n["norms"][k]) if k in n["norms"] else "–" for k in kinds]
        count = f"{n['parameters']:,}" if n.get("parameters") is not None else "–"
        lines.append(f"| {role} | `{t['variants'][role]}` | {n['placement']} | {count} | " + " | ".join(cells) + " |")
    extra = t.get("extra_parameters")
    if extra is not None:
        said = [
            f"{NORM_NAMES.get(e['norm'], e['norm'])} norm: {', '.join(f'`{p}`' for p in e['parameters'])} "
            f"(in each of its {e['layers']})"
            for e in extra
        ]
        lines += [
            "",
            "Parameters the new norm trains that the baselines lack: " + ("; ".join(said) if said else "none") + ".",
        ]
    return [*lines, ""]


def block_components(t: CardSection, role: str) -> tuple[str, str] | None:
    """The components of a role's attention and FFN norms in a task's section (``None`` where its runs are not there
    or it has not both)."""
    facts = (t.get("norms") or {}).get(role)
    norms = (facts.get("norms") if facts else None) or {}
    return (
        (str(norms["attn"].get("component")), str(norms["ffn"].get("component")))
        if {"attn", "ffn"} <= set(norms)
        else None
    )


def baseline_notes(card: Card) -> Lines:
    """A line per baseline and pair of block norms where its attention and FFN norms differ (RMSNorm as the attention
    norm only, the FFN norm LayerNorm), while the new norm replaces both: the comparison is with the published
    variant, and the card says so."""
    notes = []
    for role in BASELINES:
        mixed: dict[tuple[str, str], list[str]] = {}
        for t in card.tasks:
            pair = block_components(t, role)
            if pair and pair[0] != pair[1]:
                mixed.setdefault(pair, []).append(t.get("label", t["task"]))
        notes += [
            f"The {role} baseline on {', '.join(labels)} is the published variant: `{attn}` as the attention norm, "
            f"`{ffn}` as the FFN norm (each section's protocol table); the new norm replaces both."
            for (attn, ffn), labels in mixed.items()
        ]
    return notes
