"""The built pages say nothing meant for the guide's maintainers, and nothing of the machine that built them.

Every HTML page of the session's shared MkDocs build (tests/site_builds.py, which also measures this
machine through the notebook, so the notebook page shows a real run's outputs) is read as a reader
sees it: its text, without scripts, styles or attributes.
"""

from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

# What a reader must never see. Working notes: how the guide's sources were found ("seed" articles,
# the results files' field names, the research behind the data files) and the build's own name for
# the machine it measures. Local paths: a warning or probe output that names the build machine's
# folders or virtualenv.
INTERNAL_STRINGS = (
    "seed article",
    "Seed 0",
    "source_url",
    "research notes",
    "Flagged in the research",
    "this build machine",
    "TqdmWarning",
    "/work/",
    "/home/",
    "/root/",
    ".venv",
    "site-packages",
)
# Folders the guide documents for readers (a platform's home folder and what is under it), not the
# build machine's: removed from the text before it is searched.
PLATFORM_PATHS = re.compile(r"/home/(aistudio|studio-lab-user)\S*")

_HIDDEN = {"script", "style", "template", "noscript"}


class _VisibleText(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.hidden = 0
        self.parts: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in _HIDDEN:
            self.hidden += 1

    def handle_endtag(self, tag: str) -> None:
        if tag in _HIDDEN and self.hidden:
            self.hidden -= 1

    def handle_data(self, data: str) -> None:
        if not self.hidden:
            self.parts.append(data)


def visible_text(html: str) -> str:
    parser = _VisibleText()
    parser.feed(html)
    parser.close()
    return PLATFORM_PATHS.sub("", " ".join(parser.parts))


def test_visible_text_skips_scripts_and_platform_paths() -> None:
    html = '<p title="/work/x">Keep it under /home/aistudio/work/out.</p><script>"/work/"</script><p>Seed 003</p>'
    text = visible_text(html)
    assert "Seed 003" in text
    assert not any(s in text for s in ("/work/", "/home/"))


def test_no_page_shows_internal_notes_or_local_paths(site_build) -> None:
    folder: Path = site_build("mkdocs").folder
    pages = sorted(folder.rglob("*.html"))
    assert pages, f"no pages in {folder}"
    found = []
    for page in pages:
        text = visible_text(page.read_text(encoding="utf-8"))
        for string in INTERNAL_STRINGS:
            at = text.find(string)
            if at >= 0:
                around = " ".join(text[max(0, at - 60) : at + len(string) + 60].split())
                found.append(f"{page.relative_to(folder)}: {string!r} in “…{around}…”")
    assert not found, "pages show internal notes or local paths:\n" + "\n".join(found)


def test_every_page_says_the_day_it_was_built(site_build) -> None:
    folder: Path = site_build("mkdocs").folder
    pages = [p for p in sorted(folder.rglob("*.html")) if p.name != "404.html"]
    # The build's date, the same on every page (visible_text puts spaces around the <time> element).
    days = {
        str(p.relative_to(folder)): re.findall(
            r"Page built on\s+(\d{4}-\d{2}-\d{2})\s*\.", visible_text(p.read_text(encoding="utf-8"))
        )
        for p in pages
    }
    missing = [page for page, found in days.items() if not found]
    assert pages and not missing, f"pages without “Page built on DATE.”: {missing}"
    # Once each: the notebook page's block prints Markdown, which gets the page's includes too.
    assert [page for page, found in days.items() if len(found) > 1] == []
    assert len({day for found in days.values() for day in found}) == 1


def test_the_search_index_holds_none_of_this_builds_measurements(site_build, measurement_cache) -> None:
    """Material's search (lunr) builds its index in the reader's browser, and some runs of digits
    break it: every query then finds nothing (a CI build did). What this build measured changes from
    machine to machine, so it stays out of the index, and the search that works here works on every
    machine that builds the site."""
    index = (site_build("mkdocs").folder / "search" / "search_index.json").read_text(encoding="utf-8")
    runs = [p.stem for p in measurement_cache.rglob("*.json") if p.name != "machines.json"]
    assert runs, f"no results file in {measurement_cache}"
    assert [run for run in runs if run in index] == []  # the notebook's outputs and the score's runs
    assert "Noise (IQR / median)" not in index  # the head of every chart's data table
    assert "Colab Pro" in index  # the index still holds the pages' prose
