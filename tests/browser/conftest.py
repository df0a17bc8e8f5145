"""The built site in Debian's Chromium: build once per session, serve on 127.0.0.1, drive with Playwright.

The site is built twice, by MkDocs (the main build) and by Zensical from the same mkdocs.yml, and
every test that takes ``site_url`` runs against each build.

Fixtures: ``site_url`` (the server's origin, also the build's ``site_url`` so Material's instant
navigation is active; one per ``builder``, the fixture parametrized over ``BUILDERS``), ``built_site`` (the origin of one builder's
build, for a test that compares them) and ``page`` (a fresh Playwright page whose requests to any
other host are aborted and recorded; ``page_log`` holds those and the console errors).

The site is built from the synthetic results in tests/site_samples.py plus a quick measurement of
this machine (``BENCHLIB_MEASURE=quick``, cached under .cache/benchlib/), so every chart kind, the
build-machine highlight and the escaping of hostile names are on the pages.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import sys
import threading
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import urlparse

import pytest
from site_samples import write_samples

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-quic",
]
LOCAL_HOSTS = {"127.0.0.1"}


class _QuietHandler(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass


def chromium_path() -> str:
    path = shutil.which("chromium")
    if path is None:
        pytest.fail("Chromium is not installed; the browser tests need it: apt-get install -y chromium", pytrace=False)
    return path


BUILDERS = ("mkdocs", "zensical")


def build_site(builder: str, site_dir: Path, origin: str, results_dir: Path, measure: str = "quick") -> None:
    """Build the site with ``builder`` into ``site_dir``; a failed build fails the test with its output."""
    env = {
        **os.environ,
        "SITE_URL": origin,
        "BENCHLIB_RESULTS_DIR": str(results_dir),
        "BENCHLIB_MEASURE": measure,
        "NO_MKDOCS_2_WARNING": "1",
        "SITE_DIR": str(site_dir),
    }
    if builder == "mkdocs":
        command = [sys.executable, "-m", "mkdocs", "build", "--strict", "-d", str(site_dir)]
    else:  # zensical build has no -d; it reads site_dir from mkdocs.yml, which takes $SITE_DIR
        command = [sys.executable, "-m", "zensical", "build", "--strict"]
    run = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=900)
    if run.returncode != 0:
        pytest.fail(f"{builder} build --strict failed:\n{(run.stdout + run.stderr)[-6000:]}", pytrace=False)


def site_folder(builder: str, tmp_path_factory) -> Path:
    """Where ``builder`` may write a site: Zensical only inside the project (it refuses other folders)."""
    if builder == "mkdocs":
        return tmp_path_factory.mktemp("site")
    return ROOT / ".cache" / "browser-test-sites" / f"zensical-{uuid.uuid4().hex[:12]}"


@pytest.fixture(scope="session")
def serve_build(tmp_path_factory) -> Iterator[Callable[..., str]]:
    """Build a site with a builder and serve it on 127.0.0.1; returns its origin. Stopped at session end."""
    servers: list[ThreadingHTTPServer] = []
    zensical_folders: list[Path] = []

    def serve(builder: str, results_dir: Path, measure: str = "quick") -> str:
        site_dir = site_folder(builder, tmp_path_factory)
        site_dir.mkdir(parents=True, exist_ok=True)
        if builder == "zensical":
            zensical_folders.append(site_dir)
        # Bind first: the build needs the server's origin (with its port) as site_url.
        server = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_QuietHandler, directory=str(site_dir)))
        servers.append(server)
        origin = f"http://127.0.0.1:{server.server_port}/"
        build_site(builder, site_dir, origin, results_dir, measure)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        return origin

    yield serve
    for server in servers:
        server.shutdown()
        server.server_close()
    for folder in zensical_folders:
        shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture(scope="session")
def sample_results(tmp_path_factory) -> Path:
    return write_samples(tmp_path_factory.mktemp("results"))


@pytest.fixture(scope="session")
def built_site(serve_build, sample_results) -> Callable[[str], str]:
    """The origin of the site ``builder`` built from the samples, built on first use."""
    origins: dict[str, str] = {}

    def origin(builder: str) -> str:
        if builder not in origins:
            origins[builder] = serve_build(builder, sample_results)
        return origins[builder]

    return origin


@pytest.fixture(scope="session", params=BUILDERS)
def builder(request) -> str:
    """Which builder made the site under test: each test that uses it runs once per builder."""
    return request.param


@pytest.fixture(scope="session")
def site_url(builder, built_site) -> str:
    return built_site(builder)


@pytest.fixture(scope="session")
def browser() -> Iterator[object]:
    from playwright.sync_api import expect, sync_playwright

    # Playwright's 5 s for an assertion to come true is too short on a shared 2-core machine under a
    # parallel build; a true assertion passes as soon as it holds, so only failures wait longer.
    expect.set_options(timeout=20_000)
    executable = chromium_path()
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=executable, args=CHROMIUM_ARGS)
        yield b
        b.close()


@dataclass
class PageLog:
    """What a page did that a test must see: errors in the console and requests that left the machine."""

    console_errors: list[str] = field(default_factory=list)
    blocked_requests: list[str] = field(default_factory=list)


@pytest.fixture
def page_log() -> PageLog:
    return PageLog()


@pytest.fixture
def page(browser, page_log) -> Iterator[object]:
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    pg = context.new_page()

    def guard(route) -> None:
        url = route.request.url
        if urlparse(url).hostname in LOCAL_HOSTS:
            route.continue_()
        else:
            page_log.blocked_requests.append(url)
            route.abort()

    pg.route("**/*", guard)
    pg.on("console", lambda msg: page_log.console_errors.append(msg.text) if msg.type == "error" else None)
    pg.on("pageerror", lambda exc: page_log.console_errors.append(f"uncaught: {exc}"))
    yield pg
    context.close()
