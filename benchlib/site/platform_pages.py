"""Build-time blocks for the platform and guide pages: tables and fact lists from the data files.

Pages call these from markdown-exec blocks (``print(tier_table("colab"))``), so no platform
number is typed into Markdown. Every fact shows its source and date; facts that are
unverified, conflicting or older than twelve months carry a visible badge. The blocks gather
values; the templates in ``templates/`` draw them, escaping every string from a data file.
Reported figures come from the site's one load of the results (`benchlib.site.data`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date
from typing import Any, Literal

import pandas as pd

from benchlib.catalog.platforms import (
    FIELD_LABELS,
    TIER_FIELDS,
    Fact,
    Platform,
    PlatformsData,
    Sourced,
    Tier,
    load_platforms,
)
from benchlib.core.freshness import STALE_AFTER_MONTHS, build_date, is_stale, months_before, stale_text
from benchlib.results.load import params_of
from benchlib.site.data import REPORTED, _plain, results_file, site_data
from benchlib.site.render import page_link, render, value_text

FlagKind = Literal["unverified", "conflict", "stale", "failed"]


@dataclass(frozen=True)
class Flag:
    kind: FlagKind
    text: str


@dataclass(frozen=True)
class Source:
    """Where a fact or figure comes from, as a page cites it: link, date, badges, note."""

    url: str
    as_of: str
    flags: tuple[Flag, ...] = ()
    note: str | None = None
    see_also: tuple[str, ...] = ()
    context: str | None = None


@dataclass(frozen=True)
class ShownFact:
    value: str
    source: Source


def age_flags(as_of: date | str, today: date | None = None) -> list[Flag]:
    """The stale flag when the fact is older than the staleness rule allows (`benchlib.core.freshness`)."""
    return [Flag("stale", stale_text(as_of))] if is_stale(as_of, today) else []


def fact_flags(fact: Sourced, today: date | None = None) -> list[Flag]:
    """The warnings a reader should see next to a fact."""
    flags: list[Flag] = []
    if fact.status == "unverified":
        flags.append(Flag("unverified", "unverified"))
    elif fact.status == "conflict":
        flags.append(Flag("conflict", "conflicting sources"))
    return flags + age_flags(fact.as_of, today)


def dated_text(fact: Any) -> str:
    """A fact's date as a page shows it: the source's own, or "read on" the day an undated source was read."""
    day = fact.as_of.isoformat() if isinstance(fact.as_of, date) else str(fact.as_of)
    return f"read on {day}" if getattr(fact, "read_on", False) else day


def cited(fact: Any, *, ages: bool = True, note: bool = True, today: date | None = None) -> Source:
    """Where ``fact`` comes from (a spec figure, a price, a platform fact, a claim), as every page cites it.

    Its status badge (unverified, conflicting) always; the stale badge only where the fact can age:
    a chip's specification (``ages=False``) does not, prices, reported figures and advice do.
    """
    flags = [flag for flag in fact_flags(fact, today) if ages or flag.kind != "stale"]
    return Source(
        str(fact.source),
        dated_text(fact),
        tuple(flags),
        getattr(fact, "note", None) if note else None,
        tuple(str(url) for url in getattr(fact, "see_also", ())),
    )


def _source(fact: Sourced, today: date | None) -> Source:
    return cited(fact, today=today)


def _shown(fact: Fact, today: date | None) -> ShownFact:
    return ShownFact(fact.value, _source(fact, today))


def _data(data: PlatformsData | None) -> PlatformsData:
    return data if data is not None else load_platforms()


# --- Pieces the buying guide's blocks (`benchlib.site.buying_guide`) put into their own HTML -------------


def badge(flag: Flag) -> str:
    """One badge as HTML."""
    return render("badges.html", flags=[flag])


def stale_badge(as_of: date | str, today: date | None = None) -> str:
    """The 'may be out of date' badge as HTML, or nothing for a fresh fact."""
    return render("badges.html", flags=age_flags(as_of, today))


def render_fact(fact: Fact, today: date | None = None) -> str:
    """A fact's value with its source, date, badges and note under it."""
    return render("fact.html", fact=_shown(fact, today))


# --- Platform data blocks -------------------------------------------------------------------------


def badge_legend(meanings: dict[FlagKind, str]) -> str:
    """Each badge as the pages draw it, followed by what it means (the page's words).

    A meaning may say ``{months}``: the staleness rule's months. The stale sample is dated just
    past that rule, so it is one the site would really mark.
    """
    samples = {
        "unverified": Flag("unverified", "unverified"),
        "conflict": Flag("conflict", "conflicting sources"),
        "stale": Flag("stale", stale_text(months_before(build_date(), STALE_AFTER_MONTHS + 1))),
    }
    items = [
        {"flag": samples[kind], "meaning": text.format(months=STALE_AFTER_MONTHS)} for kind, text in meanings.items()
    ]
    return render("badge_legend.html", items=items)


def tier_table(
    platform_id: str,
    tiers: list[str] | None = None,
    fields: list[str] | None = None,
    *,
    after_verdict: bool = False,
    today: date | None = None,
    data: PlatformsData | None = None,
) -> str:
    """One row per field, one column per tier; equal facts in neighbouring tiers share a cell, and
    neighbouring fields with equal facts share a row.

    ``after_verdict`` leaves out the facts the page's verdict (`verdict`, `glance_table`) shows,
    so no fact appears twice on a page; a cell left with none points up to it.
    """
    platform = _data(data).platforms[platform_id]
    columns = [platform.tiers[tier_id] for tier_id in tiers or list(platform.tiers)]
    shown = verdict_facts(platform) if after_verdict else []
    rows: list[dict[str, Any]] = []
    previous: list[list[Fact]] | None = None
    for field in fields or list(TIER_FIELDS):
        values = [[fact for fact in tier.field(field) if fact not in shown] for tier in columns]
        if not any(values):
            continue
        if values == previous:
            label = FIELD_LABELS[field]
            rows[-1]["label"] += f" and {label if label.isupper() else label.lower()}"
            continue
        previous = values
        cells = []
        i = 0
        while i < len(values):
            span = 1
            while i + span < len(values) and values[i + span] == values[i]:
                span += 1
            cells.append({"span": span, "facts": [_shown(fact, today) for fact in values[i]]})
            i += span
        rows.append({"label": FIELD_LABELS[field], "cells": cells})
    return render("tier_table.html", tiers=[tier.name for tier in columns], rows=rows)


def fact_list(
    items: list[tuple[str, str]],
    *,
    match: str | None = None,
    after_verdict: bool = False,
    today: date | None = None,
    data: PlatformsData | None = None,
) -> str:
    """A bullet list of facts, each item a ('platform/tier', field) pair, for use inside prose.

    ``after_verdict`` leaves out the facts the platform page's verdict already shows.
    """
    data = _data(data)
    shown = []
    for ref, field in items:
        platform, tier = data.tier(ref)
        skip = verdict_facts(platform) if after_verdict else []
        facts = [
            _shown(fact, today) for fact in tier.field(field) if (not match or match in fact.value) and fact not in skip
        ]
        if facts:
            shown.append({"label": f"{platform.tier_title(tier)}, {FIELD_LABELS[field].lower()}", "facts": facts})
    if not shown:
        raise ValueError(f"no facts matched {items!r} (match={match!r})")
    return render("fact_list.html", items=shown)


def history_list(platform_id: str, *, today: date | None = None, data: PlatformsData | None = None) -> str:
    """What a platform used to give, oldest first, each with its source and date."""
    platform = _data(data).platforms[platform_id]
    if not platform.history:
        raise ValueError(f"platform {platform_id!r} has no history in the platforms data")
    items = [{"label": None, "facts": [_shown(fact, today)]} for fact in platform.history]
    return render("fact_list.html", items=items)


def limits_table(
    refs: list[str],
    fields: tuple[str, ...] = ("max_session", "idle_timeout", "quotas"),
    *,
    today: date | None = None,
    data: PlatformsData | None = None,
) -> str:
    """One row per tier ('platform/tier'), one column per field."""
    data = _data(data)
    rows = []
    for ref in refs:
        platform, tier = data.tier(ref)
        cells = [[_shown(fact, today) for fact in tier.field(field)] for field in fields]
        # The tier on its own line, unless the platform's name already says it.
        own = "" if platform.tier_title(tier) == platform.name else tier.name
        rows.append({"platform": platform.name, "tier": own, "cells": cells})
    return render("limits_table.html", fields=[FIELD_LABELS[field] for field in fields], rows=rows)


def detection_table(platform_id: str, *, today: date | None = None, data: PlatformsData | None = None) -> str:
    """The signals benchlib's probe uses to recognise the platform."""
    platform = _data(data).platforms[platform_id]
    return render(
        "detection_table.html",
        platform=platform.name,
        signals=platform.detection.signals,
        detection=_source(platform.detection, today),
    )


def decision_table(
    *,
    here: str = "platforms/index.md",
    after_glance: list[str] | None = None,
    today: date | None = None,
    data: PlatformsData | None = None,
) -> str:
    """The 'Which one should I use?' table: one row per need, the first tier listed is the best bet.

    ``here`` is the docs page showing the table, for the links to each platform's page.
    ``after_glance`` names the tiers of a `glance_table` above it: facts that table shows are not
    shown again.
    """
    data = _data(data)
    shown = glance_facts(after_glance, data=data) if after_glance else []
    rows = []
    for need in data.needs:
        platform, tier = data.tier(need.tiers[0])
        matching = [f for f in tier.field(need.field) if not need.match or need.match in f.value]
        if not matching:
            raise ValueError(f"need {need.need!r}: {need.tiers[0]} has no {need.field} fact matching {need.match!r}")
        facts = [_shown(f, today) for f in matching if f not in shown]
        also = [_page(*data.tier(ref), here) for ref in need.tiers[1:]]
        rows.append(
            {
                "need": need.need,
                "best": _page(platform, tier, here),
                "facts": facts,
                "advice": need.advice,
                "also": also,
            }
        )
    return render("decision_table.html", rows=rows)


def _page(platform: Platform, tier: Tier, here: str) -> dict[str, str | None]:
    """A tier's name and a link to its platform's page from the page ``here``."""
    href = page_link(platform.page, here) if platform.page else None
    return {"name": platform.tier_title(tier), "href": href}


# --- The verdict: what each platform page answers before any detail ---------------------------------

# The questions a verdict answers, each from a tier's first (headline) fact of the field.
HEADLINE_FIELDS: dict[str, str] = {
    "accelerators": "GPU",
    "quotas": "GPU hours",
    "max_session": "Session length",
    "persistence": "What survives a restart",
}
PAID_LABEL = "What paying buys"


@dataclass(frozen=True)
class Derived:
    """A figure computed from sourced facts: the figure, then each input's number and source."""

    label: str
    text: str
    inputs: tuple[ShownFact, ...]


def _number(fact: Fact, pattern: str) -> float:
    """The number ``pattern``'s group finds in a fact's text: derived figures start from what the source says."""
    found = re.search(pattern, fact.value)
    if found is None:
        raise ValueError(f"the fact {fact.value!r} ({fact.source}) does not match {pattern!r}")
    return float(found.group(1).replace(",", ""))


def unit_hours(
    platform_id: str, tiers: list[str] | None = None, *, today: date | None = None, data: PlatformsData | None = None
) -> list[Derived]:
    """The GPU-hours each compute-unit tier buys: the units its price names over each GPU's burn rate."""
    platform = _data(data).platforms[platform_id]
    if platform.compute_units is None:
        raise ValueError(f"platform {platform_id!r} sells no compute units in the platforms data")
    derived = []
    for tier_id in tiers or platform.compute_units.tiers:
        tier = platform.tiers[tier_id]
        price, rates = tier.price[0], tier.quotas[0]
        units = _number(price, r"([\d,]+) compute units")
        per = " a month" if "compute units a month" in price.value else ""
        burn = {gpu: _number(rates, rf"{re.escape(gpu)} (\d+(?:\.\d+)?)") for gpu in platform.compute_units.gpus}
        hours = " or ".join(f"{units / rate:,.0f} {gpu} hours" for gpu, rate in burn.items())
        rates_text = ", ".join(f"{gpu} {rate:.2f}" for gpu, rate in burn.items())
        inputs = (
            ShownFact(f"{units:,.0f} units{per}", _source(price, today)),
            ShownFact(f"units burnt at {rates_text} an hour", _source(rates, today)),
        )
        derived.append(Derived(tier.name, f"≈ {hours}{per}", inputs))
    return derived


def _derived_cell(derived: list[Derived]) -> dict[str, Any]:
    """Derived figures for one cell: an input every line shares (a burn rate) is cited once, after them."""
    common = [i for i in derived[0].inputs if all(i in d.inputs for d in derived)] if len(derived) > 1 else []
    lines = [{"label": d.label, "text": d.text, "inputs": [i for i in d.inputs if i not in common]} for d in derived]
    return {"lines": lines, "common": common}


def _headline(platform: Platform, tier: Tier, tier_id: str) -> dict[str, list[Fact]]:
    """A tier's headline facts by question; what paying buys is the platform's own statement, else the
    price (a tier selling compute units shows its price, and the hours it buys beside it)."""
    rows = {label: tier.field(field)[:1] for field, label in HEADLINE_FIELDS.items()}
    units = platform.compute_units
    sells_units = units is not None and tier_id in units.tiers
    rows[PAID_LABEL] = tier.price[:1] if sells_units or not platform.paid else platform.paid
    return rows


def _verdict_rows(platform: Platform) -> dict[str, list[Fact]]:
    """The verdict's facts: the first tier's headline, except that a platform selling compute units
    shows the hours they buy instead of the free tier's price."""
    tier_id, tier = next(iter(platform.tiers.items()))
    rows = _headline(platform, tier, tier_id)
    if platform.compute_units and not platform.paid:
        rows[PAID_LABEL] = []
    return rows


def verdict_facts(platform: Platform) -> list[Fact]:
    """Every fact a platform's verdict shows, for the blocks below it to leave out."""
    return [fact for facts in _verdict_rows(platform).values() for fact in facts]


def verdict(platform_id: str, *, today: date | None = None, data: PlatformsData | None = None) -> str:
    """The answer a platform page opens with: its GPU, GPU hours, session length, what survives a
    restart and what paying buys, each from its source (hours bought are derived, with their inputs)."""
    data = _data(data)
    platform = data.platforms[platform_id]
    tier = next(iter(platform.tiers.values()))
    derived = unit_hours(platform_id, today=today, data=data) if platform.compute_units else []
    rows = [
        {
            "label": label,
            "facts": [_shown(fact, today) for fact in facts],
            "derived": _derived_cell(derived) if label == PAID_LABEL and derived else None,
        }
        for label, facts in _verdict_rows(platform).items()
    ]
    return render("verdict.html", title=f"{platform.name}, {tier.name.lower()} tier", rows=rows)


def glance_table(refs: list[str], *, here: str, today: date | None = None, data: PlatformsData | None = None) -> str:
    """One row per tier ('platform/tier'), one column per verdict question, each cell the tier's
    headline fact; a cell equal to the one above it says so ("As Google Colab Pro"), where a cell
    spanning rows would look blank in the lower rows on a phone. ``here`` is the page showing the
    table, for the links to each platform's page."""
    data = _data(data)
    rows: list[dict[str, Any]] = []
    above: dict[str, Any] = {}
    for ref in refs:
        platform, tier = data.tier(ref)
        platform_id, _, tier_id = ref.partition("/")
        units = platform.compute_units
        cells = []
        for label, facts in _headline(platform, tier, tier_id).items():
            derived = (
                unit_hours(platform_id, [tier_id], today=today, data=data)
                if label == PAID_LABEL and units is not None and tier_id in units.tiers
                else []
            )
            if not derived and above.get(label) is not None and above[label]["key"] == facts:
                cells.append({"same_as": above[label]["tier"]})
                continue
            shown = [_shown(f, today) for f in facts]
            above[label] = {"key": facts, "tier": platform.tier_title(tier)}
            cells.append({"facts": shown, "derived": _derived_cell(derived) if derived else None})
        name = _page(platform, tier, here)
        # A row about the page showing the table links nowhere.
        rows.append({"name": name if platform.page != here else {**name, "href": None}, "cells": cells})
    return render("glance_table.html", questions=[*HEADLINE_FIELDS.values(), PAID_LABEL], rows=rows)


def glance_facts(refs: list[str], *, data: PlatformsData | None = None) -> list[Fact]:
    """Every fact `glance_table` shows for ``refs``, for a page's other blocks to leave out."""
    data = _data(data)
    found = []
    for ref in refs:
        platform, tier = data.tier(ref)
        found += [f for facts in _headline(platform, tier, ref.partition("/")[2]).values() for f in facts]
    return found


def sources(platform_id: str, *, today: date | None = None, data: PlatformsData | None = None) -> str:
    """Every source behind a platform's facts, newest first, with the fields it backs."""
    platform = _data(data).platforms[platform_id]
    backs: dict[str, set[str]] = {}
    dates: dict[str, date] = {}
    for tier in platform.tiers.values():
        for field in TIER_FIELDS:
            for fact in tier.field(field):
                url = str(fact.source)
                backs.setdefault(url, set()).add(FIELD_LABELS[field].lower())
                dates[url] = max(dates.get(url, fact.as_of), fact.as_of)
    listed = [
        {
            "url": url,
            "as_of": dates[url].isoformat(),
            "flags": age_flags(dates[url], today),
            "backs": sorted(backs[url]),
        }
        for url in sorted(backs, key=lambda u: dates[u], reverse=True)
    ]
    return render("sources_list.html", sources=listed)


# --- Reported figures (the results frame's reported rows) ---------------------------------------


def _reported_rows() -> pd.DataFrame:
    frame = site_data().frame
    return frame[frame["source"] == REPORTED].sort_values(["file", "record"], kind="stable")


def _reported_text(value: float, unit: str) -> str:
    """A reported value as its source gave it: whole numbers from 100 up, else three digits."""
    text = f"{value:,.0f}" if abs(value) >= 100 else f"{value:.3g}"
    return text if unit == "score" else f"{text} {unit}"


def _reported_source(row: dict[str, Any], today: date | None) -> Source:
    url, as_of = row["source_url"], row["source_as_of"]
    if not (isinstance(url, str) and url and isinstance(as_of, str) and as_of):
        raise ValueError(f"reported results {row['run_id']!r} ({row['file']}) lack a source URL or date")
    context = row["source_context"]
    return Source(url, as_of, tuple(age_flags(as_of, today)), context=context if isinstance(context, str) else "")


def reported_table(workload: str, *, runs: str = "", today: date | None = None) -> str:
    """Published figures for one workload: where they ran, the setting, the value, the figures the
    workload derives from it, numbered sources with dates, and each source's own account of the
    setting in a collapsible note.

    ``runs`` keeps only results files whose run id starts with it (one article's figures).
    """
    reported = _reported_rows()
    mine = reported[(reported["workload"] == workload) & reported["run_id"].str.startswith(runs)]
    records = mine[mine["derived"] == ""].to_dict("records")
    if not records:
        raise ValueError(f"no reported figures for workload {workload!r} (runs {runs!r}) in the reported results")
    derived = mine[mine["derived"] != ""]
    # One column per derived figure, its unit in the head; a cell's title says how it was derived.
    derived_heads = dict(zip(derived["metric"], derived["unit"]))
    derived_cells = {
        (r["record"], r["metric"]): {"value": value_text(r["value"]), "how": r["derived"]}
        for r in derived.to_dict("records")
    }
    params = [{k: _plain(v) for k, v in params_of(r).items()} for r in records]
    # Parameters every row shares are said once, under the table; rows show only what differs.
    shared = {k: v for k, v in params[0].items() if all(p.get(k) == v for p in params)}
    cited: list[Source] = []
    keys: list[tuple[str, str]] = []
    rows = []
    for record, record_params in zip(records, params):
        key = (record["source_url"], record["source_as_of"])
        if key not in keys:
            keys.append(key)
            cited.append(_reported_source(record, today))
        value = record["value"]
        rows.append(
            {
                "machine": record["machine_label"],
                "ran_on": record["device_name"] if isinstance(record["device_name"], str) else record["device"],
                "setting": ", ".join(f"{k}={v}" for k, v in record_params.items() if k not in shared),
                "value": "" if pd.isna(value) else _reported_text(value, record["unit"]),
                "status": record["status"],
                "derived": [derived_cells.get((record["record"], metric)) for metric in derived_heads],
                "note": record["message"] if isinstance(record["message"], str) else "",
                "source": keys.index(key) + 1,
            }
        )
    first = records[0]
    better = "higher" if first["higher_is_better"] else "lower"
    return render(
        "reported_table.html",
        rows=rows,
        value_title=f"{first['metric']} ({better} is better)",
        derived_titles=[f"{metric[:1].upper()}{metric[1:]} ({unit})" for metric, unit in derived_heads.items()],
        show_setting=any(row["setting"] for row in rows),
        show_note=any(row["note"] for row in rows),
        numbered=len(cited) > 1,
        shared=", ".join(f"{k}={v}" for k, v in shared.items()),
        sources=cited,
    )


def memory_units(run_id: str, *, today: date | None = None) -> str:
    """A reported GPU memory size, spelled out in GiB and GB, to show why tools disagree."""
    reported = _reported_rows()
    found = reported[reported["run_id"] == run_id]
    if not found.empty:
        results = results_file(found["file"].iloc[0])
        gpus = results.machine.accelerators.nvidia if results.machine.accelerators else []
        sized = [gpu for gpu in gpus if gpu.memory_total_bytes]
        if sized:
            n = sized[0].memory_total_bytes or 0
            return render(
                "memory_units.html",
                machine=results.machine.label,
                gpu=sized[0].name,
                gib=f"{n / 2**30:.2f}",
                mib=f"{n / 2**20:,.0f}",
                gb=f"{n / 1e9:.2f}",
                source=_reported_source(found.iloc[0].to_dict(), today),
            )
    raise ValueError(f"no reported GPU memory size in {run_id!r} among the reported results")


# --- Other data the guide pages show -------------------------------------------------------------


def bf16_table(names: list[str]) -> str:
    """Which accelerators compute bfloat16 in hardware, from the accelerator specs file."""
    from benchlib.catalog.gpus import find_accelerator

    rows = []
    for name in names:
        spec = find_accelerator(name)
        if spec is None:
            raise KeyError(f"accelerator {name!r} is not in benchlib/data/gpus.yaml")
        fact = spec.bf16_supported
        if fact is None:
            raise ValueError(f"accelerator {name!r} has no bf16_supported entry in benchlib/data/gpus.yaml")
        rows.append({"name": spec.name, "bf16": bool(fact.value), "source": cited(fact, ages=False)})
    return render("bf16_table.html", rows=rows)


def sixteen_bit_ceiling(names: list[str]) -> str:
    """Each GPU's datasheet fp32 peak against its fp16 tensor-core peak: how much faster 16-bit
    matrix multiplies can run at best (reported specs; a spec does not age, so no stale mark)."""
    from benchlib.catalog.gpus import find_gpu

    rows = []
    for name in names:
        spec = find_gpu(name)
        fp32, fp16 = spec.fp32_tflops, spec.fp16_tensor_tflops
        if fp32 is None or fp16 is None:
            raise ValueError(f"{name}: benchlib/data/gpus.yaml needs fp32_tflops and fp16_tensor_tflops for this table")
        rows.append(
            {
                "name": spec.name,
                "facts": [
                    ShownFact(value_text(float(f.value)), cited(f, ages=False, note=False)) for f in (fp32, fp16)
                ],
                "ratio": f"{fp16.value / fp32.value:.0f}×",
            }
        )
    return render("sixteen_bit_table.html", rows=rows)
