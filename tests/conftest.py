"""Fixtures for every test: a machine record, the tiny workloads, this session's cache, and the built site.

The site is built once per builder (MkDocs, and Zensical from the same mkdocs.yml) per session, on
first use, and served on 127.0.0.1: ``site_build(builder)`` gives its folder and origin. The browser
tests and the test that a new workload reaches the Results page share these two builds.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import tempfile
from collections.abc import Callable, Iterator
from http.server import ThreadingHTTPServer
from pathlib import Path

import pytest

# triton (which torch._dynamo, torchvision and fastai import) aborts the whole process with an LLVM
# option clash when TensorFlow was imported first. Tests import both frameworks in this one
# process in any order, so triton goes first; benchlib's own TF backend does the same.
if importlib.util.find_spec("triton") is not None:
    import triton  # noqa: F401

from site_builds import BUILT_SITE_ENV, BuiltSite, SiteInputs, build_and_serve, prepare_inputs, site_folder

from benchlib.core.cache import CACHE_ENV
from benchlib.results.schema import CPUInfo, HostInfo, Machine, Software

_SESSION_CACHE = pytest.StashKey[tuple[str, "str | None"]]()


def pytest_configure(config: pytest.Config) -> None:
    """Point benchlib's cache at a folder of this session's own, for this process and every child.

    A test must not pass or fail by what an earlier session (or the user's own runs) left in
    ~/.cache/benchlib, and must not write there; within the session, traces and the build's
    measurement are reused. Each pytest-xdist worker takes a folder of its own inside the
    controller's: tests that clear or replace cache entries (a notebook's stale runs, a damaged
    trace) must not do so under a test running at the same time in another worker.
    """
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    if worker:
        folder = Path(os.environ[CACHE_ENV]) / worker
        folder.mkdir(exist_ok=True)
        os.environ[CACHE_ENV] = str(folder)  # the controller's unconfigure removes it with its own
        return
    folder = tempfile.mkdtemp(prefix="benchlib-test-cache-")
    config.stash[_SESSION_CACHE] = (folder, os.environ.get(CACHE_ENV))
    os.environ[CACHE_ENV] = folder
    # No test downloads a model: a name the Hugging Face hub is asked about (an unknown --model)
    # fails at once, as it does on a machine that can reach the hub, instead of after the
    # network's timeouts (and retries whose log lines land in whatever stream a CliRunner
    # captured first) on one that can't.
    os.environ.setdefault("HF_HUB_OFFLINE", "1")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Under pytest-xdist (``-n``), a module's tests run in one worker, where they share its
    module-scoped fixtures (though a worker that runs out of queued tests tears them down); and
    every test that needs the built site runs in one worker, so each builder builds once per
    session rather than once per worker (``--dist loadgroup``)."""
    for item in items:
        group = "site" if "site_build" in getattr(item, "fixturenames", ()) else item.nodeid.split("::")[0]
        item.add_marker(pytest.mark.xdist_group(group))


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
def site_inputs(tmp_path_factory) -> SiteInputs:
    """The results and environment of the shared builds (tests/site_builds.py)."""
    return prepare_inputs(tmp_path_factory.mktemp("site-results"), tmp_path_factory.mktemp("workload-modules"))


@pytest.fixture(scope="session")
def site_build(site_inputs, tmp_path_factory) -> Iterator[Callable[[str], BuiltSite]]:
    """``site_build(builder)``: the site that builder made from ``site_inputs``, built on first use, served.

    One build per builder per session: every test that needs a built site takes it from here.
    """
    built: dict[str, BuiltSite] = {}
    failed: dict[str, str] = {}  # a build that failed fails every test that needs it, without building again
    servers: list[ThreadingHTTPServer] = []
    zensical_folders: list[Path] = []

    def site(builder: str) -> BuiltSite:
        if builder in failed:
            pytest.fail(failed[builder], pytrace=False)
        if builder not in built:
            prebuilt = os.environ.get(BUILT_SITE_ENV) if builder == "mkdocs" else None
            folder = Path(prebuilt) if prebuilt else site_folder(builder, tmp_path_factory)
            if builder == "zensical":
                zensical_folders.append(folder)
            try:
                built[builder], server = build_and_serve(builder, folder, site_inputs.env, build=not prebuilt)
            except (pytest.fail.Exception, subprocess.TimeoutExpired) as exc:
                failed[builder] = f"the shared {builder} build failed: {exc}"
                raise
            servers.append(server)
        return built[builder]

    yield site
    for server in servers:
        server.shutdown()
        server.server_close()
    for folder in zensical_folders:
        shutil.rmtree(folder, ignore_errors=True)
