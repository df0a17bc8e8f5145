"""Predicted against published training throughput: every reported GPU throughput we hold.

Lambda's ResNet-50 rows (``results/reported/lambda-dlbench-*.json``, FP32 and AMP, Lambda's own
batch sizes) are predicted with `predict_speed`'s model and compared. The GPUs are split before
any fitting: alternate GPUs in the alphabetical order of their names form the calibration half,
the only rows `fit_memory_efficiency` looks at; the other half is held out, and both are
reported. The rows are `benchlib.derive.compared`'s records, which the site reads back from the
committed table. Which reported figures are predicted is each workload's declaration (a
`PredictionCheck` of kind ``training throughput``); figures whose workload says why it has none
(`NotPredicted`: Lambda's 2020 tables of networks benchlib can't build, the seeds' Colab and
Kaggle epoch times whose setup isn't stated in full) are listed with that reason.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from benchlib.catalog.gpus import UnknownGPU, find_gpu
from benchlib.derive.compared import CALIBRATION, HELD_OUT, Comparison, NotCompared, median_abs_error
from benchlib.predict.count import OpCost
from benchlib.predict.roofline import MEMORY_EFFICIENCY, gpu_rates, step_time

# The model Lambda's compared rows train: a GPU Lambda never ran is predicted training it.
MODEL = "resnet50"
PRECISIONS = {"FP32": "fp32", "AMP": "fp16"}
TARGET_MEDIAN_ERROR = 0.20
FIT_GRID = tuple(round(0.30 + 0.05 * i, 2) for i in range(15))  # 0.30 ... 1.00
# A GPU Lambda never ran is predicted at this batch (Lambda's A100 40GB and A6000 sizes sit either side).
UNRUN_BATCH = 512


@dataclass(frozen=True)
class _Row:
    path: Path
    gpu: str
    model: str
    precision: str
    batch: int
    value: float
    source: str
    as_of: str


def _reported(folder: Path | None = None) -> tuple[list[_Row], list[NotCompared]]:
    """Every reported figure with a speed prediction declared for it, and those whose workload says why none.

    Only figures count: a record with a value, on a named device.
    """
    from benchlib.core.paths import reported_dir
    from benchlib.results.store import read_results
    from benchlib.workloads import TRAINING_THROUGHPUT, checks_of, not_predicted

    rows, skipped = [], {}
    for path in sorted((folder or reported_dir()).glob("*.json")):
        results = read_results(path)
        source = results.provenance.source_url or path.name
        as_of = str(results.provenance.as_of or "")
        for record in results.measurements:
            if record.value is None or not record.device_name:
                continue
            shape = (record.workload, record.framework, record.metric.name, record.device, record.params)
            if any(c.predicts == TRAINING_THROUGHPUT for c in checks_of(*shape)):
                rows.append(
                    _Row(
                        path,
                        record.device_name,
                        str(record.params["model"]),
                        record.params["precision"],
                        int(record.params["batch"]),
                        record.value,
                        source,
                        as_of,
                    )
                )
            elif (reason := not_predicted(*shape)) is not None:
                key = (source, reason.what, reason.why)
                skipped[key] = skipped.get(key, 0) + 1
    return rows, [NotCompared(source, what, count, reason) for (source, what, reason), count in skipped.items()]


def halves(gpus: Iterable[str]) -> dict[str, str]:
    """Each GPU's half: alternate GPUs in alphabetical order are ``calibration``, the rest ``held out``."""
    return {gpu: (CALIBRATION if i % 2 == 0 else HELD_OUT) for i, gpu in enumerate(sorted(set(gpus)))}


@cache
def training_ops(model: str, dtype: str, batch: int) -> tuple[OpCost, ...]:
    """The ops of one training step of one of fit's models; they depend on the dtype and batch, not the GPU."""
    from benchlib.models.trainable import get_model
    from benchlib.predict.speed import builtin_ops

    return tuple(builtin_ops(get_model(model), "train", dtype, batch)[0])


def _predict(model: str, gpu: str, dtype: str, batch: int, memory_efficiency: float) -> float:
    rates = dataclasses.replace(gpu_rates(find_gpu(gpu)), memory_efficiency=memory_efficiency)
    return batch / step_time(list(training_ops(model, dtype, batch)), rates).seconds


def compare(
    memory_efficiency: float = MEMORY_EFFICIENCY, folder: Path | None = None
) -> tuple[list[Comparison], list[NotCompared]]:
    """Every comparable reported row with its prediction, and what was left out (a GPU the specs
    don't list, or whose specs lack a figure the prediction needs, is left out too, named)."""
    from benchlib.predict.roofline import UnknownSpeedGPU

    rows, not_compared = _reported(folder)
    half = halves(row.gpu for row in rows)
    compared = []
    for row in rows:
        try:
            predicted = _predict(row.model, row.gpu, PRECISIONS[row.precision], row.batch, memory_efficiency)
        except UnknownGPU as exc:
            # The message's advice after ";" is for the command line, not a page.
            reason = (
                str(exc).split(";")[0] if isinstance(exc, UnknownSpeedGPU) else "benchlib's GPU specs don't list it"
            )
            not_compared.append(NotCompared(row.source, f"{row.gpu} {row.precision}", 1, reason))
            continue
        compared.append(
            Comparison(row.gpu, row.precision, row.batch, row.value, predicted, half[row.gpu], row.source, row.as_of)
        )
    return compared, not_compared


def compared_files(folder: Path | None = None) -> list[Path]:
    """The reported files holding a row `compare` predicts."""
    return sorted({row.path for row in _reported(folder)[0]})


def fit_memory_efficiency(folder: Path | None = None) -> float:
    """The grid value whose predictions of the calibration half have the lowest median absolute error."""

    def score(efficiency: float) -> float:
        rows, _ = compare(efficiency, folder)
        return median_abs_error(row for row in rows if row.half == CALIBRATION)

    return min(FIT_GRID, key=score)


def unrun_gpus(names: Iterable[str] | None = None, folder: Path | None = None) -> list[tuple[str, str, float]]:
    """(gpu, precision, predicted images/s) for GPUs with specs that Lambda's table (in ``folder``) doesn't have."""
    from benchlib.catalog.gpus import load_accelerators
    from benchlib.predict.roofline import UnknownSpeedGPU

    ran = {row.gpu for row in _reported(folder)[0]}
    predicted = []
    for spec in load_accelerators():
        if spec.kind != "gpu" or spec.name in ran or (names is not None and spec.name not in names):
            continue
        for precision, dtype in PRECISIONS.items():
            try:
                predicted.append(
                    (spec.name, precision, _predict(MODEL, spec.name, dtype, UNRUN_BATCH, MEMORY_EFFICIENCY))
                )
            except UnknownSpeedGPU:
                continue
    return predicted
