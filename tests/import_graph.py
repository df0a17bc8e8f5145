"""Which modules of benchlib import which, read from the source with `ast`: imports inside functions count.

`tests/test_cli_imports.py` and `tests/test_layers.py` hold rules against this graph: no cycles,
the command line a leaf, and what the site may reach through any chain of imports.
"""

from __future__ import annotations

import ast
from collections.abc import Collection, Iterable
from pathlib import Path

import benchlib

PACKAGE_DIR = Path(benchlib.__file__).parent


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE_DIR.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def package_modules() -> dict[str, Path]:
    """Every module of benchlib, by its dotted name."""
    return {module_name(path): path for path in sorted(PACKAGE_DIR.rglob("*.py"))}


def _imports(nodes: Iterable[ast.AST], module: str, is_package: bool, modules: Collection[str]) -> Iterable[str]:
    package = module if is_package else module.rpartition(".")[0]
    for node in nodes:
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:  # relative: `from . import x`, `from ..cli import y`
                parent = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*parent, base] if base else parent)
            # `from X import y` imports the module X.y where there is one, else a name of X.
            for alias in node.names:
                yield f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules else base


def imported_names(source: str, module: str, modules: Collection[str], is_package: bool = False) -> set[str]:
    """Every module ``source`` (the module ``module``) imports, where ``modules`` are the modules there are.

    ``from X import y`` counts as an import of ``X.y`` alone where that is a module, and of ``X``
    where ``y`` is a name in it. Importing ``X.y`` also runs ``X``'s ``__init__``, but that is not
    counted: every module would otherwise import its own package.
    """
    return set(_imports(ast.walk(ast.parse(source)), module, is_package, modules))


def imports_of(path: Path, modules: Collection[str]) -> set[str]:
    return imported_names(path.read_text(encoding="utf-8"), module_name(path), modules, path.name == "__init__.py")


def import_graph(modules: dict[str, Path] | None = None) -> dict[str, set[str]]:
    """Each module of ``modules`` (all of benchlib's by default) and the others of them it imports."""
    modules = package_modules() if modules is None else modules
    return {
        module: {name for name in imports_of(path, modules) if name in modules and name != module}
        for module, path in modules.items()
    }


def lazy_imports(source: str, module: str, modules: Collection[str], is_package: bool = False) -> set[str]:
    """The modules ``source`` imports only inside a function, on first use: none of them when it is imported."""
    tree = ast.parse(source)
    in_functions = {
        node
        for function in ast.walk(tree)
        if isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef)
        for node in ast.walk(function)
    }
    at_import = [node for node in ast.walk(tree) if node not in in_functions]
    return set(_imports(in_functions, module, is_package, modules)) - set(
        _imports(at_import, module, is_package, modules)
    )


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


def chains_to(
    graph: dict[str, set[str]],
    starts: Iterable[str],
    reached: Collection[str],
    allowed_edges: Collection[tuple[str, str]] = (),
) -> dict[str, list[str]]:
    """Each module in one of the packages ``reached`` that a module of ``starts`` imports through
    any chain, with the shortest such chain; an edge of ``allowed_edges`` is not followed."""
    found: dict[str, list[str]] = {}
    for start in sorted(starts):
        seen, frontier = {start}, [[start]]
        while frontier:
            chain = frontier.pop(0)
            for target in sorted(graph[chain[-1]]):
                if target in seen or (chain[-1], target) in allowed_edges:
                    continue
                seen.add(target)
                if any(target == package or target.startswith(f"{package}.") for package in reached):
                    found.setdefault(target, [*chain, target])
                frontier.append([*chain, target])
    return found
