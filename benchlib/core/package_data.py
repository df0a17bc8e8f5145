"""Files shipped inside the package: curated data in ``benchlib/data/`` and generated tables in ``benchlib/tables/``.

Curated data is typed by hand, each figure with its source and date; a table is written by a
command (`benchlib tables`) with the digests of its inputs, and a test fails when it is stale.
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib.resources import files
from pathlib import Path
from typing import Any

import yaml

# libyaml's parser where PyYAML was built with it: the specs and published data are read on every
# command, and the pure-Python parser takes seconds over them. Both give the same data.
_SAFE_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def load_yaml(text: str) -> Any:
    """``yaml.safe_load``, with libyaml's faster parser where it is available."""
    return yaml.load(text, Loader=_SAFE_LOADER)  # noqa: S506 (a SafeLoader)


def data_file(name: str) -> Path:
    """A curated data file: ``benchlib/data/<name>``."""
    return Path(str(files("benchlib") / "data" / name))


def table_file(name: str) -> Path:
    """A generated table: ``benchlib/tables/<name>``."""
    return Path(str(files("benchlib") / "tables" / name))


@dataclass(frozen=True)
class SourcedRow:
    """One row of a reported-data file and the source it names, as the file states them."""

    source: dict[str, Any]
    row: dict[str, Any]


def sourced_rows(path: Path) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """A reported-data file's rows (``rows``), each with the entry of ``sources`` whose ``id`` it names."""
    data = load_yaml(path.read_text(encoding="utf-8"))
    sources = {s["id"]: s for s in data["sources"]}
    return [(sources[r["source"]], r) for r in data["rows"]]
