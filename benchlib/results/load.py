"""Results files into a tidy pandas DataFrame: one row per measurement, machine fields flattened.

Every file is read through the store (`read_results`), so its schema checks and plausibility marks
apply to every reader. A record's params become columns here, once: ``param_<name>``, absent
(NaN) where a record has no such param.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from benchlib.results.schema import ResultsFile
from benchlib.results.store import iter_result_paths, read_results

if TYPE_CHECKING:
    import pandas as pd

PARAM_PREFIX = "param_"
COLUMNS = [
    "file",
    "run_id",
    "created",
    "suite",
    "complete",
    "disturbed",
    "benchlib_version",
    "methodology_version",
    "provenance",
    "source_url",
    "source_as_of",
    "source_context",
    "machine_id",
    "machine_label",
    "platform",
    "cpu_model",
    "gpu_name",
    "gpu_count",
    "python_version",
    "torch_version",
    "tf_version",
    "workload",
    "framework",
    "device",
    "device_name",
    "dtype",
    "metric",
    "unit",
    "higher_is_better",
    "value",
    "status",
    "message",
    "peak",
    "efficiency",
    "median_s",
    "iqr_s",
    "n",
    "noisy",
]


def rows_of(results: ResultsFile, file: str) -> list[dict]:
    import pandas as pd  # here, not above: the score's `params_of` is on every command's import path

    m = results.machine
    gpus = m.accelerators.nvidia if m.accelerators else []
    sw = m.software
    base = {
        "file": file,
        "run_id": results.run_id,
        "created": pd.Timestamp(results.created).tz_convert("UTC")
        if results.created.tzinfo
        else pd.Timestamp(results.created, tz="UTC"),
        "suite": results.suite,
        "complete": results.complete,
        "disturbed": results.disturbed,
        "benchlib_version": results.benchlib_version,
        "methodology_version": results.methodology_version,
        "provenance": results.provenance.kind,
        "source_url": results.provenance.source_url,
        "source_as_of": results.provenance.as_of.isoformat() if results.provenance.as_of else None,
        "source_context": results.provenance.context,
        "machine_id": m.id,
        "machine_label": m.label,
        "platform": m.platform.name,
        "cpu_model": m.host.cpu.model if m.host else None,
        "gpu_name": gpus[0].name if gpus else None,
        "gpu_count": len(gpus),
        "python_version": sw.python if sw else None,
        "torch_version": sw.torch if sw else None,
        "tf_version": sw.tensorflow if sw else None,
    }
    rows = []
    for r in results.measurements:
        rows.append(
            base
            | {
                "workload": r.workload,
                "framework": r.framework,
                "device": r.device,
                "device_name": r.device_name,
                "dtype": r.dtype,
                **{f"{PARAM_PREFIX}{key}": value for key, value in r.params.items()},
                "metric": r.metric.name,
                "unit": r.metric.unit,
                "higher_is_better": r.metric.higher_is_better,
                "value": r.value,
                "status": r.status,
                "message": r.message,
                "peak": r.peak,
                "efficiency": r.efficiency,
                "median_s": r.stats.median if r.stats else None,
                "iqr_s": r.stats.iqr if r.stats else None,
                "n": r.stats.n if r.stats else None,
                "noisy": r.stats.noisy if r.stats else None,
            }
        )
    return rows


def load_results(paths: Iterable[Path | str] | Path | str) -> pd.DataFrame:
    """Load results files and folders. A malformed file raises ResultsError naming file and field."""
    import pandas as pd

    rows: list[dict] = []
    for path in iter_result_paths(paths):
        rows.extend(rows_of(read_results(path), str(path)))
    params = sorted({key for row in rows for key in row if key.startswith(PARAM_PREFIX)})
    return pd.DataFrame(rows, columns=COLUMNS + params)


def params_of(row: pd.Series | dict) -> dict:
    """A frame row's params as the record had them (the ``param_*`` columns that are set)."""
    return {
        key.removeprefix(PARAM_PREFIX): value
        for key, value in dict(row).items()
        if key.startswith(PARAM_PREFIX) and not _missing(value)
    }


def _missing(value: object) -> bool:
    return value is None or (isinstance(value, float) and value != value)
