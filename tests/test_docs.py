"""The documentation: the site builds without a warning, the README stays a front page, and no result is
typed by hand.

Results reach the documentation only through generation: the results pages include the leaderboards
when the site is built (``docs/hooks.py``, :mod:`normbench.site.docs_pages`), and the README's
teaser is written by :func:`normbench.site.teaser.teaser`. The number check below is what keeps
it so: every number in ``README.md`` and ``docs/**/*.md`` that reads like a measured result must be one
the leaderboards print.

**The number check.** A *result-like* number is one with a decimal point or an exponent (``0.93``,
``6e-8``), one with a unit of results (``12%``, ``35°``, ``2.4x``, ``17 min``, ``3450 s``), or either side
of a ``±``. Plain integers (steps, seeds, widths, counts of runs) are not checked. Excluded are
command lines (the code of ``bash``/``toml``/``yaml``/``python`` blocks, whose comments are checked as
prose), BibTeX blocks, HTML comments (the generation markers), and the contexts of :data:`ALLOWED`, each
with its reason (versions, section numbers, hyperparameters and declared constants). Everything else
must appear in a generated results file: ``a ± b`` verbatim, a decimal as printed (sign aside), an
integer with its unit as printed with that unit. The declared cross-platform tolerances
(:data:`normbench.training.reproducibility.TOLERANCES`) count as generated too, and a test holds the
documentation's table of them to the code.
"""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

import normbench
from normbench.site import board_pages, docs_pages, included_files, teaser

REPO = Path(normbench.__file__).resolve().parents[2]
DOCS = REPO / "docs"
RESULTS = REPO / "results"
README = REPO / "README.md"
TASKS_DIR = REPO / "tasks"
README_MAX_LINES = 300

# --------------------------------------------------------------------------------------------- number check

NUMBER = r"[-+−]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?:[eE][-+−]?\d+)?"
UNIT = r"\s?(?:%|°|×|x\b|ms\b|s\b|min\b|minutes?\b|h\b|hours?\b|nats?\b|(?:steps|tokens|sequences)/s\b)"
CANDIDATE = re.compile(rf"(?<![\w.])(?P<num>{NUMBER})(?P<unit>{UNIT})?(?![\w])")
PLUS_MINUS = re.compile(rf"(?<![\w.]){NUMBER}(?:{UNIT})?\s*±\s*{NUMBER}(?:{UNIT})?")
FENCE = re.compile(r"^\s*(```+|~~~+)\s*([\w+-]*)")
HTML_COMMENT = re.compile(r"<!--.*?-->", re.S)
CODE_LANGUAGES = {"bash", "sh", "shell", "console", "toml", "yaml", "yml", "python", "py"}
SKIPPED_LANGUAGES = {"bibtex"}

#: contexts whose numbers are not results: (pattern, why)
ALLOWED: tuple[tuple[str, str], ...] = (
    (r"Python\s?(?:≥|>=)?\s?\d+\.\d+", "the Python version required"),
    (r"§\s?\d+(?:\.\d+)*", "section numbers of the papers"),
    (r"(?:Section|Sec\.|App\.|Appendix)\s[A-Z]?\.?\d+(?:\.\d+)*", "section and appendix numbers of the papers"),
    (r"every 30 s\b", "the interval of the progress lines (NORMBENCH_PROGRESS_SECONDS)"),
    (r"alpha: \d+\.\d+", "DyT's initial alpha in a config value"),
    (r"tol`? \(default 1e-13", "the unselectable-key analyzer's declared tolerance"),
    (r"goal is that\s+normbench's metrics and logging cost at most 15%", "the declared goal of a speed benchmark"),
    (r"\b9[05]% (?:Welch )?(?:interval|CI|t-interval)", "confidence levels of the statistics"),
    (r"Welch tests at 5%", "the significance level of the equivalence tests"),
)

BOARD_TEXT_GLOBS = ("**/leaderboard.json", "**/*.md")


def generated_texts(results_dir: Path = RESULTS) -> list[str]:
    """Every file of results that a command wrote: the leaderboards (Markdown and JSON) and the generated
    reports beside them (``results/README.md``, written by hand, is not one)."""
    paths = {p for pattern in BOARD_TEXT_GLOBS for p in results_dir.glob(pattern)} - {results_dir / "README.md"}
    return [p.read_text(encoding="utf-8") for p in sorted(paths)]


def declared_constants() -> set[str]:
    """The declared cross-platform tolerances, and the values of the tasks' declared grids (hyperparameters, not
    results: ``4.0e-3`` printed as ``4e-3`` or ``4.0e-3``), as the documentation prints them."""
    from normbench.training.reproducibility import tolerance_table

    tolerances = {f"{row[k]:g}" for row in tolerance_table() for k in ("abs", "rel")}
    grids = set()
    for config in sorted(TASKS_DIR.glob("*.yaml")):
        for preset in (yaml.safe_load(config.read_text(encoding="utf-8")).get("presets") or {}).values():
            for values in (((preset or {}).get("bench") or {}).get("grid") or {}).values():
                for value in (v for v in values if isinstance(v, float)):
                    mantissa, exponent = f"{value:.1e}".split("e")
                    grids |= {f"{float(mantissa):g}e{int(exponent)}", f"{mantissa}e{int(exponent)}"}
    return tolerances | grids


def canonical(number: str) -> str:
    """A number as compared: no sign, no thousands separator, a lower-case exponent with an ASCII minus."""
    return number.replace("−", "-").lstrip("+-").replace(",", "").lower()


def canonical_unit(unit: str | None) -> str:
    return (unit or "").strip().replace("×", "x")


def spaced(text: str) -> str:
    return " ".join(text.replace("−", "-").split())


class Sources:
    """What the generated files print: ``±`` expressions, numbers, and numbers with their units."""

    def __init__(self, texts: list[str], extra: set[str] = frozenset()) -> None:
        self.text = spaced("\n".join(texts))
        self.numbers = {canonical(m["num"]) for t in texts for m in CANDIDATE.finditer(t)} | set(extra)
        self.with_units = {
            canonical(m["num"]) + canonical_unit(m["unit"]) for t in texts for m in CANDIDATE.finditer(t) if m["unit"]
        }

    def has_plus_minus(self, expression: str) -> bool:
        a, b = (spaced(side) for side in expression.split("±"))
        return f"{a} ± {b}" in self.text or f"{a.lstrip('+')} ± {b}" in self.text

    def has(self, number: str, unit: str | None) -> bool:
        if "." in number or "e" in number.lower():
            return canonical(number) in self.numbers
        return canonical(number) + canonical_unit(unit) in self.with_units


def checked_text(markdown: str) -> str:
    """The parts of a Markdown text that the number check reads: prose, tables, inline code, the comments of
    code blocks and whole blocks of other languages; not command lines, BibTeX or HTML comments."""
    out, language = [], None
    for line in HTML_COMMENT.sub(" ", markdown).splitlines():
        fence = FENCE.match(line)
        if fence:
            language = None if language is not None else (fence[2] or "text").lower()
            out.append("")
            continue
        if language is None or language not in CODE_LANGUAGES | SKIPPED_LANGUAGES:
            out.append(line)
        elif language in CODE_LANGUAGES and " #" in f" {line}":
            out.append(f" {line}".split(" #", 1)[1])
        else:
            out.append("")
    return "\n".join(out)


def hand_typed_results(markdown: str, sources: Sources) -> list[str]:
    """The result-like numbers of ``markdown`` that no generated file prints, each with its context."""
    text = checked_text(markdown)
    for pattern, _why in ALLOWED:
        text = re.sub(pattern, lambda m: " " * len(m[0]), text)
    found = []

    def context(start: int, end: int) -> str:
        return " ".join(text[max(0, start - 40) : end + 40].split())

    for m in PLUS_MINUS.finditer(text):
        if not sources.has_plus_minus(m[0]):
            found.append(f"{m[0]!r} in “…{context(m.start(), m.end())}…”")
    text = PLUS_MINUS.sub(lambda m: " " * len(m[0]), text)
    for m in CANDIDATE.finditer(text):
        number, unit = m["num"], m["unit"]
        result_like = "." in number or "e" in number.lower() or unit
        if result_like and not sources.has(number, unit):
            found.append(f"{m[0]!r} in “…{context(m.start(), m.end())}…”")
    return found


def documentation_texts() -> dict[str, str]:
    pages = [README, *sorted(DOCS.rglob("*.md"))]
    return {p.relative_to(REPO).as_posix(): p.read_text(encoding="utf-8") for p in pages}


@pytest.fixture(scope="module")
def sources() -> Sources:
    return Sources(generated_texts(), declared_constants())


def test_no_result_in_the_documentation_is_typed_by_hand(sources: Sources) -> None:
    """What the pages hold between generation markers is generated (a test below holds it to a fresh generation);
    the rest is typed, and checked."""
    texts = {page: docs_pages.without_generated(text) for page, text in documentation_texts().items()}
    found = {page: hand_typed_results(text, sources) for page, text in texts.items()}
    found = {page: numbers for page, numbers in found.items() if numbers}
    assert not found, "numbers that read like results but that no leaderboard prints:\n" + "\n".join(
        f"{page}: {n}" for page, numbers in found.items() for n in numbers
    )


def test_the_number_check_catches_a_hand_typed_result() -> None:
    board = "| `pre/both` | 0.877 ± 0.003 | 0.682 | 3450 s | 22.4% |"
    sources = Sources([board])
    typed = (
        "LayerNorm reaches 0.4242 ± 0.0123 and RMSNorm 97.31% after 12.5 min; DyT is 3.7x slower, "
        "its queries turn 35° and a run takes 17 min."
    )
    found = " ".join(hand_typed_results(typed, sources))
    for number in ("0.4242 ± 0.0123", "97.31%", "12.5 min", "3.7x", "35°", "17 min"):
        assert repr(number) in found, number
    # what the board prints passes, as printed; a changed digit or spread does not
    assert hand_typed_results("LayerNorm: 0.877 ± 0.003 (0.682 at step 1000), 3450 s, 22.4% of the keys", sources) == []
    assert hand_typed_results("LayerNorm: 0.877 ± 0.004", sources) and hand_typed_results("0.878", sources)
    assert hand_typed_results("a share of 22.5%", sources) and hand_typed_results("it took 3451 s", sources)


def test_the_number_check_reads_code_comments_and_text_blocks_but_not_commands() -> None:
    sources = Sources(["nothing"])
    commands = "```bash\nnormbench sweep --config majority --trainer.max_steps 100 --model.optim.lr 2.5e-3\n```\n"
    assert hand_typed_results(commands, sources) == []
    assert hand_typed_results("```bash\nnormbench bench majority  # reaches 0.9312\n```\n", sources)
    assert hand_typed_results("```text\nval_loss 5.1234\n```\n", sources)
    assert hand_typed_results("```python\nx = 1  # 0.9312 accuracy\n```\n", sources)
    assert hand_typed_results("<!-- board: majority 0.9312 -->\nPython ≥ 3.10, §4.1, App. E.1", sources) == []
    assert hand_typed_results("accuracy `0.9312`", sources)  # inline code is read


def test_the_tolerance_table_is_the_declared_one() -> None:
    from normbench.training.reproducibility import tolerance_table

    text = (DOCS / "concepts" / "reproducibility.md").read_text(encoding="utf-8")
    rows = re.findall(r"^\| `([^`]+)` \| ([^|]+) \| ([^|]+) \| ([^|]+) \|$", text, re.M)
    declared = [(r["metrics"], f"{r['abs']:g}", f"{r['rel']:g}", r["why"]) for r in tolerance_table()]
    assert [tuple(cell.strip() for cell in row) for row in rows] == declared


DOTTED = re.compile(r"\bnormbench(?:\.\w+)+")


def resolve(dotted: str) -> bool:
    """Whether ``normbench.a.b.C`` names a module or an attribute of one."""
    parts = dotted.split(".")
    for i in range(len(parts), 1, -1):
        try:
            obj = importlib.import_module(".".join(parts[:i]))
        except ImportError:
            continue
        for part in parts[i:]:
            if not hasattr(obj, part):
                return False
            obj = getattr(obj, part)
        return True
    return False


def test_the_documentation_names_what_exists() -> None:
    """Every ``normbench.<module>...`` the pages name imports (claim ids such as ``normbench.majority...`` and the
    entry-point group ``normbench.norms`` are names of another kind)."""
    units = {p.stem for p in Path(normbench.__file__).parent.iterdir() if p.suffix == ".py" or p.is_dir()}
    named = {m[0] for text in documentation_texts().values() for m in DOTTED.finditer(text)}
    checked = sorted(n for n in named if n.split(".")[1] in units - {"__init__", "__pycache__"})
    assert len(checked) >= 20
    missing = [n for n in checked if not resolve(n)]
    assert not missing, f"the documentation names what does not exist: {missing}"


# --------------------------------------------------------------------------------------------- commands

COMMAND_SECTION = re.compile(r"^## `normbench (\w+)`\s*$", re.M)
# an option as the pages write it: --name, --name VALUE, --name=VALUE, --no-name; not --section.key overrides
OPTION = re.compile(r"(?<![\w-])--([a-z][\w-]*)(?![\w.-])")
ANALYSIS = re.compile(r"analyze (\w+)")
COMMAND_LINE = re.compile(r"^\s*(?:\.venv/bin/)?normbench ((?:analyze )?\w+)(.*)$")


def option_names(text: str) -> set[str]:
    """The options ``text`` names, as their commands' help prints them (``--no-x`` is the flag ``--x``)."""
    return {re.sub(r"^no_", "", m[1].replace("-", "_")) for m in OPTION.finditer(text)}


def help_text(command: str) -> str:
    """What ``normbench <command> --help`` prints (``command`` may be ``analyze geometry``)."""
    import contextlib
    import io

    from normbench.cli import main

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        try:
            main([*command.split(), "--help"])
        except SystemExit as exc:
            assert exc.code in (0, None), f"normbench {command} --help exited with {exc.code}"
    return out.getvalue()


def in_usage(option: str, help_output: str) -> bool:
    """Whether a command's help declares ``--option``: its usage lines list it (text that merely mentions an
    option elsewhere in the help does not count); ``--help`` is every command's."""
    usage = help_output.split("\n\n")[0]
    return option == "help" or re.search(rf"\[--{option}(?![\w.-])", usage) is not None


def documented_options() -> dict[str, set[str]]:
    """The options docs/commands.md lists for each command (``analyze <name>`` for each analysis): those of its
    section, and those that the page's introduction says every command takes."""
    parts = COMMAND_SECTION.split((DOCS / "commands.md").read_text(encoding="utf-8"))
    every = option_names(parts[0])
    found: dict[str, set[str]] = {}
    for command, section in zip(parts[1::2], parts[2::2], strict=True):
        current = command
        for line in section.splitlines():
            if command == "analyze" and (named := ANALYSIS.findall(line)):
                current = f"analyze {named[-1]}"
            found.setdefault(current, set(every)).update(option_names(line))
    return found


def shown_command_lines() -> list[tuple[str, str, str]]:
    """Every ``normbench <command> ...`` line of the code blocks of README.md and docs/: (page, command, line)."""
    lines = []
    for page, text in documentation_texts().items():
        fenced = False
        for line in text.splitlines():
            if FENCE.match(line):
                fenced = not fenced
            elif fenced and (m := COMMAND_LINE.match(line.split(" #")[0])):
                lines.append((page, m[1], m[0]))
    return lines


def test_every_option_the_docs_list_is_in_its_commands_help() -> None:
    from normbench.cli import ANALYSES, COMMANDS

    documented = documented_options()
    expected = (set(COMMANDS) - {"analyze"}) | {f"analyze {a}" for a in ANALYSES}
    assert expected <= set(documented), f"docs/commands.md has no section for {sorted(expected - set(documented))}"
    assert {"dry_run", "verbose"} <= documented["sweep"] and {"grid", "leaderboard"} <= documented["sweep"]
    assert {"compile", "dry_run"} <= documented["fit"] and "sequences" in documented["analyze decompose"]
    helps = {command: help_text(command) for command in documented}
    missing = {
        command: sorted(o for o in options if not in_usage(o, helps[command]))
        for command, options in documented.items()
    }
    missing = {command: options for command, options in missing.items() if options}
    assert not missing, f"options docs/commands.md lists that the command's --help does not: {missing}"


def test_every_option_of_a_command_shown_in_the_docs_is_in_its_help() -> None:
    lines = shown_command_lines()
    assert len(lines) >= 30 and any(command == "analyze geometry" for _, command, _ in lines)
    helps: dict[str, str] = {}
    missing = []
    for page, command, line in lines:
        text = helps.setdefault(command, help_text(command))
        missing += [f"{page}: --{o} in `{line.strip()}`" for o in option_names(line) if not in_usage(o, text)]
    assert not missing, "options shown in the docs that the command's --help does not list:\n" + "\n".join(missing)


# --------------------------------------------------------------------------------------------- README


def test_the_readme_is_a_front_page() -> None:
    lines = README.read_text(encoding="utf-8").splitlines()
    assert len(lines) <= README_MAX_LINES, f"README.md has {len(lines)} lines; move the manual into docs/"


def test_the_readme_teaser_is_generated_from_the_boards_as_they_are() -> None:
    text = README.read_text(encoding="utf-8")
    block = teaser.teaser_block(text)
    assert block is not None, f"README.md has no {teaser.TEASER_START} ... {teaser.TEASER_END} block"
    assert block == teaser.teaser(RESULTS), (
        "the README's results teaser is stale: run `python -m normbench.site.docs_pages --readme README.md`"
    )


def test_the_teaser_prints_the_boards_numbers() -> None:
    assert hand_typed_results(teaser.teaser(RESULTS), Sources(generated_texts())) == []


def test_the_readme_links_resolve() -> None:
    text = README.read_text(encoding="utf-8")
    targets = re.findall(r"\]\((?![a-z]+:|#)([^)\s#]+)", text)
    assert targets
    missing = [t for t in targets if not (REPO / t).exists()]
    assert not missing, f"README.md links to missing files: {missing}"


def test_the_teaser_command_rewrites_only_the_block(tmp_path: Path) -> None:
    readme = tmp_path / "README.md"
    readme.write_text(f"# x\n\nbefore\n{teaser.TEASER_START}\nold\n{teaser.TEASER_END}\nafter\n")
    assert docs_pages.main(["--readme", str(readme), "--results_dir", str(RESULTS), "--check"]) == 1
    assert docs_pages.main(["--readme", str(readme), "--results_dir", str(RESULTS)]) == 0
    text = readme.read_text()
    assert text.startswith("# x\n\nbefore\n") and text.endswith(f"{teaser.TEASER_END}\nafter\n")
    assert teaser.teaser_block(text) == teaser.teaser(RESULTS)
    assert docs_pages.main(["--readme", str(readme), "--results_dir", str(RESULTS), "--check"]) == 0
    assert docs_pages.main(["--readme"]) == 2 and docs_pages.main(["--bogus"]) == 2


# --------------------------------------------------------------------------------------------- the site


def committed_boards() -> list[str]:
    """The boards of the repository: those git tracks (a board of one's own sweep is not one), or every board
    under results/ where there is no git checkout."""
    try:
        tracked = subprocess.run(
            ["git", "ls-files", "--", "results"], cwd=REPO, capture_output=True, text=True, timeout=60, check=True
        ).stdout.split()
    except (OSError, subprocess.SubprocessError):
        return board_pages.boards(RESULTS)
    suffix = f"/{board_pages.BOARD_FILE}"
    keys = [p.removeprefix("results/").removesuffix(suffix) for p in tracked if p.endswith(suffix)]
    return sorted(keys) or board_pages.boards(RESULTS)


def test_every_board_has_a_results_page() -> None:
    shown = {
        key: page.relative_to(DOCS).as_posix()
        for page in DOCS.rglob("*.md")
        for key in docs_pages.board_markers(page.read_text(encoding="utf-8"))
    }
    boards = committed_boards()
    assert boards and sorted(shown) == boards
    assert all(shown[key] == board_pages.page_of(key) for key in boards)
    assert board_pages.published(RESULTS, DOCS) == boards


def test_the_committed_pages_hold_what_the_boards_generate() -> None:
    """The pages hold their generated blocks as committed, so that they read whole in a repository browser."""
    stale = docs_pages.write_pages(DOCS, RESULTS, REPO, check=True)
    assert not stale, (
        f"stale generated blocks in {[p.relative_to(REPO).as_posix() for p in stale]}: run "
        "`python -m normbench.site.docs_pages --docs docs`"
    )
    majority = (DOCS / board_pages.page_of("majority")).read_text(encoding="utf-8")
    assert "| `pre/both` |" in majority and "![loss](../../results/majority/loss.png)" in majority
    assert (DOCS / "results" / "../../results/majority/loss.png").resolve() == RESULTS / "majority" / "loss.png"


def relative_links(markdown: str) -> list[str]:
    """The relative link targets of a Markdown text (anchors dropped)."""
    return [m[3].split("#")[0] for m in included_files.LINK.finditer(markdown) if m[3].split("#")[0]]


def test_a_board_of_ones_own_sweep_adds_no_link_to_a_missing_page(tmp_path: Path) -> None:
    """A user's sweep adds a board in a named subfolder (results/majority/quick-5e097699/), which has no page:
    no generated page links to a page that does not exist, in the site or in the committed pages, and the
    committed pages stay as they are."""
    import shutil

    docs, results = tmp_path / "docs", tmp_path / "results"
    shutil.copytree(DOCS, docs)
    shutil.copytree(RESULTS, results)
    own = results / "majority" / "quick-5e097699"
    own.mkdir()
    for name in ("leaderboard.json", "leaderboard.md", "loss.png"):
        shutil.copy(RESULTS / "majority" / name, own / name)
    assert "majority/quick-5e097699" in board_pages.boards(results)
    assert board_pages.published(results, docs) == board_pages.published(RESULTS, DOCS)
    figures = {src for src, _ in board_pages.figures(results)}  # the site's figures: copies made at build time
    pages = [p for p in sorted(docs.rglob("*.md")) if docs_pages.blocks(p.read_text(encoding="utf-8").splitlines())]
    assert docs / "results" / "index.md" in pages and docs / "benches.md" in pages
    for path in pages:
        page = path.relative_to(docs).as_posix()
        for site in (True, False):
            text = docs_pages.render_page(path.read_text(encoding="utf-8"), page, results, REPO, docs, site=site)
            links = relative_links(text)
            missing = [
                t for t in links if not (path.parent / t).exists() and not (site and site_path(page, t) in figures)
            ]
            assert not missing, f"{page} (site={site}) links to what does not exist: {missing}"
            assert "quick-5e097699" not in " ".join(links)
    assert docs_pages.write_pages(docs, results, REPO, check=True) == []


def site_path(page: str, target: str) -> str:
    """Where a link ``target`` of docs page ``page`` points in the site (relative to its root)."""
    import posixpath

    return posixpath.normpath(posixpath.join(posixpath.dirname(page), target))


def test_a_generated_block_is_replaced_and_what_is_typed_stays(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    (docs / "results").mkdir(parents=True)
    page = docs / "results" / "majority.md"
    typed = "# Majority\n\nSome words.\n\n<!-- board: majority -->\n\nAfter the board.\n"
    page.write_text(typed)
    assert docs_pages.main(["--docs", str(docs), "--results_dir", str(RESULTS), "--check"]) == 1
    assert docs_pages.main(["--docs", str(docs), "--results_dir", str(RESULTS)]) == 0
    text = page.read_text()
    assert text.startswith("# Majority\n\nSome words.\n\n<!-- board: majority -->\n\n## normbench leaderboard")
    assert text.endswith("\n<!-- /board: majority -->\n\nAfter the board.\n")
    assert docs_pages.without_generated(text) == typed.replace(
        "<!-- board: majority -->\n", "<!-- board: majority -->\n<!-- /board: majority -->\n"
    )
    assert docs_pages.main(["--docs", str(docs), "--results_dir", str(RESULTS), "--check"]) == 0
    # a stale block is replaced, not added to; the site shows the content without the markers
    page.write_text(text.replace("| `pre/both` |", "| `pre/both` | stale |"))
    assert docs_pages.write_pages(docs, RESULTS, REPO) == [page] and page.read_text() == text
    site = docs_pages.render_page(text, "results/majority.md", RESULTS, REPO, docs, site=True)
    assert "<!--" not in site and site.count("## normbench leaderboard") == 1
    assert "![loss](figures/majority/loss.png)" in site and "After the board." in site


def test_a_board_is_included_with_its_figures_and_headings_one_level_down() -> None:
    page = board_pages.page_of("majority")
    text = docs_pages.render_page("# Majority\n\n<!-- board: majority -->\n", page, RESULTS, REPO)
    board = (RESULTS / "majority" / "leaderboard.md").read_text(encoding="utf-8")
    assert "\n## normbench leaderboard: `majority`" in text and "\n### Variants" in text
    assert "![loss](figures/majority/loss.png)" in text
    figures = dict(board_pages.figures(RESULTS))
    assert figures["results/figures/majority/loss.png"] == RESULTS / "majority" / "loss.png"
    # every line of the board's tables is there as it is
    assert all(line in text for line in board.splitlines() if line.startswith("|"))


def build_site(site: Path) -> Path:
    """``mkdocs build --strict`` of the checkout into ``site``; its error output where it fails."""
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(site)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
    )
    assert done.returncode == 0, done.stderr[-4000:]
    return site


@pytest.mark.skipif(
    importlib.util.find_spec("mkdocs") is None, reason="mkdocs is not installed (pip install -e .[dev])"
)
def test_the_site_builds_strictly(tmp_path: Path) -> None:
    site = build_site(tmp_path / "site")
    majority = (site / "results" / "majority" / "index.html").read_text(encoding="utf-8")
    assert "test_acc@5000" in majority and 'src="../figures/majority/loss.png"' in majority
    assert (site / "results" / "figures" / "majority" / "loss.png").is_file()
    assert "normbench.nn.norms.base.NormSpec" in (site / "api" / "norms" / "index.html").read_text(encoding="utf-8")
    assert not (DOCS / "results" / "figures").exists(), "figures are copied into the site, never into docs/"


def test_every_claims_table_fits_a_documentation_column() -> None:
    """A claims summary has at most five columns (claim, whose, verdict, key numbers, chance), the rest in each
    claim's collapsible details: in a headless browser at 1280 px its last column ends inside the content column."""
    for path in [*RESULTS.rglob("leaderboard.md"), *RESULTS.rglob("unselectable_tokens.md")]:
        if "archive" in path.parts:
            continue
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.startswith("| claim |"):
                columns = len(line.strip("|").split(" | "))
                assert columns <= 5, f"{path}: a claims table of {columns} columns: {line}"


def test_each_leaderboard_markdown_is_the_current_rendering_of_its_json() -> None:
    """A rebuild that finds a board's JSON unchanged writes nothing, so a change of the renderer reaches the Markdown
    only when the board is rebuilt with ``--force``: this names every board whose Markdown the renderer no longer
    writes (the random-key grid of ``unselectable`` has a renderer of its own)."""
    from normbench.archive import load_board
    from normbench.render.board import render

    keys = [key for key in committed_boards() if key.split("/")[0] != "unselectable"]
    assert len(keys) > 40
    stale = [
        key
        for key in keys
        if render(load_board(RESULTS / key)) != (RESULTS / key / "leaderboard.md").read_text(encoding="utf-8")
    ]
    assert stale == [], f"rebuild these boards with --force (values unchanged, Markdown stale): {stale}"


CHROMIUM = next(
    (p for p in ("/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome") if Path(p).is_file()), None
)
# Injected into a built page: for every table with a verdict column (a claims summary's `verdict`, an against-chance
# table's `where`), that column's right edge beside the right edge of what the reader sees of it (the nearest
# scrolling box, or the window).
VERDICT_PROBE = """<script>
window.addEventListener('load', () => {
  const out = [];
  for (const table of document.querySelectorAll('article table')) {
    const heads = [...table.querySelectorAll('thead th')].map(th => th.textContent.trim());
    const i = heads.findIndex(h => h === 'verdict' || h === 'where');
    if (i < 0) continue;
    let box = table.parentElement;
    while (box.tagName !== 'ARTICLE' && getComputedStyle(box).overflowX === 'visible') box = box.parentElement;
    const seen = Math.min(box.getBoundingClientRect().right, document.documentElement.clientWidth);
    const right = table.querySelectorAll('thead th')[i].getBoundingClientRect().right;
    out.push({table: heads.join(' | '), right: right, seen: seen});
  }
  document.body.setAttribute('data-probe', JSON.stringify(out));
});
</script>"""


def verdict_columns(page: Path, width: int = 1280) -> list[dict]:
    """The verdict columns of a built page as headless Chromium lays it out ``width`` pixels wide."""
    import html
    import json

    probe = page.with_name(page.stem + ".probe.html")
    probe.write_text(page.read_text(encoding="utf-8").replace("</body>", VERDICT_PROBE + "</body>"), encoding="utf-8")
    flags = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--no-first-run",
             "--disable-component-update", "--disable-sync", f"--user-data-dir={probe.parent / '.chromium'}"]  # fmt: skip
    done = subprocess.run(
        [CHROMIUM, *flags, f"--window-size={width},1600", "--virtual-time-budget=5000", "--dump-dom", probe.as_uri()],
        capture_output=True,
        text=True,
        timeout=120,
    )
    found = re.search(r'data-probe="([^"]*)"', done.stdout)
    assert found, f"{page}: the probe did not run: {done.stderr[-2000:]}"
    return json.loads(html.unescape(found.group(1)))


@pytest.mark.skipif(CHROMIUM is None, reason="no Chromium here (Debian: apt-get install chromium)")
@pytest.mark.skipif(importlib.util.find_spec("mkdocs") is None, reason="mkdocs is not installed")
def test_every_verdict_is_in_view_on_the_built_results_pages_at_1280_px(tmp_path: Path) -> None:
    """The built site as a reader sees it, 1280 px wide in headless Chromium: on every results and card page each
    claims table's verdict column (and each against-chance table's) ends inside what the page shows, with no
    horizontal scrolling needed to read it."""
    site = build_site(tmp_path / "site")
    pages = sorted([*(site / "results").glob("*/index.html"), *(site / "cards").glob("*/index.html")])
    assert len(pages) > 20
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(4) as pool:
        columns = dict(zip(pages, pool.map(verdict_columns, pages), strict=True))
    assert sum(len(c) for c in columns.values()) > 20  # the probe found the claims tables
    cut = [f"{p.parent.name}: {c['table']} ends at {c['right']:.0f} px, seen to {c['seen']:.0f}"
           for p, cs in columns.items() for c in cs if c["right"] > c["seen"] + 1]  # fmt: skip
    assert cut == [], "verdicts cut off at 1280 px:\n" + "\n".join(cut)


@pytest.mark.skipif(CHROMIUM is None, reason="no Chromium here (Debian: apt-get install chromium)")
def test_the_verdict_probe_sees_a_verdict_scrolled_out_of_view(tmp_path: Path) -> None:
    page = tmp_path / "wide.html"
    wide = '<td style="white-space:nowrap">' + "x" * 400 + "</td>"
    page.write_text(
        '<html><body><article><div style="overflow-x:auto;width:800px"><table><thead><tr><th>claim</th>'
        f"<th>verdict</th></tr></thead><tbody><tr>{wide}<td>reproduced</td></tr></tbody></table></div></article>"
        "</body></html>",
        encoding="utf-8",
    )
    (column,) = verdict_columns(page)
    assert column["right"] > column["seen"] + 1000
