"""What a board sets beside the paper: the sweep's protocol read from its runs' configs (``bench.protocol``) and
paper-style tables of its variants' means (``bench.tables``), each next to the paper's values."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypedDict

from normbench.archive.documents.sections import PaperCell, PaperNull, PaperProtocol, PaperRow, PaperTable, SettingRow
from normbench.io import Config
from normbench.judge.choice import sort_key
from normbench.judge.rows import MetricRow, VariantRow
from normbench.training.config import config_value

if TYPE_CHECKING:  # Python 3.11's; the annotations are never evaluated (``from __future__ import annotations``)
    from typing import NotRequired


class SettingSpec(TypedDict, total=False):
    """One row of ``bench.protocol.settings``: the ``setting``'s name, where this sweep's value is read (``config``:
    a dotted key of the runs' configs) or the value itself (``value``: a text), and the ``paper``'s."""

    setting: str
    config: str
    value: object
    paper: object


class ProtocolSpec(TypedDict, total=False):
    """A task's ``bench.protocol``: its ``settings`` rows, the paper's seeds per variant (``paper_seeds``), ``notes``
    under the table and ``see_also``: preset -> more notes (see :func:`build_protocol`)."""

    settings: list[SettingSpec]
    paper_seeds: object
    notes: list[str]
    see_also: dict[str, list[str]]


class TableRowSpec(TypedDict):
    """A row of a ``bench.tables`` entry: its ``label``, the ``variant`` and the ``metric`` template (``{column}``),
    the ``paper``'s values (one per column, or one value beside a ``paper_column``) and the random-key null beside
    it (``paper_null``)."""

    label: str
    variant: str
    metric: str
    paper: NotRequired[list[float | None] | float | None]
    paper_null: NotRequired[PaperNull | None]


class TableSpec(TypedDict):
    """A ``bench.tables`` entry (see :func:`build_tables`): its ``rows`` and ``columns``, and optionally ``title``,
    ``scale`` (of the measured values), ``note`` and ``paper_column``."""

    rows: list[TableRowSpec]
    columns: list[str]
    title: NotRequired[str]
    scale: NotRequired[float]
    note: NotRequired[str]
    paper_column: NotRequired[str | None]


def build_protocol(
    spec: ProtocolSpec,
    configs: Mapping[str, Config],
    variants: Sequence[VariantRow],
    preset: str | None = None,
    judges_claims: bool = True,
) -> PaperProtocol:
    """The sweep's protocol beside the paper's (``bench.protocol``), read from the runs' configs.

    ``settings``: rows ``{setting, config: <dotted key> | value: <text>, paper: <text>}``; a config row reads every
    variant's config (``configs``: variant name -> resolved config) and names each value where they differ. The
    number of seeds is read from the variants. ``notes``: sentences printed under the table. ``see_also``: preset ->
    more sentences, printed only on that preset's board and only where it judges claims (``judges_claims``; a report
    card's board of the same preset judges none): where the same claims are judged with more seeds or at each
    variant's tuned rate. Keyed by preset, they are not inherited by the presets that extend it.
    """
    ordered = [configs[v["name"]] for v in variants if v["name"] in configs] or list(configs.values())
    rows: list[SettingRow] = []
    for row in spec.get("settings") or []:
        ours = setting_value(row["config"], ordered) if "config" in row else row.get("value")
        rows.append({"setting": row["setting"], "this_sweep": ours, "paper": row.get("paper")})
    if spec.get("paper_seeds") is not None:
        seeds = sorted({len(v["seeds"]) for v in variants})
        rows.append(
            {"setting": "seeds per variant", "this_sweep": "/".join(map(str, seeds)), "paper": spec["paper_seeds"]}
        )
    see_also = (spec.get("see_also") or {}).get(preset) if judges_claims and preset is not None else None
    notes = list(spec.get("notes") or []) + list(see_also or [])
    return {"settings": rows, "notes": notes}


def setting_value(key: str, configs: Sequence[Config]) -> Any:
    """One protocol setting over the board's runs: its value (as the config holds it) where every variant shares it,
    else the distinct values in ascending order as text (``0.0006 / 0.001 (differs by variant)``; ``not set`` for a
    variant whose config lacks it), never the first run's value alone."""
    values: list[Any] = []
    for config in configs:
        value = config_value(config, key)
        if value not in values:
            values.append(value)
    if len(values) <= 1:
        return values[0] if values else None
    ordered = sorted(values, key=lambda v: sort_key(str(v)))
    return " / ".join("not set" if v is None else str(v) for v in ordered) + " (differs by variant)"


def fill_note(note: str, config: Config, variants: Mapping[str, VariantRow]) -> str:
    """Replace ``{config:a.b.c}`` by that config value and ``{metric:VARIANT:NAME}`` by its mean."""

    def value(match: re.Match) -> str:
        kind, _, ref = match[1].partition(":")
        if kind == "config":
            node = config_value(config, ref)
            return "?" if node is None else str(node)
        variant, _, metric = ref.rpartition(":")
        mean = (variants.get(variant) or {}).get("metrics", {}).get(metric, {}).get("mean")
        return "?" if mean is None else f"{mean:g}"

    return re.sub(r"\{((?:config|metric):[^{}]+)\}", value, note)


def build_tables(
    tables: Mapping[str, TableSpec], variants: Mapping[str, VariantRow], config: Config | None = None
) -> list[PaperTable]:
    """Paper-style tables (``bench.tables``): rows of variants x columns of metrics, next to the paper's.

    A row names a variant and a metric template with ``{column}``; ``paper`` lists the
    paper's row values in the same order (``null`` where it reports none), or one value when the
    table has a ``paper_column`` (a paper number measured apart from the columns); ``scale`` multiplies
    measured means and stds (100 for percentages); ``note`` may cite values (:func:`fill_note`).
    """
    out: list[PaperTable] = []
    for name, spec in tables.items():
        scale = float(spec.get("scale", 1.0))
        rows: list[PaperRow] = []
        for row in spec["rows"]:
            cells: list[PaperCell] = []
            for column in spec["columns"]:
                m: MetricRow = (variants.get(row["variant"]) or {}).get("metrics", {}).get(
                    row["metric"].format(column=column)
                ) or {}
                mean, std = m.get("mean"), m.get("std")
                cell: PaperCell = {
                    "mean": None if mean is None else mean * scale,
                    "std": None if std is None else std * scale,
                }
                if m.get("chance"):
                    cell["chance"] = {**m["chance"], "mean": m["chance"]["mean"] * scale}
                cells.append(cell)
            paper_row: PaperRow = {
                "label": row["label"],
                "variant": row["variant"],
                "metric": row["metric"],
                "measured": cells,
                "paper": row.get("paper"),
            }
            if row.get("paper_null"):
                paper_row["paper_null"] = row["paper_null"]
            rows.append(paper_row)
        out.append(
            {
                "name": name,
                "title": spec.get("title", name),
                "columns": list(spec["columns"]),
                "paper_column": spec.get("paper_column"),
                "scale": scale,
                "note": fill_note(spec.get("note", ""), config or {}, variants),
                "rows": rows,
            }
        )
    return out
