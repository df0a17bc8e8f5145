"""Reading a built site page by page in Chromium: what the browser tests' shared crawl records."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from urllib.parse import urldefrag, urljoin, urlparse
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
    tooltips: int = 0  # chart marks hovered, each bringing up its tooltip
    ran: dict[str, str] = field(default_factory=dict)  # path -> what a payload set window.__pwned to
    injected: dict[str, list[str]] = field(default_factory=dict)  # path -> handlers or javascript: URLs found
    dialogs: list[str] = field(default_factory=list)  # every alert() that opened

    @classmethod
    def from_json(cls, data: dict) -> Crawl:
        """The crawl that ``dataclasses.asdict`` wrote as JSON (its set of links as a list)."""
        return cls(**(data | {"links": set(data["links"]), "log": PageLog(**data["log"])}))


# Where each chart mark a pointer can land on is, in page coordinates: one drawn less than a pixel
# wide beside a far longer one can't be pointed at, by a reader or by Playwright.
MARK_CENTRES = """svg => [...svg.querySelectorAll("[role='graphics-symbol']")]
  .map(m => m.getBoundingClientRect())
  .filter(b => b.width >= 1 && b.height >= 1)
  .map(b => [b.left + b.width / 2 + scrollX, b.top + b.height / 2 + scrollY])"""
SCROLL_TO = "([x, y]) => { scrollTo(x - innerWidth / 2, y - innerHeight / 2); return [scrollX, scrollY]; }"


def hover_every_mark(page) -> int:
    """Bring up each mark's tooltip, where vega-embed renders data values as HTML if unescaped;
    returns how many marks were hovered.

    The pointer moves to each mark's centre, as Playwright's hover() would, but from positions read
    in one call per chart and without its per-element checks: 17 ms a mark instead of 58 (494 marks
    a build). An unescaped ``<img onerror>`` still fires after its tooltip is replaced, so one wait
    at the end lets any such handler run before the crawl reads ``window.__pwned``.
    """
    size = page.viewport_size
    hovered = 0
    for chart in page.locator(".bench-chart__view svg").all():
        scroll = page.evaluate("[scrollX, scrollY]")
        for x, y in chart.evaluate(MARK_CENTRES):
            if not (scroll[0] <= x < scroll[0] + size["width"] and scroll[1] <= y < scroll[1] + size["height"]):
                scroll = page.evaluate(SCROLL_TO, [x, y])
            page.mouse.move(x - scroll[0], y - scroll[1])
            hovered += 1
    page.wait_for_timeout(100)
    return hovered


# Event handlers and javascript: URLs anywhere in the content, and scripts that mention the payloads' marker.
INJECTED = """() => {
  const content = document.querySelector('.md-content') || document.body;
  const found = [];
  for (const el of content.querySelectorAll('*')) {
    for (const a of el.attributes) {
      const v = a.value.trim().toLowerCase();
      if (a.name.startsWith('on')) found.push(el.tagName + ' ' + a.name);
      if ((a.name === 'href' || a.name === 'src' || a.name === 'xlink:href') && v.startsWith('javascript:')) found.push(el.tagName + ' ' + a.name + '=' + v);
    }
  }
  for (const s of document.querySelectorAll('script')) {
    if ((s.textContent || '').includes('__pwned')) found.push('script element: ' + s.textContent.slice(0, 80));
  }
  return found;
}"""


def crawl_site(browser, origin: str, guard: Callable[[object, PageLog], None]) -> Crawl:
    """Visit every page in the sitemap as a reader would: read it, draw its charts, hover every mark,
    open every chart's data table, and note whatever ran that shouldn't have."""
    found = Crawl(origin)
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    pg = context.new_page()
    guard(pg, found.log)
    pg.on("dialog", lambda d: (found.dialogs.append(d.message), d.dismiss()))
    netloc = urlparse(origin).netloc
    for path in sitemap_paths(pg, origin):
        pg.goto(urljoin(origin, path), wait_until="networkidle")
        found.shown[path] = pg.evaluate(WHAT_A_READER_SEES)
        try:
            found.charts_drawn[path] = wait_for_charts(pg)
        except Exception as exc:  # the checks report it, page by page
            found.charts_drawn[path] = f"{type(exc).__name__}: {exc}"
        found.tooltips += hover_every_mark(pg)
        for details in pg.locator("details.bench-chart__data").all():
            details.locator("summary").click()
        if pg.evaluate("typeof window.__pwned") != "undefined":
            found.ran[path] = str(pg.evaluate("window.__pwned"))
        found.injected[path] = pg.evaluate(INJECTED)
        hrefs = pg.eval_on_selector_all("a[href]", "els => els.map(e => e.href)")
        found.links |= {urldefrag(h).url for h in hrefs if urlparse(h).netloc == netloc}
    context.close()
    return found
