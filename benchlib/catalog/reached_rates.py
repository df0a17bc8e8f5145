"""What each GPU reaches of its peaks: reported matmul TFLOPS and memory bandwidth per card.

Reported data (``benchlib/data/reached_rates.yaml``: ml-engineering's MAMF table, crowd-sourced
``torch.mm`` timings, ``torch`` copy bandwidths, each row with its source, date and quoted line).
A language-model prediction (`benchlib.predict.engines`) runs a card's matmuls at the best
half-precision rate reported for it, and streams memory no faster than the best bandwidth reported
for it; a card without a figure keeps its architecture's MAMF fraction, labelled estimated.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

from benchlib.core.package_data import data_file, sourced_rows

RATES_FILE = data_file("reached_rates.yaml")
HALF = ("fp16", "bf16")


@dataclass(frozen=True)
class Reached:
    """The best figure reported for one GPU and kind, with where it comes from."""

    value: float
    dtype: str | None
    source: str
    url: str
    as_of: str


@cache
def _best() -> dict[tuple[str, str], Reached]:
    best: dict[tuple[str, str], Reached] = {}
    for source, row in sourced_rows(RATES_FILE):
        if row["kind"] == "matmul" and row.get("dtype") not in HALF:
            continue
        key = (str(row["gpu"]), str(row["kind"]))
        if key not in best or float(row["value"]) > best[key].value:
            as_of = str(row.get("as_of") or source.get("as_of") or "")
            best[key] = Reached(float(row["value"]), row.get("dtype"), source["id"], source["url"], as_of)
    return best


def reached_matmul(gpu: str) -> Reached | None:
    """The best half-precision (fp16 or bf16) matmul TFLOPS reported for ``gpu``."""
    return _best().get((gpu, "matmul"))


def reached_bandwidth(gpu: str) -> Reached | None:
    """The best device-memory bandwidth (GB/s) reported for ``gpu``."""
    return _best().get((gpu, "bandwidth"))
