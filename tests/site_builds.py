"""The site, built once per builder per session from test results: what tests/conftest.py's ``site_build`` uses.

The results are the synthetic samples (tests/site_samples.py: every chart kind, hostile names),
the hostile files (every free-text field a script payload) and a run of the Contributing page's
example workload, whose module reaches `benchlib run` and the build only through
$BENCHLIB_WORKLOAD_MODULES, as a contributor's own module would. The builds also measure this
machine with the quick suite, so the build-machine highlight is on the pages.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import sys
import threading
import uuid
from dataclasses import dataclass
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from site_samples import hostile_files, write_samples

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
    git_status_before: str  # before the example's run and the builds, to show they edit no file


@dataclass(frozen=True)
class BuiltSite:
    builder: str
    folder: Path
    origin: str  # the server's address, which the build also took as its site_url


def git_status() -> str:
    return subprocess.run(["git", "status", "--porcelain"], cwd=ROOT, capture_output=True, text=True).stdout


def prepare_inputs(results: Path, modules: Path) -> SiteInputs:
    """Write the test results into ``results`` and run the example workload into it."""
    write_samples(results)
    for rel, data in hostile_files().items():
        write_results(data, results / rel)
    shutil.copy(EXAMPLE_WORKLOAD, modules / EXAMPLE_WORKLOAD.name)
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(p for p in (str(modules), os.environ.get("PYTHONPATH", "")) if p),
        "BENCHLIB_WORKLOAD_MODULES": EXAMPLE_WORKLOAD.stem,
        "BENCHLIB_RESULTS_DIR": str(results),
        "NO_MKDOCS_2_WARNING": "1",
    }
    before = git_status()
    benchlib = str(Path(sys.executable).parent / "benchlib")
    command = [benchlib, "run", "--only", "example_add", "--device", "cpu", "--out", str(results)]
    run = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    return SiteInputs(results, env | {"BENCHLIB_MEASURE": "quick"}, run, before)


def site_folder(builder: str, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Where ``builder`` may write a site: Zensical only inside the project (it refuses other folders)."""
    if builder == "mkdocs":
        return tmp_path_factory.mktemp("site")
    folder = ROOT / ".cache" / "test-sites" / f"zensical-{uuid.uuid4().hex[:12]}"
    folder.mkdir(parents=True)
    return folder


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
    def handle_error(self, request: object, client_address: object) -> None:
        """A browser that navigates away mid-response closes the connection: not an error of the site."""
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


# A site already built (the deploy workflow's): the built-site tests read it instead of building one.
BUILT_SITE_ENV = "BENCHLIB_BUILT_SITE"


def build_and_serve(
    builder: str, folder: Path, env: dict[str, str], *, build: bool = True
) -> tuple[BuiltSite, ThreadingHTTPServer]:
    """Build into ``folder`` (unless ``build`` is False: it is built) and serve it on 127.0.0.1;
    the caller shuts the server down."""
    # Bind first: the build takes the server's origin (with its port) as site_url, so Material's
    # instant navigation is active.
    server = _QuietServer(("127.0.0.1", 0), functools.partial(_QuietHandler, directory=str(folder)))
    origin = f"http://127.0.0.1:{server.server_port}/"
    try:
        if build:
            build_site(builder, folder, env | {"SITE_URL": origin})
    except BaseException:
        server.server_close()
        raise
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return BuiltSite(builder, folder, origin), server
