"""Commands on sweeps and their leaderboards: run a task's bench, rebuild, re-judge, compare, cite.

The command line builds its parsers from these functions' signatures, so this module imports nothing heavy
at its top: each function imports what it runs (torch and Lightning come with the tasks, sweeps and
leaderboards), and ``normbench <command> --help`` answers without them.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from pathlib import Path

from normbench.archive.board_keys import card_queue_folder, key_of_folder, parse_key, results_root
from normbench.publish import files as publish
from normbench.sweep.options import SweepOptions


def sweep(options: SweepOptions | None = None, overrides: Sequence[str] = (), dry_run: bool = False) -> Path | None:
    """Train a config's variant x grid x seed sweep and write its leaderboard.

    Finished runs are skipped, interrupted ones resume from their last checkpoint.

    Args:
        options: which runs, where they train, where their leaderboard goes (:class:`SweepOptions`).
        overrides: every run's config overrides (``--section.key VALUE`` on the command line).
        dry_run: plan the runs and list where each stands (finished, to resume, to train); train and write nothing.
    """
    from normbench.sweep.run import run_sweep

    return run_sweep(options or SweepOptions(), overrides, dry_run=dry_run)


def bench(
    task: str, options: SweepOptions | None = None, overrides: Sequence[str] = (), dry_run: bool = False
) -> Path | None:
    """A task's own sweep: `normbench bench <task> [--preset quick] [--section.key VALUE ...]`.

    The sweep of ``normbench sweep --config <task>``: finished runs are skipped, interrupted ones resume from their
    last checkpoint, and the leaderboard is written.

    Args:
        task: registered task name (see `normbench tasks`).
        options: the sweep's other options (:class:`SweepOptions`; its ``config`` is ``task``).
        overrides: every run's config overrides (``--section.key VALUE`` on the command line).
        dry_run: plan the runs and list where each stands (finished, to resume, to train); train and write nothing.
    """
    from normbench.sweep.run import run_sweep
    from normbench.tasks import get_task

    get_task(task)  # one line naming the registered tasks
    return run_sweep(dataclasses.replace(options or SweepOptions(), config=task), overrides, dry_run=dry_run)


def leaderboard(
    task: str,
    preset: str | None = None,
    seeds: str | None = None,
    variants: str | None = None,
    runs_dir: str = "runs",
    results_dir: str = "results",
    name: str | None = None,
    force: bool = False,
    uncommitted: bool = False,
    dry_run: bool = False,
) -> None:
    """Rebuild a sweep's leaderboard from its run records (nothing is trained).

    A published leaderboard is replaced only when the records cover its finished runs and settings.

    Args:
        task: registered task name.
        preset: preset of the sweep (default: the task's ``default_preset``).
        seeds: seeds to include, e.g. ``0-9`` (default: the preset's).
        variants: variants to include, ``a,b`` (default: the preset's ``bench.default_variants``, else all).
        runs_dir: root of the run records.
        results_dir: root of the results; the folder is chosen as for ``normbench sweep``.
        name: the sweep's ``--name``, if it had one.
        force: replace the published leaderboard even when the records lack some of its finished runs.
        uncommitted: show runs trained from uncommitted code (the board then says so).
        dry_run: plan and check, write nothing.
    """
    from normbench.sweep.run import run_sweep

    options = SweepOptions(
        config=task,
        preset=preset,
        seeds=seeds,
        variants=variants,
        runs_dir=runs_dir,
        results_dir=results_dir,
        name=name,
        progress=False,
        force=force,
        uncommitted=uncommitted,
    )
    run_sweep(options, train=False, dry_run=dry_run)


def config_file_of(path: Path, name: str | None, results_dir: Path) -> str | None:
    """The config file a board's sweep was planned from, which the board names by file name only: as given (from
    here), beside the board, or a report card's own (``queues/cards/<norm>/<name>`` for the boards
    ``cards/<norm>/<task>[/<kind>]``, :mod:`normbench.archive.board_keys`); a one-line error where none is."""
    if name is None:
        return None
    key = key_of_folder(results_dir, path.parent)
    card = parse_key(key).card if key is not None else None
    candidates = [Path(name), path.parent / name]
    if card:
        candidates.append(card_queue_folder(results_dir, card) / name)
    found = next((c for c in candidates if c.is_file()), None)
    if found is None:
        looked = ", ".join(str(c) for c in candidates)
        raise ValueError(f"sweep.config_file: {name!r} of {path} is not found (looked at {looked})")
    return str(found)


def rejudge(board: str, force: bool = False) -> None:
    """Judge a published leaderboard's claims again from the per-seed values it holds (nothing is trained).

    Today's claims, margins and protocols and today's protocol table are applied; the board's sweep is
    planned again to read its runs' settings, and every variant must plan to the config it was trained
    with. Use it after a change to a claim or its rule; values change only by retraining, or where an earlier
    board shows the same runs with other values (one run, one result: the board takes the earlier board's
    values, :mod:`normbench.boards.canonical`). The board is rewritten only when some verdict, value, choice,
    claim's wording or protocol note changed; a board that is not JSON or not a leaderboard is one line.

    Args:
        board: a leaderboard's folder (``results/<task>[/<name>]``) or its ``leaderboard.json``.
        force: write even if the board's variants plan to other configs today.
    """
    from normbench.archive import parse_board
    from normbench.archive.board import board_path, load_board
    from normbench.boards.canonical import adopt_canonical
    from normbench.io import strict_json
    from normbench.publish import leaderboard as lb
    from normbench.publish.rejudge import changed_verdicts, check_same_runs, rejudge_board
    from normbench.publish.tokens import TOKEN_REPORT, rejudge_token_report
    from normbench.publish.write import keep_facts, order_plots
    from normbench.sweep.grid import parse_grid
    from normbench.sweep.plan import plan_runs

    path = board_path(board)
    try:
        doc = load_board(path)
    except FileNotFoundError:
        raise ValueError(f"board: {path} does not exist; give a folder holding a leaderboard.json") from None
    sweep = doc.sweep or {}
    variants = list(dict.fromkeys(v.split(",")[0] for v in sweep.get("variants") or [])) or None  # grid cells: bases
    results_dir = results_root(path.parent, doc.task)  # results/<task>/..., results/cards/<card>/<task>/...
    config, runs = plan_runs(
        doc.task,
        sweep.get("preset"),
        sweep.get("seeds"),
        variants,
        sweep.get("overrides") or None,
        "runs",
        parse_grid(sweep.get("grid") or None),
        config_path=config_file_of(path, sweep.get("config_file"), results_dir or path.parent.parent),
        results_dir=results_dir or "results",
    )
    bench_cfg = config.get("bench") or {}
    if not force:
        check_same_runs(doc, {r.variant: r.config_hash for r in runs}, publish.superseded_configs(bench_cfg))
    configs = {r.variant: r.config for r in runs}
    planned = {name: [r.seed for r in runs if r.variant == name] for name in configs}
    adopted, moved = (
        adopt_canonical(doc.to_json(), str(key_of_folder(results_dir, path.parent)), results_dir)
        if results_dir is not None
        else (doc.to_json(), [])
    )
    new = rejudge_board(parse_board(strict_json(adopted)) if moved else doc, bench_cfg, configs, planned)
    changed = changed_verdicts(doc, new)
    for line in moved:
        print(f"normbench: {path}: {line} (one run, one result)")
    restated = (
        [c.to_json() for c in new.claims] != [c.to_json() for c in doc.claims]
        or [c.to_json() for c in new.against_chance or ()] != [c.to_json() for c in doc.against_chance or ()]
        or new.protocol != doc.protocol  # e.g. power, a rule's text, a protocol note
        or new.tables != doc.tables  # e.g. the null beside a paper table's values
        or new.reproducibility != doc.reproducibility  # the tolerances a re-run is held to today
        or new.reference_runs != doc.reference_runs  # another code's runs beside the board's seeds
        or new.choice != doc.choice  # a grid's choice under today's rule (e.g. a diverged seed rules its value out)
        or [v.to_json() for v in new.variants] != [v.to_json() for v in doc.variants]  # e.g. a null drawn further
    )
    keep_facts(path.parent)  # the data facts the judging read (chance, collapse) go to the archive with the board
    report = rejudge_token_report(path.parent)  # Tables 3-4 beside the SST-2 board: judged from its own counts
    if report is not None:
        said = "; ".join(report) if report else "none"
        print(f"normbench: {path.parent / TOKEN_REPORT}: claims judged again; verdicts changed: {said}")
    if not changed and not moved and not restated:
        print(f"normbench: {path}: no verdict changed; left as it is")
        return
    figures = doc.figures or order_plots([str(p) for p in sorted(path.parent.glob("*.png"))], path.parent)
    json_path, md_path = lb.write(new, path.parent, figures)
    print(f"normbench: re-judged {md_path} and {json_path}; verdicts changed: {'; '.join(changed) or 'none'}")
    for claim in new.claims:
        print(f"  {claim.id}: {claim.verdict}")


def compare(
    task: str, a: str, b: str, name: str | None = None, results_dir: str = "results", metrics: list[str] | None = None
) -> None:
    """Two variants of a leaderboard side by side, with the difference and its interval.

    Each metric's mean ± std over seeds, the difference b - a, its 95% Welch interval and p-value
    (e.g. `normbench compare majority pre/both pre/scale`).

    Args:
        task: a task (its own bench), a <task>/<name> key, or a path to a leaderboard.json or its folder.
        a: the reference variant.
        b: the variant compared with it.
        name: a sub-leaderboard of the task (e.g. modern for results/majority/modern/).
        results_dir: the folder holding <task>/leaderboard.json.
        metrics: only these metrics (default: all).
    """
    from normbench import results

    table = results.compare(task, a, b, name=name, results_dir=results_dir, metrics=metrics)
    print(results.format_comparison(table, a, b))


def cite(task: str, name: str | None = None, results_dir: str = "results") -> None:
    """BibTeX for one leaderboard, naming the commit that contains it (e.g. `normbench cite majority`).

    Args:
        task: a task (its own bench), a <task>/<name> key, or a path to a leaderboard.json or its folder.
        name: a sub-leaderboard of the task (e.g. width for results/lm/width/).
        results_dir: the folder holding <task>/leaderboard.json.
    """
    from normbench import results

    print(results.citation(task, name=name, results_dir=results_dir))


def tasks() -> None:
    """List the registered tasks and their config files."""
    from normbench.tasks import get_task, task_names

    for name in task_names():
        t = get_task(name)
        print(f"{name}\t{t.config_path}\t{t.description}")
