"""Fixtures for every test: a machine record, the tiny workloads, this session's cache, artefacts, and the built site.

Expensive things are artefacts (tests/artefacts.py): made once per key of their inputs under a
lock, then read by every worker and every later run. The site is one per builder (MkDocs, and
Zensical from the same mkdocs.yml), built on first use and served on 127.0.0.1:
``site_build(builder)`` gives its folder and origin. The browser tests and the test that a new
workload reaches the Results page share these two builds.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from http.server import ThreadingHTTPServer
from pathlib import Path

import pytest

# triton (which torch._dynamo, torchvision and fastai import) aborts the whole process with an LLVM
# option clash when TensorFlow was imported first. Tests import both frameworks in this one
# process in any order, so triton goes first; benchlib's own TF backend does the same.
if importlib.util.find_spec("triton") is not None:
    import triton  # noqa: F401

from artefacts import artefact_root, code_digest, keep_run, kept_run, made
from fakes import QUICK_STAND_IN
from site_builds import (
    BUILT_SITE_ENV,
    SITE_SOURCES,
    BuiltSite,
    SiteInputs,
    git_status,
    make_build,
    measure_this_machine,
    origin_of,
    prepare_inputs,
    read_inputs,
    serve,
    serve_build,
)

from benchlib.core.cache import CACHE_ENV
from benchlib.results.schema import CPUInfo, HostInfo, Machine, Software

_SESSION_CACHE = pytest.StashKey[tuple[str, "str | None"]]()


# The trace caches (benchlib.core.cache folders): one per key of benchlib's code, kept between runs.
SHARED_CACHES = ("fit", "fit-llm")


def pytest_configure(config: pytest.Config) -> None:
    """Point benchlib's cache at a folder of this session's own, for this process and every child.

    A test must not pass or fail by what an earlier session (or the user's own runs) left in
    ~/.cache/benchlib, and must not write there. Each pytest-xdist worker takes a folder of its
    own inside the controller's: tests that clear or replace cache entries (a notebook's stale
    runs) must not do so under a test running at the same time in another worker. The trace
    caches are the exception: every worker and every later run with the same benchlib reads and
    adds to one (an artefact, tests/artefacts.py), written entry by entry atomically; a test that
    damages a trace does so in a cache folder of its own.
    """
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    if worker:
        folder = Path(os.environ[CACHE_ENV]) / worker
        folder.mkdir(exist_ok=True)
        os.environ[CACHE_ENV] = str(folder)  # the controller's unconfigure removes it with its own
    else:
        folder = Path(tempfile.mkdtemp(prefix="benchlib-test-cache-"))
        config.stash[_SESSION_CACHE] = (str(folder), os.environ.get(CACHE_ENV))
        os.environ[CACHE_ENV] = str(folder)
    traces = artefact_root(config) / f"traces-{code_digest()}"
    for name in SHARED_CACHES:
        (traces / name).mkdir(parents=True, exist_ok=True)
        (folder / name).symlink_to(traces / name, target_is_directory=True)
    # No test downloads a model: a name the Hugging Face hub is asked about (an unknown --model)
    # fails at once, as it does on a machine that can reach the hub, instead of after the
    # network's timeouts (and retries whose log lines land in whatever stream a CliRunner
    # captured first) on one that can't.
    os.environ.setdefault("HF_HUB_OFFLINE", "1")


def pytest_unconfigure(config: pytest.Config) -> None:
    """Remove the session's cache folder (the trace caches in it are links, and stay) and restore the setting."""
    if _SESSION_CACHE not in config.stash:
        return
    folder, before = config.stash[_SESSION_CACHE]
    shutil.rmtree(folder, ignore_errors=True)
    if before is None:
        os.environ.pop(CACHE_ENV, None)
    else:
        os.environ[CACHE_ENV] = before


SLOW_S = 5.0  # a test that takes longer on a 2-core machine carries the slow mark
_unmarked_durations: dict[str, float] = {}


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    """Add up the setup, call and teardown of each test the fast run keeps (neither slow nor browser)."""
    if "slow" not in report.keywords and "browser" not in report.keywords:
        _unmarked_durations[report.nodeid] = _unmarked_durations.get(report.nodeid, 0.0) + report.duration


def pytest_terminal_summary(terminalreporter, config: pytest.Config) -> None:
    """Name the fast run's tests that took longer than SLOW_S, so the fast run stays fast.

    Only a note: a busy machine makes any test slow now and then.
    """
    over = {k: v for k, v in _unmarked_durations.items() if v > SLOW_S}
    if over:
        terminalreporter.section(f"tests over {SLOW_S:.0f} s without the slow mark")
        for nodeid, seconds in sorted(over.items(), key=lambda kv: -kv[1]):
            terminalreporter.write_line(f"{seconds:6.1f} s  {nodeid}")


@pytest.fixture
def machine() -> Machine:
    """A small machine record, so runner tests don't depend on probing this host."""
    return Machine(
        id="local-test-cpu-0000",
        label="local · Test CPU (CPU only)",
        host=HostInfo(cpu=CPUInfo(model="Test CPU", logical_cores=2)),
        software=Software(python="3.11", benchlib="0.1.0"),
    )


TINY_MODULE = "benchlib_test_workloads"


@pytest.fixture
def tiny(monkeypatch):
    """The tiny test workloads (tests/benchlib_test_workloads.py), registered in a copy of the registry
    that is dropped after the test; runs and isolated children find them through the environment."""
    import importlib
    import sys

    from benchlib import workloads

    monkeypatch.setattr(workloads, "_REGISTRY", dict(workloads.all_workloads()))
    monkeypatch.setenv("BENCHLIB_WORKLOAD_MODULES", TINY_MODULE)
    module = sys.modules.get(TINY_MODULE)
    return importlib.reload(module) if module else importlib.import_module(TINY_MODULE)


@pytest.fixture(scope="session")
def measurement_cache(pytestconfig, tmp_path_factory) -> Path:
    """A cache folder holding the builds' quick measurement of this machine (an artefact), copied
    so that what a build adds to its cache stays out of the artefact."""
    notebook = Path(__file__).resolve().parents[1] / "docs" / "notebooks" / "run-benchlib.ipynb"
    measured = made(pytestconfig, "build-measurement", [notebook], measure_this_machine)
    copy = tmp_path_factory.mktemp("measurement") / "cache"
    shutil.copytree(measured / "cache", copy)
    return copy


@pytest.fixture(scope="session")
def site_inputs(pytestconfig, measurement_cache) -> SiteInputs:
    """The results and environment of the shared builds (tests/site_builds.py), an artefact."""
    before = git_status()
    folder = made(pytestconfig, "site-inputs", SITE_SOURCES, prepare_inputs)
    return read_inputs(folder, measurement_cache, before)


@pytest.fixture(scope="session")
def site_build(request, pytestconfig) -> Iterator[Callable[[str], BuiltSite]]:
    """``site_build(builder)``: the site that builder made from ``site_inputs``, built on first use
    by whichever worker asks first (an artefact), served here on the address it was built for. A
    site already built ($BENCHLIB_BUILT_SITE, MkDocs') needs no inputs: nothing is measured for it."""
    built: dict[str, BuiltSite] = {}
    failed: dict[str, str] = {}  # a build that failed fails every test that needs it, without building again
    servers: dict[str, list[ThreadingHTTPServer]] = {}

    def site(builder: str) -> BuiltSite:
        if builder in failed:
            pytest.fail(failed[builder], pytrace=False)
        if builder in built:
            return built[builder]
        prebuilt = os.environ.get(BUILT_SITE_ENV) if builder == "mkdocs" else None
        if prebuilt:
            server = serve(Path(prebuilt))
            servers[builder] = [server]
            built[builder] = BuiltSite(builder, Path(prebuilt), origin_of(server))
            return built[builder]
        make, servers[builder] = make_build(builder, request.getfixturevalue("site_inputs").env)
        try:
            folder = made(pytestconfig, f"site-{builder}", [*SITE_SOURCES, builder], make)
        except (pytest.fail.Exception, subprocess.TimeoutExpired) as exc:
            failed[builder] = f"the shared {builder} build failed: {exc}"
            raise
        built[builder] = serve_build(builder, folder, servers[builder])
        return built[builder]

    yield site
    for server in (s for group in servers.values() for s in group):
        server.shutdown()
        server.server_close()


@dataclass(frozen=True)
class TinyContribution:
    """The Run it yourself page's try-on-CPU snippet (`benchlib contribute --device cpu --tiny`), run
    for real once: the tiny campaign's files and the contribution, in ``folder`` (where it ran)."""

    run: subprocess.CompletedProcess[str]
    folder: Path

    @property
    def out(self) -> Path:
        return self.folder / "contribution-try"


CONTRIBUTE_ON_CPU = Path(__file__).resolve().parents[1] / "snippets" / "contribute" / "try_on_cpu.sh"


def _contribute_on_cpu(folder: Path) -> None:
    # The campaign's own steps (largest batches, the matmul sweep) are real; its first step, the
    # quick suite, is the tiny stand-in: no test reads what that suite measured.
    env = {
        **os.environ,
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
        "HF_HUB_OFFLINE": "1",
        "COLUMNS": "80",
        **QUICK_STAND_IN,
    }
    command = ["bash", "-e", str(CONTRIBUTE_ON_CPU)]
    run = subprocess.run(command, cwd=folder, env=env, capture_output=True, text=True, timeout=900)
    keep_run(run, folder / "run.json")


@pytest.fixture(scope="session")
def tiny_contribution(pytestconfig) -> TinyContribution:
    """One tiny contribution on this CPU (an artefact), which the campaign and contribute tests read."""
    folder = made(pytestconfig, "tiny-contribution", [CONTRIBUTE_ON_CPU], _contribute_on_cpu)
    return TinyContribution(kept_run(folder / "run.json"), folder)
