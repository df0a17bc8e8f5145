"""Which stage of benchlib may import which: the pipeline, held against every import in the package.

A stage is a folder of ``benchlib/`` (``core``, ``catalog``, ...). Every ``import`` and ``from ...
import`` counts, the ones inside functions too: a lazy import is still a dependency. The
Contributing page describes the same table.
"""

from __future__ import annotations

import ast
import re
from collections import defaultdict
from pathlib import Path

import pytest

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
