"""What a comparison with published figures holds, apart from how its predictions are made.

The comparisons themselves (`benchlib.derive.published_speed`, `benchlib.derive.published_llm_speed`)
trace models, so `benchlib tables` runs them and commits their rows; the site reads those rows back
as the records defined here, and quotes their errors, without importing anything that predicts.
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

# Each comparison splits its rows before fitting anything: constants are fitted on the calibration
# half only, and the held-out half shows how far off the fitted predictions are.
CALIBRATION, HELD_OUT = "calibration", "held out"


@dataclass(frozen=True)
class Comparison:
    """One reported throughput and its prediction."""

    gpu: str
    precision: str
    batch: int
    reported: float
    predicted: float
    half: str
    source: str
    as_of: str

    @property
    def error(self) -> float:
        """Relative error: predicted / reported - 1."""
        return self.predicted / self.reported - 1


@dataclass(frozen=True)
class NotCompared:
    """Reported throughput rows left out, with the reason."""

    source: str
    what: str
    rows: int
    reason: str


def median_abs_error(rows: Iterable[Comparison]) -> float:
    return statistics.median(abs(row.error) for row in rows)


def held_out_error(table: dict[str, Any], engine: str, kind: str) -> dict[str, Any] | None:
    """The held-out error of ``engine``'s ``kind`` predictions (decode, prefill, training) in the
    committed ``llm_speed_check`` table, or None where no published row checks them."""
    for summary in table["summaries"]:
        key = (summary["engine"], summary["kind"], summary["half"], summary.get("gpu_class", "all"))
        if key == (engine, kind, HELD_OUT, "all"):
            sources = sorted(
                {r["source"] for r in table["rows"] if (r["engine"], r["kind"], r["half"]) == (engine, kind, HELD_OUT)}
            )
            return {
                "held_out_median_abs_error": summary["median_abs_error"],
                "held_out_rows": summary["rows"],
                "worst_error": summary["worst_error"],
                # predicted / published at p10 and p90: the band a prediction of this kind fell in
                "band": summary.get("ratio"),
                "source": ", ".join(sources),
                "target": summary["target"],
            }
    return None
