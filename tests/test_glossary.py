"""The glossary defines every term the pages' tooltips explain, and the tooltips reach every page."""

from __future__ import annotations

import re
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
ABBREVIATIONS = ROOT / "includes" / "abbreviations.md"
GLOSSARY = ROOT / "docs" / "glossary.md"
# The terms readers met undefined on 2026-11-25 (issue 26).
REQUIRED = ("LoRA", "QLoRA", "NF4", "all-linear", "SXM", "PCIe", "MAMF", "KV cache", "prefill", "IQR", "roofline")


def tooltips() -> dict[str, str]:
    return dict(re.findall(r"^\*\[(.+?)\]: (.+)$", ABBREVIATIONS.read_text(encoding="utf-8"), flags=re.M))


def test_every_tooltip_term_is_defined_once_in_the_glossary() -> None:
    terms = tooltips()
    assert set(REQUIRED) <= set(terms)
    # A definition list: the term alone on its line, its definition on the next, after ":".
    lines = GLOSSARY.read_text(encoding="utf-8").splitlines()
    defined = [line for line, after in zip(lines, lines[1:]) if after.startswith(":   ")]
    assert sorted(defined) == sorted(terms), "glossary terms and tooltips differ"
    assert len(defined) == len(set(defined)), "a term is defined twice"
    assert all("Glossary" in title for title in terms.values())


def test_every_page_gets_the_tooltips_and_the_build_date() -> None:
    config = yaml.load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"), Loader=yaml.BaseLoader)
    snippets = next(e for e in config["markdown_extensions"] if isinstance(e, dict) and "pymdownx.snippets" in e)
    appended = snippets["pymdownx.snippets"]["auto_append"]
    assert appended == ["includes/abbreviations.md", "includes/built.md"]
    assert "build_stamp()" in (ROOT / "includes" / "built.md").read_text(encoding="utf-8")
    assert {"Glossary": "glossary.md"} in config["nav"]
