"""Which GPU did the platform give me? The share of each GPU per platform, tier and month.

Read from the results files the site already loads: each session on a notebook platform is one
count. Measured files count by machine and day (a contribution's runs share one probe); reported
files, the articles this guide grew from, count by source and GPU, and their bars say so. A
platform's tier shows where the probe or the source names it, or where the platform has only one.
Runtimes without a GPU (CPU, TPU)
are left out: they are chosen, not drawn.
"""

from __future__ import annotations

from typing import Any

import altair as alt
import pandas as pd

from benchlib.catalog.platforms import load_platforms
from benchlib.results.schema import PlatformInfo
from benchlib.site.data import REPORTED, SiteData, results_file, site_data
from benchlib.site.figures import figure_context
from benchlib.site.render import page_link, render

CHART_ID = "gpu-lottery"
CONTRIBUTE_PAGE = "benchmarks/run-it-yourself.md"
CONTRIBUTED = "contributed"
UNKNOWN_TIER = "tier not known"
COLUMNS = ["platform", "tier", "month", "gpu", "kind", "key", "source_url", "as_of"]


def platform_and_tier(platform: PlatformInfo) -> tuple[str, str]:
    """The platform's and tier's names as the platform pages give them. A probe's variant names the
    tier where it is one (a reported Colab Pro run); on a platform with one tier, that tier is it
    (Kaggle's variant is the kind of session, not a tier)."""
    known = load_platforms().platforms.get(platform.name)
    if known is None:
        return platform.name, UNKNOWN_TIER
    if platform.variant in known.tiers:
        return known.name, known.tiers[platform.variant].name
    only = list(known.tiers.values())
    return known.name, only[0].name if len(only) == 1 else UNKNOWN_TIER


def sessions(data: SiteData) -> pd.DataFrame:
    """One row per session on a notebook platform with an NVIDIA GPU: platform, tier, month, GPU, kind."""
    frame = data.frame
    files = frame.loc[~frame["platform"].isin(["local"]) & frame["platform"].notna(), "file"].unique()
    rows = []
    for path in files:
        results = results_file(path)
        gpus = results.machine.accelerators.nvidia if results.machine.accelerators else []
        if not gpus:
            continue
        platform, tier = platform_and_tier(results.machine.platform)
        reported = results.provenance.kind == REPORTED
        when = results.provenance.as_of if reported else (results.machine.probed_at or results.created).date()
        rows.append(
            {
                "platform": platform,
                "tier": tier,
                "month": f"{when:%Y-%m}",
                "gpu": gpus[0].name + (f" ×{len(gpus)}" if len(gpus) > 1 else ""),
                "kind": REPORTED if reported else CONTRIBUTED,
                # What makes one session: an article's GPU, or a machine on one day.
                "key": f"{results.provenance.source_url}|{gpus[0].name}"
                if reported
                else f"{results.machine.id}|{when}",
                "source_url": results.provenance.source_url,
                "as_of": str(results.provenance.as_of) if reported else None,
            }
        )
    return pd.DataFrame(rows, columns=COLUMNS).drop_duplicates("key")


def shares(found: pd.DataFrame) -> pd.DataFrame:
    """Each GPU's share of its bar, and how many sessions the bar rests on; one bar per platform,
    tier, month and kind. Contributions replace what was reported for the same platform and tier."""
    contributed = set(map(tuple, found.loc[found["kind"] == CONTRIBUTED, ["platform", "tier"]].values))
    keep = found[(found["kind"] == CONTRIBUTED) | ~found[["platform", "tier"]].apply(tuple, axis=1).isin(contributed)]
    bar = ["platform", "tier", "month", "kind"]
    counts = keep.groupby([*bar, "gpu"], as_index=False).agg(
        sessions=("key", "size"), source_url=("source_url", "first"), as_of=("as_of", "first")
    )
    counts["bar_sessions"] = counts.groupby(bar)["sessions"].transform("sum")
    counts["share"] = counts["sessions"] / counts["bar_sessions"]
    noun = counts["kind"].map({CONTRIBUTED: "contributed", REPORTED: "reported"})
    counts["bar"] = (
        counts["platform"]
        + " · "
        + counts["tier"]
        + " · "
        + counts["month"]
        + " ("
        + counts["bar_sessions"].astype(str)
        + " "
        + noun
        + ")"
    )
    return counts.sort_values(["platform", "tier", "month", "gpu"]).reset_index(drop=True)


def chart_spec(rows: pd.DataFrame) -> dict[str, Any]:
    order = list(dict.fromkeys(rows["bar"]))
    chart = (
        alt.Chart(rows)
        .mark_bar()
        .encode(
            y=alt.Y("bar:N", sort=order, title=None, axis=alt.Axis(labelLimit=320)),
            x=alt.X("sum(share):Q", stack="normalize", title="share of sessions", axis=alt.Axis(format="%")),
            color=alt.Color("gpu:N", title="GPU", legend=alt.Legend(orient="bottom", columns=2)),
            opacity=alt.Opacity(
                "kind:N",
                title="counted from",
                scale=alt.Scale(domain=[CONTRIBUTED, REPORTED], range=[1.0, 0.5]),
                legend=alt.Legend(orient="bottom"),
            ),
            order=alt.Order("gpu:N"),
            tooltip=[
                alt.Tooltip("bar:N", title="bar"),
                alt.Tooltip("gpu:N", title="GPU"),
                alt.Tooltip("sessions:Q", title="sessions"),
                alt.Tooltip("share:Q", title="share", format=".0%"),
            ],
        )
        .properties(
            width="container",
            height=alt.Step(22),
            description="Share of each GPU per platform, tier and month, with the sessions each bar rests on",
        )
    )
    return chart.to_dict()


def lottery(here: str, data: SiteData | None = None) -> str:
    """The chart, its caption and its data table, or a note when no session is known; ``here`` is the page."""
    counted = shares(sessions(data or site_data()))
    contribute_link = page_link(CONTRIBUTE_PAGE, here)
    if counted.empty:
        return render("gpu_lottery_empty.html", contribute_link=contribute_link)
    kinds = counted.drop_duplicates("bar")["kind"].value_counts().to_dict()
    return render(
        "gpu_lottery.html",
        chart={"title": "Which GPU you get"},
        rows=counted.to_dict("records"),
        counts={CONTRIBUTED: int(kinds.get(CONTRIBUTED, 0)), REPORTED: int(kinds.get(REPORTED, 0))},
        contributed=CONTRIBUTED,
        contribute_link=contribute_link,
        **figure_context(CHART_ID, chart_spec(counted)),
    )
