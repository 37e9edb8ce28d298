"""The width axis (``bench.width``): each base variant's loss against the model width, with the gap to a reference
base (:mod:`normbench.render.width`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, cast

from normbench.render.views import View, ViewDoc, ViewInputs
from normbench.render.width import WidthDoc, build_width, check_spec, plot_width, render_width


def check(spec: Any) -> None:
    """``bench.width``: a mapping with the config key of the width and a reference base variant."""
    check_spec(spec if isinstance(spec, Mapping) else {})


def build(inputs: ViewInputs) -> ViewDoc:
    """The width document: one row per planned (base variant, width), the widths read from the runs' configs."""
    records = [{"variant": name, "config": config} for name, config in inputs.configs.items()]
    return cast(ViewDoc, build_width(inputs.spec, inputs.variants, records, dict(inputs.planned)))


def plot(inputs: ViewInputs, doc: ViewDoc | None, out: Path) -> Sequence[Path]:
    """``width.png``: loss against width per base variant."""
    if doc is None:
        return []
    title = f"{inputs.task}: width axis, preset {inputs.preset} (head width fixed)"
    return [plot_width(cast(WidthDoc, doc), out / "width.png", title)]


VIEW = View("width", order=20, check=check, build=build, render=render_width, plot=plot, first=True)
