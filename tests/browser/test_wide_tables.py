"""On a phone, every wide table on every page scrolls sideways with its first column in view.

Every page in the sitemap, at 390 px, with every collapsed block opened and every tab shown in
turn: each table wider than the screen is scrolled to its end, and then its first column must be
at the left edge, on an opaque background, and every other cell must have moved by the whole
scroll (a cell that moved less stuck where it should not, as a row under a rowspan would).
"""

from __future__ import annotations

from urllib.parse import urljoin

import pytest
from page_crawl import sitemap_paths

pytestmark = [pytest.mark.browser, pytest.mark.slow]

PHONE = {"width": 390, "height": 844}
# The pages whose wide tables lost their row names at 390 px on 2026-11-28 (issue 39), and the two
# where they stayed: each must still have a wide table, so the check can't pass by finding none.
NAMED = {
    "platforms/",
    "platforms/colab/",
    "benchmarks/results/",
    "history/",
    "benchmarks/methodology/",
    "gpus/can-i-run-it/",
    "gpus/buying-guide/",
}
# Each wide table, scrolled to its end and back: what a reader would see go wrong, or nothing.
CHECK_WIDE_TABLES = """() => {
  const problems = [];
  let wide = 0;
  const checked = new Set();
  const heading = el => {
    const all = [...document.querySelectorAll('article h1, article h2, article h3')];
    const before = all.filter(h => h.compareDocumentPosition(el) & Node.DOCUMENT_POSITION_FOLLOWING);
    return before.length ? before[before.length - 1].innerText.replace('¶', '').trim() : '(top)';
  };
  const check = () => {
    for (const wrap of document.querySelectorAll('article .md-typeset__scrollwrap')) {
      const table = wrap.querySelector('table');
      if (checked.has(wrap) || !table || wrap.offsetParent === null) continue;
      const overflow = wrap.scrollWidth - wrap.clientWidth;
      if (overflow < 40) continue;
      checked.add(wrap);
      wide += 1;
      const where = `table ${wide} (under "${heading(wrap)}")`;
      const tableLeft = table.getBoundingClientRect().left;
      const cells = [...table.querySelectorAll('tr > th, tr > td')];
      const before = cells.map(c => c.getBoundingClientRect().left);
      wrap.scrollLeft = overflow;
      const scrolled = wrap.scrollLeft;
      const wrapLeft = wrap.getBoundingClientRect().left;
      const stuck = [], strayed = [];
      cells.forEach((cell, i) => {
        const after = cell.getBoundingClientRect().left;
        if (Math.abs(before[i] - tableLeft) <= 1) {
          if (Math.abs(after - wrapLeft) > 2) strayed.push(cell.innerText.trim().slice(0, 30));
          const bg = getComputedStyle(cell).backgroundColor;
          if (bg === 'transparent' || bg === 'rgba(0, 0, 0, 0)') strayed.push(`${cell.innerText.trim().slice(0, 30)} (see-through)`);
        } else if (Math.abs(before[i] - after - scrolled) > 2) {
          stuck.push(cell.innerText.trim().slice(0, 30));
        }
      });
      wrap.scrollLeft = 0;
      if (scrolled < Math.min(overflow, 100) - 2) problems.push(`${where}: scrolls ${scrolled} of ${overflow} px`);
      if (strayed.length) problems.push(`${where}: first-column cells left the edge: ${strayed.slice(0, 3)}`);
      if (stuck.length) problems.push(`${where}: other cells stuck: ${stuck.slice(0, 3)}`);
    }
  };
  document.querySelectorAll('article details').forEach(d => { d.open = true; });
  check();
  for (const tab of document.querySelectorAll('article .tabbed-set > input')) {
    tab.click();
    check();
  }
  return {wide, problems, pageWidth: document.documentElement.scrollWidth};
}"""


def test_on_a_phone_every_wide_table_keeps_its_first_column_in_view(browser, site_url):
    context = browser.new_context(viewport=PHONE)
    try:
        page = context.new_page()
        problems: list[str] = []
        with_wide: set[str] = set()
        for path in sitemap_paths(page, site_url):
            page.goto(urljoin(site_url, path), wait_until="networkidle")
            found = page.evaluate(CHECK_WIDE_TABLES)
            if found["pageWidth"] > PHONE["width"]:
                problems.append(f"/{path}: the page itself is {found['pageWidth']} px wide")
            problems += [f"/{path} {problem}" for problem in found["problems"]]
            if found["wide"]:
                with_wide.add(path)
        assert NAMED <= with_wide, f"no wide table found on {sorted(NAMED - with_wide)}"
        assert not problems, "\n".join(problems)
    finally:
        context.close()
