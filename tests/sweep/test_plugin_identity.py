"""A plug-in norm's runs are keyed by its code: editing its module file gives new runs, never an old one's directory
or checkpoint; its options are part of the key too."""

from __future__ import annotations

from pathlib import Path

import pytest

from normbench.sweep.plan import plan_runs

NORM = """import torch


class EditedNorm(torch.nn.Module):
    def __init__(self, d, scale=2.0):
        super().__init__()
        self.scale = scale

    def forward(self, x):
        return x / (self.scale * x.abs().mean(-1, keepdim=True) + 1)
"""


def planned(runs_dir: Path, *options: str) -> dict[str, tuple[str, Path]]:
    overrides = [
        "model.init_args.arch.attn_norm.component=plan_edit_norm:EditedNorm",
        "model.init_args.arch.ffn_norm.component=plan_edit_norm:EditedNorm",
        *options,
    ]
    _, runs = plan_runs("majority", "quick", seeds=[0, 1], variants=["pre/both"], overrides=overrides,
                        runs_dir=str(runs_dir))  # fmt: skip
    return {f"{r.variant} seed {r.seed}": (str(r.config_hash), r.record_path) for r in runs}


def test_editing_a_plugin_norms_source_plans_new_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    module = tmp_path / "src" / "plan_edit_norm.py"
    module.parent.mkdir()
    module.write_text(NORM, encoding="utf-8")
    monkeypatch.syspath_prepend(str(module.parent))
    before = planned(tmp_path / "runs")
    assert planned(tmp_path / "runs") == before  # the same code, the same runs
    module.write_text(NORM.replace("scale=2.0", "scale=3.0"), encoding="utf-8")  # its default edited
    after = planned(tmp_path / "runs")
    assert set(after) == set(before)
    for run, (digest, path) in after.items():
        assert digest != before[run][0] and path != before[run][1], run  # no run directory, no checkpoint reused
    assert len({d for d, _ in after.values()} & {d for d, _ in before.values()}) == 0
    options = planned(tmp_path / "runs", "model.init_args.arch.ffn_norm.options={scale: 5.0}")
    assert {d for d, _ in options.values()}.isdisjoint({d for d, _ in after.values()})
