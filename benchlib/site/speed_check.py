"""Speed predicted from a GPU's specs, next to the throughput others measured: the buying guide's blocks.

`benchlib.derive.published_speed.compare` predicts every row of Lambda's ResNet-50 table and
`unrun_gpus` the GPUs Lambda never ran. Counting ResNet-50's ops at each of Lambda's batch sizes
takes about a minute, so `benchlib tables` computes both into ``benchlib/tables/speed_check.json``
and every block here reads that: the predicted bars of the relative-performance chart
(`benchlib.site.buying_guide.resnet50_throughput`) state the error measured there, and
`predicted_against_reported` shows the comparison itself. A build that reads another reported
folder than the one the table was computed from (a test's, your own) stops, naming the table and
the command that makes it for that folder: nothing is predicted while the site builds.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from benchlib import tables
from benchlib.core.freshness import build_date
from benchlib.core.paths import reported_dir
from benchlib.derive.compared import CALIBRATION, HELD_OUT, Comparison, NotCompared, median_abs_error
from benchlib.site.charts import PREDICTED
from benchlib.site.render import render
from benchlib.site.sources import read_table, table_error

TABLE = "speed_check"

HALVES = (CALIBRATION, HELD_OUT)
PRECISIONS = ("FP32", "AMP")
SUMMARY_LABELS = {CALIBRATION: "Calibration half", HELD_OUT: "Held-out half", "all": "All rows"}
# How many of the most over- and under-predicted rows the block names.
EXTREMES = 3


@dataclass(frozen=True)
class Checked:
    """Lambda's rows with predictions, the rows left out, the GPUs Lambda never ran (predicted),
    and what the predictions used: each GPU's generation and unverified figures, the efficiencies."""

    rows: tuple[Comparison, ...]
    not_compared: tuple[NotCompared, ...]
    unrun: tuple[tuple[str, str, float], ...]
    unrun_batch: int
    gpus: dict[str, dict[str, Any]]
    compute_efficiency: dict[str, float]
    default_compute_efficiency: float
    memory_efficiency: float


@dataclass(frozen=True)
class ErrorSummary:
    """How far one set of rows was off: the median absolute error overall and per precision, and the worst row."""

    label: str
    gpus: int
    rows: int
    median: float
    by_precision: dict[str, float]
    worst: Comparison


def _signature(folder: Path) -> tuple[tuple[str, int, int], ...]:
    return tuple((p.name, p.stat().st_mtime_ns, p.stat().st_size) for p in sorted(folder.glob("*.json")))


def checked() -> Checked:
    """The committed comparison; for a reported folder the table wasn't computed from, a `table_error`.
    Checked once per reported folder and its files."""
    folder = reported_dir()
    return _checked(folder, _signature(folder) if folder.is_dir() else ())


@functools.lru_cache(maxsize=2)
def _checked(folder: Path, _files: tuple[tuple[str, int, int], ...]) -> Checked:
    table = read_table(TABLE)
    committed = {k: v for k, v in table["inputs"].items() if k.startswith("reported/")}
    if committed != tables.reported_digests(folder):
        table_error(tables.stale(TABLE, f"was computed from other reported files than those in {folder}"))
    return from_table(table)


def from_table(table: dict[str, Any]) -> Checked:
    """The comparison a ``speed_check`` table holds (`benchlib.tables.speed_check.speed_check` computes one)."""
    return Checked(
        rows=tuple(Comparison(**{k: v for k, v in r.items() if k != "error"}) for r in table["rows"]),
        not_compared=tuple(NotCompared(**n) for n in table["not_compared"]),
        unrun=tuple((u["gpu"], u["precision"], u["value"]) for u in table["unrun"]),
        unrun_batch=table["unrun_batch"],
        gpus=table["gpus"],
        compute_efficiency=table["compute_efficiency"],
        default_compute_efficiency=table["default_compute_efficiency"],
        memory_efficiency=table["memory_efficiency"],
    )


def _summary(label: str, rows: list[Comparison]) -> ErrorSummary:
    return ErrorSummary(
        label=label,
        gpus=len({r.gpu for r in rows}),
        rows=len(rows),
        median=median_abs_error(rows),
        by_precision={p: median_abs_error(mine) for p in PRECISIONS if (mine := [r for r in rows if r.precision == p])},
        worst=max(rows, key=lambda r: abs(r.error)),
    )


def error_summaries(rows: tuple[Comparison, ...]) -> list[ErrorSummary]:
    """Each half's errors, then all rows' (the last); empty when nothing was compared."""
    if not rows:
        return []
    halves = [_summary(half, mine) for half in HALVES if (mine := [r for r in rows if r.half == half])]
    return [*halves, _summary("all", list(rows))]


def percent(error: float) -> str:
    """A signed error as the pages show it: ``+38%``, ``-25%``, and ``0%`` for what rounds to zero (not ``-0%``)."""
    return "0%" if round(error, 2) == 0 else f"{error:+.0%}"


def _extreme(rows: list[Comparison], direction: str) -> dict[str, Any]:
    """The rows off most in one direction: named with their precision once if they share it."""
    precisions = {r.precision for r in rows}
    shared = precisions.pop() if len(precisions) == 1 else None
    return {
        "direction": direction,
        "precision": shared,
        "rows": [{"gpu": r.gpu, "precision": r.precision, "error": percent(r.error)} for r in rows],
    }


def unrun_rows(unit: str) -> pd.DataFrame:
    """The GPUs Lambda never ran as chart rows of source ``predicted``, named "GPU (predicted)"."""
    result = checked()
    if not result.unrun:
        return pd.DataFrame()
    now = pd.Timestamp.now(tz="UTC")
    return pd.DataFrame(
        [
            {
                "subject": f"{gpu} ({PREDICTED})",
                "setting": precision,
                "value": value,
                "unit": unit,
                "higher_is_better": True,
                "status": "ok",
                "created": now,
                "source": PREDICTED,
                "date": build_date().isoformat(),
                "param_batch": result.unrun_batch,
            }
            for gpu, precision, value in result.unrun
        ]
    )


def chart_note() -> dict[str, Any]:
    """What the chart's caption says of its predicted bars: how many, at what batch, and how far off predictions were."""
    result = checked()
    summaries = {s.label: s for s in error_summaries(result.rows)}
    if not summaries:
        return {"predicted": None}
    overall = summaries["all"]
    unrun = {gpu: result.gpus[gpu] for gpu in dict.fromkeys(g for g, _, _ in result.unrun)}
    checked_generations = dict.fromkeys(sorted(result.gpus[r.gpu]["generation"] for r in result.rows))
    return {
        "predicted": {
            "gpus": len(unrun),
            "batch": f"{result.unrun_batch:,}",
            "rows": overall.rows,
            "median": f"{overall.median:.0%}",
            "held_out": f"{summaries[HELD_OUT].median:.0%}" if HELD_OUT in summaries else None,
            "worst": f"{percent(overall.worst.error)} ({overall.worst.gpu}, {overall.worst.precision})",
            "unverified": [
                (gpu, ", ".join(rates["unverified"])) for gpu, rates in unrun.items() if rates["unverified"]
            ],
            "unchecked_generations": list(
                dict.fromkeys(
                    rates["generation"] for rates in unrun.values() if rates["generation"] not in checked_generations
                )
            ),
            "checked_generations": list(checked_generations),
        }
    }


def _summary_row(summary: ErrorSummary) -> dict[str, Any]:
    worst = summary.worst
    return {
        "half": summary.label,
        "label": SUMMARY_LABELS[summary.label],
        "gpus": summary.gpus,
        "rows": summary.rows,
        "medians": [f"{summary.by_precision[p]:.0%}" if p in summary.by_precision else "" for p in PRECISIONS]
        + [f"{summary.median:.0%}"],
        "worst": f"{percent(worst.error)} ({worst.gpu}, {worst.precision})",
    }


def _code_spans(text: str) -> list[str]:
    """``text`` split at backticks: the odd parts are code."""
    return re.split(r"`([^`]*)`", text)


def predicted_against_reported() -> str:
    """Every Lambda row predicted: the errors of each half and overall, the rows, and the rows left out."""
    result = checked()
    rows = sorted(result.rows, key=lambda r: -r.error)
    over = [r for r in rows if r.error > 0][:EXTREMES]
    under = [r for r in reversed(rows) if r.error < 0][:EXTREMES]
    sources = {(r.source, r.as_of): {"url": r.source, "as_of": r.as_of} for r in rows}
    return render(
        "speed_published.html",
        summary_head=[
            "",
            "GPUs",
            "Rows",
            *((f"Median error, {p}", "absolute") for p in PRECISIONS),
            ("Median error", "absolute, all"),
            "Worst",
        ],
        summaries=[_summary_row(s) for s in error_summaries(result.rows)],
        rows=[
            {
                "gpu": r.gpu,
                "precision": r.precision,
                "batch": f"{r.batch:,}",
                "half": r.half,
                "reported": f"{r.reported:,.0f}",
                "predicted": f"{r.predicted:,.0f}",
                "error": percent(r.error),
            }
            for r in rows
        ],
        extremes=[_extreme(over, "too fast"), _extreme(under, "too slow")] if over and under else [],
        sources=list(sources.values()),
        not_compared=[
            {"what": n.what, "rows": n.rows, "source": n.source, "reason": _code_spans(n.reason)}
            for n in result.not_compared
        ],
        compute_efficiency=[(gen, f"{value:.0%}") for gen, value in result.compute_efficiency.items()],
        default_efficiency=f"{result.default_compute_efficiency:.0%}",
        memory_efficiency=f"{result.memory_efficiency:.0%}",
    )
