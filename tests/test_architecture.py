"""The package's shape: layers that import downwards only, no import cycles, few top-level modules.

Every ``import`` statement counts, also those inside functions. A module ``normbench.<unit>...``
belongs to the layer of its unit (a sub-package or a top-level module); it may import its own
unit and any unit of a lower layer, never one of its own layer or above.
"""

from __future__ import annotations

import ast
from pathlib import Path

import normbench

PACKAGE = Path(normbench.__file__).parent

# lowest first; units in one layer are independent of each other
LAYERS: list[set[str]] = [
    {"__init__", "errors", "formatting", "io", "plugins", "rng"},  # leaves
    {"nn"},  # norms, blocks, placement, one config per architecture
    {"data", "analysis"},  # data modules | pure functions on tensors and models
    {"tasks"},  # LightningModules, metric series, the registry
    {"archive"},  # typed run records, boards and claims: written by training, read by the board pipeline
    {"training"},  # LightningCLI glue, run directories, records, checkpoints, monitor, prediction
    # the board pipeline: run records -> judged claims -> Board -> Markdown and figures -> written files -> site
    {"judge"},  # claims judged on a board's variants: statistics, claim rules, the random-key null, the tuning rule
    {"boards"},  # run records -> Board: which record a board shows, the norm leaderboard
    {"render"},  # Board -> Markdown and figures
    {"run_analyses"},  # analyses that read a trained run's checkpoint or data (cached beside its record)
    {"publish"},  # build, render and write a board's files; the board views of a task's YAML
    {"site"},  # the documentation site's generated pages
    {"sweep", "results"},  # plans and runs sweeps (then has their board written) | published boards as DataFrames
    {"cards"},  # report cards for a norm: its measured facts, its runs beside the published baselines
    {"commands"},  # what each command does, as library functions; a table entry, argv's switches, the process
    {"cli"},  # the command line: parse and dispatch
    {"__main__"},  # python -m normbench
]


def module_name(path: Path) -> str:
    parts = ["normbench", *path.relative_to(PACKAGE).with_suffix("").parts]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def modules() -> dict[str, Path]:
    return {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def imported(path: Path, name: str, known: set[str]) -> set[str]:
    """The normbench modules ``path`` imports (every statement, at any depth), most specific first."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join(
                    [*package.split(".")[: len(package.split(".")) - node.level + 1], *filter(None, [base])]
                )
            # `from pkg import sub` runs pkg's __init__ as well: an edge to the package and to the submodule
            targets = [base, *(f"{base}.{a.name}" for a in node.names if f"{base}.{a.name}" in known)]
        else:
            continue
        for target in targets:
            while target and target not in known:  # `import normbench.nn.norms.Norm` -> normbench.nn.norms
                target = target.rpartition(".")[0]
            if target.startswith("normbench") and target != name:
                out.add(target)
    return out


def graph() -> dict[str, set[str]]:
    mods = modules()
    return {name: imported(path, name, set(mods)) for name, path in mods.items()}


def unit(name: str) -> str:
    parts = name.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def layer(name: str) -> int:
    (index,) = [i for i, units in enumerate(LAYERS) if unit(name) in units]
    return index


def test_every_module_has_a_layer() -> None:
    for name in modules():
        assert any(unit(name) in units for units in LAYERS), f"{name} belongs to no layer; add its unit to LAYERS"


def test_imports_point_down_the_layers() -> None:
    wrong = [
        f"{src} -> {dst}"
        for src, dsts in graph().items()
        for dst in dsts
        if unit(src) != unit(dst) and layer(dst) >= layer(src)
    ]
    assert not wrong, "imports that do not point down the layers:\n" + "\n".join(sorted(wrong))


def find_cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Each cycle met by a depth-first search, as the path that closes it."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    cycles: list[list[str]] = []

    def visit(node: str, path: list[str]) -> None:
        state[node] = 1
        for nxt in sorted(edges.get(node, ())):
            if state.get(nxt) == 1:
                cycles.append([*path[path.index(nxt) :], nxt])
            elif nxt not in state:
                visit(nxt, [*path, nxt])
        state[node] = 2

    for start in sorted(edges):
        if start not in state:
            visit(start, [start])
    return cycles


def test_no_import_cycles() -> None:
    cycles = find_cycles(graph())
    assert not cycles, "import cycles:\n" + "\n".join(" -> ".join(c) for c in cycles)


def test_the_cycle_finder_finds_cycles() -> None:
    assert find_cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == [["a", "b", "c", "a"]]
    assert find_cycles({"a": {"b", "c"}, "b": {"c"}, "c": set()}) == []


def test_at_most_eight_modules_at_the_top() -> None:
    top = sorted(p.name for p in PACKAGE.glob("*.py"))
    assert len(top) <= 8, top


def test_the_checker_sees_imports_inside_functions(tmp_path: Path) -> None:
    source = tmp_path / "m.py"
    source.write_text("def f():\n    from normbench.sweep import plan\n    import normbench.nn.norms\n")
    known = set(modules())
    assert imported(source, "normbench.nn.fake", known) == {
        "normbench.sweep",
        "normbench.sweep.plan",
        "normbench.nn.norms",
    }


PIPELINE = {"judge", "boards", "render", "run_analyses", "publish", "site"}


def test_the_board_pipeline_reads_runs_and_never_makes_them() -> None:
    """Leaderboards are written from records: the board pipeline neither plans nor trains (no sweep/, no
    LightningCLI, no fit)."""
    wrong = [
        f"{src} -> {dst}"
        for src, dsts in graph().items()
        if unit(src) in PIPELINE
        for dst in dsts
        if unit(dst) == "sweep" or dst in ("normbench.training.cli", "normbench.training.fit")
    ]
    assert not wrong, "the board pipeline imports what makes runs:\n" + "\n".join(sorted(wrong))


def test_one_command_line_parser() -> None:
    """Every command parses with jsonargparse (LightningCLI's parser for runs): the standard library's
    argparse is imported nowhere."""
    users = [
        str(path.relative_to(PACKAGE))
        for path in PACKAGE.rglob("*.py")
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, (ast.Import, ast.ImportFrom))
        and any(
            name.split(".")[0] == "argparse"
            for name in ([a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""])
        )
    ]
    assert not users, users


def task_name_tests(source: str, names: set[str]) -> list[tuple[int, str, str]]:
    """Each test of a value against a task's name written out (``task == "lm"``, ``"sst2" != t``, ``t in ("lm",
    ...)``, ``case "majority":``): (line, the name, the test)."""
    found = []

    def named(node: ast.AST) -> list[str]:
        elements = node.elts if isinstance(node, (ast.Tuple, ast.List, ast.Set)) else [node]
        return [e.value for e in elements if isinstance(e, ast.Constant) and e.value in names]

    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Compare):
            for left, op, right in zip([node.left, *node.comparators[:-1]], node.ops, node.comparators, strict=True):
                if isinstance(op, (ast.Eq, ast.NotEq, ast.Is, ast.IsNot)):
                    hits = [*named(left), *named(right)] if ast.Constant in (type(left), type(right)) else []
                elif isinstance(op, (ast.In, ast.NotIn)) and not isinstance(right, ast.Constant):
                    hits = named(right)
                else:
                    hits = []
                found += [(node.lineno, hit, ast.unparse(node)) for hit in hits]
        elif isinstance(node, ast.MatchValue):
            found += [(node.lineno, hit, f"case {ast.unparse(node.value)}") for hit in named(node.value)]
    return found


def test_a_task_name_is_tested_in_its_own_module_only() -> None:
    """What a task is (whether a report card runs on it, how its analysis forms key sets, which table of a report
    shows it, ...) is a fact of its registered :class:`~normbench.tasks.registry.Task`, read as an attribute: no
    module but the task's own (``tasks/<name>.py``) tests a value against its name."""
    from normbench.tasks import task_names

    names = set(task_names())
    assert {"majority", "lm", "sst2"} <= names
    wrong = [
        f"{path.relative_to(PACKAGE)}:{line}: {test}"
        for path in sorted(PACKAGE.rglob("*.py"))
        for line, name, test in task_name_tests(path.read_text(encoding="utf-8"), names)
        if path != PACKAGE / "tasks" / f"{name}.py"
    ]
    assert not wrong, "tests of a task's name outside its module (make it an attribute of its Task):\n" + "\n".join(
        wrong
    )


def test_the_task_name_check_finds_each_form_of_test() -> None:
    source = (
        'a = task == "lm"\nb = "sst2" != t\nc = t in ("x", "majority")\nd = t not in {"lm"}\n'
        'match t:\n    case "sst2":\n        pass\n'
        'e = name == "other"\nf = "lm" in text\ng = {"lm": 1}\nTASKS = ("lm", "sst2")\n'
    )
    assert [(line, name) for line, name, _ in task_name_tests(source, {"lm", "sst2", "majority"})] == [
        (1, "lm"), (2, "sst2"), (3, "majority"), (4, "lm"), (6, "sst2"),
    ]  # fmt: skip


# the size limits of a house others can carry on: small modules, small folders, short orchestrators, typed seams
MAX_MODULE_LINES = 400
MAX_FOLDER_MODULES = 12
MAX_ORCHESTRATOR_LINES = 60
ORCHESTRATORS = {
    "normbench.sweep.run": "run_sweep",
    "normbench.publish.write": "write_results",
    "normbench.sweep.bake": "bake",
    "normbench.sweep.baking.launch": "train_queue",
}
MAX_UNTYPED_OBJECTS = 100  # annotations written ``dict[str, Any]``


def test_no_module_is_longer_than_the_limit() -> None:
    long = {name: n for name, path in modules().items() if (n := len(path.read_text().splitlines())) > MAX_MODULE_LINES}
    assert not long, f"modules over {MAX_MODULE_LINES} lines: {long}"


def test_no_folder_holds_more_modules_than_the_limit() -> None:
    folders = {p.parent for p in PACKAGE.rglob("*.py")}
    crowded = {
        str(f.relative_to(PACKAGE.parent)): n
        for f in folders
        if (n := sum(p.name != "__init__.py" for p in f.glob("*.py"))) > MAX_FOLDER_MODULES
    }
    assert not crowded, f"folders over {MAX_FOLDER_MODULES} modules: {crowded}"


def test_the_orchestrators_are_short() -> None:
    mods = modules()
    for name, function in ORCHESTRATORS.items():
        (node,) = [
            n
            for n in ast.parse(mods[name].read_text(encoding="utf-8")).body
            if isinstance(n, ast.FunctionDef) and n.name == function
        ]
        lines = node.end_lineno - node.lineno + 1  # type: ignore[operator]
        assert lines <= MAX_ORCHESTRATOR_LINES, f"{name}.{function} is {lines} lines"


def test_few_untyped_json_objects() -> None:
    count = sum(path.read_text(encoding="utf-8").count("dict[str, Any]") for path in modules().values())
    assert count < MAX_UNTYPED_OBJECTS, f"{count} annotations are dict[str, Any]"


def test_the_site_and_the_archive_import_no_torch() -> None:
    """The documentation's pages and the run archive's documents are built and read without torch or Lightning
    (checked in a fresh interpreter)."""
    import subprocess
    import sys

    script = (
        "import sys, normbench.site.docs_pages, normbench.site.teaser, normbench.archive, normbench.archive.documents.views\n"
        "print('HEAVY', sorted(m for m in ('torch', 'lightning') if m in sys.modules))\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "HEAVY []" in done.stdout.splitlines()
