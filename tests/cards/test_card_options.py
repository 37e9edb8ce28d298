"""A card of a plain ``nn.Module`` with a gain of its own, given options: trained end to end on a tiny majority card,
its options reach the module and its name, the slot's eps and affine map reach it, and what the card reports is the
model that trained."""

from __future__ import annotations

import json
import sys
import tempfile
import typing
from pathlib import Path
from typing import Any

import pytest
import yaml

from normbench.cards import make
from normbench.cards.models import trainable
from normbench.cards.protocol import CardProtocol, board_of, card_variant, check_card_options, slug
from normbench.nn.norms import Norm, PluginNorm
from normbench.sweep.options import BakeOptions
from normbench.tasks.trust import record_class
from normbench.training.config import deep_merge, load_config
from normbench.training.run.rundir import build_dataclass

MODULE = "centered_rms_card_norm"
NORM = f"{MODULE}:CenteredRMSNorm"
SOURCE = '''
import torch
from torch import nn


class CenteredRMSNorm(nn.Module):
    """x - alpha mean(x), RMS-scaled, times a gain of its own."""

    def __init__(self, d, eps=1e-6, alpha_init=0.5):
        super().__init__()
        self.alpha = nn.Parameter(torch.tensor(float(alpha_init)))
        self.gain = nn.Parameter(torch.ones(d))
        self.eps = eps

    def forward(self, x):
        x = x - self.alpha * x.mean(dim=-1, keepdim=True)
        return self.gain * x * torch.rsqrt(x.pow(2).mean(dim=-1, keepdim=True) + self.eps)
'''
TINY = {  # a 6-step run on 600 sequences (tests/tiny_runs.py)
    "trainer": {"max_steps": 6, "val_check_interval": 3, "enable_model_summary": False},
    "data": {"init_args": {"num_sequences": 600, "batch_size": 64, "eval_batch_size": 300}},
}


@pytest.fixture
def plugin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """The norm's module in ``tmp_path``, importable here and in every run a bake starts."""
    code = tmp_path / "code"
    code.mkdir()
    (code / f"{MODULE}.py").write_text(SOURCE, encoding="utf-8")
    monkeypatch.syspath_prepend(str(code))
    monkeypatch.setenv("PYTHONPATH", ":".join(p for p in (str(code), *sys.path) if p))
    monkeypatch.delitem(sys.modules, MODULE, raising=False)
    return NORM


def built_model(config: dict[str, Any]) -> Any:
    """The network a resolved run config builds (as :func:`normbench.cards.models.model_facts` builds it)."""
    model = config["model"]
    cls = record_class(model["class_path"], "model")
    arch = build_dataclass(typing.get_type_hints(cls.__init__)["arch"], model["init_args"]["arch"], "model.arch")
    return cls(arch=arch)


def run_config(config: Path, results: Path, preset: str, variant: str) -> tuple[dict[str, Any], str]:
    """The resolved config of ``variant``'s seed 0 under the card's task ``config``, and its run key."""
    from normbench.sweep.plan import plan_runs

    with tempfile.TemporaryDirectory() as tmp:
        _, (run,) = plan_runs("majority", preset, seeds=[0], variants=[variant], runs_dir=tmp,
                              config_path=str(config), results_dir=str(results))  # fmt: skip
    return run.config, run.config_hash


def test_a_plain_modules_card_gets_its_options_the_slots_eps_and_one_affine_map(
    plugin: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    protocol = CardProtocol.of("majority")
    results = tmp_path / "results"
    planned = make.plan_card

    def tiny_plan(*args: Any, **kwargs: Any) -> tuple[Path, list[dict[str, Any]]]:
        """The card's plan, its majority preset tiny and its queue the new norm's seed 0 only."""
        queue, items = planned(*args, **kwargs)
        config = queue.parent / "majority.yaml"
        doc = yaml.safe_load(config.read_text(encoding="utf-8"))
        doc["presets"][protocol.preset] = deep_merge(doc["presets"][protocol.preset], TINY)
        config.write_text(yaml.safe_dump(doc, sort_keys=False), encoding="utf-8")
        head = next(i for i in items if i["board"] == board_of("majority", plugin, "", {"alpha_init": 0.0}))
        items = [{**head, "variants": head["variants"][2:], "seeds": "0"}]
        queue.write_text(yaml.safe_dump({"queue": items}, sort_keys=False), encoding="utf-8")
        return queue, items

    monkeypatch.setattr(make, "plan_card", tiny_plan)
    bake = BakeOptions(results_dir=str(results), runs_dir=str(tmp_path / "runs"), nice=0, workers=1, uncommitted=True)
    folder = make.make_card(plugin, "majority", bake, options="alpha_init=0.0")
    assert folder == results / "cards" / "centeredrmsnorm-alpha_init=0.0"
    card = json.loads((folder / "card.json").read_text(encoding="utf-8"))
    md = (folder / "card.md").read_text(encoding="utf-8")
    assert (card["norm"], card["options"], card["slug"]) == (plugin, {"alpha_init": 0.0}, folder.name)
    assert "Its options: `alpha_init=0.0` (`--options`)" in md
    (section,) = card["tasks"]
    new = section["variants"]["new"]
    assert new == "pre/centeredrmsnorm-alpha_init=0.0" and section["board"] == f"cards/{folder.name}/majority"
    assert section["variants"]["rmsnorm"] == "pre/scale-blocks"  # RMSNorm in both block slots, as the new norm
    assert section["new_seeds"] == [0]  # the new norm trained, with its options

    # the network the new norm's runs train: each block slot the module, built with the options and the slot's eps
    config = tmp_path / "queues" / "cards" / folder.name / "majority.yaml"  # the card's input, beside its results
    resolved, key = run_config(config, results, protocol.preset, new)
    slots = resolved["model"]["init_args"]["arch"]
    model = built_model(resolved)
    norms = {n: m for n, m in model.named_modules() if isinstance(m, Norm) and n.rpartition(".")[2] in
             ("attn_norm", "ffn_norm")}  # fmt: skip
    assert len(norms) == 2 * slots["n_layers"]
    for name, norm in norms.items():
        slot = slots[name.rpartition(".")[2]]
        assert isinstance(norm, PluginNorm) and norm.spec.options == {"alpha_init": 0.0}
        assert norm.plugin.eps == slot["eps"] == norm.eps  # the task's eps reaches the module
        assert norm.plugin.alpha.item() == 0.0 and norm.plugin.alpha.requires_grad  # the option reaches it, and trains
        assert norm.frozen == ("gain",) and "gain" not in dict(norm.plugin.named_parameters())  # its own gain frozen
        assert not any(p.requires_grad for n, p in norm.named_parameters() if n.startswith("plugin.gain"))
        learned = {n for n, p in norm.named_parameters() if p.requires_grad}
        # exactly one affine map per slot: normbench's, where the slot has one; none in majority's attention slot
        assert learned == ({"plugin.alpha", "weight", "bias"} if slot["affine"] else {"plugin.alpha"}), name
    assert not slots["attn_norm"]["affine"] and slots["ffn_norm"]["affine"]

    # what the card reports is that model
    facts = section["norms"]["new"]
    assert facts["parameters"] == trainable(model) == sum(p.numel() for p in model.parameters() if p.requires_grad)
    assert facts["config_hash"] == key
    for role in ("attn", "ffn"):
        slot = slots[f"{role}_norm"]
        reported = facts["norms"][role]
        assert (reported["eps"], reported["affine"], reported["options"]) == (slot["eps"], slot["affine"],
                                                                             {"alpha_init": 0.0})  # fmt: skip
        assert reported["frozen"] == ["plugin.gain"] and reported["parameters"] == (1 + 2 * 8 if slot["affine"] else 1)
    for role, variant in section["variants"].items():  # each baseline's count is its own built model's too
        assert section["norms"][role]["parameters"] == trainable(
            built_model(run_config(config, results, protocol.preset, variant)[0])
        ), role
    rms = section["norms"]["rmsnorm"]["norms"]
    assert (rms["attn"]["component"], rms["ffn"]["component"]) == ("scale", "scale")
    row = next(line for line in md.splitlines() if line.startswith(f"| new | `{new}` |"))
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells[2:4] == ["pre", f"{trainable(model):,}"]
    assert cells[4].startswith(
        f"`{plugin}` (no affine, eps {slots['attn_norm']['eps']:g}, 1 parameters, own plugin.gain"
    )
    assert cells[5].startswith(f"`{plugin}` (affine, eps {slots['ffn_norm']['eps']:g}, 17 parameters, own plugin.gain")

    # the options are part of the runs' identity: without them, another variant, another run key, another card
    bare, definition = card_variant(plugin, protocol)
    assert bare == "pre/centeredrmsnorm" != new and slug(plugin) != folder.name
    doc = yaml.safe_load(config.read_text(encoding="utf-8"))
    doc["bench"]["variants"][bare] = definition
    other = tmp_path / "bare.yaml"
    other.write_text(yaml.safe_dump(doc, sort_keys=False), encoding="utf-8")
    assert run_config(other, results, protocol.preset, bare)[1] != key


def test_an_option_the_class_does_not_take_is_one_line_naming_it_and_the_allowed_keywords(
    plugin: str, normbench_in_process, tmp_path: Path
) -> None:
    for flag in ("--options", "--norm_options"):
        result = normbench_in_process("card", plugin, "--tasks", "majority", flag, "alpha=0.0", "--dry_run",
                                      "--results_dir", str(tmp_path / "results"), cwd=tmp_path)  # fmt: skip
        assert result.returncode == 2
        assert result.stderr.strip().splitlines()[-1] == (
            f"normbench: error: options: 'alpha' is not an option of {plugin}; allowed: alpha_init"
        )
    assert not (tmp_path / "results").exists()
    with pytest.raises(ValueError, match=r"^options.eps: the slot's, not an option"):
        check_card_options(plugin, make.parse_options("eps=0"))
    with pytest.raises(ValueError, match=r"^options: 'alpha_init' is not key=value"):
        make.parse_options("alpha_init")
    with pytest.raises(ValueError, match=r"^options: dyt is a named card"):
        check_card_options("dyt", {"alpha": 2.0})
    assert make.parse_options("alpha_init=1e-3, b=true,c=x") == {"alpha_init": 1e-3, "b": True, "c": "x"}
    assert slug(plugin, {"b": True, "alpha_init": 1e-3}) == "centeredrmsnorm-alpha_init=0.001-b=true"
    assert load_config("majority")  # the task itself untouched
