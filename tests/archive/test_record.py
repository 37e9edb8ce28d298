"""Run records: typed fields, unknown keys kept, the one reader's one-line errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from normbench.archive import RunRecord, load_record
from tests.factories import make_record


def test_a_factory_record_round_trips_with_its_unknown_keys(tmp_path: Path) -> None:
    doc = make_record("pre/both", 1, series={"test/acc": [[10, 0.5]]}, future={"kept": True})
    path = tmp_path / "record.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    record = load_record(path)
    assert isinstance(record, RunRecord) and record.variant == "pre/both" and record.seed == 1
    assert record.finished and record.extra == {"future": {"kept": True}}
    assert record.to_json() == doc and list(record.to_json()) == list(doc)


def test_the_oldest_records_hold_status_and_series_only(tmp_path: Path) -> None:
    path = tmp_path / "record.json"
    path.write_text('{"status": "running", "series": {"a": [[1, NaN]]}}', encoding="utf-8")
    record = load_record(path)
    assert record.task is None and record.series == {"a": [[1, None]]} and not record.finished


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        ({"status": "paused"}, "missing or unknown status"),
        ({"seed": "0"}, r"record\.seed: a string, not an integer or null"),
        ({"config": []}, r"record\.config: a list, not an object or null"),
        ({"series": {"a": [[1.5, 0.1]]}}, r"series 'a' has the point \[1\.5, 0\.1\], not \[step, value\]"),
    ],
)
def test_a_malformed_record_is_one_line_naming_it(tmp_path: Path, edit: dict, message: str) -> None:
    path = tmp_path / "record.json"
    path.write_text(json.dumps({**make_record("pre/both", 0), **edit}), encoding="utf-8")
    with pytest.raises(ValueError, match=message) as info:
        load_record(path)
    assert str(info.value).startswith(f"run record {path}: ") and "\n" not in str(info.value)
