"""Every claims file entry is a ClaimSpec; every judged claim of a committed board a JudgedClaim."""

from __future__ import annotations

from importlib import resources

import pytest
import yaml

from normbench.archive import ClaimSpec, SchemaError
from normbench.archive.claim import JudgedClaim

FILES = sorted(p.name for p in (resources.files("normbench.judge") / "claims").iterdir() if p.name.endswith(".yaml"))


@pytest.mark.parametrize("name", [n for n in FILES if n != "protocols.yaml"])
def test_every_claims_file_entry_is_a_claim_spec(name: str) -> None:
    text = (resources.files("normbench.judge") / "claims" / name).read_text(encoding="utf-8")
    entries = yaml.safe_load(text)["claims"]
    specs = [ClaimSpec.from_json(e) for e in entries]
    assert [s.to_json() for s in specs] == entries and all(s.id for s in specs)


def test_a_claim_spec_names_an_unknown_key_and_a_wrong_type() -> None:
    with pytest.raises(SchemaError, match=r"^claim 'x': unknown key 'metirc'; a claim may hold id, use, owner"):
        ClaimSpec.from_json({"id": "x", "metirc": "acc"})
    with pytest.raises(SchemaError, match=r"^claim 'x'\.variants: a list, not an object or null$"):
        ClaimSpec.from_json({"id": "x", "variants": ["a"]})
    with pytest.raises(SchemaError, match=r"^claim 'x'\.owner: 'me' is not one of paper, normbench$"):
        ClaimSpec.from_json({"id": "x", "owner": "me"})


def test_a_judged_claim_needs_a_verdict_and_its_rule() -> None:
    claim = {"id": "c", "paper": {}, "measured": {}, "verdict": "not run", "rule": "no runs"}
    assert JudgedClaim.from_json(claim).whose == "paper"
    with pytest.raises(SchemaError, match=r"^claim: missing key 'verdict'$"):
        JudgedClaim.from_json({k: v for k, v in claim.items() if k != "verdict"})
