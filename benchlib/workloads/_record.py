"""Turning a timing `Measurement` into the results format's `Stats`."""

from __future__ import annotations

from benchlib.core.timing import Measurement
from benchlib.results.schema import Stats


def stats_of(m: Measurement) -> Stats:
    return Stats(
        median=m.median,
        iqr=m.iqr,
        mean=m.mean,
        min=m.min,
        max=m.max,
        n=m.n,
        noisy=m.noisy,
        times=list(m.times),
        number_per_sample=m.number_per_sample,
        warmup_s=m.warmup_s,
        threads=m.threads,
        sync=m.sync,
    )
