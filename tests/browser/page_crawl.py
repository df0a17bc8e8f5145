"""Reading a built site page by page in Chromium: what the browser tests' shared crawl records."""

from __future__ import annotations

from dataclasses import dataclass, field
from urllib.parse import urljoin
from xml.etree import ElementTree


@dataclass
class PageLog:
    """What a page did that a test must see: errors in the console and requests that left the machine."""

    console_errors: list[str] = field(default_factory=list)
    blocked_requests: list[str] = field(default_factory=list)


# What a reader finds on a page, counted from the article (not theme markup, which the builders may
# write differently).
WHAT_A_READER_SEES = """() => {
  const article = document.querySelector('article');
  return {
    title: article.querySelector('h1').innerText.replace('¶', '').trim(),
    headings: [...article.querySelectorAll('h2, h3')].map(h => h.innerText.replace('¶', '').trim()),
    charts: article.querySelectorAll('figure.bench-chart').length,
    tables: article.querySelectorAll('table').length,
    code_blocks: article.querySelectorAll('pre').length,
    traceback: article.innerText.includes('Traceback (most recent call last)'),
  };
}"""
CHART_TIMEOUT_MS = 15_000


def wait_for_charts(page) -> int:
    """Wait until every chart figure holds its interactive SVG; returns how many there are."""
    figures = page.locator("figure.bench-chart")
    for i in range(figures.count()):
        figure = figures.nth(i)
        figure.locator(".bench-chart__view svg").first.wait_for(state="attached", timeout=CHART_TIMEOUT_MS)
        page.wait_for_function(
            "f => f.classList.contains('bench-chart--live')", arg=figure.element_handle(), timeout=CHART_TIMEOUT_MS
        )
        assert figure.locator(".bench-chart__fallback").is_hidden(), "static and interactive chart both visible"
        box = figure.locator(".bench-chart__view svg").first.bounding_box()
        assert box and box["width"] > 100 and box["height"] > 50, f"chart {i} drew at {box}"
    return figures.count()


def sitemap_paths(page, origin: str) -> list[str]:
    """The pages in the build's sitemap, as paths from the site's root."""
    xml = page.request.get(urljoin(origin, "sitemap.xml")).text()
    locs = [el.text for el in ElementTree.fromstring(xml).iter() if el.tag.endswith("loc")]
    assert locs and all(loc.startswith(origin) for loc in locs), f"{origin}sitemap.xml: {locs}"
    return sorted(loc[len(origin) :] for loc in locs)


@dataclass
class Crawl:
    """Every page of one build, visited once: what each showed, and what the whole visit logged."""

    origin: str
    shown: dict[str, dict] = field(default_factory=dict)  # path -> WHAT_A_READER_SEES
    charts_drawn: dict[str, int | str] = field(default_factory=dict)  # path -> charts drawn, or why not
    links: set[str] = field(default_factory=set)  # every local link on any page
    log: PageLog = field(default_factory=PageLog)

    @classmethod
    def from_json(cls, data: dict) -> Crawl:
        """The crawl that ``dataclasses.asdict`` wrote as JSON (its set of links as a list)."""
        return cls(data["origin"], data["shown"], data["charts_drawn"], set(data["links"]), PageLog(**data["log"]))
