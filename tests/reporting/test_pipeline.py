"""Which results folder a sweep writes: only the task's own bench replaces results/<task>/."""

from __future__ import annotations

from normbench.reporting.pipeline import results_folder

CONFIG = {"default_preset": "quick", "bench": {"seeds": [0, 1, 2], "variants": {"pre/both": {}, "pre/scale": {}}}}


def folder(**kw):
    args = {"config": CONFIG, "preset": "quick", "seeds": None, "variants": None, "overrides": None, "grid": None,
            "name": None, **kw}
    return results_folder(**args)


def test_only_the_shipped_config_at_its_defaults_is_the_tasks_own_bench() -> None:
    assert folder() is None
    assert folder(seeds="0-2", variants=["pre/both", "pre/scale"]) is None  # the defaults, spelled out
    assert folder(preset="paper") == "paper"
    assert folder(name="mine") == "mine"
    smoke = folder(overrides=["--trainer.max_steps=20"], variants=["pre/both"], seeds="0")
    assert smoke.startswith("quick-") and smoke != folder(overrides=["--trainer.max_steps=30"])


def test_a_config_file_of_ones_own_gets_a_folder_named_after_it() -> None:
    assert folder(config_file="/somewhere/my majority.yaml") == "my-majority"
    assert folder(config_file="exp.yaml", overrides=["--trainer.max_steps=20"]).startswith("exp-quick-")
    assert folder(config_file="exp.yaml", name="given") == "given"
