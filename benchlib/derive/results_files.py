"""Which results files the site reads: the results folder, the reported folder, the score's reference
run (shipped with the package, `benchlib.derive.score.reference_folder`) and, on request, this machine.

The measurement of the build machine is opt-in (``BENCHLIB_MEASURE``): `benchlib.measure.build_machine`
makes it once per machine and benchlib version and keeps it in the cache folder. It is the one way
a site build reaches `benchlib.measure`, imported only when a build asks to measure
(``tests/test_layers.py`` holds that).
"""

from __future__ import annotations

import functools
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from benchlib.core.cache import cache_dir, cache_folder
from benchlib.core.paths import reported_dir, results_dir
from benchlib.derive.score import reference_folder
from benchlib.results.store import iter_result_paths


@dataclass(frozen=True)
class ResultsFiles:
    """Every results file to read, the results folder they come from, and which of them measured this machine."""

    paths: tuple[Path, ...]
    folder: Path
    build: tuple[str, ...]


@functools.cache
def _cache(root: Path, name: str) -> Path:
    """``<root>/<name>``, the cache folder's; without a writable one, a folder of this process's own."""
    return cache_folder(name) or Path(tempfile.mkdtemp(prefix="benchlib-measurement-"))


def this_machine(
    suite: str, measure: Callable[[str, Path], Path] | None = None, cache: str = "build-measurement"
) -> Path:
    """This machine's measurement with ``suite``: cached in the cache folder ``cache``, or made now by
    ``measure`` (`benchlib.measure.build_machine.measure_here` by default: this process runs the suite)."""
    from benchlib.measure.build_machine import build_measurement, measure_here

    return build_measurement(suite, _cache(cache_dir(), cache), measure or measure_here)


def results_files(build: Path | None = None) -> ResultsFiles:
    """The results, reported and reference folders' files, and ``build``, this machine's measurement, if there is one."""
    folder = results_dir()
    found = list(iter_result_paths(folder)) if folder.is_dir() else []
    for extra in (reported_dir(), reference_folder()):
        if extra.is_dir():
            found += [p for p in iter_result_paths(extra) if p not in found]
    if build is not None:
        found.append(build)
    return ResultsFiles(tuple(found), folder, (str(build),) if build is not None else ())
