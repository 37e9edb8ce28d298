"""Every (task, placement, component) cell: the norms a run reports are exactly the norms its model has.

The record's ``norms``, the run name and the leaderboard row all come from
:func:`normbench.training.run.rundir.reported_norms` of the effective architecture; the model builds
its norms from the same :func:`normbench.nn.placement.present_norms`. This checks the two agree
for every cell, and that identical networks share one config hash.
"""

from __future__ import annotations

import dataclasses
import re
import typing

import pytest
import torch

from normbench.boards.variants import variant_entry
from normbench.nn.norms import COMPONENTS, Norm, NormSpec
from normbench.nn.placement import PLACEMENTS
from normbench.tasks import get_task
from normbench.training.run.rundir import config_hash, reported_norms, run_identity, run_label

TINY = {
    "majority": {},
    "lm": {"vocab_size": 40, "max_positions": 16, "n_layers": 2},
    "sst2": {"vocab_size": 40, "max_positions": 16, "n_layers": 2, "ffn_width": 16},
}
PROVENANCE = {"git_commit": "x", "torch": "2", "lightning": "2", "device": "cpu", "threads": 1, "date": "2026"}
CELLS = [(task, placement, component) for task in TINY for placement in PLACEMENTS for component in COMPONENTS]


def arch_of(task: str, placement: str, component: str, slot: str | None = None):
    """The task's architecture config with ``component`` in every norm slot (or only in ``slot``)."""
    cls = typing.get_type_hints(get_task(task).module.__init__)["arch"]
    spec = NormSpec(component, affine=True, eps=1e-5)
    slots = [slot] if slot else list(cls.NORM_ROLES)
    return cls(**TINY[task], placement=placement, **{name: spec for name in slots})


def model_norms(model: torch.nn.Module) -> dict[str, list[NormSpec]]:
    """The Norm modules inside ``model`` by role name (``blocks.3.attn_norm`` -> ``attn_norm``)."""
    out: dict[str, list[NormSpec]] = {}
    for name, module in model.named_modules():
        if isinstance(module, Norm):
            out.setdefault(re.sub(r"^.*\.", "", name), []).append(module.spec.canonical())
    return out


@pytest.mark.parametrize(("task", "placement", "component"), CELLS)
def test_reported_norms_are_the_model_norms(task: str, placement: str, component: str) -> None:
    arch = arch_of(task, placement, component)
    module = get_task(task).module(arch=arch)
    effective = arch.effective()
    reported = reported_norms(effective)
    inside = model_norms(module.model)
    assert set(reported) == set(inside), (reported, inside)
    for name, specs in inside.items():
        expected = arch.n_layers if arch.NORM_ROLES[name] in ("block", "output") else 1
        assert len(specs) == expected, name
        assert all(s.as_dict() == reported[name] for s in specs), name
    label = run_label(effective)  # e.g. pre-attn_both+affine-ffn_both+affine-final_both+affine
    assert label.split("-")[0] == placement
    parts = label.split("-")[1:]
    assert len(parts) == len(reported)
    assert all(
        f"{n.removesuffix('_norm')}_{spec['component']}" in {p.removesuffix("+affine") for p in parts}
        for n, spec in reported.items()
    )
    row = variant_entry(
        "cell",
        [
            {
                "seed": 0,
                "status": "done",
                "config_hash": "x",
                "norms": reported,
                "placement": placement,
                "series": {},
                "provenance": PROVENANCE,
            }
        ],
        {},
    )
    assert set(row["norms"]) == {n.removesuffix("_norm") for n in inside}


@pytest.mark.parametrize("task", list(TINY))
def test_settings_a_placement_ignores_do_not_change_the_config_hash(task: str) -> None:
    """Under ``none`` the block norms do not exist: their settings give one network and one hash."""

    def key(arch) -> str:
        return config_hash(run_identity({"model": {"init_args": {"arch": {}}}}, arch.effective(), world_size=1))

    both, project = (arch_of(task, "none", c, slot="attn_norm") for c in ("both", "project"))
    assert key(both) == key(project)
    assert run_label(both.effective()) == run_label(project.effective())
    # a setting the component ignores: eps of `project`, affine of `none`
    assert key(arch_of(task, "pre", "project", "attn_norm")) == key(
        dataclasses.replace(arch_of(task, "pre", "project", "attn_norm"), attn_norm=NormSpec("project", True, 0.1))
    )
    assert key(arch_of(task, "pre", "both", "attn_norm")) != key(arch_of(task, "pre", "project", "attn_norm"))
    assert key(arch_of(task, "pre", "none", "attn_norm")) == key(
        dataclasses.replace(arch_of(task, "pre", "none", "attn_norm"), attn_norm=NormSpec("none", False, 0.0))
    )
