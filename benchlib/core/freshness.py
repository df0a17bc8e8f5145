"""The one staleness rule: a dated fact older than twelve months "may be out of date".

Every page block that shows a sourced fact (platform data, prices, dated advice) or a reported
figure asks `is_stale`, and ``benchlib facts`` lists the same facts by age, so the site and the
maintainer's list never disagree about what is old. Hardware specifications (bandwidth, peak
TFLOPS, bf16 support) describe a chip that does not change after launch, so spec tables show
their dates without the mark; measured results show their date and software versions instead.

"Today" is the build date: ``$BENCHLIB_BUILD_DATE`` (YYYY-MM-DD) when set, which makes a build
or a test reproducible, otherwise the calendar date.
"""

from __future__ import annotations

import calendar
import os
import re
from datetime import date

STALE_AFTER_MONTHS = 12
BUILD_DATE_ENV = "BENCHLIB_BUILD_DATE"
_PARTIAL_DATE = re.compile(r"(\d{4})(?:-(\d{2})(?:-(\d{2}))?)?")


def build_date() -> date:
    """The date staleness is measured against; a malformed override is a usage error."""
    configured = os.environ.get(BUILD_DATE_ENV, "").strip()
    if not configured:
        return date.today()
    try:
        return date.fromisoformat(configured)
    except ValueError:
        raise ValueError(f"{BUILD_DATE_ENV}={configured!r}: expected a date like 2026-11-21 (or unset it)") from None


def latest_day(as_of: date | str) -> date:
    """The last day an as-of date can mean: '2020' is 2020-12-31, '2024-05' is 2024-05-31.

    Specs and advice are sometimes dated by year or month only; counting from the end of that
    period never calls a fact older than its source says it is.
    """
    if isinstance(as_of, date):
        return as_of
    match = _PARTIAL_DATE.fullmatch(as_of.strip())
    if match is None:
        raise ValueError(f"as_of must be YYYY, YYYY-MM or YYYY-MM-DD, got {as_of!r}")
    year, month, day = match.groups()
    last_month = int(month) if month else 12
    last_day = int(day) if day else calendar.monthrange(int(year), last_month)[1]
    return date(int(year), last_month, last_day)


def months_before(day: date, months: int) -> date:
    """The same day of the month ``months`` earlier, clamped to that month's last day."""
    year, month0 = divmod(day.year * 12 + day.month - 1 - months, 12)
    last = calendar.monthrange(year, month0 + 1)[1]
    return date(year, month0 + 1, min(day.day, last))


def is_stale(as_of: date | str, today: date | None = None) -> bool:
    """True when the fact is more than `STALE_AFTER_MONTHS` months older than ``today``."""
    return latest_day(as_of) < months_before(today or build_date(), STALE_AFTER_MONTHS)


def age_in_months(as_of: date | str, today: date | None = None) -> int:
    """Whole months from the as-of date to ``today`` (0 for a fact from this month or later)."""
    day, now = latest_day(as_of), today or build_date()
    months = (now.year - day.year) * 12 + now.month - day.month - (now.day < day.day)
    return max(months, 0)


def age_text(months: int) -> str:
    """'3y 2m', '7m': short enough for a table column."""
    years, rest = divmod(months, 12)
    return f"{years}y {rest}m" if years else f"{rest}m"


def stale_text(as_of: date | str) -> str:
    """What the stale mark says next to a fact."""
    shown = as_of.isoformat()[:7] if isinstance(as_of, date) else as_of[:7]
    return f"as of {shown}, may be out of date"
