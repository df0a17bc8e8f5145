"""The build machine's own measurement, and one clear stop for an invalid results file.

On request the site shows a fresh measurement of the machine building it:
``BENCHLIB_MEASURE=quick mkdocs build`` runs the quick suite once per machine fingerprint and
benchlib version, and keeps the file in the cache folder (`benchlib.core.cache`) so rebuilds don't measure again.
"""

from __future__ import annotations

import functools
import hashlib
import json
import logging
import os
import sys
import threading
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pandas as pd

import benchlib
from benchlib.core.files import write_json_atomically
from benchlib.results.load import load_results
from benchlib.results.store import ResultsError, read_results
from benchlib.workloads import SIZES

MEASURE_ENV = "BENCHLIB_MEASURE"
_OFF = ("", "0", "off", "no", "false")

log = logging.getLogger("mkdocs.plugins.benchlib")


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


def requested_suite() -> str | None:
    """The suite ``BENCHLIB_MEASURE`` asks for, or None; anything else is a usage error."""
    value = os.environ.get(MEASURE_ENV, "").strip().lower()
    if value in _OFF:
        return None
    if value not in SIZES:
        raise ValueError(f"{MEASURE_ENV}={value!r}: expected one of {', '.join(SIZES)} (or unset to skip measuring)")
    return value


def cache_key(suite: str) -> str:
    return f"benchlib-{benchlib.__version__}-methodology-{benchlib.METHODOLOGY_VERSION}-{suite}"


def _cached_run(folder: Path) -> Path | None:
    for path in sorted(folder.glob("*.json"), reverse=True):
        try:
            if read_results(path).complete:
                return path
        except ResultsError:
            continue  # a cache entry is disposable; measure again instead of failing the build
    return None


# Which machine id each hardware key was probed as, per cache folder.
KNOWN_MACHINES = "machines.json"


def hardware_key() -> str:
    """This machine's hardware as the probe sees it without a framework: platform, CPU, memory, NVML's
    GPUs and the TPU signal. A rebuild uses it to find its cached measurement without importing torch.
    """
    from benchlib.probe.frameworks import tpu_signal
    from benchlib.probe.host import probe_host
    from benchlib.probe.nvidia import probe_nvidia
    from benchlib.probe.platform import detect_platform

    host = probe_host()
    parts = (
        detect_platform().name,
        host.cpu.model,
        host.cpu.logical_cores,
        host.memory_total_bytes,
        sorted(gpu.name for gpu in probe_nvidia()),
        tpu_signal(),
    )
    return hashlib.sha256(json.dumps(parts, default=str).encode()).hexdigest()[:16]


def _known_machines(folder: Path) -> dict[str, str]:
    try:
        known = json.loads((folder / KNOWN_MACHINES).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}  # no record yet, or a damaged one: probe in full
    return known if isinstance(known, dict) else {}


def _remember_machine(folder: Path, key: str, machine_id: str) -> None:
    try:
        write_json_atomically(folder / KNOWN_MACHINES, _known_machines(folder) | {key: machine_id})
    except OSError:
        pass  # only a shortcut for the next build is lost


@functools.cache
def build_measurement(suite: str, cache_root: Path) -> Path:
    """This machine's results file for ``suite``: from the cache, or measured now (once per process)."""
    out = cache_root / cache_key(suite)
    key = hardware_key()
    known = _known_machines(out).get(key)
    cached = _cached_run(out / known) if known else None
    if cached:
        log.info("benchlib: using the cached %s measurement of this machine: %s", suite, cached)
        return cached
    from benchlib.measure.runner import run_suite, select_workloads
    from benchlib.probe import probe_machine

    machine = probe_machine(results_dir=str(cache_root))
    cached = _cached_run(out / machine.id)
    if cached:
        log.info("benchlib: using the cached %s measurement of this machine: %s", suite, cached)
    else:
        log.info("benchlib: measuring this build machine (%s suite, %s)...", suite, machine.label)
        outcome = run_suite(select_workloads(suite), suite=suite, device="auto", machine=machine, out_dir=out)
        log.info("benchlib: measured in %.1f s, saved %s", outcome.wall_s, outcome.path)
        cached = outcome.path
    _remember_machine(out, key, machine.id)
    return cached
