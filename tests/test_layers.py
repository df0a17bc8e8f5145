"""Which stage of benchlib may import which: the pipeline, held against every import in the package.

A stage is a folder of ``benchlib/`` (``core``, ``catalog``, ...). Every ``import`` and ``from ...
import`` counts, the ones inside functions too: a lazy import is still a dependency. The
Contributing page describes the same table. Beyond each module's own imports: no modules import
each other in a circle, and the site reaches no prediction or measurement through any chain of
imports, but for the one measurement a build may ask for.
"""

from __future__ import annotations

import ast
import re
from collections import defaultdict
from pathlib import Path

import pytest
from import_graph import chains_to, find_cycle, import_graph, lazy_imports, package_modules

PACKAGE = Path(__file__).resolve().parents[1] / "benchlib"

# Each stage and the stages it may import; read top to bottom, it is the pipeline.
ALLOWED: dict[str, set[str]] = {
    "core": set(),
    "catalog": {"core"},
    "backends": {"core"},
    "results": {"core", "catalog"},
    "probe": {"core", "catalog", "backends", "results"},
    "models": {"core", "catalog", "backends"},
    "workloads": {"core", "catalog", "backends", "models", "results"},
    "predict": {"core", "catalog", "backends", "models", "results"},
    "measure": {"core", "catalog", "backends", "models", "results", "probe", "workloads", "predict"},
    "derive": {"core", "catalog", "results", "models", "workloads", "predict", "measure"},
    "tables": {"core", "catalog", "models", "results", "workloads", "predict", "derive"},
    "site": {"core", "catalog", "results", "workloads", "derive", "tables"},
    "cli": {
        "core",
        "catalog",
        "backends",
        "results",
        "probe",
        "models",
        "workloads",
        "predict",
        "measure",
        "derive",
        "tables",
    },
}
# benchlib/__init__.py: `benchlib.probe()` and `benchlib.load_results()`, both imported on first use,
# and the version from core.
TOP_LEVEL_ALLOWED = {"core", "probe", "results"}
# What the site build reads was computed earlier by a command: it may reach neither stage, however indirectly.
SITE_NEVER_REACHES = ("benchlib.predict", "benchlib.measure")
# The one exception: ``BENCHLIB_MEASURE=quick`` measures the build machine, imported on first use.
BUILD_MEASUREMENT = ("benchlib.derive.results_files", "benchlib.measure.build_machine")


def _imported_stages(path: Path) -> set[str]:
    """The stages of benchlib that the module at ``path`` imports, wherever the import is."""
    stages = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = (
                [f"{node.module}.{alias.name}" for alias in node.names] if node.module == "benchlib" else [node.module]
            )
        elif isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        else:
            continue
        for name in names:
            parts = name.split(".")
            if parts[0] == "benchlib" and len(parts) > 1 and (PACKAGE / parts[1]).is_dir():
                stages.add(parts[1])
    return stages


def _stage_imports() -> dict[str, dict[str, list[str]]]:
    """stage -> imported stage -> the modules that import it."""
    found: dict[str, dict[str, list[str]]] = defaultdict(lambda: defaultdict(list))
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(PACKAGE).parts
        stage = parts[0] if len(parts) > 1 else "benchlib"
        for imported in _imported_stages(path) - {stage}:
            found[stage][imported].append(str(path.relative_to(PACKAGE.parent)))
    return found


def test_every_folder_of_benchlib_is_a_stage_in_the_table() -> None:
    folders = {p.name for p in PACKAGE.iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    assert folders == set(ALLOWED), "add the new folder to ALLOWED (and to the Contributing page), or remove it"


@pytest.mark.parametrize("stage", sorted(ALLOWED))
def test_a_stage_imports_only_the_stages_before_it(stage: str) -> None:
    imports = _stage_imports()[stage]
    wrong = {imported: modules for imported, modules in imports.items() if imported not in ALLOWED[stage]}
    assert not wrong, f"{stage} may not import {', '.join(sorted(wrong))}: " + "; ".join(
        f"{imported} by {', '.join(modules)}" for imported, modules in sorted(wrong.items())
    )


def test_the_package_itself_imports_only_what_its_two_functions_need() -> None:
    assert set(_stage_imports()["benchlib"]) <= TOP_LEVEL_ALLOWED


def test_the_table_has_no_cycle() -> None:
    """ALLOWED is an order: no stage reaches itself through the stages it may import."""

    def reaches(start: str, seen: frozenset[str]) -> None:
        for imported in ALLOWED[start]:
            assert imported not in seen, f"cycle: {' -> '.join([*seen, imported])}"
            reaches(imported, seen | {imported})

    for stage in ALLOWED:
        reaches(stage, frozenset({stage}))


# Test files that check a page, a snippet or the repository rather than a stage's modules.
NOT_A_STAGE = {
    "test_reader_pages.py",
    "test_glossary.py",
    "test_new_workload_on_results_page.py",
    "test_campaign_snippets.py",
    "test_contribute_snippets.py",
    "test_contributing_snippets.py",
    "test_readme_commands.py",
    "test_workflows.py",
    "test_lint.py",
    "test_lock.py",
    "test_layers.py",
    "test_artefacts.py",  # the tests' own artefact store, tests/artefacts.py
    "test_score_spread.py",  # benchmarks/score_spread.py
}


def test_each_test_file_is_named_after_the_stage_it_tests() -> None:
    """tests/test_<stage>_<module>[_<aspect>].py, so a change to benchlib/<stage>/<module>.py names its tests."""
    for path in sorted(Path(__file__).parent.glob("test_*.py")):
        stage = path.stem.removeprefix("test_").split("_")[0]
        assert stage in ALLOWED or path.name in NOT_A_STAGE, (
            f"{path.name}: name it test_<stage>_<module>.py after what it tests (stages: {', '.join(ALLOWED)}), "
            "or add it to NOT_A_STAGE if it checks a page, a snippet or the repository"
        )


def test_the_contributing_page_shows_this_table() -> None:
    """The page's "Where things live" table: a row per stage, naming what it may import."""
    page = (PACKAGE.parent / "docs" / "contributing.md").read_text(encoding="utf-8")
    rows = dict(re.findall(r"^\| `(\w+)/` \| .* \| ([^|]+) \|$", page, re.M))
    spelled = {
        stage: set()
        if text.strip() == "nothing of benchlib"
        else set(ALLOWED) - {stage, "site"}
        if text.strip() == "every stage but site"
        else {name.strip() for name in text.split(",")}
        for stage, text in rows.items()
    }
    assert spelled == ALLOWED


def test_importing_benchlib_loads_no_stage_beyond_core() -> None:
    """`import benchlib` (which every stage's import runs first) loads no probe, pydantic or rich:
    the bottom stage stays as light as it says, and ``benchlib.probe()`` still works on first use."""
    import subprocess
    import sys

    code = (
        "import sys, benchlib.core.timing\n"
        "heavy = sorted(m for m in sys.modules if m.split('.')[0] in ('pydantic', 'rich', 'pandas', 'torch')"
        " or m.startswith(('benchlib.probe', 'benchlib.results')))\n"
        "print(heavy)\n"
        "import benchlib\n"
        "print(callable(benchlib.probe))\n"
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert run.stdout.splitlines() == ["[]", "True"]


def test_no_modules_import_each_other_in_a_cycle() -> None:
    """Package-wide, imports inside functions too: ``from X import y`` counts as importing the module
    X.y where there is one, and importing a module's package first (as Python does) does not count."""
    graph = import_graph()
    assert "benchlib.site.notebook" in graph["benchlib.site.data"]  # the graph was read
    assert find_cycle(graph) is None, " -> ".join(find_cycle(graph) or [])


def test_the_cycle_finder_finds_one() -> None:
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b", "c"}, "b": {"c"}, "c": set()}) is None


def _site_modules(graph: dict[str, set[str]]) -> list[str]:
    return [module for module in graph if module == "benchlib.site" or module.startswith("benchlib.site.")]


def test_the_site_reaches_no_prediction_or_measurement_but_the_build_machines() -> None:
    graph = import_graph()
    assert BUILD_MEASUREMENT[1] in graph[BUILD_MEASUREMENT[0]], "the named exception is still the way the site measures"
    found = chains_to(graph, _site_modules(graph), SITE_NEVER_REACHES, allowed_edges={BUILD_MEASUREMENT})
    assert not found, "the site build reaches what only a command may run: " + "; ".join(
        " -> ".join(chain) for chain in found.values()
    )


def test_the_build_measurement_is_imported_only_when_a_build_asks_for_one() -> None:
    module, measurement = BUILD_MEASUREMENT
    modules = package_modules()
    source = modules[module].read_text(encoding="utf-8")
    assert measurement in lazy_imports(source, module, modules), f"{module} imports {measurement} at import time"


def test_the_lazy_import_reader_tells_first_use_from_import_time() -> None:
    modules = {"benchlib.derive.results_files", "benchlib.measure.build_machine"}
    inside = "def this_machine():\n    from benchlib.measure.build_machine import measure_here\n"
    assert lazy_imports(inside, "benchlib.derive.results_files", modules) == {"benchlib.measure.build_machine"}
    both = "from benchlib.measure import build_machine\n" + inside
    assert lazy_imports(both, "benchlib.derive.results_files", modules) == set()


def test_the_site_reads_tables_only_through_the_reader() -> None:
    """The table modules compute (and import predict); the site imports `benchlib.tables` alone."""
    graph = import_graph()
    wrong = {m: sorted(t for t in graph[m] if t.startswith("benchlib.tables.")) for m in _site_modules(graph)}
    assert {module: tables for module, tables in wrong.items() if tables} == {}


def test_the_reach_finder_follows_chains_and_skips_only_the_allowed_edge() -> None:
    graph = {"site.a": {"derive.b"}, "derive.b": {"measure.c", "derive.d"}, "derive.d": {"predict.e"}}
    graph |= {"measure.c": set(), "predict.e": set()}
    found = chains_to(graph, ["site.a"], ("measure", "predict"))
    assert found == {
        "measure.c": ["site.a", "derive.b", "measure.c"],
        "predict.e": ["site.a", "derive.b", "derive.d", "predict.e"],
    }
    assert chains_to(graph, ["site.a"], ("measure",), allowed_edges={("derive.b", "measure.c")}) == {}
    assert chains_to(graph, ["site.a"], ("measure", "predict"), allowed_edges={("derive.b", "measure.c")}) == {
        "predict.e": ["site.a", "derive.b", "derive.d", "predict.e"]
    }
    assert chains_to(graph, ["site.a"], ("predictions",)) == {}  # a package, not a prefix of a name
