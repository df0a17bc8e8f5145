"""What a reader pastes into Colab is the tested file: every snippet block's copy button copies
exactly the snippet it includes.

The blocks are found in the Markdown sources: a fenced block with a ``title`` whose only line is
``--8<-- "snippets/..."``. Each is revealed (its content tab selected, its collapsible note opened),
its copy button clicked, and the clipboard read back.
"""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import urljoin

import pytest

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
INCLUDE = re.compile(
    r'^(?P<indent>[ \t]*)(?P<fence>`{3,})\w+[^\n]*\btitle="(?P<title>[^"]+)"[^\n]*\n'
    r'(?P=indent)--8<-- "(?P<path>snippets/[^"]+)"\n'
    r"(?P=indent)(?P=fence)[ \t]*$",
    re.M,
)
# pymdownx.snippets removes section markers from included files; the copied text has none.
SECTION_MARKER = re.compile(r"^\s*(#|//)\s*--8<--\s*\[(start|end):\w+\]\s*$")

# Opens the <details> and selects the content tab that hold the element, so it can be clicked.
REVEAL = """
el => {
  for (let node = el; node; node = node.parentElement) {
    if (node.tagName === "DETAILS") node.open = true;
    if (node.classList && node.classList.contains("tabbed-block")) {
      const index = Array.from(node.parentElement.children).indexOf(node);
      const set = node.closest(".tabbed-set");
      set.querySelectorAll(":scope > input")[index].click();
    }
  }
}
"""


def page_path(markdown: Path) -> str:
    """The URL path MkDocs gives a page (directory URLs): guides/tpus.md -> guides/tpus/."""
    parts = list(markdown.relative_to(DOCS).with_suffix("").parts)
    if parts[-1] == "index":
        parts = parts[:-1]
    return "".join(f"{part}/" for part in parts)


def snippet_blocks() -> list[tuple[str, str, str]]:
    """(page path, block title, snippet path) for every titled block that includes a snippet."""
    blocks = []
    for markdown in sorted(DOCS.rglob("*.md")):
        for match in INCLUDE.finditer(markdown.read_text(encoding="utf-8")):
            blocks.append((page_path(markdown), match["title"], match["path"]))
    return blocks


def expected_copy(snippet: str) -> str:
    lines = (ROOT / snippet).read_text(encoding="utf-8").splitlines()
    # Material copies the code's innerText with trailing whitespace trimmed.
    return "\n".join(line for line in lines if not SECTION_MARKER.match(line)).rstrip()


BLOCKS = snippet_blocks()


def test_the_guide_pages_include_their_snippets() -> None:
    pages = {page for page, _, _ in BLOCKS}
    assert {
        "platforms/colab/",
        "platforms/kaggle/",
        "guides/what-did-i-get/",
        "guides/tpus/",
        "guides/staying-connected/",
        "guides/mixed-precision/",
    } <= pages
    included = {snippet for _, _, snippet in BLOCKS}
    for name in (
        "check_gpu.py",
        "check_tpu.py",
        "profile_hardware.py",
        "drive_checkpoint.py",
        "kaggle_persist.py",
        "mixed_precision_torch.py",
        "mixed_precision_keras.py",
        "mixed_precision_fastai.py",
        "keep_alive.js",
        "run_benchlib.py",
        "dataloader_shm.py",
    ):
        assert f"snippets/{name}" in included, name


PAGES = sorted({page for page, _, _ in BLOCKS})


@pytest.mark.parametrize("path", PAGES, ids=PAGES)
def test_copy_buttons_copy_the_snippet_files(page, site_url: str, path: str) -> None:
    """Each of the page's snippet blocks in turn, on one visit of the page."""
    origin = site_url.rstrip("/")
    page.context.grant_permissions(["clipboard-read", "clipboard-write"], origin=origin)
    page.goto(urljoin(site_url, path))
    wrong = {}
    for title, snippet in [(t, s) for p, t, s in BLOCKS if p == path]:
        titles = page.locator("div.highlight > span.filename").filter(has_text=re.compile(f"^{re.escape(title)}$"))
        assert titles.count() >= 1, f"no code block titled {title!r} on {path}"
        block = titles.first.locator("xpath=..")
        block.evaluate(REVEAL)
        button = block.locator("button[data-clipboard-target]")  # Material's copy button (md-code__button in 9.8)
        button.wait_for(state="visible")
        page.evaluate("navigator.clipboard.writeText('')")  # a stale clipboard must not pass the test
        button.click()
        copied = page.evaluate("navigator.clipboard.readText()")
        if copied != expected_copy(snippet):
            wrong[title] = f"copies {copied[:200]!r}, not {snippet}"
    assert not wrong, wrong
