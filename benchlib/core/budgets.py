"""The time budgets `benchlib campaign` and `benchlib contribute` default to, in one place: the
commands use them, and the Run it yourself page states them."""

from __future__ import annotations

# Minutes, when --minutes is not given.
DEFAULT_MINUTES = 9.0
# A tiny run takes two or three minutes on an idle CPU; the budget is a ceiling, and this one keeps
# every step on a loaded machine too (a 3-minute budget skipped the max-batch steps under load).
TINY_MINUTES = 5.0
