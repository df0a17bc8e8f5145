"""Predicted against published language-model speeds, per engine and kind: computed once and committed.

`benchlib.derive.published_llm_speed` predicts every published row (Qwen's speed benchmarks, the
fine-tuning figures) in its stated setup; counting their calls takes minutes, so `benchlib tables`
writes the rows, the rows left out with their reason, and the error per engine, kind and half to
``benchlib/tables/llm_speed_check.json``. `benchlib predict` and the pages quote the held-out
errors from it (`benchlib.derive.compared.held_out_error`), so that every predicted speed carries
its measured error.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict
from typing import Any

from benchlib.catalog.gpus import find_gpu
from benchlib.catalog.published_llm_speeds import SPEED_FILES, published_rows
from benchlib.derive.compared import HELD_OUT, held_out_error
from benchlib.derive.published_llm_speed import FITTED, compare, count_rows, fit_engine, fit_host, summaries
from benchlib.predict.engines import ENGINES, engine_numbers
from benchlib.predict.hosts import HOSTS
from benchlib.predict.roofline import engine_figures, gpu_rates
from benchlib.tables import Table, TableMissing, code_digests, data_digests, digest_json, read, register

NAME = "llm_speed_check"
PACKAGES = ("torch", "transformers", "peft")


def _engines() -> dict[str, Any]:
    return {name: asdict(engine) for name, engine in ENGINES.items()}


def speed_check(on_step: Callable[[str], None] = lambda step: None) -> dict[str, Any]:
    """Every published row predicted, what was left out, and the constants the calibration half picks."""
    counted, left_out = count_rows(on_row=on_step)
    rows = compare(counted)
    fitted = {name: fit_engine(name, counted) for name in ENGINES}
    return {
        "rows": [{**asdict(r), "error": r.error} for r in rows],
        "left_out": [asdict(x) for x in left_out],
        "summaries": summaries(rows),
        "engines": _engines(),
        "fitted": {name: {field: getattr(e, field) for field in FITTED} for name, e in fitted.items()},
        "fitted_hosts": {name: fit_host(name, counted) for name in HOSTS if name != "server"},
        "hosts": {name: asdict(host) for name, host in HOSTS.items()},
    }


def error_summary(engine: str, kind: str) -> dict[str, Any] | None:
    """The held-out error of ``engine``'s ``kind`` predictions (decode, prefill, training), or None
    where no published row checks them or the table is missing (`benchlib predict` quotes it)."""
    try:
        return held_out_error(read(NAME), engine, kind)
    except TableMissing:
        return None


def inputs() -> dict[str, str]:
    """The published rows and configs, the GPUs' rates, the engines' constants, the hosts (whole: the
    table copies them for the methodology page) and the code that predicts."""
    gpus = sorted({str(p.gpu) for p in published_rows() if p.gpu})
    return {
        **data_digests(*(path.name for path in SPEED_FILES), "language_models.yaml", "reached_rates.yaml"),
        "engine constants": digest_json({name: engine_numbers(engine) for name, engine in ENGINES.items()}),
        "hosts": digest_json({name: asdict(host) for name, host in HOSTS.items()}),
        "GPU rates": digest_json([engine_figures(gpu_rates(find_gpu(g))) for g in gpus]),
        **code_digests(__name__),
    }


def summary(table: dict[str, Any]) -> str:
    held = [s for s in table["summaries"] if s["half"] == HELD_OUT]
    parts = [
        f"{s['engine']} {s['kind']}"
        + ("" if s.get("gpu_class", "all") == "all" else f" on {s['gpu_class']} GPUs")
        + f" {s['median_abs_error']:.0%}"
        for s in held
    ]
    return f"{len(table['rows'])} published rows predicted; held-out median error: " + ", ".join(parts)


TABLE = register(
    Table(
        name=NAME,
        description="predicted against published language-model speeds (decode per engine, fine-tuning)",
        compute=lambda on_step: speed_check(on_step),
        inputs=inputs,
        steps=lambda: len(published_rows()),
        packages=PACKAGES,
        summary=summary,
    )
)
