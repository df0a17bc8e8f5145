"""The command line is a leaf: nothing else in benchlib imports `benchlib.cli`. Read from the source
with `ast`, imports inside functions included (`tests/test_layers.py` checks that no modules, the
command line's included, import each other in a cycle)."""

from __future__ import annotations

import pytest
from import_graph import PACKAGE_DIR, imported_names, imports_of, module_name, package_modules

CLI = "benchlib.cli"
MODULES = package_modules()


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
    assert any(is_cli(name) for name in imported_names(source, module, MODULES)) is expected


def test_no_module_outside_the_cli_imports_it():
    outside = [path for path in PACKAGE_DIR.rglob("*.py") if not is_cli(module_name(path))]
    assert len(outside) > 50  # the whole library was read, not an empty folder
    offenders = {module_name(path): sorted(filter(is_cli, imports_of(path, MODULES))) for path in outside}
    assert {module: names for module, names in offenders.items() if names} == {}
