"""What the site's search indexes of a block: the text that answers a query, not a chart's numbers again."""

from __future__ import annotations

from benchlib.site import render


def test_the_data_behind_a_chart_stays_out_of_search() -> None:
    html = render.render("scaling_table.html", head=["GPUs", "Throughput"], rows=[["1", "100"]])
    assert html.startswith('<details class="note bench-chart__data" data-search-exclude>')
    assert html.count("data-search-exclude") == 1


def test_a_block_already_out_of_search_is_marked_once() -> None:
    marked = '<details class="note bench-chart__data" data-search-exclude><summary>Runs</summary></details>'
    assert render.CHART_DATA.sub(r"\g<0> data-search-exclude", marked) == marked
