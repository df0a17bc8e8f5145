"""The built site in Debian's Chromium: build once per session, serve on 127.0.0.1, drive with Playwright.

Fixtures: ``site_url`` (the server's origin, also the build's ``site_url`` so Material's instant
navigation is active) and ``page`` (a fresh Playwright page whose requests to any other host are
aborted and recorded; ``page_log`` holds those and the console errors).

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
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import urlparse

import pytest
from site_samples import write_samples

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM_ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--disable-quic",
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


def build_site(site_dir: Path, origin: str, results_dir: Path) -> None:
    env = {**os.environ, "SITE_URL": origin, "BENCHLIB_RESULTS_DIR": str(results_dir),
           "BENCHLIB_MEASURE": "quick", "NO_MKDOCS_2_WARNING": "1"}
    run = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-d", str(site_dir)],
                         cwd=ROOT, env=env, capture_output=True, text=True, timeout=900)
    if run.returncode != 0:
        pytest.fail(f"mkdocs build --strict failed:\n{(run.stdout + run.stderr)[-6000:]}", pytrace=False)


@pytest.fixture(scope="session")
def site_url(tmp_path_factory) -> Iterator[str]:
    # Bind first: the build needs the server's origin (with its port) as site_url.
    site_dir = tmp_path_factory.mktemp("site")
    server = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_QuietHandler, directory=str(site_dir)))
    origin = f"http://127.0.0.1:{server.server_port}/"
    build_site(site_dir, origin, write_samples(tmp_path_factory.mktemp("results")))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield origin
    server.shutdown()
    server.server_close()


@pytest.fixture(scope="session")
def browser() -> Iterator[object]:
    from playwright.sync_api import sync_playwright

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
