"""Re-judge a published leaderboard from the per-seed values it holds.

A board's runs need not be on this machine: its ``variants`` keep every seed's value of every
metric. Today's claims (rules, margins, the protocols they name) and today's protocol table are
applied to those values and to the runs' resolved config, which the caller plans again from the
board's own sweep (its config hashes must be the board's). The per-seed values, tables, figures and
the board's provenance stay as they are; ``rejudged`` records when, at which commit and what.
"""

from __future__ import annotations

import copy

from normbench import __version__
from normbench.archive import Board, parse_board
from normbench.archive.board import Rejudged
from normbench.archive.record import RecordDocument
from normbench.boards.build import reproducibility
from normbench.boards.paper import ProtocolSpec, build_protocol, build_tables
from normbench.boards.variants import flag_seeds, n_layers_of
from normbench.io import strict_json
from normbench.judge.chance.board import with_chance
from normbench.judge.choice import build_choice
from normbench.judge.claims import board_claims
from normbench.judge.collapse import check_spec as check_collapse
from normbench.judge.collapse import with_baselines
from normbench.judge.reference_runs import build_reference
from normbench.publish import files as publish
from normbench.publish.settings import Bench, Config
from normbench.render.views import ViewInputs, asked
from normbench.run_analyses import key_sets
from normbench.training.run.records import git_state, utc_now


def check_same_runs(board: Board, planned: dict[str, str], superseded: bool | frozenset[str]) -> None:
    """One-line error unless every variant of ``board`` is planned today with the config hash it was trained
    with (``planned``: variant -> config hash); a variant of a config hash declared superseded passes."""
    for variant in board.variants:
        name, digest = variant.name, variant.config_hash
        now = planned.get(name)
        if now is None:
            raise ValueError(
                f"results: variant {name!r} of the board is not in its sweep's plan today; "
                f"rebuild the board from its runs"
            )
        if now != digest and not publish.is_superseded(digest, superseded):
            raise ValueError(
                f"results: variant {name!r} was trained with config {digest}, today's plan gives "
                f"{now}; its claims are judged by retraining it (normbench bench), not re-judged"
            )


def rejudge_board(board: Board, bench: Bench, configs: dict[str, Config], planned: dict[str, list[int]]) -> Board:
    """``board`` with its claims judged again (:func:`normbench.judge.claims.judge`, the one function every
    board uses), its protocol table and paper tables rebuilt, the chance value beside every unselectable
    fraction (``bench.unselectable_chance``) and its matrix or width view rebuilt, all from its own per-seed
    values, the runs' resolved ``configs`` (per variant) and the ``planned`` seeds of each variant."""
    doc = board.to_json()  # the views are rebuilt as JSON objects, as a build makes them
    variants = copy.deepcopy(doc["variants"])
    collapse = check_collapse(bench.get("collapse"), doc.get("metrics") or {})
    unavailable: list[str] = []
    if collapse or bench.get("chance"):  # flag collapsed seeds (and seeds at chance) from the per-seed values
        for variant in variants:
            runs: list[RecordDocument] = [
                {"variant": variant["name"], "seed": seed, "task": doc["task"], "config": configs[variant["name"]]}
                for seed in variant["seeds"]
            ]
            if collapse:
                runs, problems = with_baselines(runs, collapse)
                unavailable += problems
            flag_seeds(variant, runs, bench.get("chance"), collapse)
    if bench.get("unselectable_chance"):
        with_chance(variants, configs)
    by_name = {v["name"]: v for v in variants}
    config = (
        configs[variants[0]["name"]] if variants and variants[0]["name"] in configs else next(iter(configs.values()))
    )
    judged = board_claims(bench, variants, config)
    tables = dict(bench.get("tables") or {})
    if bench.get("key_sets"):
        tables["key_sets"] = key_sets.table_spec(bench["key_sets"], n_layers_of(config))
    protocol_spec: ProtocolSpec = bench.get("protocol") or ProtocolSpec()
    new = {
        **doc,
        "variants": variants,
        "protocol": build_protocol(
            protocol_spec,
            configs,
            variants,
            preset=doc.get("preset"),
            judges_claims=bool(bench.get("claims")),
        ),
        "tables": build_tables(tables, by_name, config) if tables else doc.get("tables", []),
    }
    fields = judged.fields(bench)
    for key in ("against_chance", "tuned", "tuned_claims"):
        if key not in fields:
            new.pop(key, None)
    new.update(fields)  # a key the board has keeps its place
    if doc.get("reproducibility"):  # the runs' platforms, and what a re-run is held to today
        new["reproducibility"] = reproducibility(variants, bench)
    if collapse:
        new["collapse"] = {**collapse, "unavailable": unavailable}
    if bench.get("choice"):
        new["choice"] = build_choice(
            bench["choice"], variants, doc.get("metrics") or {}, bench.get("seeds"), list(planned)
        )
    if bench.get("reference_runs"):  # the reference's runs may have grown; the board's seeds may be more
        new["reference_runs"] = build_reference(bench["reference_runs"], {v["name"]: v for v in variants})
    for view in asked(bench):  # the board views' documents, from the variants above
        if view.build is not None:
            new[view.key] = view.build(ViewInputs(bench[view.key], new, configs, planned, doc["task"], doc["preset"]))
    git = git_state()
    rejudged: Rejudged = {
        "at": utc_now(),
        "git_commit": git.get("git_commit"),
        "dirty": git.get("dirty"),
        "normbench": __version__,
        "what": "claims, protocol and paper tables, chance values, the matrix/width views and the tolerances "
        "recomputed from the per-seed values above; values and figures are those of the original build, or of "
        "the board that published a run first (a variant's `canonical`)",
    }
    new["rejudged"] = rejudged
    drawn_from = lambda doc: ([v.get("collapsed") for v in doc["variants"]], doc.get("choice"))  # noqa: E731
    if new.get("figure_styles") and drawn_from(new) != drawn_from(doc):
        new.pop("figure_styles")  # its grid figure shows what changed: the next build from the archive redraws it
    return parse_board(strict_json(new))


def changed_verdicts(old: Board, new: Board) -> list[str]:
    """``id: old -> new`` for each claim whose verdict differs (a claim only one board has counts too)."""
    before = {c.id: c.verdict for c in old.claims}
    after = {c.id: c.verdict for c in new.claims}
    return [
        f"{cid}: {before.get(cid, 'absent')} -> {after.get(cid, 'absent')}"
        for cid in dict.fromkeys([*before, *after])
        if before.get(cid) != after.get(cid)
    ]
