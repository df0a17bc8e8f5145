"""`benchlib facts`: every dated fact the guide shows, oldest first, so a maintainer knows what to re-check."""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Annotated

import typer
from rich.text import Text

from benchlib.cli.output import at_least, console, usage_error
from benchlib.core.freshness import STALE_AFTER_MONTHS, age_in_months, age_text, build_date, is_stale, months_before
from benchlib.derive.dated_facts import ORIGIN_FILES, dated_facts


def facts(
    older_than: Annotated[
        int | None,
        typer.Option(
            "--older-than",
            callback=at_least(0),
            metavar="MONTHS",
            help=f"Only facts at least this many months old. The site marks facts older than {STALE_AFTER_MONTHS}.",
        ),
    ] = None,
    origin: Annotated[
        list[str] | None,
        typer.Option(
            "--in",
            metavar="FILE",
            help="Only facts from these files: "
            + ", ".join(f"{k} ({v})" for k, v in ORIGIN_FILES.items())
            + ". Repeatable.",
        ),
    ] = None,
    with_specs: Annotated[
        bool,
        typer.Option(
            "--specs",
            help="Also list hardware specifications (bandwidth, TFLOPS, memory), which do not age.",
        ),
    ] = False,
    reported: Annotated[
        Path | None,
        typer.Option(
            "--reported",
            help="The reported results folder [default: results/reported, or $BENCHLIB_REPORTED_DIR].",
        ),
    ] = None,
) -> None:
    """List the guide's dated facts, oldest first, with their age and source.

    Ages count from the build date ($BENCHLIB_BUILD_DATE, else today). Facts above the dashed line are older than twelve months: the site marks them "may be out of date", so re-check those first.

    Prices, platform facts, advice and reported figures are listed; --specs adds the hardware specifications.
    """
    unknown = sorted(set(origin or []) - set(ORIGIN_FILES))
    if unknown:
        raise usage_error(f"--in {', '.join(unknown)}: expected one of {', '.join(ORIGIN_FILES)}")
    try:
        today = build_date()
        everything = dated_facts(reported)
    except (ValueError, OSError) as exc:  # a bad date override or a broken data file, named in the message
        raise usage_error(str(exc)) from None
    shown = [
        fact
        for fact in everything
        if (with_specs or fact.ages)
        and (not origin or fact.origin in origin)
        and (older_than is None or age_in_months(fact.as_of, today) >= older_than)
    ]
    console.print(
        Text(
            f"Dated facts as of {today.isoformat()}, oldest first ({', '.join(sorted({f.origin for f in shown})) or 'none'})"
        )
    )
    cutoff = months_before(today, STALE_AFTER_MONTHS)
    divided = False
    for fact in shown:
        if not divided and fact.day >= cutoff:
            console.print(Text(f"--- newer than {STALE_AFTER_MONTHS} months (not marked on the site) ---", style="dim"))
            divided = True
        old = fact.ages and is_stale(fact.as_of, today)
        head = Text.assemble(
            (f"{fact.as_of:<10}", "yellow" if old else ""),
            f" {age_text(age_in_months(fact.as_of, today)):>6}  ",
            (f"{fact.origin:<9}", "dim"),
            " ",
        )
        # Long keys wrap under themselves, so the dates stay a clean column.
        key = textwrap.wrap(fact.key + ("" if fact.ages else " (spec)"), max(console.width - len(head), 20))
        console.print(head + Text(f"\n{' ' * len(head)}".join(key)), soft_wrap=True)
        # The URL on a line of its own, never folded, so it stays copyable.
        console.print(Text(f"    {fact.source}", style="dim"), soft_wrap=True)
    stale = sum(fact.ages and is_stale(fact.as_of, today) for fact in shown)
    console.print(
        f"{len(shown)} facts shown; {stale} older than {STALE_AFTER_MONTHS} months "
        '(the site marks these "may be out of date").'
    )
