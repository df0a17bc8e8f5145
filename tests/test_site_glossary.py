"""The glossary's tooltips reach the tables that blocks generate, from the file the pages' tooltips come from."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchlib.site import glossary, render

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def own_glossary(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A project whose includes/abbreviations.md defines SXM and KV cache, as the site's does."""
    (tmp_path / "includes").mkdir()
    (tmp_path / "includes" / "abbreviations.md").write_text(
        "*[SXM]: socketed module\n*[KV cache]: keys & values, kept\n*[KV]: key-value\n", encoding="utf-8"
    )
    monkeypatch.setenv("MKDOCS_CONFIG_DIR", str(tmp_path))
    return tmp_path


def test_a_term_in_a_table_cell_gets_the_glossary_s_title(own_glossary: Path) -> None:
    html = glossary.with_tooltips("<table><tr><td>A100 80GB SXM</td><td>KV cache of SXM5</td></tr></table>")
    assert html == (
        '<table><tr><td>A100 80GB <abbr title="socketed module">SXM</abbr></td>'
        '<td><abbr title="keys &amp; values, kept">KV cache</abbr> of SXM5</td></tr></table>'
    )


def test_a_changed_glossary_changes_the_tooltips(own_glossary: Path) -> None:
    path = own_glossary / "includes" / "abbreviations.md"
    path.write_text("*[SXM]: a new definition\n", encoding="utf-8")
    assert glossary.with_tooltips("<td>SXM</td>") == '<td><abbr title="a new definition">SXM</abbr></td>'


@pytest.mark.parametrize(
    "html",
    [
        '<a href="https://example.org/SXM" title="SXM">link</a>',  # attributes
        "<code>SXM</code> <pre><code>x = 'SXM'</code></pre>",  # code is copied as written
        '<script type="application/json">{"label": "SXM <b>"}</script>',  # a chart's spec
        "<svg><text>SXM</text><g><text>KV cache</text></g></svg>",  # a chart's fallback drawing
        '<abbr title="already">SXM</abbr>',
        "<!-- SXM -->",
    ],
)
def test_terms_stay_as_written_outside_text(own_glossary: Path, html: str) -> None:
    assert glossary.with_tooltips(html) == html


def test_text_after_code_or_a_drawing_gets_tooltips_again(own_glossary: Path) -> None:
    html = glossary.with_tooltips("<p><code>SXM</code> then SXM</p><svg><text>SXM</text></svg><br/>SXM")
    assert html.count("<abbr") == 2 and html.startswith("<p><code>SXM</code> then <abbr")


def test_tooltips_added_twice_are_added_once(own_glossary: Path) -> None:
    once = glossary.with_tooltips("<td>SXM and KV cache</td>")
    assert glossary.with_tooltips(once) == once


def test_without_a_glossary_the_html_is_unchanged(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MKDOCS_CONFIG_DIR", str(tmp_path))
    assert glossary.with_tooltips("<td>SXM</td>") == "<td>SXM</td>"


def test_every_generated_table_explains_the_site_s_terms(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MKDOCS_CONFIG_DIR", str(ROOT))
    html = render.render("table.html", head=["GPU", "Format"], rows=[["H100 SXM", "GGUF"], ["H100 PCIe", "GPTQ"]])
    for term in ("SXM", "PCIe", "GGUF", "GPTQ"):
        assert f">{term}</abbr>" in html, term
    assert 'title="NVIDIA&#x27;s socketed server module' in html
