"""``normbench card <norm>``: probe the norm, bake its runs on every task beside the archived baselines, write the card.

What it trains from is its input, ``queues/cards/<slug>/`` (beside ``results/``:
:func:`normbench.archive.board_keys.card_queue_folder`):

* ``<task>.yaml``: the task's config (``extends: <task>``) without its preset's claims (the card judges its own),
  with the card's variant added where the task does not define it; ``bake.yaml``: the card's queue, one item per
  board, the headline one ``results/cards/<slug>/<task>/`` (the baselines and the new norm, the preset and seeds of
  the task's protocol).

What it says is in its folder ``results/cards/<slug>/``, beside its boards (``<task>/``, ``<task>/lr/``, ...):

* ``card.json`` and ``card.md`` (:mod:`normbench.cards.build`, :mod:`normbench.cards.render`).

Training is a bake (:func:`normbench.sweep.bake.bake`): runs the archive holds (the published baselines) are not
trained again, unfinished runs continue, ``budget`` bounds the time, and each board is rebuilt from the archive. A
norm the probe finds broken is not trained: its card says what is wrong. ``tasks`` names what is trained and
rebuilt; a published card keeps every task it covers (the others' sections are read from their published boards),
so a card is never replaced by one that says less.
"""

from __future__ import annotations

import dataclasses
import json
import tempfile
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

import yaml

from normbench.archive.board_keys import board_folder, card_queue_folder
from normbench.cards.build import build_card
from normbench.cards.document import CardConfig, CardPreset, PresetBench, QueueItem, Superseded
from normbench.cards.probe import WIDTHS, probe, probe_lines, speed_scale
from normbench.cards.protocol import (
    PLACEMENTS,
    CardProtocol,
    OptionValue,
    board_of,
    card_variant,
    check_card_options,
    options_text,
    probed_component,
    slug,
    tasks_with_cards,
)
from normbench.cards.render import render_card
from normbench.errors import one_line
from normbench.io import atomic_files
from normbench.publish.files import Refused, read_board
from normbench.sweep.options import BakeOptions
from normbench.training.config import load_config

if TYPE_CHECKING:
    from normbench.sweep.baking.queue import QueueItem as SweepItem


def parse_tasks(text: str | list[str] | None) -> list[str]:
    """``"majority,lm"`` -> the tasks, in the card's order; a one-line error for an unknown one."""
    every = tasks_with_cards()
    names = text if isinstance(text, list) else [t.strip() for t in (text or ",".join(every)).split(",") if t.strip()]
    unknown = [t for t in names if t not in every]
    if unknown or not names:
        raise ValueError(
            f"tasks: {unknown[0] if unknown else text!r} is not a card task; choose from {', '.join(every)}"
        )
    return [t for t in every if t in names]


def parse_placements(text: str | list[str] | None) -> list[str]:
    """``"pre,post"`` -> the placements, in the card's order (``pre`` always first: the declared one, whose runs are
    tuned); a one-line error for an unknown one or a list without ``pre``."""
    names = text if isinstance(text, list) else [p.strip() for p in (text or "pre").split(",") if p.strip()]
    unknown = [p for p in names if p not in PLACEMENTS]
    if unknown or PLACEMENTS[0] not in names:
        raise ValueError(
            f"placements: {unknown[0] if unknown else text!r} is not a card placement list; give {PLACEMENTS[0]} and "
            f"any of {', '.join(PLACEMENTS[1:])} (e.g. pre,post)"
        )
    return [p for p in PLACEMENTS if p in names]


def parse_options(text: str | dict[str, OptionValue] | None) -> dict[str, OptionValue] | None:
    """``"alpha_init=0.0,beta=2"`` -> ``{"alpha_init": 0.0, "beta": 2}``: the norm's options, each value a YAML scalar
    (``1e-3`` a number); ``None`` without any; a one-line error for an item that is not ``key=value``."""
    if text is None or isinstance(text, dict):
        return dict(text) if text else None
    out: dict[str, OptionValue] = {}
    for item in (part.strip() for part in str(text).split(",")):
        if not item:
            continue
        key, eq, value = item.partition("=")
        key = key.strip()
        if not eq or not key.isidentifier():
            raise ValueError(f"options: {item!r} is not key=value; give a comma-separated list, e.g. alpha_init=0.0")
        try:
            parsed = yaml.safe_load(value.strip())
        except yaml.YAMLError:
            raise ValueError(f"options: {item!r}: the value is not a YAML scalar") from None
        if isinstance(parsed, str):
            try:
                parsed = float(parsed)  # 1e-3: YAML 1.1 reads it as a string
            except ValueError:
                pass
        if isinstance(parsed, (list, dict)):
            raise ValueError(f"options: {item!r}: the value is not a YAML scalar")
        out[key] = parsed
    return out or None


def card_placements(
    norm: str,
    names: list[str],
    tasks: list[str],
    results_dir: str | Path,
    options: dict[str, OptionValue] | None = None,
) -> list[str]:
    """The placements a card covers: ``names`` and every placement a card board of ``tasks`` holds already (a card
    once trained at ``post`` keeps it)."""
    held = {
        p
        for p in PLACEMENTS[1:]
        for t in tasks
        if (board_folder(results_dir, board_of(t, norm, p, options)) / "leaderboard.json").is_file()
    }
    return [p for p in PLACEMENTS if p in names or p in held]


def card_tasks(
    norm: str, names: list[str], results_dir: str | Path, options: dict[str, OptionValue] | None = None
) -> list[str]:
    """The tasks a card covers, in the card's order: ``names`` (those trained and rebuilt now), every task the
    published card already covers, and every task that has a card board (so a card once written broken, with no
    task, gets them back). A published card that cannot be read is a one-line ``ValueError``."""
    path = Path(results_dir) / "cards" / slug(norm, options) / "card.json"
    try:
        published = read_board(path, "--results_dir") or {}
    except Refused as exc:
        reason = one_line(str(exc.__cause__ or exc))[:120]
        raise ValueError(f"results_dir: {path} exists but is unreadable ({reason}); restore it or remove it") from None
    if published.get("norm") not in (None, norm):  # two norms of one class name (mypkg:DyT and dyt): one folder
        raise ValueError(
            f"norm: {path} is the card of {published['norm']}, not of {norm}; rename the class or remove that card"
        )
    if published.get("norm") and (published.get("options") or None) != (options or None):  # one slug, two sets
        given, held = options_text(options) or "no options", options_text(published.get("options")) or "no options"
        raise ValueError(f"options: {path} is the card of {norm} with {held}, not with {given}; remove that card")
    had = {t.get("task") for t in published.get("tasks") or [] if isinstance(t, dict)}
    every = tasks_with_cards()
    boards = {
        t for t in every if (board_folder(results_dir, board_of(t, norm, "", options)) / "leaderboard.json").is_file()
    }
    return [t for t in every if t in names or t in had or t in boards]


def bake_tasks(
    queue: Path,
    items: list[QueueItem],
    names: list[str],
    options: BakeOptions,
    *,
    dry_run: bool,
    cost_scale: Callable[[SweepItem, str], float] | None = None,
) -> None:
    """Bake the card's queue items of the tasks ``names`` (the whole ``queue`` file when that is every item) as
    ``options`` say (``train`` false: rebuild their boards from the archive only; ``pages``: rewrite the project's
    pages too). ``cost_scale``: the dry run's factor on a new run's time (:func:`speed_scale`)."""
    from normbench.sweep.bake import bake as bake_queue  # the sweep layer trains; imported where it is needed

    chosen = [item for item in items if item["task"] in names]
    if chosen == items:
        bake_queue(str(queue), options, dry_run=dry_run, cost_scale=cost_scale)
        return
    with tempfile.TemporaryDirectory(prefix="normbench-card-") as tmp:
        part = Path(tmp) / "bake.yaml"
        part.write_text(yaml.safe_dump({"queue": chosen}, sort_keys=False), encoding="utf-8")
        bake_queue(str(part), options, dry_run=dry_run, cost_scale=cost_scale)


def keep_superseded(presets: dict[str, CardPreset], published: Path) -> None:
    """Carry the card's own ``bench.superseded`` declarations from its published task config into ``presets``: a
    re-plan keeps the sentence that lets a board drop the runs of a variant the card no longer trains (a named card
    whose variant was chosen again)."""
    try:
        old = yaml.safe_load(published.read_text(encoding="utf-8")) or {}
    except FileNotFoundError:
        return
    for name, preset in (old.get("presets") or {}).items():
        declared = ((preset or {}).get("bench") or {}).get("superseded")
        if declared is not None:
            presets.setdefault(name, {}).setdefault("bench", {})["superseded"] = declared


def drop_superseded(presets: dict[str, CardPreset], items: list[QueueItem], task: str, results_dir: str | Path) -> None:
    """Declare in ``presets`` (``bench.superseded``, by config hash) the runs of every variant a published board of the
    card holds and the card no longer trains on it (the RMSNorm baseline that was ``pre/scale``, RMSNorm as the
    attention norm only, and is now the whole-block ``pre/scale-blocks``), so the publishing rule lets a rebuild drop
    them; those runs stay published on the task's own boards. What the preset (the card's or the task's) declares
    already is kept."""
    for item in items:
        try:
            board = json.loads(
                (board_folder(results_dir, item["board"]) / "leaderboard.json").read_text(encoding="utf-8")
            )
        except FileNotFoundError:
            continue
        gone = {v["name"].split(",")[0] for v in board.get("variants") or []} - set(item["variants"])
        if not gone:
            continue
        hashes = {v["config_hash"] for v in board["variants"] if v["name"].split(",")[0] in gone}
        bench = presets.setdefault(item["preset"], {}).setdefault("bench", {})
        declared = bench.get("superseded")
        if declared is None:
            declared = (load_config(task, item["preset"]).get("bench") or {}).get("superseded")
        if declared is not None and not isinstance(declared, dict):
            continue  # every published config superseded already
        why = (
            f"the card no longer trains {', '.join(sorted(gone))}: its RMSNorm baseline is the whole-block model "
            "(RMSNorm as the attention and the FFN norm, as the card's norm), not RMSNorm as the attention norm only; "
            "those runs stay published on the task's own boards"
        )
        old: Superseded = declared or {"why": "", "configs": []}
        old_why = str(old.get("why") or "")
        bench["superseded"] = {
            "why": old_why if why in old_why else "; ".join(w for w in (old_why, why) if w),
            "configs": sorted({*map(str, old.get("configs") or ()), *hashes}),
        }


def seed_span(seeds: list[int] | tuple[int, ...]) -> str:
    """``0-9`` for consecutive seeds, else ``0, 2, 5``."""
    seeds = sorted(int(s) for s in seeds)
    consecutive = len(seeds) > 2 and seeds == list(range(seeds[0], seeds[-1] + 1))
    return f"{seeds[0]}-{seeds[-1]}" if consecutive else ", ".join(map(str, seeds))


def tuned_note(
    task: str, norm: str, protocol: CardProtocol, grid_seeds: list[int], options: dict[str, OptionValue] | None = None
) -> str:
    """The protocol note of a card's board at the tuned rates: the card's own seeds, shared-rate runs and grid (the
    task's note names the task's)."""
    shared = load_config(task, protocol.tuned)["bench"]["tuned"]["shared"]
    head = board_of(task, norm, "", options)
    return (
        f"The card's judging seeds {seed_span(protocol.seeds)} in the protocol of results/{head}/, every variant at "
        f"the learning rate all share ({shared:g}; these are the runs of results/{head}/) and at its own rate, chosen "
        f"on results/{board_of(task, norm, 'lr', options)}/ (tuning seeds {seed_span(grid_seeds)}). Every claim is "
        f"judged at both."
    )


def plan_card(
    norm: str,
    tasks: list[str],
    results_dir: str | Path,
    folder: Path | None = None,
    placements: list[str] | tuple[str, ...] = PLACEMENTS[:1],
    options: dict[str, OptionValue] | None = None,
) -> tuple[Path, list[QueueItem]]:
    """Write the card's task configs and queue (into ``folder``, by default ``queues/cards/<slug>/``); returns the
    queue file and its items: every task's headline runs first (at each of ``placements``: the declared one's board
    ``cards/<slug>/<task>``, another's ``cards/<slug>/<task>/<placement>``), then the learning-rate grids, then the runs
    at the tuned rates (which wait for their grid; the declared placement only). ``options``: the norm's constructor
    keywords, in every slot of the card's variant (:func:`~normbench.cards.protocol.card_variant`)."""
    folder = folder or card_queue_folder(results_dir, slug(norm, options))
    head: list[QueueItem] = []
    grids: list[QueueItem] = []
    tuned: list[QueueItem] = []
    files: dict[str, Mapping[str, object]] = {}  # file name -> the YAML document written
    for task in tasks:
        protocol = CardProtocol.of(task)
        config = str(folder / f"{task}.yaml")
        seeds = ",".join(map(str, protocol.seeds))
        defined: dict[str, dict[str, object]] = {}
        for placement in placements:
            at = protocol.at(placement)
            name, definition = card_variant(norm, at, options)
            if definition is not None:
                defined[name] = definition
            head.append({"board": board_of(task, norm, "" if at is protocol else placement, options), "task": task,
                         "preset": protocol.preset, "variants": [at.layernorm, at.rmsnorm, name], "seeds": seeds,
                         "config": config})  # fmt: skip
        name, _ = card_variant(norm, protocol, options)
        variants = [protocol.layernorm, protocol.rmsnorm, name]
        # the task's config, its presets' claims and reports left to the card (they compare the task's own variants:
        # SST-2's token report reads none/none and the LM's models), the card's variant added where the task does not
        # define it; none of it changes a run's config hash
        bench: PresetBench = {"claims": None}
        if load_config(task, protocol.preset)["bench"].get("token_report"):
            bench["token_report"] = None
        presets: dict[str, CardPreset] = {protocol.preset: {"bench": bench}}
        if protocol.grid and protocol.tuned:
            grid_seeds = load_config(task, protocol.grid)["bench"]["seeds"]
            grids.append({"board": board_of(task, norm, "lr", options), "task": task, "preset": protocol.grid,
                          "variants": list(variants), "seeds": ",".join(map(str, grid_seeds)),
                          "config": config})  # fmt: skip
            tuned.append({"board": board_of(task, norm, "tuned", options), "task": task, "preset": protocol.tuned,
                          "variants": list(variants), "seeds": seeds, "config": config})  # fmt: skip
            presets[protocol.tuned] = {
                "bench": {
                    "claims": None,
                    "tuned": {"choice": board_of(task, norm, "lr", options)},
                    "protocol": {"notes": [tuned_note(task, norm, protocol, grid_seeds, options)]},
                }
            }
        keep_superseded(presets, card_queue_folder(results_dir, slug(norm, options)) / f"{task}.yaml")
        drop_superseded(presets, [i for i in head + grids + tuned if i["task"] == task], task, results_dir)
        doc: CardConfig = {"extends": task, "presets": presets}
        if defined:
            doc["bench"] = {"variants": defined}
        files[f"{task}.yaml"] = doc
    items = head + grids + tuned
    files["bake.yaml"] = {"queue": items}
    with atomic_files(folder) as stage:
        for filename, written in files.items():
            named = f"{norm} ({options_text(options)})" if options else norm
            header = f"# The report card of {named}: written by `normbench card`; its runs are in results/archive/.\n"
            (stage / filename).write_text(header + yaml.safe_dump(written, sort_keys=False), encoding="utf-8")
    return folder / "bake.yaml", items


def make_card(
    norm: str,
    tasks: str | list[str] | None = None,
    bake_options: BakeOptions | None = None,
    *,
    dry_run: bool = False,
    placements: str | list[str] | None = None,
    options: str | dict[str, OptionValue] | None = None,
) -> Path:
    """Probe ``norm``, train its card's runs (a bake, as ``bake_options`` say: the budget in minutes, the GPUs, the
    workers, where runs train, the results root; ``train`` false: train nothing, rebuild the card's boards from the
    runs the archive holds), write ``<results_dir>/cards/<slug>/card.md``; returns the card's folder.
    ``placements``: ``pre`` (default) and ``post`` too with ``pre,post``. A norm that cannot be imported or built is a
    one-line ``ValueError``, as is a placement a task cannot compare, or an option (``options``: the norm's
    constructor keywords, ``"alpha_init=0.0"`` or a mapping; part of its runs' and its card's identity) its class
    does not take. ``dry_run``: the norm imported, built and probed, the card's folder, the probe's result, where each
    of its runs stands and the time per task printed; nothing trained or written. ``bake_options.pages``: also
    rewrite the project's pages from the card (its docs page, the cards index, the norm leaderboard); by default a
    card writes under ``results/cards/<slug>/`` only (and its runs into the archive)."""
    from normbench.sweep.bake import refresh_pages  # the sweep layer trains; imported where it is needed

    bake_options = dataclasses.replace(bake_options or BakeOptions(), pages=bool((bake_options or BakeOptions()).pages))
    results_dir = bake_options.results_dir
    names = parse_tasks(tasks)
    asked = parse_placements(placements)
    measured = probed_component(norm, names)  # one line when it cannot be imported or built
    given = check_card_options(norm, parse_options(options))  # one line for an option its class does not take
    folder = Path(results_dir) / "cards" / slug(norm, given)
    start = time.time()
    facts = {d: probe(measured, d, given) for d in WIDTHS}  # timed in a dry run too: its estimate reads the speed
    covered = card_tasks(norm, names, results_dir, given)
    where = card_placements(norm, asked, covered, results_dir, given)
    for task in covered:  # a placement a task cannot compare, or a named card moved: one line before anything trains
        for placement in where:
            card_variant(norm, CardProtocol.of(task).at(placement), given)
    broken = [f for f in facts.values() if f.problem]
    if broken and dry_run:
        print(f"normbench: card: {norm} -> {folder}/")
        print(f"normbench: dry run: {norm} at d = {broken[0].d} {broken[0].problem}: its card trains nothing")
        return folder
    if dry_run:
        print(f"normbench: card: {norm} -> {folder}/ (card.md, card.json; its boards under {folder}/<task>/)")
        for line in probe_lines(facts):
            print(f"normbench: card: {line}")
    items: list[QueueItem] = []
    if not broken:
        with tempfile.TemporaryDirectory(prefix="normbench-card-") as tmp:  # a dry run leaves the card's folder as is
            queue, items = plan_card(norm, covered, results_dir, Path(tmp) if dry_run else None, where, given)
            scale = speed_scale(facts, {card_variant(norm, CardProtocol.of(t).at(p), given)[0] for t in covered
                                        for p in where})  # fmt: skip
            bake_tasks(queue, items, names, bake_options, dry_run=dry_run, cost_scale=scale)
    if dry_run:
        return folder
    card = build_card(norm, facts, covered, items, results_dir, time.time() - start, where, given)
    with atomic_files(folder, last=("card.md", "card.json")) as stage:
        (stage / "card.json").write_text(card.dumps(), encoding="utf-8")
        (stage / "card.md").write_text(render_card(card), encoding="utf-8")
    print(f"normbench: wrote {folder / 'card.md'} and {folder / 'card.json'}")
    if bake_options.pages:  # the card's docs page and the cards index, from the card just written
        refresh_pages(results_dir)
    for line in card.summary_lines():
        print(f"  {line}")
    return folder
