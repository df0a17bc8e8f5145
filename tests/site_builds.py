"""The site, built once per builder from test results (an artefact: tests/artefacts.py): what tests/conftest.py's ``site_build`` uses.

The results are the synthetic samples (tests/site_samples.py: every chart kind, hostile names),
the hostile files (every free-text field a script payload) and a run of the Contributing page's
example workload, whose module reaches `benchlib run` and the build only through
$BENCHLIB_WORKLOAD_MODULES, as a contributor's own module would. The builds also show a quick
measurement of this machine (made once, `measure_this_machine`), so the build-machine highlight is
on the pages.
"""

from __future__ import annotations

import functools
import os
import shutil
import socket
import subprocess
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from artefacts import keep_run, kept_run
from site_samples import hostile_files, write_samples

from benchlib.core.cache import CACHE_ENV
from benchlib.results.store import write_results

ROOT = Path(__file__).resolve().parents[1]
BUILDERS = ("mkdocs", "zensical")
EXAMPLE_WORKLOAD = ROOT / "snippets" / "contributing" / "example_workload.py"


@dataclass(frozen=True)
class SiteInputs:
    """What every shared build reads, and the example workload's run that put its results there."""

    results: Path
    env: dict[str, str]
    example_run: subprocess.CompletedProcess[str]
    git_status_before: str  # when this session first needed the builds, to show they edit no file


@dataclass(frozen=True)
class BuiltSite:
    builder: str
    folder: Path
    origin: str  # the server's address, which the build also took as its site_url


def git_status() -> str:
    return subprocess.run(["git", "status", "--porcelain"], cwd=ROOT, capture_output=True, text=True).stdout


# What the shared builds read besides benchlib itself: a change to any of them builds again.
SITE_SOURCES = (
    ROOT / "docs",
    ROOT / "includes",
    ROOT / "overrides",
    ROOT / "snippets",
    ROOT / "results",
    ROOT / "mkdocs.yml",
    ROOT / "requirements.lock",
    Path(__file__).resolve(),
    Path(__file__).resolve().parent / "site_samples.py",
)


def prepare_inputs(folder: Path) -> None:
    """Write the test results into ``folder/results`` and run the example workload into it (an artefact's make)."""
    results, modules = folder / "results", folder / "modules"
    write_samples(results)
    for rel, data in hostile_files().items():
        write_results(data, results / rel)
    modules.mkdir()
    shutil.copy(EXAMPLE_WORKLOAD, modules / EXAMPLE_WORKLOAD.name)
    benchlib = str(Path(sys.executable).parent / "benchlib")
    command = [benchlib, "run", "--only", "example_add", "--device", "cpu", "--out", str(results)]
    run = subprocess.run(command, cwd=ROOT, env=inputs_env(folder), capture_output=True, text=True, timeout=300)
    keep_run(run, folder / "example_run.json")


def inputs_env(folder: Path) -> dict[str, str]:
    """The environment of the example's run and the builds: its module importable, the results folder set."""
    modules = folder / "modules"
    return {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(p for p in (str(modules), os.environ.get("PYTHONPATH", "")) if p),
        "BENCHLIB_WORKLOAD_MODULES": EXAMPLE_WORKLOAD.stem,
        "BENCHLIB_RESULTS_DIR": str(folder / "results"),
        "NO_MKDOCS_2_WARNING": "1",
    }


def read_inputs(folder: Path, measurement_cache: Path, git_status_before: str) -> SiteInputs:
    """The inputs ``prepare_inputs`` made in ``folder``; the builds measure nothing, reading ``measurement_cache``."""
    env = inputs_env(folder) | {"BENCHLIB_MEASURE": "quick", CACHE_ENV: str(measurement_cache)}
    return SiteInputs(folder / "results", env, kept_run(folder / "example_run.json"), git_status_before)


def measure_this_machine(folder: Path) -> None:
    """The builds' ``BENCHLIB_MEASURE=quick`` measurement, made once into a cache folder (an artefact's make).

    It is what a build does on a cache miss: run the measuring notebook, whose results file lands in
    the cache; every build then finds it there instead of measuring again.
    """
    code = "from benchlib.site.notebook import this_machine; print(this_machine('quick'))"
    env = {**os.environ, CACHE_ENV: str(folder / "cache")}
    run = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, timeout=900)
    if run.returncode != 0:
        raise RuntimeError(f"measuring this machine for the site builds failed:\n{(run.stdout + run.stderr)[-4000:]}")


def build_site(builder: str, site_dir: Path, env: dict[str, str]) -> None:
    """Build the site with ``builder`` into ``site_dir``; a failed build fails the test with its output."""
    env = env | {"SITE_DIR": str(site_dir)}
    if builder == "mkdocs":
        command = [sys.executable, "-m", "mkdocs", "build", "--strict", "-d", str(site_dir)]
    else:  # zensical build has no -d; it reads site_dir from mkdocs.yml, which takes $SITE_DIR
        command = [sys.executable, "-m", "zensical", "build", "--strict"]
    run = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=900)
    if run.returncode != 0:
        pytest.fail(f"{builder} build --strict failed:\n{(run.stdout + run.stderr)[-6000:]}", pytrace=False)


class _QuietHandler(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass


class _QuietServer(ThreadingHTTPServer):
    # Every worker that serves one build binds the port its pages name as site_url: the kernel
    # spreads connections over them, and each serves the same files.
    def server_bind(self) -> None:
        self.socket.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
        super().server_bind()

    def handle_error(self, request: object, client_address: object) -> None:
        """A browser that navigates away mid-response closes the connection: not an error of the site."""
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


# A site already built (the deploy workflow's): the built-site tests read it instead of building one.
BUILT_SITE_ENV = "BENCHLIB_BUILT_SITE"
ORIGIN = "origin.txt"  # in a build's artefact: the address it was built for, and is served on


def serve(folder: Path, port: int = 0) -> ThreadingHTTPServer:
    """Serve ``folder`` on 127.0.0.1 (``port``, else a free one) from a thread; the caller shuts it down."""
    server = _QuietServer(("127.0.0.1", port), functools.partial(_QuietHandler, directory=str(folder)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def origin_of(server: ThreadingHTTPServer) -> str:
    return f"http://127.0.0.1:{server.server_port}/"


def make_build(builder: str, env: dict[str, str]) -> tuple[Callable[[Path], None], list[ThreadingHTTPServer]]:
    """An artefact's make that builds the site with ``builder`` into ``<artefact>/site`` and serves it.

    The server is bound first, as the build takes its origin (with its port) as site_url, so
    Material's instant navigation is active; the origin is kept beside the site for later readers.
    """
    servers: list[ThreadingHTTPServer] = []

    def make(folder: Path) -> None:
        site = folder / "site"
        site.mkdir()
        server = serve(site)
        servers.append(server)
        build_site(builder, site, env | {"SITE_URL": origin_of(server)})
        (folder / ORIGIN).write_text(origin_of(server))

    return make, servers


def serve_build(builder: str, folder: Path, servers: list[ThreadingHTTPServer]) -> BuiltSite:
    """The build in artefact ``folder``, served on the address it was built for, by this process too."""
    origin = (folder / ORIGIN).read_text()
    if not servers:  # built by another worker, or by an earlier run
        port = int(origin.rstrip("/").rsplit(":", 1)[1])
        try:
            servers.append(serve(folder / "site", port))
        except OSError as exc:
            pytest.fail(
                f"the {builder} build in {folder} is for {origin}, which another program holds ({exc.strerror}): "
                f"remove that folder to build again",
                pytrace=False,
            )
    return BuiltSite(builder, folder / "site", origin)
