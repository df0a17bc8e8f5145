"""Hostile strings in results files are data, never markup: nothing they carry runs in the browser.

The site is built (by MkDocs and by Zensical, as in conftest) from results files whose every
free-text field carries a payload: ``<script>``, ``<img onerror>``, ``<svg onload>``, a markdown
link and ``javascript:`` URLs, as machine label and id, device name, dtype, params, message,
software versions and a reported source's URL and context. Each payload would set
``window.__pwned`` or open an ``alert``. Every page is visited, every chart drawn and hovered for
its tooltips; no dialog may open, ``window.__pwned`` must stay unset, and the strings must show
up as visible text.
"""

from __future__ import annotations

from datetime import date, datetime, timezone
from urllib.parse import urljoin
from xml.etree import ElementTree

import pytest

from benchlib.results.schema import (
    Accelerators,
    GPUInfo,
    Machine,
    MeasurementRecord,
    Metric,
    PlatformInfo,
    Provenance,
    ResultsFile,
    Software,
    Stats,
)
from benchlib.results.store import read_results, write_results

pytestmark = pytest.mark.browser

CHART_TIMEOUT_MS = 15_000

SCRIPT = "<script>window.__pwned='script';alert('script')</script>"
IMG = "<img src=x onerror=\"window.__pwned='img';alert('img')\">"
SVG = "\"><svg onload=\"window.__pwned='svg';alert('svg')\">"
CLOSE = "</script><script>window.__pwned='close';alert('close')</script><!--"
MARKDOWN = "[click me](javascript:window.__pwned='md';alert('md'))"
JS_URL = "javascript:window.__pwned='url';alert('url')"
PAYLOADS = (SCRIPT, IMG, SVG, CLOSE, MARKDOWN)

TFLOPS = Metric(name="throughput", unit="TFLOPS", higher_is_better=True)
MS = Metric(name="time", unit="ms", higher_is_better=False)
GBPS = Metric(name="bandwidth", unit="GB/s", higher_is_better=True)
CREATED = datetime(2026, 11, 1, tzinfo=timezone.utc)


def stats(median: float) -> Stats:
    return Stats(median=median, iqr=median / 50, mean=median, min=median, max=median, n=7, noisy=False)


def hostile_files() -> dict[str, ResultsFile]:
    """Relative path -> results file: a measured GPU run and three reported sources, all hostile."""
    gpu_name = f"GPU {SCRIPT}"
    machine = Machine(
        id=f"local-{SVG}",
        label=f"Rig {IMG}",
        platform=PlatformInfo(name="local", variant=SCRIPT),
        accelerators=Accelerators(nvidia=[GPUInfo(index=0, name=gpu_name)]),
        software=Software(python=SCRIPT, torch=IMG, benchlib=CLOSE),
    )

    def rec(workload: str, metric: Metric, value: float | None, **kw: object) -> MeasurementRecord:
        kw.setdefault("stats", stats(1e-3) if value is not None else None)
        return MeasurementRecord(
            workload=workload, framework="torch", device="cuda", device_name=gpu_name, metric=metric, value=value, **kw
        )

    measured = ResultsFile(
        run_id=f"run-{MARKDOWN}",
        created=CREATED,
        benchlib_version=IMG,
        methodology_version=SVG,
        suite=SCRIPT,
        complete=True,
        machine=machine,
        measurements=[
            rec("matmul", TFLOPS, 10.0, dtype=f"fp16 {IMG}", params={"n": 1024}),
            rec("matmul", TFLOPS, 12.0, dtype=MARKDOWN, params={"n": 1024}),
            rec("matmul", TFLOPS, 99.0, dtype="fp32", peak=8.0, status="invalid", message=f"too fast {SCRIPT}"),
            rec("conv2d", MS, 3.0, dtype="fp32", params={"batch": SCRIPT, "side": IMG}),
            rec("conv2d", MS, None, status="error", message=f"conv2d raised {IMG} {CLOSE}"),
            rec("bandwidth", GBPS, 200.0, dtype="uint8", params={"direction": SVG, "mib": 64}),
            rec("bandwidth", GBPS, None, status="skipped", message=MARKDOWN),
        ],
    )

    def reported(name: str, url: str) -> ResultsFile:
        return ResultsFile(
            run_id=f"reported-{name}",
            created=CREATED,
            benchlib_version="0.1.0",
            methodology_version="reported",
            complete=True,
            machine=Machine(id=f"reported-{name}", label=f"Old {name} {SCRIPT}"),
            provenance=Provenance(
                kind="reported", source_url=url, as_of=date(2020, 1, 1), context=f"context {IMG} {MARKDOWN}"
            ),
            measurements=[
                MeasurementRecord(
                    workload="matmul",
                    framework="torch",
                    device="cuda",
                    device_name=f"Old {name} {SVG}",
                    dtype="fp16",
                    metric=TFLOPS,
                    value=4.0,
                )
            ],
        )

    return {
        "hostile/measured.json": measured,
        "reported/js-url.json": reported("a", JS_URL),
        "reported/mixed-case-js.json": reported("b", " JaVaScRiPt:window.__pwned='case';alert('case')"),
        "reported/quote-break.json": reported("c", f"https://example.org/\"{SCRIPT}<a href='{JS_URL}'>"),
    }


@pytest.fixture(scope="module")
def hostile_site(builder, serve_build, tmp_path_factory) -> str:
    """The site built from the hostile results only (no build-machine measurement), served on 127.0.0.1."""
    results = tmp_path_factory.mktemp("hostile-results")
    for rel, data in hostile_files().items():
        write_results(data, results / rel)
    return serve_build(builder, results, measure="0")


def test_the_hostile_files_are_valid_results(tmp_path):
    # Otherwise the test would prove only that the build rejects them.
    for rel, data in hostile_files().items():
        assert read_results(write_results(data, tmp_path / rel)).measurements


def pages(page, site_url: str) -> list[str]:
    xml = page.request.get(urljoin(site_url, "sitemap.xml")).text()
    return [el.text for el in ElementTree.fromstring(xml).iter() if el.tag.endswith("loc")]


def draw_charts(page) -> int:
    figures = page.locator("figure.bench-chart")
    for i in range(figures.count()):
        page.wait_for_function(
            "f => f.classList.contains('bench-chart--live')",
            arg=figures.nth(i).element_handle(),
            timeout=CHART_TIMEOUT_MS,
        )
    return figures.count()


def hover_every_mark(page) -> int:
    """Bring up each bar's tooltip, where vega-embed renders data values as HTML if unescaped."""
    marks = page.locator(".bench-chart__view svg [role='graphics-symbol']")
    for i in range(marks.count()):
        marks.nth(i).hover(force=True)
        page.wait_for_timeout(30)
    return marks.count()


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


def test_no_payload_runs_on_any_page_and_the_charts_still_render(page, page_log, hostile_site):
    dialogs: list[str] = []
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    charts: dict[str, int] = {}
    hovered = 0
    for url in pages(page, hostile_site):
        page.goto(url, wait_until="networkidle")
        charts[url] = draw_charts(page)
        hovered += hover_every_mark(page)
        for details in page.locator("details.bench-chart__data").all():
            details.locator("summary").click()
        assert page.evaluate("typeof window.__pwned") == "undefined", (
            f"{url}: payload ran: {page.evaluate('window.__pwned')}"
        )
        assert page.evaluate(INJECTED) == [], url
    assert not dialogs, f"alert() ran: {dialogs}"
    results = urljoin(hostile_site, "benchmarks/results/")
    assert charts[results] >= 3, "every chart kind still draws with hostile labels"
    assert hovered >= 6, "tooltips were brought up"
    assert not page_log.blocked_requests, f"requests left 127.0.0.1: {page_log.blocked_requests}"


def test_hostile_strings_are_shown_as_text(page, hostile_site):
    page.goto(urljoin(hostile_site, "benchmarks/results/"), wait_until="networkidle")
    draw_charts(page)
    for details in page.locator("details.bench-chart__data").all():
        details.locator("summary").click()
    text = page.locator(".md-content").inner_text()
    for payload in (SCRIPT, IMG, MARKDOWN):
        assert payload in text, f"{payload!r} is not shown as text"
    assert "too fast " + SCRIPT in text
    # The invalid value is left out of the chart, with a visible note saying so.
    note = page.locator(".admonition.warning", has_text="left out of the chart")
    assert note.count() >= 1 and note.first.is_visible()
    # A javascript: source URL becomes plain text, never a link.
    hrefs = page.eval_on_selector_all(".md-content a[href]", "els => els.map(e => e.getAttribute('href'))")
    assert not [h for h in hrefs if h.strip().lower().startswith(("javascript:", "data:"))], hrefs
    # An https URL with quotes and tags in it stays one intact attribute value.
    assert hostile_files()["reported/quote-break.json"].provenance.source_url in hrefs
    # Chart axis labels carry the machine label as SVG text.
    labels = page.locator("figure.bench-chart .bench-chart__view svg text").all_text_contents()
    assert any(IMG in label or label.startswith("Rig <img") for label in labels), labels[:20]
