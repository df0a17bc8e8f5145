"""`benchlib facts`: every dated fact the guide shows, oldest first, so a maintainer knows what to re-check.

The facts come from the platform data (``benchlib/data/platforms.yaml``), the accelerator specs
(``benchlib/data/gpus.yaml``), the dated buying advice (``benchlib/fit/history.yaml``) and the
reported results (``results/reported/*.json``). Age and the "may be out of date" verdict use the
site's own rule (`benchlib.freshness`), so this list and the pages agree.
"""

from __future__ import annotations

import textwrap
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Annotated, Literal, Optional

import typer

from benchlib.freshness import (
    STALE_AFTER_MONTHS,
    age_in_months,
    age_text,
    build_date,
    is_stale,
    latest_day,
    months_before,
)

Origin = Literal["platforms", "gpus", "advice", "reported"]
ORIGIN_FILES: dict[Origin, str] = {
    "platforms": "benchlib/data/platforms.yaml",
    "gpus": "benchlib/data/gpus.yaml",
    "advice": "benchlib/fit/history.yaml",
    "reported": "results/reported/",
}
# The specs fields that change after a chip launches (and that the site marks when old); the rest
# (bandwidth, TFLOPS, memory, formats) describe fixed hardware.
SPEC_FIELDS_THAT_AGE = frozenset({"cloud_prices", "purchase_prices_usd", "launch_price_usd", "notes"})


@dataclass(frozen=True)
class DatedFact:
    """One dated statement: where it lives, what it is, when its source dates it and who says it."""

    origin: Origin
    key: str
    as_of: str
    source: str
    ages: bool = True

    @property
    def day(self) -> date:
        return latest_day(self.as_of)


def _numbered(key: str, i: int, count: int) -> str:
    return f"{key} #{i}" if count > 1 else key


def platform_facts() -> Iterator[DatedFact]:
    from benchlib.platforms import TIER_FIELDS, load_platforms

    for pid, platform in load_platforms().platforms.items():
        yield DatedFact("platforms", f"{pid} detection", platform.detection.as_of.isoformat(), str(platform.detection.source))
        for i, fact in enumerate(platform.history, 1):
            yield DatedFact("platforms", f"{pid} history #{i}", fact.as_of.isoformat(), str(fact.source))
        for tid, tier in platform.tiers.items():
            for field in TIER_FIELDS:
                facts = tier.field(field)
                for i, fact in enumerate(facts, 1):
                    key = _numbered(f"{pid}/{tid} {field}", i, len(facts))
                    yield DatedFact("platforms", key, fact.as_of.isoformat(), str(fact.source))


def spec_facts() -> Iterator[DatedFact]:
    from benchlib.specs import CloudPrice, Fact, load_accelerators

    for spec in load_accelerators():
        for field in type(spec).model_fields:
            value = getattr(spec, field)
            items = value if isinstance(value, list) else [value]
            dated = [item for item in items if isinstance(item, (Fact, CloudPrice))]
            for i, item in enumerate(dated, 1):
                label = f"{field} ({item.provider})" if isinstance(item, CloudPrice) else _numbered(field, i, len(dated))
                yield DatedFact("gpus", f"{spec.name} {label}", item.as_of, item.source, field in SPEC_FIELDS_THAT_AGE)


def advice_facts() -> Iterator[DatedFact]:
    import yaml

    from benchlib.site.fit import HISTORY_FILE

    for guide in yaml.safe_load(HISTORY_FILE.read_text(encoding="utf-8"))["guides"]:
        for i, claim in enumerate(guide["claims"], 1):
            as_of = claim["as_of"]
            text = as_of.isoformat() if isinstance(as_of, date) else str(as_of)
            yield DatedFact("advice", f"{guide['id']} claim #{i}", text, str(claim["source"]))


def reported_facts(directory: Path | None = None) -> Iterator[DatedFact]:
    """One fact per reported results file: its run id, dated and sourced by its provenance."""
    from benchlib.paths import reported_dir
    from benchlib.results.load import load_results

    folder = directory or reported_dir()
    if not folder.is_dir() or not any(folder.rglob("*.json")):
        raise FileNotFoundError(f"no reported results in {folder}")
    files = load_results(folder).drop_duplicates("file")
    for run_id, as_of, url in zip(files["run_id"], files["source_as_of"], files["source_url"]):
        if isinstance(as_of, str) and isinstance(url, str):
            yield DatedFact("reported", run_id, as_of, url)


def dated_facts(reported_dir: Path | None = None) -> list[DatedFact]:
    """Every dated fact, oldest first (ties by file and key)."""
    found = [*platform_facts(), *spec_facts(), *advice_facts(), *reported_facts(reported_dir)]
    return sorted(found, key=lambda f: (f.day, f.origin, f.key))


def facts(
    older_than: Annotated[Optional[int], typer.Option(
        "--older-than", min=0, metavar="MONTHS",
        help=f"Only facts at least this many months old. The site marks facts older than {STALE_AFTER_MONTHS}.",
    )] = None,
    origin: Annotated[Optional[list[str]], typer.Option(
        "--in", metavar="FILE",
        help="Only facts from these files: " + ", ".join(f"{k} ({v})" for k, v in ORIGIN_FILES.items()) + ". Repeatable.",
    )] = None,
    with_specs: Annotated[bool, typer.Option(
        "--specs", help="Also list hardware specifications (bandwidth, TFLOPS, memory), which do not age.",
    )] = False,
    reported: Annotated[Optional[Path], typer.Option(
        "--reported", help="The reported results folder [default: results/reported, or $BENCHLIB_REPORTED_DIR].",
    )] = None,
) -> None:
    """List the guide's dated facts, oldest first, with their age and source.

    Ages count from the build date ($BENCHLIB_BUILD_DATE, else today). Facts above the dashed line are older than twelve months: the site marks them "may be out of date", so re-check those first.

    Prices, platform facts, advice and reported figures are listed; --specs adds the hardware specifications.
    """
    from rich.console import Console
    from rich.text import Text

    from benchlib.cli import usage_error

    unknown = sorted(set(origin or []) - set(ORIGIN_FILES))
    if unknown:
        raise usage_error(f"--in {', '.join(unknown)}: expected one of {', '.join(ORIGIN_FILES)}")
    try:
        today = build_date()
        everything = dated_facts(reported)
    except (ValueError, OSError) as exc:  # a bad date override or a broken data file, named in the message
        raise usage_error(str(exc)) from None
    shown = [
        fact for fact in everything
        if (with_specs or fact.ages)
        and (not origin or fact.origin in origin)
        and (older_than is None or age_in_months(fact.as_of, today) >= older_than)
    ]
    console = Console()
    console.print(Text(f"Dated facts as of {today.isoformat()}, oldest first ({', '.join(sorted({f.origin for f in shown})) or 'none'})"))
    cutoff = months_before(today, STALE_AFTER_MONTHS)
    divided = False
    for fact in shown:
        if not divided and fact.day >= cutoff:
            console.print(Text(f"--- newer than {STALE_AFTER_MONTHS} months (not marked on the site) ---", style="dim"))
            divided = True
        old = fact.ages and is_stale(fact.as_of, today)
        head = Text.assemble(
            (f"{fact.as_of:<10}", "yellow" if old else ""), f" {age_text(age_in_months(fact.as_of, today)):>6}  ",
            (f"{fact.origin:<9}", "dim"), " ",
        )
        # Long keys wrap under themselves, so the dates stay a clean column.
        key = textwrap.wrap(fact.key + ("" if fact.ages else " (spec)"), max(console.width - len(head), 20))
        console.print(head + Text(f"\n{' ' * len(head)}".join(key)), soft_wrap=True)
        # The URL on a line of its own, never folded, so it stays copyable.
        console.print(Text(f"    {fact.source}", style="dim"), soft_wrap=True)
    stale = sum(fact.ages and is_stale(fact.as_of, today) for fact in shown)
    console.print(
        f"{len(shown)} facts shown; {stale} older than {STALE_AFTER_MONTHS} months "
        "(the site marks these \"may be out of date\")."
    )
