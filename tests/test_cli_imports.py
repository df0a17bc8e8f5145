"""The command line is a leaf: nothing else in benchlib imports `benchlib.cli`, and its modules
import each other without a cycle. Read from the source with `ast`, imports inside functions included."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import benchlib

PACKAGE_DIR = Path(benchlib.__file__).parent
CLI = "benchlib.cli"


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE_DIR.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported_names(source: str, module: str, is_package: bool = False) -> set[str]:
    """Every module ``source`` imports, and for ``from X import y`` also ``X.y`` (y may be a submodule)."""
    package = module if is_package else module.rpartition(".")[0]
    names: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:  # relative: `from . import x`, `from ..cli import y`
                parent = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*parent, base] if base else parent)
            names.add(base)
            names.update(f"{base}.{alias.name}" for alias in node.names)
    return names


def imports_of(path: Path) -> set[str]:
    return imported_names(path.read_text(encoding="utf-8"), module_name(path), path.name == "__init__.py")


def is_cli(name: str) -> bool:
    return name == CLI or name.startswith(CLI + ".")


@pytest.mark.parametrize(
    ("source", "module", "expected"),
    [
        ("import benchlib.cli", "benchlib.measure.runner", True),
        ("from benchlib import cli", "benchlib.measure.runner", True),
        ("from benchlib.cli.output import console", "benchlib.measure.runner", True),
        ("def f():\n    from benchlib.cli import usage_error", "benchlib.measure.max_batch", True),
        ("from .. import cli", "benchlib.measure.max_batch", True),
        ("from ..cli.output import err", "benchlib.measure.max_batch", True),
        ("from . import cli_helpers, search", "benchlib.models.trainable", False),
        ("from benchlib.results import schema", "benchlib.measure.runner", False),
    ],
)
def test_the_import_reader_sees_every_form_of_import(source, module, expected):
    assert any(is_cli(name) for name in imported_names(source, module)) is expected


def test_no_module_outside_the_cli_imports_it():
    outside = [path for path in PACKAGE_DIR.rglob("*.py") if not is_cli(module_name(path))]
    assert len(outside) > 50  # the whole library was read, not an empty folder
    offenders = {module_name(path): sorted(filter(is_cli, imports_of(path))) for path in outside}
    assert {module: names for module, names in offenders.items() if names} == {}


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """A list of modules that import each other in a circle (first == last), or None."""
    done: set[str] = set()

    def visit(node: str, path: list[str]) -> list[str] | None:
        if node in path:
            return path[path.index(node) :] + [node]
        if node in done:
            return None
        for target in sorted(graph[node]):
            cycle = visit(target, [*path, node])
            if cycle:
                return cycle
        done.add(node)
        return None

    for start in sorted(graph):
        cycle = visit(start, [])
        if cycle:
            return cycle
    return None


def cli_import_graph() -> dict[str, set[str]]:
    """Which `benchlib.cli` modules each one imports (the package importing its own submodules aside)."""
    paths = {module_name(path): path for path in (PACKAGE_DIR / "cli").glob("*.py")}
    return {
        module: {name for name in imports_of(path) if name in paths and name != module}
        for module, path in paths.items()
    }


def test_the_cli_modules_import_each_other_without_a_cycle():
    graph = cli_import_graph()
    assert f"{CLI}.run" in graph[CLI] and f"{CLI}.output" in graph[f"{CLI}.run"]  # the graph was read
    assert find_cycle(graph) is None, " -> ".join(find_cycle(graph) or [])


def test_the_cycle_finder_finds_one():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b", "c"}, "b": {"c"}, "c": set()}) is None
