"""The orchestrators stay short and take one options object: each of :func:`~normbench.sweep.run.run_sweep`,
:func:`~normbench.publish.write.write_results`, :func:`~normbench.sweep.bake.bake` and
:func:`~normbench.sweep.baking.launch.train_queue` is at most 60 lines (its ``def`` through its last line, docstring
included) and takes its options as one frozen dataclass, whose docstring describes every field, and at most three
other parameters; the steps are helpers of their own."""

from __future__ import annotations

import ast
import dataclasses
import importlib
import importlib.util
from pathlib import Path

import pytest

MAX_LINES = 60
MAX_OTHER_PARAMETERS = 3

# module, function, its options parameter, that parameter's class
ORCHESTRATORS = [
    ("normbench.sweep.run", "run_sweep", "options", "normbench.sweep.options:SweepOptions"),
    ("normbench.publish.write", "write_results", "options", "normbench.publish.write:ResultsOptions"),
    ("normbench.sweep.bake", "bake", "options", "normbench.sweep.options:BakeOptions"),
    ("normbench.sweep.baking.launch", "train_queue", "options", "normbench.sweep.options:BakeOptions"),
]


def function_node(source: str, name: str) -> ast.FunctionDef:
    """The module-level function ``name`` of ``source``."""
    (node,) = [n for n in ast.parse(source).body if isinstance(n, ast.FunctionDef) and n.name == name]
    return node


def lines_of(node: ast.FunctionDef) -> int:
    """The function's lines, its ``def`` through its last line (decorators not counted)."""
    return node.end_lineno - node.lineno + 1


def parameters(node: ast.FunctionDef) -> list[str]:
    """Every parameter the function takes, ``*args`` and ``**kwargs`` included."""
    args = node.args
    names = [a.arg for a in [*args.posonlyargs, *args.args, *args.kwonlyargs]]
    return names + [a.arg for a in (args.vararg, args.kwarg) if a is not None]


def annotation_of(node: ast.FunctionDef, parameter: str) -> str:
    args = node.args
    (arg,) = [a for a in [*args.posonlyargs, *args.args, *args.kwonlyargs] if a.arg == parameter]
    return ast.unparse(arg.annotation) if arg.annotation is not None else ""


def source_of(module: str) -> str:
    spec = importlib.util.find_spec(module)
    assert spec is not None and spec.origin is not None, module
    return Path(spec.origin).read_text(encoding="utf-8")


def options_class(path: str) -> type:
    module, _, name = path.partition(":")
    return getattr(importlib.import_module(module), name)


@pytest.mark.parametrize(("module", "name", "parameter", "cls"), ORCHESTRATORS, ids=[o[1] for o in ORCHESTRATORS])
def test_an_orchestrator_is_at_most_60_lines(module: str, name: str, parameter: str, cls: str) -> None:
    node = function_node(source_of(module), name)
    assert lines_of(node) <= MAX_LINES, (
        f"{module}.{name} is {lines_of(node)} lines (at most {MAX_LINES}): move a step into a helper of its own"
    )


@pytest.mark.parametrize(("module", "name", "parameter", "cls"), ORCHESTRATORS, ids=[o[1] for o in ORCHESTRATORS])
def test_an_orchestrator_takes_one_options_object_and_at_most_three_other_parameters(
    module: str, name: str, parameter: str, cls: str
) -> None:
    node = function_node(source_of(module), name)
    names = parameters(node)
    assert parameter in names, f"{module}.{name} takes no {parameter!r}"
    assert cls.rpartition(":")[2] in annotation_of(node, parameter), f"{module}.{name}: {parameter} is not a {cls}"
    others = [p for p in names if p != parameter]
    assert len(others) <= MAX_OTHER_PARAMETERS, (
        f"{module}.{name} takes {len(others)} parameters besides {parameter} ({', '.join(others)}); "
        f"at most {MAX_OTHER_PARAMETERS}: put the others in its options"
    )


@pytest.mark.parametrize("cls", sorted({o[3] for o in ORCHESTRATORS}))
def test_an_options_object_is_a_frozen_dataclass_whose_docstring_describes_each_field(cls: str) -> None:
    options = options_class(cls)
    assert dataclasses.is_dataclass(options) and options.__dataclass_params__.frozen, f"{cls} is not frozen"
    undocumented = [f.name for f in dataclasses.fields(options) if f"\n        {f.name}: " not in options.__doc__]
    assert not undocumented, f"{cls}: its docstring's Args describe no {', '.join(undocumented)}"


def test_the_checker_counts_every_line_and_every_parameter() -> None:
    source = (
        "@decorated\n"
        "def f(a, /, b, *args, c, options: Opts, **kwargs):\n"
        '    """Doc.\n\n    More.\n    """\n'
        "    return (\n        a\n    )\n"
    )
    node = function_node(source, "f")
    assert lines_of(node) == 8
    assert parameters(node) == ["a", "b", "c", "options", "args", "kwargs"]
    assert annotation_of(node, "options") == "Opts"
