"""The built site in Debian's Chromium, driven with Playwright.

The site is tests/conftest.py's shared build: once per builder per session, by MkDocs (the main
build) and by Zensical from the same mkdocs.yml, served on 127.0.0.1. Every test that takes
``site_url`` runs against each build.

Fixtures: ``site_url`` (the server's origin, also the build's ``site_url`` so Material's instant
navigation is active; one per ``builder``, the fixture parametrized over ``BUILDERS``), ``built_site``
(the origin of one builder's build, for a test that compares them) and ``page`` (a fresh Playwright
page whose requests to any other host are aborted and recorded; ``page_log`` holds those and the
console errors).

The site's results are the synthetic ones in tests/site_samples.py (every chart kind, hostile
names, files whose every field is a script payload) plus a quick measurement of this machine
(``BENCHLIB_MEASURE=quick``), so the build-machine highlight is on the pages too.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from urllib.parse import urlparse

import pytest
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
