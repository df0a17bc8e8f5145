"""The built site in Debian's Chromium, driven with Playwright.

The site is tests/conftest.py's shared build: one per builder (an artefact), by MkDocs (the main
build) and by Zensical from the same mkdocs.yml, served on 127.0.0.1. Every test that takes
``site_url`` runs against each build.

Fixtures: ``site_url`` (the server's origin, also the build's ``site_url`` so Material's instant
navigation is active; one per ``builder``, the fixture parametrized over ``BUILDERS``), ``built_site``
(the origin of one builder's build, for a test that compares them) and ``page`` (a fresh Playwright
page whose requests to any other host are aborted and recorded; ``page_log`` holds those and the
console errors); ``crawl`` (one visit of every page of a build, for the checks that only read what
the pages rendered).

The site's results are the synthetic ones in tests/site_samples.py (every chart kind, hostile
names, files whose every field is a script payload) plus a quick measurement of this machine
(``BENCHLIB_MEASURE=quick``), so the build-machine highlight is on the pages too.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable, Iterator
from dataclasses import asdict
from pathlib import Path
from urllib.parse import urlparse

import pytest
from artefacts import made
from page_crawl import Crawl, PageLog, crawl_site
from site_builds import BUILDERS

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


def chromium_path() -> str:
    path = shutil.which("chromium")
    if path is None:
        pytest.fail("Chromium is not installed; the browser tests need it: apt-get install -y chromium", pytrace=False)
    return path


@pytest.fixture(scope="session")
def built_site(site_build) -> Callable[[str], str]:
    """The origin of the site ``builder`` built (tests/conftest.py's shared build), built on first use."""
    return lambda builder: site_build(builder).origin


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


@pytest.fixture
def page_log() -> PageLog:
    return PageLog()


def guard_page(pg, log: PageLog) -> None:
    """Abort and record ``pg``'s requests to any other host, and record its console errors in ``log``."""

    def guard(route) -> None:
        url = route.request.url
        if urlparse(url).hostname in LOCAL_HOSTS:
            route.continue_()
        else:
            log.blocked_requests.append(url)
            route.abort()

    pg.route("**/*", guard)
    pg.on("console", lambda msg: log.console_errors.append(msg.text) if msg.type == "error" else None)
    pg.on("pageerror", lambda exc: log.console_errors.append(f"uncaught: {exc}"))


@pytest.fixture
def page(browser, page_log) -> Iterator[object]:
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    pg = context.new_page()
    guard_page(pg, page_log)
    yield pg
    context.close()


@pytest.fixture(scope="session")
def crawl(browser, site_build, pytestconfig) -> Callable[[str], Crawl]:
    """``crawl(builder)``: one visit of every page of that build (an artefact of the build's, so one
    per build whichever worker asks), shared by the checks that only read what the pages rendered:
    charts drawn, tooltips, console errors, requests, dialogs, payloads, what a reader sees."""
    crawls: dict[str, Crawl] = {}

    def visit(builder: str) -> Crawl:
        if builder not in crawls:
            site = site_build(builder)
            chromium = Path(chromium_path()).resolve()
            inputs = [str(site.folder), f"{chromium} {chromium.stat().st_size} {chromium.stat().st_mtime_ns}"]

            def make(folder: Path) -> None:
                (folder / "crawl.json").write_text(
                    json.dumps(asdict(crawl_site(browser, site.origin, guard_page)), default=sorted)
                )

            folder = made(pytestconfig, f"crawl-{builder}", inputs, make)
            crawls[builder] = Crawl.from_json(json.loads((folder / "crawl.json").read_text()))
        return crawls[builder]

    return visit
