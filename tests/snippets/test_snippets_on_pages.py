"""Every reader snippet directly under snippets/ is on a page and run by a test here.

A file nobody includes is a recipe no reader sees; one no test names is a recipe no one runs.
The folders under snippets/ are left to their own tests (test_site_snippets.py, for one).
"""

from __future__ import annotations

from pathlib import Path

from snippet_runner import REPO, SNIPPETS

HERE = Path(__file__).resolve()


def test_every_snippet_is_on_a_page_and_run_by_a_test() -> None:
    pages = "".join(p.read_text(encoding="utf-8") for p in (REPO / "docs").rglob("*.md"))
    tests = "".join(p.read_text(encoding="utf-8") for p in HERE.parent.glob("test_*.py") if p != HERE)
    snippets = sorted(p.name for p in SNIPPETS.iterdir() if p.is_file())
    assert snippets
    assert [name for name in snippets if f'--8<-- "snippets/{name}"' not in pages] == [], "on no page"
    assert [name for name in snippets if name not in tests] == [], "named by no test in tests/snippets/"
