"""The glossary's tooltips reach the generated tables and summaries, in both builds.

The terms readers met bare on 2026-11-28 (issue 39): SXM and PCIe in the buying guide's tables,
GGUF and GPTQ in the Colab and Kaggle pages' summaries of which language model fits.
"""

from __future__ import annotations

from urllib.parse import urljoin

import pytest

pytestmark = pytest.mark.browser

# A page, a generated block on it, and the terms its text must explain.
BLOCKS = [
    ("gpus/buying-guide/", "table[data-table=rent]", ("SXM", "PCIe")),
    ("platforms/colab/", "ul.fg-llm-platform", ("GGUF", "GPTQ")),
    ("platforms/kaggle/", "ul.fg-llm-platform", ("GGUF", "GPTQ")),
]


@pytest.mark.parametrize(("path", "block", "terms"), BLOCKS)
def test_generated_blocks_explain_the_glossary_s_terms(page, site_url, path, block, terms):
    page.goto(urljoin(site_url, path), wait_until="networkidle")
    found = page.locator(block).first.evaluate(
        "b => Object.fromEntries([...b.querySelectorAll('abbr')].map(a => [a.textContent, a.title]))"
    )
    # The title a reader sees is the prose's, from the one glossary (its definitions end so).
    prose = page.locator("article p abbr, article li abbr").evaluate_all(
        "all => Object.fromEntries(all.filter(a => !a.closest('table, .fg-llm-platform')).map(a => [a.textContent, a.title]))"
    )
    for term in terms:
        assert term in found, f"{term} has no tooltip in {block} on /{path}"
        assert found[term].endswith("(see the Glossary)")
        if term in prose:
            assert found[term] == prose[term]
