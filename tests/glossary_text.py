"""A block's HTML read around the glossary's tooltips, which wrap its terms in <abbr> (benchlib/site/glossary.py)."""

from __future__ import annotations

import re

ABBR = re.compile(r"</?abbr\b[^>]*>")


def without_tooltips(html: str) -> str:
    """``html`` without the tooltips' <abbr> tags, their terms kept: for checks of other things."""
    return ABBR.sub("", html)
