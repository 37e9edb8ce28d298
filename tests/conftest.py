"""Shared fixtures: keep caches and outputs inside pytest's temporary directories."""

from __future__ import annotations

import pytest
import torch


@pytest.fixture(autouse=True)
def _isolated_cache(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NORMBENCH_CACHE", str(tmp_path_factory.getbasetemp() / "cache"))
    torch.manual_seed(0)
