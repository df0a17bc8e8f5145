"""Build-time blocks for the platform pages: tables and fact lists rendered from the data files.

Pages call these from markdown-exec blocks (``print(tier_table("colab"))``), so no platform
number is typed into Markdown. Every fact shows its source and date; facts that are
unverified, conflicting or older than twelve months carry a visible badge. All text from the
data files is HTML-escaped.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from html import escape
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlsplit

from benchlib.freshness import STALE_AFTER_MONTHS, is_stale, stale_text
from benchlib.platforms import FIELD_LABELS, TIER_FIELDS, Fact, PlatformsData, Sourced, load_platforms
from benchlib.results.schema import MeasurementRecord, ResultsFile
from benchlib.results.store import read_results
from benchlib.site.sources import stop_build_on_invalid_results

REPORTED_DIR = Path(__file__).resolve().parents[2] / "results" / "reported"

FlagKind = Literal["unverified", "conflict", "stale", "failed"]

# Inline styles keep the badges visible whatever the site's stylesheet holds; the Material
# colour variables make the neutral badge follow the light/dark scheme.
_BADGE_BASE = (
    "display:inline-block;margin:0 0 0 .3em;padding:0 .4em;border-radius:.2em;"
    "font-size:.7em;font-weight:700;line-height:1.6;white-space:nowrap;vertical-align:middle;"
)
_BADGE_STYLE: dict[FlagKind, str] = {
    "unverified": "background:#ffb74d;color:#000;",
    "conflict": "background:#e53935;color:#fff;",
    "stale": "background:var(--md-default-fg-color--lightest);color:var(--md-default-fg-color);",
    "failed": "background:#e53935;color:#fff;",
}
_META_STYLE = "font-size:.8em;color:var(--md-default-fg-color--light);"


@dataclass(frozen=True)
class Flag:
    kind: FlagKind
    text: str


def age_flags(as_of: date | str, today: date | None = None) -> list[Flag]:
    """The stale flag when the fact is older than the staleness rule allows (`benchlib.freshness`)."""
    return [Flag("stale", stale_text(as_of))] if is_stale(as_of, today) else []


def fact_flags(fact: Sourced, today: date | None = None) -> list[Flag]:
    """The warnings a reader should see next to a fact."""
    flags: list[Flag] = []
    if fact.status == "unverified":
        flags.append(Flag("unverified", "unverified"))
    elif fact.status == "conflict":
        flags.append(Flag("conflict", "conflicting sources"))
    return flags + age_flags(fact.as_of, today)


def badge(flag: Flag) -> str:
    return (
        f'<span class="fg-badge fg-badge--{flag.kind}" style="{_BADGE_BASE}{_BADGE_STYLE[flag.kind]}">'
        f"{escape(flag.text)}</span>"
    )


def stale_badge(as_of: date | str, today: date | None = None) -> str:
    """The 'may be out of date' badge as HTML, or nothing for a fresh fact."""
    return "".join(badge(flag) for flag in age_flags(as_of, today))


def badge_legend() -> str:
    """What each badge means, drawn with the badges themselves."""
    items = [
        (Flag("unverified", "unverified"), "a single user report, or a figure we could not confirm."),
        (Flag("conflict", "conflicting sources"), "sources disagree; the note under the fact says how."),
        (Flag("stale", "as of 2024-05, may be out of date"),
         f"the source is more than {STALE_AFTER_MONTHS} months older than this build of the site."),
    ]
    return "<ul>" + "".join(f"<li>{badge(flag)} {escape(text)}</li>" for flag, text in items) + "</ul>"


def _link(url: object, text: str | None = None) -> str:
    href = str(url)
    label = text or urlsplit(href).netloc.removeprefix("www.")
    return f'<a href="{escape(href)}">{escape(label)}</a>'


def _source_html(url: object, as_of: date | str, flags: list[Flag], note: str | None, see_also: list[object]) -> str:
    when = as_of.isoformat() if isinstance(as_of, date) else as_of
    parts = [f"{_link(url)}, {escape(when)}"] + [f"also {_link(extra)}" for extra in see_also]
    line = f'<span class="fg-source" style="{_META_STYLE}">{" · ".join(parts)}</span>'
    line += "".join(badge(flag) for flag in flags)
    if note:
        line += f'<br><span class="fg-note" style="{_META_STYLE}">{escape(note)}</span>'
    return line


def source_line(fact: Sourced, today: date | None = None) -> str:
    """'source, date' plus badges and the note, as one small HTML line."""
    return _source_html(fact.source, fact.as_of, fact_flags(fact, today), fact.note, list(fact.see_also))


def render_fact(fact: Fact, today: date | None = None) -> str:
    return f'<span class="fg-fact">{escape(fact.value)}</span><br>{source_line(fact, today)}'


def _render_facts(facts: list[Fact], today: date | None) -> str:
    if len(facts) == 1:
        return render_fact(facts[0], today)
    items = "".join(f"<li>{render_fact(fact, today)}</li>" for fact in facts)
    return f'<ul style="margin:0;padding-left:1em">{items}</ul>'


def _table(head: list[str], rows: list[str]) -> str:
    # A plain <table> gets Material's table style and its scrolling wrapper, like Markdown tables.
    thead = "<thead><tr>" + "".join(f"<th>{cell}</th>" for cell in head) + "</tr></thead>"
    return f"<table>{thead}<tbody>{''.join(rows)}</tbody></table>"


def _data(data: PlatformsData | None) -> PlatformsData:
    return data if data is not None else load_platforms()


def tier_table(
    platform_id: str,
    tiers: list[str] | None = None,
    fields: list[str] | None = None,
    *,
    today: date | None = None,
    data: PlatformsData | None = None,
) -> str:
    """One row per field, one column per tier; equal facts in neighbouring tiers share a cell."""
    data = _data(data)
    platform = data.platforms[platform_id]
    tier_ids = tiers or list(platform.tiers)
    columns = [platform.tiers[tier_id] for tier_id in tier_ids]
    rows = []
    for field in fields or list(TIER_FIELDS):
        cells = []
        values = [tier.field(field) for tier in columns]
        i = 0
        while i < len(values):
            span = 1
            while i + span < len(values) and values[i + span] == values[i]:
                span += 1
            colspan = f' colspan="{span}"' if span > 1 else ""
            cells.append(f"<td{colspan}>{_render_facts(values[i], today)}</td>")
            i += span
        rows.append(f"<tr><th>{escape(FIELD_LABELS[field])}</th>{''.join(cells)}</tr>")
    head = [""] + [escape(tier.name) for tier in columns]
    return _table(head, rows)


def fact_list(
    items: list[tuple[str, str]],
    *,
    match: str | None = None,
    today: date | None = None,
    data: PlatformsData | None = None,
) -> str:
    """A bullet list of facts, each item a ('platform/tier', field) pair, for use inside prose."""
    data = _data(data)
    lines = []
    for ref, field in items:
        platform, tier = data.tier(ref)
        facts = [fact for fact in tier.field(field) if not match or match in fact.value]
        if not facts:
            continue
        label = f"<strong>{escape(f'{platform.name} {tier.name}, {FIELD_LABELS[field].lower()}')}:</strong>"
        if len(facts) == 1:
            lines.append(f"<li>{label} {render_fact(facts[0], today)}</li>")
        else:
            inner = "".join(f"<li>{render_fact(fact, today)}</li>" for fact in facts)
            lines.append(f"<li>{label}<ul>{inner}</ul></li>")
    if not lines:
        raise ValueError(f"no facts matched {items!r} (match={match!r})")
    return f'<ul class="fg-facts">{"".join(lines)}</ul>'


def history_list(platform_id: str, *, today: date | None = None, data: PlatformsData | None = None) -> str:
    """What a platform used to give, oldest first, each with its source and date."""
    data = _data(data)
    platform = data.platforms[platform_id]
    if not platform.history:
        raise ValueError(f"platform {platform_id!r} has no history in the platforms data")
    items = "".join(f"<li>{render_fact(fact, today)}</li>" for fact in platform.history)
    return f'<ul class="fg-facts">{items}</ul>'


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
        cells = "".join(f"<td>{_render_facts(tier.field(field), today)}</td>" for field in fields)
        rows.append(f"<tr><th>{escape(platform.name)}<br>{escape(tier.name)}</th>{cells}</tr>")
    head = ["Platform"] + [escape(FIELD_LABELS[field]) for field in fields]
    return _table(head, rows)


def detection_table(platform_id: str, *, today: date | None = None, data: PlatformsData | None = None) -> str:
    """The signals benchlib's probe uses to recognise the platform."""
    data = _data(data)
    platform = data.platforms[platform_id]
    kinds = {
        "module": "Python module",
        "env": "environment variable",
        "env_prefix": "environment variables starting with",
        "path": "path",
    }
    rows = []
    for signal in platform.detection.signals:
        shown = f"{signal.name}={signal.value}" if signal.value else signal.name
        rows.append(
            f"<tr><td>{escape(kinds[signal.kind])}</td><td><code>{escape(shown)}</code></td>"
            f"<td>{escape(signal.note or '')}</td></tr>"
        )
    if not rows:
        return f"<p>benchlib has no signal for {escape(platform.name)}. {source_line(platform.detection, today)}</p>"
    table = _table(["Kind", "Signal", "Why"], rows)
    return f'{table}<p style="{_META_STYLE}">{source_line(platform.detection, today)}</p>'


def decision_table(*, base: str = "../", today: date | None = None, data: PlatformsData | None = None) -> str:
    """The 'Which one should I use?' table: one row per need, the first tier listed is the best bet.

    ``base`` is the relative URL from the page showing the table to the site root.
    """
    data = _data(data)
    rows = []
    for need in data.needs:
        platform, tier = data.tier(need.tiers[0])
        facts = [f for f in tier.field(need.field) if not need.match or need.match in f.value]
        if not facts:
            raise ValueError(f"need {need.need!r}: {need.tiers[0]} has no {need.field} fact matching {need.match!r}")
        also = []
        for ref in need.tiers[1:]:
            other, other_tier = data.tier(ref)
            also.append(_page_link(other.page, f"{other.name} {other_tier.name}", base))
        best = _page_link(platform.page, f"{platform.name} {tier.name}", base)
        rows.append(
            f"<tr><td><strong>{escape(need.need)}</strong></td>"
            f"<td>{best}<br>{_render_facts(facts, today)}</td>"
            f"<td>{escape(need.advice)}</td><td>{', '.join(also) or '—'}</td></tr>"
        )
    return _table(["If you need", "Best bet, and what the source says", "Why", "Also look at"], rows)


def _page_link(page: str | None, label: str, base: str) -> str:
    if not page:
        return escape(label)
    # Raw HTML links are not rewritten by MkDocs, so build the directory URL relative to the page.
    target = page.removesuffix(".md")
    target = target.removesuffix("index") if target.endswith("index") else f"{target}/"
    return f'<a href="{escape(base + target)}">{escape(label)}</a>'


def sources(platform_id: str, *, today: date | None = None, data: PlatformsData | None = None) -> str:
    """Every source behind a platform's facts, newest first, with the fields it backs."""
    data = _data(data)
    platform = data.platforms[platform_id]
    backs: dict[str, set[str]] = {}
    dates: dict[str, date] = {}
    for tier in platform.tiers.values():
        for field in TIER_FIELDS:
            for fact in tier.field(field):
                url = str(fact.source)
                backs.setdefault(url, set()).add(FIELD_LABELS[field].lower())
                dates[url] = max(dates.get(url, fact.as_of), fact.as_of)
    items = [
        f"<li>{_link(url, url)} ({dates[url].isoformat()}){stale_badge(dates[url], today)}: "
        f"{escape(', '.join(sorted(backs[url])))}</li>"
        for url in sorted(backs, key=lambda u: dates[u], reverse=True)
    ]
    return f'<ul class="fg-sources">{"".join(items)}</ul>'


# --- Reported figures (results/reported/*.json) -------------------------------------------------


def load_reported(directory: Path = REPORTED_DIR) -> list[ResultsFile]:
    """Every reported results file, validated against the results schema."""
    files = sorted(directory.glob("*.json"))
    if not files:
        raise FileNotFoundError(f"no reported results in {directory}")
    with stop_build_on_invalid_results():
        return [read_results(path, mark_implausible=False) for path in files]


def conv2d_flops(params: dict[str, Any]) -> float:
    """Floating-point operations of the seeds' conv op (SAME padding), times the TPU shards."""
    n, side, c = (int(params[k]) for k in ("batch", "side", "channels"))
    filters, kernel, stride = (int(params[k]) for k in ("filters", "kernel", "stride"))
    shards = int(params.get("shards", 1))
    out = -(-side // stride)
    return 2.0 * n * out * out * filters * kernel * kernel * c * shards


def _format_value(record: MeasurementRecord) -> str:
    status = "" if record.status == "ok" else badge(Flag("failed", record.status))
    if record.value is None:
        return status
    value = record.value
    text = f"{value:,.0f}" if abs(value) >= 100 else f"{value:.3g}"
    unit = "" if record.metric.unit == "score" else f" {escape(record.metric.unit)}"
    return f"{escape(text)}{unit}{status}"


def reported_table(
    workload: str,
    *,
    runs: str = "",
    today: date | None = None,
    directory: Path = REPORTED_DIR,
) -> str:
    """Published figures for one workload: where they ran, the setting, the value, numbered
    sources with dates, and each source's original context in a collapsible note.

    ``runs`` keeps only results files whose run id starts with it (one article's figures).
    """
    found = [
        (results, record)
        for results in load_reported(directory)
        if results.run_id.startswith(runs)
        for record in results.measurements
        if record.workload == workload
    ]
    if not found:
        raise ValueError(f"no reported figures for workload {workload!r} (runs {runs!r}) in {directory}")
    # Parameters every row shares are said once, under the table; rows show only what differs.
    shared = {
        key: value
        for key, value in found[0][1].params.items()
        if all(record.params.get(key) == value for _, record in found)
    }
    sources: list[ResultsFile] = []
    table: list[dict[str, str]] = []
    for results, record in found:
        key = (str(results.provenance.source_url), results.provenance.as_of)
        number = next(
            (i for i, r in enumerate(sources, 1) if (str(r.provenance.source_url), r.provenance.as_of) == key), None
        )
        if number is None:
            sources.append(results)
            number = len(sources)
        row = {
            "Machine": escape(results.machine.label),
            "Ran on": escape(record.device_name or record.device),
            "Setting": escape(", ".join(f"{k}={v}" for k, v in record.params.items() if k not in shared)),
            "value": _format_value(record),
            "Note": escape(record.message or ""),
            "Source": f"[{number}]",
        }
        if workload == "conv2d":
            row["Implied TFLOP/s"] = _implied_tflops(record)
        table.append(row)
    metric = found[0][1].metric
    value_title = f"{escape(metric.name)} ({'higher' if metric.higher_is_better else 'lower'} is better)"
    order = ["Machine", "Ran on", "Setting", "value", "Implied TFLOP/s", "Note", "Source"]
    # Leave out columns that say nothing: no setting differs, no notes, a single source.
    columns = [c for c in order if any(row.get(c) for row in table) and not (c == "Source" and len(sources) == 1)]
    head = [value_title if c == "value" else c for c in columns]
    rows = ["<tr>" + "".join(f"<td>{row.get(c, '')}</td>" for c in columns) + "</tr>" for row in table]
    common = ", ".join(f"{k}={v}" for k, v in shared.items())
    marks = [f"[{i}] " if len(sources) > 1 else "Source: " for i in range(1, len(sources) + 1)]
    listed = "".join(f"<li>{mark}{_provenance_line(r, today)}</li>" for mark, r in zip(marks, sources))
    details = "".join(f"<p>{mark}{escape(r.provenance.context or '')}</p>" for mark, r in zip(marks, sources))
    return (
        _table(head, rows)
        + (f'<p style="{_META_STYLE}">Every row: {escape(common)}.</p>' if common else "")
        + f'<ul style="{_META_STYLE}list-style:none;margin-left:0">{listed}</ul>'
        + f'<details class="note"><summary>Original setting of these figures</summary>{details}</details>'
    )


def _provenance_line(results: ResultsFile, today: date | None) -> str:
    provenance = results.provenance
    if provenance.source_url is None or provenance.as_of is None:
        raise ValueError(f"reported results {results.run_id!r} lack a source URL or date")
    return _source_html(provenance.source_url, provenance.as_of, age_flags(provenance.as_of, today), None, [])


def _implied_tflops(record: MeasurementRecord) -> str:
    if record.value is None or record.metric.unit != "ms":
        return ""
    tflops = conv2d_flops(record.params) / (record.value / 1000.0) / 1e12
    return escape(f"{tflops:.3g}")


# --- Other data the guide pages show -------------------------------------------------------------


def bf16_table(names: list[str]) -> str:
    """Which accelerators compute bfloat16 in hardware, from the accelerator specs file."""
    from benchlib.specs import find_accelerator

    rows = []
    for name in names:
        spec = find_accelerator(name)
        if spec is None:
            raise KeyError(f"accelerator {name!r} is not in benchlib/data/gpus.yaml")
        fact = spec.bf16_supported
        if fact is None:
            raise ValueError(f"accelerator {name!r} has no bf16_supported entry in benchlib/data/gpus.yaml")
        answer = "yes" if fact.value else "no: use float16 with loss scaling"
        flags = [Flag("unverified", "unverified")] if fact.status == "unverified" else []
        source = _source_html(fact.source, str(fact.as_of), flags, fact.note, [])
        rows.append(f"<tr><td>{escape(spec.name)}</td><td>{escape(answer)}</td><td>{source}</td></tr>")
    return _table(["Accelerator", "bfloat16 in hardware", "Source"], rows)


def memory_units(run_id: str, *, directory: Path = REPORTED_DIR) -> str:
    """A reported GPU memory size, spelled out in GiB and GB, to show why tools disagree."""
    for results in load_reported(directory):
        if results.run_id != run_id:
            continue
        gpus = results.machine.accelerators.nvidia if results.machine.accelerators else []
        sized = [gpu for gpu in gpus if gpu.memory_total_bytes]
        if not sized:
            break
        n = sized[0].memory_total_bytes or 0
        return (
            f"<p>{escape(results.machine.label)}: {escape(sized[0].name)} with "
            f"<strong>{n / 2**30:.2f} GiB</strong> = {n / 2**20:,.0f} MiB = <strong>{n / 1e9:.2f} GB</strong>. "
            f"{_provenance_line(results, None)}</p>"
        )
    raise ValueError(f"no reported GPU memory size in {run_id!r} under {directory}")
