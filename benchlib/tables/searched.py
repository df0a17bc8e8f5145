"""fit's prediction beside each measured largest-batch search in the results: computed once and committed.

A search's record (`benchlib max-batch`, or `benchlib campaign`'s language models) belongs to a
workload that declares a ``largest batch`` check; `benchlib.results.searches.request_of` rebuilds
the search from the record and `benchlib.derive.searched` asks fit. Each prediction traces a model,
so `benchlib tables` writes them to ``benchlib/tables/searched.json``, keyed by the search
(`search_key`), and the buying guide's *Prediction against measurement* reads them
(`benchlib.site.buying_guide.measured_vs_predicted`). A search the table doesn't hold (a results
folder of your own) stops the site build until this table is computed for that folder.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import asdict
from pathlib import Path
from typing import Any

from benchlib.catalog.gpus import find_gpu, reported_gpu
from benchlib.core.paths import reported_dir, results_dir
from benchlib.derive.searched import fit_prediction, model_label
from benchlib.predict.memory import gpu_memory
from benchlib.results.schema import MeasurementRecord
from benchlib.results.searches import request_of, search_key
from benchlib.results.store import iter_result_paths, read_results
from benchlib.tables import Table, code_digests, digest_json, file_digests, register
from benchlib.workloads import LARGEST_BATCH, checks_of

NAME = "searched"
PACKAGES = ("torch", "torchvision", "transformers")


def _measured_searches(folder: Path | None = None) -> Iterator[tuple[Path, MeasurementRecord]]:
    """Every measured (not reported) record in the results folder whose workload declares a ``largest batch`` check."""
    folder = folder or results_dir()
    reported = reported_dir().resolve()
    for path in iter_result_paths(folder) if folder.is_dir() else []:
        if reported in Path(path).resolve().parents:
            continue
        results = read_results(path)
        if results.provenance.kind == "reported":
            continue
        for record in results.measurements:
            checks = checks_of(record.workload, record.framework, record.metric.name, record.device, record.params)
            if any(c.predicts == LARGEST_BATCH for c in checks):
                yield Path(path), record


def prediction_row(record: MeasurementRecord) -> dict[str, Any]:
    """The table's row for one search: its key, the model as readers know it and fit's largest batch (None: no prediction)."""
    request = request_of(record.params, record.dtype, record.device)
    prediction = fit_prediction(request, record.device_name)
    return {
        "key": search_key(request, record.device_name),
        "model": model_label(request),
        "max_batch": None if prediction is None else prediction.max_batch,
    }


def compute(on_step: Callable[[str], None]) -> dict[str, Any]:
    rows: dict[str, dict[str, Any]] = {}
    for path, record in _measured_searches():
        on_step(f"{path.name}: {record.params.get('model')} {record.dtype}")
        row = prediction_row(record)
        rows[row["key"]] = row
    return {"searches": list(rows.values())}


def inputs() -> dict[str, str]:
    """The results files that hold a measured search, the memory fit counts for each GPU searched, and
    the code that predicts."""
    folder = results_dir()
    searches = list(_measured_searches(folder))
    gpus = sorted({spec.name for _, record in searches if (spec := reported_gpu(record.device_name)) is not None})
    return {
        **file_digests(sorted(dict.fromkeys(path for path, _ in searches)), folder, "results"),
        "GPU memory": digest_json({name: asdict(gpu_memory(find_gpu(name))) for name in gpus}),
        **code_digests(__name__),
    }


def summary(table: dict[str, Any]) -> str:
    return f"{len(table['searches'])} measured searches"


TABLE = register(
    Table(
        name=NAME,
        description="fit's prediction beside each measured largest-batch search in the results folder",
        compute=compute,
        inputs=inputs,
        steps=lambda: max(1, sum(1 for _ in _measured_searches())),
        packages=PACKAGES,
        summary=summary,
    )
)
