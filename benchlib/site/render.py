"""HTML for the site's blocks, from the Jinja2 templates in ``benchlib/site/templates/``.

Autoescaping is on: every string from a results or data file is escaped where a template prints
it, so results stay data, never markup. Blocks pass values, not HTML; the few filters below are
the only helpers that format for the page, defined once here.
"""

from __future__ import annotations

import functools
import posixpath
from datetime import date
from typing import Any
from urllib.parse import urlsplit

import jinja2
from markupsafe import Markup

from benchlib.core.freshness import STALE_AFTER_MONTHS, build_date, is_stale, stale_text
from benchlib.site.charts import value_text
from benchlib.site.glossary import with_tooltips
from benchlib.site.sources import building_with_zensical


def safe_url(url: object) -> str | None:
    """``url`` if it is an http(s) address, else None: a data file can't smuggle a javascript: link."""
    text = "" if url is None else str(url)
    return text if urlsplit(text).scheme in ("http", "https") else None


def host_of(url: object) -> str:
    """The address's host without 'www.', the short name a source goes by in a caption."""
    return urlsplit(str(url or "")).netloc.removeprefix("www.") or "source"


def in_a_sentence(title: str) -> str:
    """A title as it reads inside a sentence: "Matrix multiply" → "matrix multiply", "Fashion-MNIST" kept."""
    first, _, rest = title.partition(" ")
    keep = any(c.isupper() for c in first[1:])
    return title if keep or not first else first[0].lower() + first[1:] + (f" {rest}" if rest else "")


def is_stale_date(as_of: date | str | None) -> bool:
    return bool(as_of) and is_stale(as_of)  # type: ignore[arg-type]


def _url_dir(page: str) -> str:
    # MkDocs' directory URLs: a/b.md is served at a/b/, a/index.md at a/.
    stem = page.removesuffix(".md")
    return posixpath.dirname(stem) if posixpath.basename(stem) == "index" else stem


def page_link(target: str, here: str) -> str:
    """A link from docs page ``here`` to ``target`` (docs paths such as ``benchmarks/results.md``,
    the target may end in ``#anchor``) that works in raw HTML under both builders.

    MkDocs leaves links in raw HTML alone, so they must be the served URL, relative to the page's
    own; Zensical resolves them like Markdown links, relative to the source file.
    """
    path, _, anchor = target.partition("#")
    if building_with_zensical():
        link = posixpath.relpath(path, posixpath.dirname(here) or ".")
    else:
        link = posixpath.relpath(_url_dir(path) or ".", _url_dir(here) or ".")
        link = "./" if link == "." else f"{link}/"
    return link + (f"#{anchor}" if anchor else "")


@functools.cache
def environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.PackageLoader("benchlib.site", "templates"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=False,
    )
    env.filters.update(
        value_text=value_text,
        safe_url=safe_url,
        host=host_of,
        stale_text=stale_text,
        page_link=page_link,
        in_a_sentence=in_a_sentence,
    )
    env.tests.update(stale=is_stale_date)
    return env


def render(template: str, **context: Any) -> str:
    """The named template with ``context``, as one line of HTML.

    One line: Markdown would read a blank or indented line inside the block as the end of the
    HTML, and wrap what follows in <p> or <pre>.
    """
    html = environment().get_template(template).render(**context)
    return Markup(with_tooltips(" ".join(line.strip() for line in html.splitlines() if line.strip())))


def build_stamp() -> str:
    """Every page's last line: the build date, the day the staleness marks count from. Empty inside
    another block's printed Markdown (the notebook page's), which markdown-exec renders with the
    page's appended includes too: the page's own stamp follows at its end."""
    if _inside_printed_markdown():
        return ""
    return render("built.html", day=build_date().isoformat(), months=STALE_AFTER_MONTHS)


def _inside_printed_markdown() -> bool:
    import sys

    frame = sys._getframe(1)
    while frame is not None:
        code = frame.f_code
        if code.co_name == "convert" and "markdown_exec" in code.co_filename:
            return True
        frame = frame.f_back
    return False
