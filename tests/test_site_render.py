"""The template helpers every block shares: links that work under both builders, safe URLs, titles."""

from __future__ import annotations

import pytest

from benchlib.site import render


@pytest.mark.parametrize(
    "zensical, expected",
    [
        (False, ["../methodology/#sanity-checks", "colab/", "./", "../../benchmarks/run-it-yourself/", "../../"]),
        (
            True,
            ["methodology.md#sanity-checks", "colab.md", "index.md", "../benchmarks/run-it-yourself.md", "../index.md"],
        ),
    ],
)
def test_page_links_suit_the_builder(monkeypatch: pytest.MonkeyPatch, zensical: bool, expected: list[str]) -> None:
    monkeypatch.setattr(render, "building_with_zensical", lambda: zensical)
    links = [
        render.page_link("benchmarks/methodology.md#sanity-checks", "benchmarks/results.md"),
        render.page_link("platforms/colab.md", "platforms/index.md"),
        render.page_link("platforms/index.md", "platforms/index.md"),
        render.page_link("benchmarks/run-it-yourself.md", "gpus/buying-guide.md"),
        render.page_link("index.md", "gpus/buying-guide.md"),
    ]
    assert links == expected


def test_only_http_addresses_become_links() -> None:
    assert render.safe_url("https://example.org/a?b=<1>") == "https://example.org/a?b=<1>"
    assert render.safe_url("javascript:alert(1)") is None and render.safe_url(None) is None
    html = (
        render.environment()
        .from_string('{% from "_macros.html" import link %}{{ link(u) }}')
        .render(u="javascript:alert(1)")
    )
    assert "href" not in html and "javascript" not in html


def test_titles_read_well_inside_a_sentence() -> None:
    assert render.in_a_sentence("Matrix multiply throughput") == "matrix multiply throughput"
    assert render.in_a_sentence("Fashion-MNIST CNN training") == "Fashion-MNIST CNN training"
    assert render.in_a_sentence("ai-benchmark score") == "ai-benchmark score"
