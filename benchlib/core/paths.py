"""Where the project's folders are: from configuration, never from where benchlib is installed.

The project root is the folder holding ``mkdocs.yml``: ``$MKDOCS_CONFIG_DIR`` while MkDocs builds
(markdown-exec exports it), else the nearest folder from the working directory up that has one
(Zensical and the tests run from the root), else the working directory. The results and docs
folders come from the environment (``$BENCHLIB_RESULTS_DIR`` and its siblings below), else from
``mkdocs.yml`` (``extra: benchlib:`` keys, and ``docs_dir``), else they are the root's ``results/``,
``results/reported/``, ``results/reference/`` and ``docs/``. Relative paths start at the root.
"""

from __future__ import annotations

import functools
import os
from pathlib import Path
from typing import Any

import yaml

CONFIG_FILE = "mkdocs.yml"
RESULTS_ENV = "BENCHLIB_RESULTS_DIR"
DOCS_ENV = "BENCHLIB_DOCS_DIR"
REPORTED_ENV = "BENCHLIB_REPORTED_DIR"
REFERENCE_ENV = "BENCHLIB_REFERENCE_DIR"


def project_root() -> Path:
    configured = os.environ.get("MKDOCS_CONFIG_DIR")
    if configured:
        return Path(configured)
    cwd = Path.cwd()
    for folder in (cwd, *cwd.parents):
        if (folder / CONFIG_FILE).is_file():
            return folder
    return cwd


class _IgnoreTags(yaml.SafeLoader):
    """mkdocs.yml uses !ENV and !!python/name tags; only plain keys are read here."""


_IgnoreTags.add_multi_constructor("", lambda loader, suffix, node: None)
_IgnoreTags.add_multi_constructor("tag:yaml.org,2002:python/", lambda loader, suffix, node: None)


def _config(root: Path) -> dict[str, Any]:
    path = root / CONFIG_FILE
    if not path.is_file():
        return {}
    stat = path.stat()
    return _parsed_config(str(path), stat.st_mtime_ns, stat.st_size)


@functools.lru_cache(maxsize=4)
def _parsed_config(path: str, _mtime_ns: int, _size: int) -> dict[str, Any]:
    """mkdocs.yml parsed once per version of the file: a build asks for its folders many times."""
    loaded = yaml.load(Path(path).read_text(encoding="utf-8"), Loader=_IgnoreTags)  # noqa: S506 (a SafeLoader)
    return loaded if isinstance(loaded, dict) else {}


def _benchlib_config(root: Path) -> dict[str, Any]:
    extra = _config(root).get("extra") or {}
    section = extra.get("benchlib") if isinstance(extra, dict) else None
    return section if isinstance(section, dict) else {}


def _resolve(root: Path, value: str | os.PathLike[str]) -> Path:
    path = Path(value)
    return path if path.is_absolute() else root / path


def _folder(env: str, key: str, default: str, config: dict[str, Any] | None = None) -> Path:
    root = project_root()
    section = _benchlib_config(root) if config is None else config
    return _resolve(root, os.environ.get(env) or section.get(key) or default)


def results_dir() -> Path:
    """All results the site shows: ``$BENCHLIB_RESULTS_DIR``, ``extra.benchlib.results_dir``, or ``results/``."""
    return _folder(RESULTS_ENV, "results_dir", "results")


def reported_dir() -> Path:
    """Published figures, as results files with source and date, that pages cite beside the charts.

    Configured apart from the results folder so that a build from another results folder (a
    contributor's, the tests' samples) still cites the committed sources.
    """
    return _folder(REPORTED_ENV, "reported_dir", "results/reported")


def reference_dir() -> Path:
    """The folder holding the one results file the score is relative to."""
    return _folder(REFERENCE_ENV, "reference_dir", "results/reference")


def docs_dir() -> Path:
    """The docs folder: ``$BENCHLIB_DOCS_DIR``, mkdocs.yml's ``docs_dir``, or ``docs/``."""
    return _folder(DOCS_ENV, "docs_dir", "docs", config=_config(project_root()))
