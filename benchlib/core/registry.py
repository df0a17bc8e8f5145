"""What a package's modules declare when they are imported: workloads, tables.

Each package keeps its own dict of declarations by name; these helpers add to it and load it.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Iterable
from typing import Protocol, TypeVar


class Named(Protocol):
    @property
    def name(self) -> str: ...


N = TypeVar("N", bound=Named)


def add_named(registry: dict[str, N], item: N, kind: str) -> N:
    """Add ``item`` under its name; another item of the same name is an error naming the ``kind``."""
    if item.name in registry and registry[item.name] is not item:
        raise ValueError(f"{kind} {item.name!r} is registered twice")
    registry[item.name] = item
    return item


def import_modules(package: str, path: Iterable[str]) -> None:
    """Import each public module of ``package``: importing one registers what it declares."""
    for module in pkgutil.iter_modules(path):
        if not module.name.startswith("_"):
            importlib.import_module(f"{package}.{module.name}")
