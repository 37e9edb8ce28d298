"""Bring an older run archive to what today's code writes, in files a maintainer reviews and commits.

* **canonical files**: a run added since the archive records the order of addition has a ``canonical`` file naming
  its first finished replicate (:meth:`normbench.archive.store.Archive.pin_canonical`). An older run with several
  replicates and none shows the first finished one by folder name, which a replicate of another platform class
  added later could take over (``cpu-amd-epyc-avx2-t1`` sorts before ``cpu-amd-epyc-avx512-t1``). :func:`unpinned`
  lists those runs with the replicate they show today, and :func:`pin` writes that choice into their ``canonical``
  file, so nothing a board shows changes.
* **local paths**: an analysis archived before the archive made its paths local (``decomposition.json``'s ``run`` and
  ``checkpoint``) holds the absolute paths of the machine it was computed on; :func:`with_local_paths` lists them and
  :func:`localise` rewrites them as the archive now writes them
  (:func:`normbench.archive.files.writing.local_path`). So does a record of a run trained with an absolute
  ``--runs_dir`` (its ``log_dir``, ``checkpoint`` and ``runs_dir``), and the published values taken from a board that
  showed such a run: :func:`records_with_local_paths`, :func:`localise_records`. Those keys are not part of a run's
  identity, so its config hash and every value a board shows stay as they were.

* **boards**: a board built straight after training before boards named runs as the archive does holds its runs'
  absolute log folders (``log_dirs``); :func:`boards_with_local_paths` lists them and :func:`localise_boards`
  rewrites them, every value and verdict as it was.

``python -m normbench.archive.maintain [RESULTS_DIR]`` lists all three and writes nothing; ``--write`` writes them.
"""

from __future__ import annotations

import sys
from pathlib import Path

from normbench.archive.board import FILENAME, dumps_board, parse_board
from normbench.archive.files.reading import read_json
from normbench.archive.files.writing import PATH_KEYS, write_file, write_gzip_json
from normbench.archive.replicate import ANALYSES, first_finished, read_record
from normbench.archive.store import ARCHIVE, CANONICAL, PUBLISHED_VALUES, Archive
from normbench.io import atomic_write_text, dumps_json

RUNS_ROOT = Path("runs")  # what a path under an unknown runs folder is kept relative to (its folder's name)


def write_text_file(path: Path, text: str, encoding: str | None = None) -> Path:
    """``text`` written into ``path`` atomically (:func:`normbench.archive.files.writing.write_file`)."""
    return write_file(path, lambda tmp: tmp.write_text(text, encoding=encoding))


def unpinned(archive: Archive) -> list[tuple[Path, str]]:
    """``(seed folder, the replicate it shows today)`` of every run with several replicate folders, no ``canonical``
    file, a finished replicate and no published board values standing for it."""
    out = []
    seen: set[Path] = set()
    for rep in archive.runs():
        folder = rep.path.parent
        if folder in seen:
            continue
        seen.add(folder)
        reps = archive.replicates(rep.task, rep.config_hash, rep.seed)
        if len(reps) < 2 or (folder / CANONICAL).exists():
            continue
        if archive.published_elsewhere(rep.task, rep.config_hash, rep.seed):
            continue
        first = first_finished(reps)
        if first is not None:
            out.append((folder, first.name))
    return out


def pin(archive: Archive) -> list[Path]:
    """Write the ``canonical`` file of every run :func:`unpinned` lists, naming the replicate it shows today."""
    written = []
    for folder, name in unpinned(archive):
        written.append(write_text_file(folder / CANONICAL, name + "\n"))
    return written


def with_local_paths(archive: Archive) -> list[Path]:
    """The archived analyses that hold an absolute path (archived before paths were made local)."""
    out = []
    for rep in archive.runs():
        for name in ANALYSES:
            path = rep.path / name
            if path.is_file() and localised(read_json(path)) != read_json(path):
                out.append(path)
    return out


def localised(doc: object) -> object:
    """``doc`` with its paths as the archive writes them now (the run's runs folder is not known any more: a path's
    part from its ``<task>/<run>/seed<k>`` folder on is kept, under ``runs/``)."""
    if isinstance(doc, dict):
        return {
            k: relative_run_path(v) if k in PATH_KEYS and isinstance(v, str) else v if k == "series" else localised(v)
            for k, v in doc.items()
        }
    if isinstance(doc, list):
        return [localised(v) for v in doc]
    return doc


def relative_run_path(value: str) -> str:
    """An absolute path a run wrote (``/work/bake/runs/majority/<run>/seed0/checkpoints/last.ckpt``), kept from its
    run's folder on under ``runs/`` (``runs/majority/<run>/seed0/checkpoints/last.ckpt``); other values as they are."""
    path = Path(value)
    if not path.is_absolute():
        return value
    parts = path.parts
    seed = next((i for i, p in enumerate(parts) if p.startswith("seed") and p[4:].isdigit()), None)
    if seed is None or seed < 2:
        return path.name
    return str(RUNS_ROOT.joinpath(*parts[seed - 2 :]))


def localise(archive: Archive) -> list[Path]:
    """Rewrite every analysis :func:`with_local_paths` lists with local paths (indented JSON, as analyses are)."""
    written = []
    for path in with_local_paths(archive):
        text = dumps_json(localised(read_json(path)), indent=2, sort_keys=False) + "\n"
        written.append(write_text_file(path, text, encoding="utf-8"))
    return written


def records_with_local_paths(archive: Archive) -> list[Path]:
    """The archived records (``record.json.gz``) and published values (``published-values.json``) that hold an
    absolute path (a run trained with an absolute ``--runs_dir``)."""
    records = [rep.record_path for rep in archive.runs() if (record := rep.record()) != localised(record)]
    published = sorted(archive.root.glob(f"*/*/seed*/{PUBLISHED_VALUES}"))
    return records + [path for path in published if (doc := read_json(path)) != localised(doc)]


def localise_records(archive: Archive) -> list[Path]:
    """Rewrite every file :func:`records_with_local_paths` lists with local paths (a record gzipped, published values
    as indented JSON, as each is written)."""
    written = []
    for path in records_with_local_paths(archive):
        if path.name == PUBLISHED_VALUES:
            write_text_file(path, dumps_json(localised(read_json(path)), indent=2, sort_keys=False) + "\n", "utf-8")
        else:
            write_gzip_json(path, localised(read_record(path)))
        written.append(path)
    return written


def board_files(results_dir: str | Path) -> list[Path]:
    """Every ``leaderboard.json`` under ``results_dir``, not under its archive."""
    root = Path(results_dir)
    return sorted(p for p in root.rglob(FILENAME) if ARCHIVE not in p.relative_to(root).parts)


def localised_board(data: object) -> object:
    """A board's JSON with the log folders its variants' provenance names (``log_dirs``) as the archive keeps them
    (:func:`relative_run_path`); everything else as it is."""
    if not isinstance(data, dict):
        return data
    variants = []
    for variant in data.get("variants") or []:
        provenance = variant.get("provenance") if isinstance(variant, dict) else None
        if isinstance(provenance, dict) and isinstance(provenance.get("log_dirs"), list):
            dirs = [relative_run_path(d) if isinstance(d, str) else d for d in provenance["log_dirs"]]
            variant = {**variant, "provenance": {**provenance, "log_dirs": dirs}}
        variants.append(variant)
    return {**data, "variants": variants} if "variants" in data else data


def boards_with_local_paths(results_dir: str | Path) -> list[Path]:
    """The published boards that name a run's log folder by an absolute path of the machine that built them."""
    return [p for p in board_files(results_dir) if localised_board(data := read_json(p)) != data]


def localise_boards(results_dir: str | Path) -> list[Path]:
    """Rewrite every board :func:`boards_with_local_paths` lists with local log folders, as its writer writes it
    (checked: it reads back as the same board but for those paths). Its Markdown names no log folder, so it stays."""
    written = []
    for path in boards_with_local_paths(results_dir):
        board = parse_board(localised_board(read_json(path)), path)
        atomic_write_text(path, dumps_board(board))
        written.append(path)
    return written


def main(argv: list[str] | None = None) -> int:
    """List (or, with ``--write``, write) the canonical files and local paths an older archive lacks."""
    args = list(sys.argv[1:] if argv is None else argv)
    write = "--write" in args
    rest = [a for a in args if a != "--write"]
    archive = Archive(rest[0] if rest else "results")
    for folder, name in unpinned(archive):
        print(f"{'wrote' if write else 'would write'} {folder / CANONICAL}: {name}")
    paths = with_local_paths(archive)
    print(f"{len(paths)} archived analyses hold absolute paths{'; rewritten' if write else ''}")
    records = records_with_local_paths(archive)
    print(f"{len(records)} archived records and published values hold absolute paths{'; rewritten' if write else ''}")
    boards = boards_with_local_paths(archive.root.parent)
    print(f"{len(boards)} published boards name runs by absolute paths{'; rewritten' if write else ''}")
    if write:
        pin(archive)
        localise(archive)
        localise_records(archive)
        localise_boards(archive.root.parent)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
