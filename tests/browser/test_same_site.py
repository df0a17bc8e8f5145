"""Zensical builds the same site as MkDocs from mkdocs.yml: checked in the browser, not assumed.

Both builds come from the same results (conftest's ``built_site``), read in the session's one crawl of each (``crawl``). Every page of either build's
sitemap must be in the other, and on each page a reader must find the same title and headings and
the same number of charts, tables and code blocks (the included snippets among them). The counts
are of what the page shows, not of theme markup, which Zensical is free to write differently.
"""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.browser


def test_zensical_builds_every_page_with_the_same_charts_tables_and_code(crawl):
    mkdocs, zensical = crawl("mkdocs").shown, crawl("zensical").shown

    assert sorted(zensical) == sorted(mkdocs), "the two builds have different pages"
    assert "notebooks/run-benchlib/" in mkdocs
    differences = [
        f"{path}: MkDocs {mkdocs[path]}\n{' ' * len(path)}  Zensical {zensical[path]}"
        for path in mkdocs
        if zensical[path] != mkdocs[path]
    ]
    assert not differences, "pages that read differently:\n" + "\n".join(differences)
    # Zensical's --strict lets a failed build-time block through; its traceback would be on the page.
    assert not [path for path, shown in zensical.items() if shown["traceback"]]
    totals = {kind: sum(shown[kind] for shown in mkdocs.values()) for kind in ("charts", "tables", "code_blocks")}
    assert all(totals.values()), f"the comparison saw nothing to compare: {totals}"
    logs = [crawl(builder).log for builder in ("mkdocs", "zensical")]
    assert not any(log.blocked_requests or log.console_errors for log in logs)
