"""One archived training of a run (:class:`Replicate`) and what its record says of it: the platform class that names
it (:func:`platform_slug`), the steps it has done for good (:func:`steps_done`) and the segments that trained them
(:func:`segment`: a run continued on another machine names each platform in order).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import cast

from normbench import MKL_CBWR_DEFAULT
from normbench.archive.files.reading import Unreadable, read_json
from normbench.archive.record import Provenance, RecordDocument, Segment

RECORD = "record.json.gz"  # gzip (mtime 0: the same record gives the same bytes); a record is mostly its series
CHECKPOINT = "last.ckpt"
FINISHED = ("done", "diverged")
# the analyses a board reads beside a record, computed from the final checkpoint where it was (the archive keeps no
# weights of a finished run): normbench.training.run.rundir names the first four, run_analyses.sentence_tokens the last
ANALYSES = ("decomposition.json", "key_sets.json", "class_keys.json", "head_keys.json", "sentence_tokens.json")


@dataclass(frozen=True)
class Replicate:
    """One archived training of a run: where it lies and what it says."""

    task: str
    config_hash: str
    seed: int
    name: str
    path: Path

    @property
    def record_path(self) -> Path:
        return self.path / RECORD

    @property
    def checkpoint(self) -> Path:
        return self.path / CHECKPOINT

    def record(self) -> RecordDocument:
        return read_record(self.record_path)

    @property
    def finished(self) -> bool:
        return self.record().get("status") in FINISHED


def read_record(path: Path) -> RecordDocument:
    """A record (``record.json``, or gzipped ``record.json.gz``) as JSON data, read within the archive's limits
    (:func:`normbench.archive.files.reading.read_json`); one line naming the file when it is not a JSON object."""
    doc = read_json(path)
    if not isinstance(doc, dict):
        raise Unreadable(Path(path), f"a JSON {type(doc).__name__}, not a run record")
    return cast(RecordDocument, doc)  # the one place a record file becomes a RecordDocument: its JSON, unchecked


def first_finished(reps: list[Replicate]) -> Replicate | None:
    """The first finished replicate of ``reps`` (by name), or ``None``."""
    return next((r for r in reps if r.finished), None)


def platform_slug(provenance: Provenance) -> str:
    """The platform class of a run, as a folder name: ``gpu-nvidia-h200``, ``cpu-amd-epyc-avx2-t1``.

    What decides a run's last bits: the GPU where there is one, else the CPU model, its vector width and the
    number of threads (a reduction splits by thread), and MKL's reproducibility mode where it is not normbench's
    (``...-mkl-cbwr-unset``: on an Intel CPU MKL then runs other kernels)."""
    plat = provenance.get("platform") or {}
    if plat.get("gpu"):
        name = f"gpu-{plat['gpu']}"
    else:
        threads = plat.get("threads", provenance.get("threads"))
        name = f"cpu-{cpu_family(plat.get('cpu') or 'unknown')}-{plat.get('cpu_capability') or 'unknown'}-t{threads}"
        cbwr = plat.get("mkl_cbwr")
        if cbwr is not None and cbwr != MKL_CBWR_DEFAULT:  # a record from before normbench set it names none
            name += f"-mkl-cbwr-{cbwr or 'unset'}"
    return re.sub(r"-{2,}", "-", re.sub(r"[^a-z0-9.+-]+", "-", name.lower())).strip("-")


def cpu_family(model: str) -> str:
    """A CPU model name without its marks, generic words and clock: ``Intel(R) Xeon(R) Processor`` -> ``Intel Xeon``."""
    model = re.sub(r"\((r|tm)\)|@\s*[\d.]+\s*[gm]hz|\b(processor|cpu)\b", " ", model, flags=re.IGNORECASE)
    return " ".join(model.split()) or "unknown"


def steps_done(record: RecordDocument) -> int:
    """The optimizer steps a run has done for good: an unfinished archived run's checkpoint step (where it
    continues from), else its final step, else the last step its series reached (0 for none)."""
    if record.get("status") not in FINISHED and (step := record.get("checkpoint_step")) is not None:
        return int(step)
    if (final := record.get("final_step")) is not None:
        return int(final)
    return max((int(points[-1][0]) for points in (record.get("series") or {}).values() if points), default=0)


def same_numbers(a: RecordDocument, b: RecordDocument) -> bool:
    """Whether two records of one run hold the same series, bit for bit."""
    return a.get("status") == b.get("status") and (a.get("series") or {}) == (b.get("series") or {})


def segment(record: RecordDocument) -> Segment:
    """Who trained a record's steps: platform, commit, clean tree and the steps reached."""
    prov = record.get("provenance") or {}
    return {
        "platform": platform_slug(prov),
        "git_commit": prov.get("git_commit"),
        "dirty": prov.get("dirty"),
        "device": prov.get("device"),
        "threads": prov.get("threads"),
        "to_step": steps_done(record),
    }


def continues(old: RecordDocument, new: RecordDocument) -> bool:
    """Whether ``new`` trained on from ``old``'s checkpoint: its record names ``old``'s segments (the steps they
    reached aside) before its own. A run that started from the beginning names no earlier segment."""

    def who(segments: list[Segment]) -> list[dict[str, object]]:
        return [{k: v for k, v in s.items() if k != "to_step"} for s in segments]

    earlier = list(old.get("segments") or [segment(old)])
    named = list(new.get("segments") or [])
    return len(named) > len(earlier) and who(named[: len(earlier)]) == who(earlier)


def with_segments(old: RecordDocument, new: RecordDocument) -> RecordDocument:
    """The longer record of a run continued elsewhere, naming every segment's platform in order."""
    segments = list(old.get("segments") or [segment(old)])
    latest = segment(new)
    if segments[-1] != latest:
        segments.append(latest)
    return {**new, "segments": segments}
