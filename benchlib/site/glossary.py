"""The glossary's tooltips in the HTML that blocks print.

Pages get tooltips from the ``abbr`` extension, which reads ``includes/abbreviations.md`` (mkdocs.yml
appends it to every page) but leaves raw HTML alone, so a generated table would show "SXM" bare
where the prose beside it explains it. ``with_tooltips`` wraps the same terms, read from the same
file, in the text of a block's HTML, as the extension does in prose: whole words, case as written.
"""

from __future__ import annotations

import functools
import html
import re
from pathlib import Path

from benchlib.core.paths import project_root

# The file mkdocs.yml's pymdownx.snippets appends to every page (tests/test_glossary.py holds the two together).
ABBREVIATIONS = Path("includes") / "abbreviations.md"
DEFINITION = re.compile(r"^\*\[(.+?)\]:[ \t]*(.*?)[ \t]*$", re.M)
# A comment, an element whose content is raw text (a chart's spec lives in a script), or a tag.
TOKEN = re.compile(r"<!--.*?-->|<(script|style|textarea)\b.*?</\1\s*>|<(/?)([A-Za-z][\w:-]*)[^>]*>", re.S | re.I)
# Text that stays as written: code is copied, an <abbr> already explains itself, and an SVG's text
# can't hold HTML.
VERBATIM = frozenset({"abbr", "code", "kbd", "pre", "samp", "svg"})


def terms(text: str) -> dict[str, str]:
    """The ``*[term]: title`` definitions in ``text``, as the abbr extension reads them."""
    return {term: title for term, title in DEFINITION.findall(text) if title}


@functools.cache
def _tooltips(path: str, _mtime_ns: int, _size: int) -> tuple[re.Pattern[str] | None, dict[str, str]]:
    found = terms(Path(path).read_text(encoding="utf-8"))
    # Escaped as they appear in HTML text; longest first, so "KV cache" wins over a shorter term inside it.
    titles = {html.escape(term, quote=False): title for term, title in found.items()}
    if not titles:
        return None, {}
    alternatives = "|".join(re.escape(term) for term in sorted(titles, key=len, reverse=True))
    return re.compile(rf"\b(?:{alternatives})\b"), titles


def tooltips() -> tuple[re.Pattern[str] | None, dict[str, str]]:
    """The pattern that finds any glossary term, and each term's title; none where the project has
    no abbreviations file (a build outside this repository)."""
    path = project_root() / ABBREVIATIONS
    if not path.is_file():
        return None, {}
    stat = path.stat()
    return _tooltips(str(path), stat.st_mtime_ns, stat.st_size)


def with_tooltips(markup: str) -> str:
    """``markup`` with each glossary term in its text wrapped in ``<abbr title="...">``: never in a
    tag or attribute, a comment, a script or style, or inside code, an SVG or an existing abbr."""
    pattern, titles = tooltips()
    if pattern is None:
        return markup

    def wrap(text: str) -> str:
        return pattern.sub(lambda m: f'<abbr title="{html.escape(titles[m[0]])}">{m[0]}</abbr>', text)

    out: list[str] = []
    verbatim = 0  # how many VERBATIM elements the text is inside
    at = 0
    for token in TOKEN.finditer(markup):
        text = markup[at : token.start()]
        out.append(wrap(text) if text and not verbatim else text)
        out.append(token[0])
        name = (token[3] or "").lower()
        if name in VERBATIM and not token[0].endswith("/>"):
            verbatim = max(verbatim - 1, 0) if token[2] else verbatim + 1
        at = token.end()
    rest = markup[at:]
    out.append(wrap(rest) if rest and not verbatim else rest)
    return "".join(out)
