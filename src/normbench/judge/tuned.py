"""Claims judged at one shared learning rate and at each variant's own tuned rate, side by side.

A board's ``bench.tuned: {choice: <board>, shared: <value>}`` names the board whose choice table
(:mod:`normbench.judge.choice`) chose, per base variant, a value of a labelled grid axis (the learning rate
``lr``: argmax of the tuning seeds' mean metric over the values its rule keeps), and the value every variant
shares (the task's default). The board's sweep crosses its base variants with the same grid and keeps two points
per base: the shared one and the chosen one (:func:`select`). Each claim is then judged twice with the same rule, on
the same judging seeds, with the claim's variant ``v`` read as ``v,<axis>=<shared>`` and as
``v,<axis>=<chosen for v>`` (:func:`at_rate`): a verdict that holds only at one of them is a learning-rate effect.

The judging seeds' data are not the tuning seeds' (``data_seed: seed``), so the tuned verdicts read data the choice
never saw. Each base is tuned on its own budget (as AlgoPerf tunes each submission): its choice is made once its own
grid has every declared tuning seed at every value (a ``final`` group), whatever the other bases still train. A base
whose choice is not final has no tuned point yet (``waiting`` says why), and its claims at the tuned rates are in
progress; a choice board that has chosen for no base yet makes the board judged at its values wait
(:class:`ChoiceNotReady`), and the board published before stands until a build covers it.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal, TypedDict, cast

from normbench.archive import BoardError, load_board
from normbench.archive._json import JsonDict
from normbench.archive.board_keys import board_folder, parse_key
from normbench.archive.documents.views import TunedBase, TunedView
from normbench.judge.choice import ChoiceDoc, ChoiceGroup, choice_doc, sort_key, split_name
from normbench.judge.choice_text import waiting_text
from normbench.judge.rows import VariantRow

Rate = Literal["shared", "tuned"]
RATES: tuple[Rate, ...] = ("shared", "tuned")


class TunedSpec(TypedDict):
    """``bench.tuned`` as a config declares it: the board that chose the values (``choice``, its key, ``majority/lr``)
    and the grid value every variant shares (``shared``)."""

    choice: str
    shared: object


class Rechosen(TypedDict):
    """The published tuned points a choice board no longer chooses (:func:`rechosen`): ``why``, their config hashes
    (``configs``) and every config hash the published board shows (``published``)."""

    why: str
    configs: list[str]
    published: list[str]


class ChoiceNotReady(ValueError):
    """The choice board a tuned board reads is not built yet, or has chosen for none of its bases (one line): each
    base's choice is made once, on its whole grid and tuning seeds, so a bake leaves the tuned board until one base's
    grid is done. ``board``: the choice board (``majority/lr``); ``reason``: what it lacks, without the advice (a bake
    says what it does next instead)."""

    def __init__(self, message: str, board: str = "", reason: str = "") -> None:
        super().__init__(message)
        self.board = board
        self.reason = reason or message


def check_spec(spec: Any) -> TunedSpec:
    """``bench.tuned`` as ``{choice, shared}``, or a one-line error naming the field."""
    if not isinstance(spec, dict) or not isinstance(spec.get("choice"), str) or not is_board_key(spec["choice"]):
        raise ValueError(
            f"bench.tuned.choice: must name the board that chose the values, as its key "
            f"(e.g. majority/lr, cards/dyt/majority/lr), got {spec!r}"
        )
    if "shared" not in spec or isinstance(spec["shared"], (dict, list)) or spec["shared"] is None:
        raise ValueError(f"bench.tuned.shared: must be the grid value every variant shares, got {spec.get('shared')!r}")
    unknown = sorted(set(spec) - {"choice", "shared"})
    if unknown:
        raise ValueError(f"bench.tuned.{unknown[0]}: not a setting; bench.tuned holds choice and shared")
    return cast(TunedSpec, spec)  # checked above: a choice board and a shared value, nothing else


def is_board_key(text: str) -> bool:
    """Whether ``text`` is the key of a board other than a task's own bench (:mod:`normbench.archive.board_keys`)."""
    try:
        parsed = parse_key(text)
    except ValueError:
        return False
    return parsed.key != parsed.task


def same_value(label: str, value: Any) -> bool:
    """Whether a grid label (``0.001``) names ``value`` (``1.0e-3``): numerically for numbers, else as text."""
    a, b = sort_key(label), sort_key(str(value))
    return a[:2] == b[:2] if a[0] == b[0] == 0 else label == str(value)


def resolve(spec: Any, names: list[str], results_dir: str | Path) -> TunedView:
    """The tuned view of a board: per base variant, its shared point and its chosen point (``None``: not chosen yet,
    and ``waiting`` says why).

    ``names``: the sweep's variant names over the whole grid (``pre/both,lr=0.0003``, ...), whose axis is the choice
    table's; ``results_dir``: where the choice board lies (``<results_dir>/<choice>/leaderboard.json``). One-line
    errors for a missing or choiceless board and a shared value that is not a grid point."""
    spec = check_spec(spec)
    path = board_folder(results_dir, spec["choice"])
    try:
        board = load_board(path)
    except FileNotFoundError:
        raise ChoiceNotReady(
            f"bench.tuned.choice: {path}/leaderboard.json does not exist; train that board's grid first "
            f"(normbench bake)",
            spec["choice"],
            f"{path}/leaderboard.json is not built yet",
        ) from None
    except BoardError as exc:
        raise ValueError(f"bench.tuned.choice: {exc}") from None
    choice = choice_doc(board.choice)
    if not choice:
        raise ValueError(f"bench.tuned.choice: {path}/leaderboard.json has no choice table (bench.choice)")
    axis = choice["axis"]
    split = [s for s in (split_name(n, axis) for n in names) if s is not None]
    bases = list(dict.fromkeys(base for base, _ in split))
    grid_values = list(dict.fromkeys(value for _, value in split))
    shared = [v for v in grid_values if same_value(v, spec["shared"])]
    if len(shared) != 1:
        raise ValueError(
            f"bench.tuned.shared: {spec['shared']!r} is not a point of the {axis} grid ({', '.join(grid_values)})"
        )
    groups = {g["base"]: g for g in choice.get("groups") or []}
    waits = {base: _waits(groups.get(base), grid_values, choice) for base in bases}
    if all(waits.values()):
        first = next(iter(waits.items()), ("", "no variant of the grid"))
        raise ChoiceNotReady(
            f"bench.tuned.choice: {path}/leaderboard.json has chosen no {axis} yet ({first[0]}: {first[1]}); the "
            f"boards judged at the chosen values wait for it (normbench bake)",
            spec["choice"],
            f"it has chosen no {axis} yet ({first[0]}: {first[1]})",
        )
    rows: list[TunedBase] = []
    for base in bases:
        group: ChoiceGroup = {} if waits[base] else groups.get(base) or {}
        chosen = group.get("chosen")
        picked = next((r for r in group.get("rows") or [] if r["value"] == chosen), None)
        rows.append(
            {
                "base": base,
                "shared": f"{base},{axis}={shared[0]}",
                "chosen": chosen,
                "tuned": f"{base},{axis}={chosen}" if chosen is not None else None,
                "at_edge": bool(group.get("at_edge")),
                "tuning_seeds": list(picked["seeds"]) if picked else [],
                "tuning_value": (picked["metric"] or {}).get("mean") if picked else None,
                **({"waiting": waits[base]} if waits[base] else {}),
            }
        )
    return {
        "choice": spec["choice"],
        "axis": axis,
        "metric": choice["metric"],
        "goal": choice["goal"],
        **({"rule": choice["rule"]} if choice.get("rule") else {}),
        "shared": shared[0],
        "bases": rows,
    }


def _waits(group: ChoiceGroup | None, grid_values: list[str], choice: ChoiceDoc) -> str:
    """What keeps one base's choice from being final (``""``: nothing, it is made, even where no value was kept): its
    own grid not trained, short of the declared tuning seeds, or chosen on a smaller grid than the config's. Each base
    is tuned on its own budget, as AlgoPerf tunes each submission: a base whose runs are all in is judged while the
    others still train."""
    if not group:
        return "its grid is not trained yet"
    chosen_among = {str(r["value"]) for r in group.get("rows") or []} | {
        str(m["value"]) for m in group.get("missing") or []
    }
    missing = [v for v in grid_values if not any(same_value(c, v) for c in chosen_among)]
    if missing:
        have = len(grid_values) - len(missing)
        return f"chosen on {have} of the {len(grid_values)} grid values (not {', '.join(missing)})"
    if group.get("final") is False:
        return waiting_text(group, choice) or "its tuning budget is not trained yet"
    return ""  # final: chosen, or no value kept (every one failed): either way what its whole budget says


def select(view: TunedView, names: list[str]) -> list[str]:
    """Of the sweep's variant ``names``, those a tuned board trains: every chosen base's shared point and its chosen
    point (a name off the axis stays). A base whose choice waits trains neither yet: its two points are judged
    together, once its own grid is whole."""
    rows = [row for row in view["bases"] if not row.get("waiting")]
    keep = {name for row in rows for name in (row["shared"], row["tuned"]) if name}
    return [n for n in names if n in keep or split_name(n, view["axis"]) is None]


def at_rate(view: TunedView, variants: Sequence[VariantRow], rate: Rate) -> list[VariantRow]:
    """The variants at one rate (``shared`` or ``tuned``), each named by its base: what a claim's variant names read.

    A base without a point at that rate is left out (its claims are then "not run")."""
    if rate not in RATES:
        raise ValueError(f"rate: {rate!r} is not one of {', '.join(RATES)}")
    by_name = {v["name"]: v for v in variants}
    out: list[VariantRow] = []
    for row in view["bases"]:
        entry = by_name.get(cast(str, row[rate])) if row[rate] else None  # a name, where there is one
        if entry is not None:
            out.append({**entry, "name": row["base"]})
    return out


def rates_of(view: TunedView, claim_variants: dict[str, str] | None, rate: Rate) -> dict[str, str]:
    """Role -> the grid value its variant was judged at (roles whose variant is no base of the board are left out)."""
    rows = {row["base"]: row for row in view["bases"]}
    out = {}
    for role, name in (claim_variants or {}).items():
        row = rows.get(name)
        if row is None:
            continue
        value = view["shared"] if rate == "shared" else row["chosen"]
        if value is not None:
            out[role] = value
    return out


def rechosen(view: TunedView, published: Path) -> Rechosen | None:
    """The published board's tuned points its choice board no longer chooses, as ``bench.superseded``
    (``{why, configs}``, and ``published``: every config hash the published board shows; ``None``: none, or no
    published board): its grid grew and it chose again, so those points' runs give way to the new choices' and the
    board shows what it said before."""
    try:
        old = load_board(published)
    except (FileNotFoundError, BoardError):
        return None
    before = {row["base"]: row for row in (old.tuned or {}).get("bases") or []}
    hashes = {v.name: v.config_hash for v in old.variants}
    moved = [
        (row, before[row["base"]])
        for row in view["bases"]
        if row["base"] in before and before[row["base"]].get("tuned") not in (None, row["tuned"])
    ]
    configs = [h for _, was in moved if was["tuned"] is not None and (h := hashes.get(was["tuned"]))]
    if not configs:
        return None
    axis = view["axis"]
    said = "; ".join(f"{row['base']} {axis}={row['chosen']} (was {was['chosen']})" for row, was in moved)
    why = f"{view['choice']} chose again on its grown grid: {said}"
    return {"why": why, "configs": configs, "published": [h for h in hashes.values() if h]}


def with_rechosen(bench: JsonDict, published: Path) -> JsonDict:
    """``bench`` with the points :func:`rechosen` finds added to its ``superseded``. A declared list of configs is
    kept, and its sentence too where it names configs of the published board beyond the rechosen ones."""
    view, declared = bench.get("tuned"), bench.get("superseded")
    if not isinstance(view, dict) or "bases" not in view or declared is True or isinstance(declared, str):
        return bench
    found = rechosen(cast(TunedView, view), published)  # checked above: the resolved view (bench.tuned with bases)
    if found is None:
        return bench
    why, configs = found["why"], found["configs"]
    if isinstance(declared, dict):
        listed = [str(c) for c in declared.get("configs") or []]
        if (set(listed) - set(configs)) & set(found["published"]):
            why = f"{str(declared.get('why', '')).rstrip('.')}; {why}"
        configs = list(dict.fromkeys([*listed, *configs]))
    return {**bench, "superseded": {"why": why, "configs": configs}}
