"""Which measurement of the build machine a build asks for, and one clear stop for an invalid results file.

On request the site shows a fresh measurement of the machine building it:
``BENCHLIB_MEASURE=quick mkdocs build`` runs the quick suite once per machine fingerprint and
benchlib version (`benchlib.measure.build_machine`), and keeps the file in the cache folder so
rebuilds don't measure again. Without it the build measures nothing.
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, NoReturn

import pandas as pd

from benchlib import tables
from benchlib.results.load import load_results
from benchlib.results.store import ResultsError
from benchlib.workloads import SIZES

MEASURE_ENV = "BENCHLIB_MEASURE"
_OFF = ("", "0", "off", "no", "false")


class InvalidResultsStopTheBuild(SystemExit):
    """Ends a site build with one message naming the bad results file and field, and no traceback."""


@contextmanager
def stop_build_on_invalid_results() -> Iterator[None]:
    """During an MkDocs build, turn an invalid results file into one message that ends the build.

    markdown-exec catches every Exception a block raises and logs its traceback, once per block:
    one bad file printed about a dozen tracebacks. A SystemExit passes markdown-exec and MkDocs
    alike and ends the build with just its message, at the first block that reads results.
    Outside a build (a notebook, the tests) the ResultsError stays as it is, and so it does in
    `mkdocs serve`'s rebuild thread, which a SystemExit would end silently, and in `zensical serve`.
    `zensical build` shows a block's exception on the page and exits 0, so there too it must exit.
    """
    try:
        yield
    except ResultsError as exc:
        if not building_site():
            raise
        raise InvalidResultsStopTheBuild(
            f"error: {exc.path} is not a valid results file: {'; '.join(exc.problems)}. Fix it or move it out of "
            f"the results folder, then build again (`benchlib validate {exc.path}` checks it)."
        ) from None


def building_with_zensical() -> bool:
    """True while Zensical renders the pages (it marks markdown-exec as its caller), not MkDocs."""
    markdown_exec = sys.modules.get("markdown_exec")
    return getattr(markdown_exec, "_caller", "") == "zensical" or Path(sys.argv[0]).name == "zensical"


def building_site() -> bool:
    """True in a one-off site build, where ending the process is the way to stop it."""
    if building_with_zensical():
        # Zensical shows a block's exception on the page and still exits 0; its serve must go on.
        return sys.argv[1:2] == ["build"]
    # markdown-exec exports MKDOCS_CONFIG_DIR while MkDocs builds; serve rebuilds in another thread.
    return bool(os.environ.get("MKDOCS_CONFIG_DIR")) and threading.current_thread() is threading.main_thread()


def load_site_results(paths: Iterable[Path]) -> pd.DataFrame:
    """`load_results` for the site's blocks: an invalid file stops the build with one message."""
    with stop_build_on_invalid_results():
        return load_results(paths)


class MissingTableStopsTheBuild(SystemExit):
    """Ends a site build with one message naming the committed table that is missing, unreadable or
    stale, and the command that makes it."""


def read_table(name: str, fields: tuple[str, ...] | None = None) -> dict[str, Any]:
    """A committed table (`benchlib.tables.read`), or only its ``fields``, for a block; a missing or
    unreadable one is a `table_error`."""
    try:
        return tables.read(name, fields=fields)
    except tables.TableMissing as exc:
        table_error(exc)


def table_error(error: tables.TableMissing) -> NoReturn:
    """Raise ``error``; in a build, as one message that stops it instead of a traceback per block.

    The site never computes a table: a missing or stale one is made by the command ``error`` names.
    """
    if building_site():
        raise MissingTableStopsTheBuild(f"error: {error}, then build again.") from None
    raise error


def requested_suite() -> str | None:
    """The suite ``BENCHLIB_MEASURE`` asks for, or None; anything else is a usage error."""
    value = os.environ.get(MEASURE_ENV, "").strip().lower()
    if value in _OFF:
        return None
    if value not in SIZES:
        raise ValueError(f"{MEASURE_ENV}={value!r}: expected one of {', '.join(SIZES)} (or unset to skip measuring)")
    return value
