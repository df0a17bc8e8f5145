"""A measurement of the machine building the site: made once per machine and benchlib version, then reused.

``BENCHLIB_MEASURE=quick mkdocs build`` asks for one (`benchlib.site.sources.requested_suite`).
`build_measurement` keeps it in the cache folder (`benchlib.core.cache`) under
``<cache_key>/<machine id>/``, so rebuilds don't measure again, and remembers which machine id
each hardware fingerprint was probed as, so a rebuild finds its file without importing torch.

How the machine is measured is the caller's choice: by default this process probes it and runs
the suite (`benchlib.measure.runner`); the site passes its notebook instead, which runs the same
suite and writes the same file (`benchlib.site.notebook.measure_with_notebook`), so every
measuring build also runs the notebook's cells.
"""

from __future__ import annotations

import functools
import hashlib
import json
import logging
from collections.abc import Callable
from pathlib import Path

from benchlib.core.files import write_json_atomically
from benchlib.core.version import METHODOLOGY_VERSION, __version__
from benchlib.results.store import ResultsError, read_results

log = logging.getLogger("mkdocs.plugins.benchlib")

# Which machine id each hardware key was probed as, per cache folder.
KNOWN_MACHINES = "machines.json"
# Measures this machine with a suite into a folder (its file goes to <folder>/<machine id>/) and returns the file.
Measure = Callable[[str, Path], Path]


def cache_key(suite: str) -> str:
    return f"benchlib-{__version__}-methodology-{METHODOLOGY_VERSION}-{suite}"


def _cached_run(folder: Path) -> Path | None:
    for path in sorted(folder.glob("*.json"), reverse=True):
        try:
            if read_results(path).complete:
                return path
        except ResultsError:
            continue  # a cache entry is disposable; measure again instead of failing the build
    return None


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


def measure_here(suite: str, out: Path) -> Path:
    """Probe this machine and run ``suite`` in this process, into ``out/<machine id>/``: the default `Measure`.

    A complete run of the same machine already there is reused.
    """
    from benchlib.measure.runner import run_suite, select_workloads
    from benchlib.probe import probe_machine

    machine = probe_machine(results_dir=str(out.parent))
    cached = _cached_run(out / machine.id)
    if cached:
        log.info("benchlib: using the cached %s measurement of this machine: %s", suite, cached)
        return cached
    log.info("benchlib: measuring this build machine (%s suite, %s)...", suite, machine.label)
    outcome = run_suite(select_workloads(suite), suite=suite, device="auto", machine=machine, out_dir=out)
    log.info("benchlib: measured in %.1f s, saved %s", outcome.wall_s, outcome.path)
    return outcome.path


@functools.cache
def build_measurement(suite: str, cache_root: Path, measure: Measure = measure_here) -> Path:
    """This machine's results file for ``suite``: from the cache, or measured now by ``measure`` (once per process)."""
    out = cache_root / cache_key(suite)
    key = hardware_key()
    known = _known_machines(out).get(key)
    cached = _cached_run(out / known) if known else None
    if cached:
        log.info("benchlib: using the cached %s measurement of this machine: %s", suite, cached)
        return cached
    path = measure(suite, out)
    _remember_machine(out, key, path.parent.name)
    return path
