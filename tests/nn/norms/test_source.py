"""A plug-in's code is part of its runs' identity; built-in norms and archived plug-ins keep theirs."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from normbench.nn.config import ArchConfig
from normbench.nn.majority import MajorityConfig
from normbench.nn.norms import ARCHIVED_SOURCES, NormSpec, get_component, source_identity, source_version

REPO = Path(__file__).resolve().parents[3]


def test_a_plugins_source_is_part_of_its_identity(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    module = tmp_path / "edited_norm_module.py"
    module.write_text("import torch\nclass Edited(torch.nn.Module):\n    def __init__(self, d):\n"
                      "        super().__init__()\n    def forward(self, x):\n        return x / 2\n")  # fmt: skip
    monkeypatch.syspath_prepend(str(tmp_path))
    component = get_component("edited_norm_module:Edited")
    digest = "sha256:" + hashlib.sha256(module.read_bytes()).hexdigest()
    assert source_version(component) == source_identity(component) == digest
    config = MajorityConfig(attn_norm=NormSpec("edited_norm_module:Edited"))
    assert config.effective()["attn_norm"]["source"] == digest
    module.write_text(module.read_text() + "# the default changed\n")
    assert config.effective()["attn_norm"]["source"] != digest


def test_built_in_and_archived_norms_keep_their_identity() -> None:
    assert source_version(get_component("both")) is None and "source" not in ArchConfig.effective(MajorityConfig())
    assert "source" not in MajorityConfig().effective()["attn_norm"]
    for path, digest in ARCHIVED_SOURCES.items():
        file = REPO / (path.partition(":")[0].replace(".", "/") + ".py")
        assert digest == "sha256:" + hashlib.sha256(file.read_bytes()).hexdigest(), path
