"""Predicted against published: peak memories other people measured, and what `benchlib fit` predicts for them.

The measurements are reported data (``benchlib/data/published_llm_memory.yaml``: source, date, quoted setup).
Each comparable row is predicted with the same allowances as every other prediction, chosen
once (``benchlib.predict.memory``), and compared with what the source measured:

* ``torch.cuda.max_memory_allocated`` and torchtune's ``active_bytes.all.peak`` count live
  tensors: compared with the tensor peak.
* ``torch.cuda.max_memory_reserved`` also counts the caching allocator's slack: compared with
  the tensor peak plus the allocator allowance.

A row is left out, with its reason, when its setup is not fully stated, when its source says it
can't be a plain run (``SUSPECT``), when it uses memory techniques the prediction doesn't model
(activation offloading to the CPU), when its storage is not one of ``WEIGHTS``, or when the
prediction fails for its model (the reason names the error).

Two things some rows state are predicted as the default instead, and show up in their error:
bitsandbytes' paged 32-bit AdamW is predicted as AdamW (the same states, kept on the GPU), and
NF4 without double quantization as NF4 with it (0.37 bits per weight less).
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from benchlib.catalog.language_models import resolve_model
from benchlib.core.package_data import SourcedRow, data_file, sourced_rows
from benchlib.predict.llm_memory import WEIGHTS, LLMPredictor, Setup, make_setup

PUBLISHED = data_file("published_llm_memory.yaml")
UNITS = {"GB": 1e9, "GiB": 1024**3, "MiB": 1024**2}
RESERVED = "max_memory_reserved"
TARGET_MEDIAN_ERROR = 0.10


class PublishedRow(SourcedRow):
    """One published peak memory with its source, as the data file states them."""

    @property
    def measured_bytes(self) -> float:
        return float(self.row["measured"]) * UNITS[self.row["unit"]]

    @property
    def counts_reserved(self) -> bool:
        return RESERVED in self.source["measure"]

    @property
    def plain_transformers(self) -> bool:
        return "transformers" in self.source["code"] and "not transformers" not in self.source["code"]

    def excluded(self) -> str | None:
        """Why this row can't be compared, or None."""
        r = self.row
        note = r.get("note") or ""
        if note.startswith("SUSPECT"):
            return "the source's figure is below weights + gradients + optimizer state alone"
        if r["weights"] not in WEIGHTS:
            return f"{r['weights']} storage is not modelled"
        if "OFFLOADING" in note.upper():
            return "activations offloaded to the CPU, which the prediction doesn't model"
        needed = ["batch", "seq_len", "dtype"] + (
            ["lora_rank", "lora_targets"] if r["mode"] in ("lora", "qlora") else []
        )
        missing = [k for k in needed if r.get(k) is None]
        if r["mode"] != "inference" and r.get("grad_checkpointing") is None:
            missing.append("grad_checkpointing")
        if missing:
            return f"the source doesn't state {', '.join(missing)}"
        return None

    def setup(self) -> Setup:
        r = self.row
        targets = r["lora_targets"]
        return make_setup(
            r["mode"],
            weights=r["weights"],
            dtype=r["dtype"],
            batch=r["batch"],
            seq_len=r["seq_len"],
            lora_rank=r.get("lora_rank") if r["mode"] in ("lora", "qlora") else None,
            lora_targets=",".join(targets) if isinstance(targets, list) else "all-linear",
            grad_checkpointing=bool(r.get("grad_checkpointing")),
        )


@dataclass(frozen=True)
class Comparison:
    """A published row and its prediction (None where the row is left out)."""

    published: PublishedRow
    predicted_bytes: float | None
    reason: str | None

    @property
    def error(self) -> float | None:
        """Signed relative error of the prediction: (predicted - measured) / measured."""
        if self.predicted_bytes is None:
            return None
        return self.predicted_bytes / self.published.measured_bytes - 1


@cache
def published_rows() -> tuple[PublishedRow, ...]:
    return tuple(PublishedRow(source, row) for source, row in sourced_rows(PUBLISHED))


def compare(row: PublishedRow, *, overhead: float, cache_dir: Path | None = None) -> Comparison:
    """Predict ``row``'s peak and compare it with what its source measured."""
    reason = row.excluded()
    if reason is not None:
        return Comparison(row, None, reason)
    setup = row.setup()
    try:
        predictor = LLMPredictor(resolve_model(row.row["model"]), setup, cache_dir)
        size = setup.batch if setup.trains else setup.seq_len
        tensor_peak = predictor.peak(size)
    except Exception as exc:  # a model the tracer can't run yet (e.g. a mixture of experts) is left out, saying why
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
        return Comparison(row, None, f"the prediction failed: {type(exc).__name__}: {first[:200]}")
    predicted = tensor_peak * (1 + overhead) if row.counts_reserved else tensor_peak
    return Comparison(row, float(predicted), None)


def median_abs_error(comparisons: list[Comparison]) -> float | None:
    errors = [abs(c.error) for c in comparisons if c.error is not None]
    return statistics.median(errors) if errors else None


def median_abs_error_by_weights(comparisons: list[Comparison]) -> dict[str, tuple[float, int]]:
    """The median absolute error and the number of compared rows per weight format (bf16, gptq-int4, ...)."""
    formats: dict[str, list[Comparison]] = {}
    for c in comparisons:
        if c.error is not None:
            formats.setdefault(c.published.row["weights"], []).append(c)
    return {w: (median_abs_error(cs) or 0.0, len(cs)) for w, cs in sorted(formats.items())}
