"""The largest batch that trains: written by ``benchlib max-batch`` (and ``benchlib campaign``), or reported by sources.

``benchlib max-batch`` searches for it on the device in front of you (`benchlib.measure.max_batch`)
and writes one ``max_batch`` record with the answer after its ``peak_memory`` trials; sources
such as Lambda's 2020 tables report it per model and GPU. Not part of any suite.
"""

from __future__ import annotations

from benchlib.results.schema import Metric
from benchlib.workloads import LARGEST_BATCH, PredictionCheck, not_run, register

NAME = "max_batch"
MAX_BATCH = Metric(name="max_batch", unit="samples", higher_is_better=True)
# fit's prediction for the search a record describes (a reported one names models fit may not build).
SEARCHED = PredictionCheck(LARGEST_BATCH, metric=MAX_BATCH.name)
PEAK_MEMORY = Metric(name="peak_memory", unit="bytes", higher_is_better=False)

WORKLOAD = register(
    not_run(
        name=NAME,
        framework="torch",
        description="Largest batch that completes a training step (written by benchlib max-batch, or reported).",
        metric=MAX_BATCH,
        checks=(SEARCHED,),
    )
)
