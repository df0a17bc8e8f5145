"""What the site's search indexes of a block: the text that answers a query, not a chart's numbers again."""

from __future__ import annotations

import re
from pathlib import Path

from benchlib.site import render

TEMPLATES = Path(render.__file__).parent / "templates"
CHART_DATA = re.compile(r"<details\b[^>]*\bbench-chart__data\b[^>]*>")


def test_the_data_behind_every_chart_stays_out_of_search() -> None:
    # The data repeats the chart row by row; in search it outranked the sections about a card.
    found = {p.name: CHART_DATA.findall(p.read_text(encoding="utf-8")) for p in TEMPLATES.glob("*.html")}
    tags = [(name, tag) for name, found_tags in found.items() for tag in found_tags]
    assert len(tags) >= 8
    assert [(name, tag) for name, tag in tags if "data-search-exclude" not in tag] == []


def test_a_rendered_chart_table_carries_the_mark() -> None:
    html = render.render("scaling_table.html", head=["GPUs", "Throughput"], rows=[["1", "100"]])
    assert html.startswith('<details class="note bench-chart__data" data-search-exclude>')
