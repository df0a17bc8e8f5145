"""Predictions set beside the measurements they predict: what each workload's `PredictionCheck` asks for.

A workload declares which prediction applies to its records (`benchlib.workloads.PredictionCheck`);
this module evaluates them, so nothing here knows a workload by name. `benchlib campaign` prints
`checks` and `sweeps` for the files it wrote; the buying guide's tables use the same evaluations
(`benchlib.tables`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

from benchlib.catalog.gpus import AcceleratorSpec, UnknownGPU, reported_gpu
from benchlib.derive.searched import fit_prediction
from benchlib.results.schema import MeasurementRecord, ResultsFile
from benchlib.results.searches import request_of
from benchlib.workloads import (
    INFERENCE_THROUGHPUT,
    LARGEST_BATCH,
    LONGER_SWEEP,
    PEAK_COMPUTE,
    TRANSFORMER_DECODE,
    TRANSFORMER_STEP,
    PredictionCheck,
    checks_of,
)


@dataclass(frozen=True)
class Check:
    """One prediction next to its measurement."""

    kind: str  # "memory", "largest batch", "throughput", or the workload whose peak rate is checked
    what: str
    predicted: float
    measured: float
    unit: str

    @property
    def error(self) -> float:
        """Predicted over measured, minus one: +10 % predicts 10 % too high."""
        return self.predicted / self.measured - 1


@dataclass(frozen=True)
class Sweep:
    """How much of the long sweep's best the short one reached, and in what share of its time."""

    dtype: str
    short: MeasurementRecord
    long: MeasurementRecord

    @property
    def reached(self) -> float:
        return self.short.value / self.long.value

    @property
    def time_share(self) -> float | None:
        if not self.short.duration_s or not self.long.duration_s:
            return None
        return self.short.duration_s / self.long.duration_s


def _gpu(record: MeasurementRecord) -> AcceleratorSpec | None:
    """The GPU a record ran on, where it ran on one the specs list."""
    return reported_gpu(record.device_name) if record.device == "cuda" else None


def _ok(records: list[MeasurementRecord]) -> Iterator[MeasurementRecord]:
    return (r for r in records if r.status == "ok" and r.value is not None)


def declared(record: MeasurementRecord) -> list[PredictionCheck]:
    """The checks the record's workload declares for it."""
    return checks_of(record.workload, record.framework, record.metric.name, record.device, record.params)


def checks(files: list[ResultsFile]) -> list[Check]:
    """Every prediction benchlib makes for the records in ``files`` that it can check against them."""
    out: list[Check] = []
    for results in files:
        for record in _ok(results.measurements):
            for check in declared(record):
                evaluate = EVALUATORS.get(check.predicts)
                if evaluate is not None:
                    out += evaluate(record)
    return out


def _batch_checks(record: MeasurementRecord) -> list[Check]:
    request = request_of(record.params, record.dtype, record.device)
    prediction = fit_prediction(request, record.device_name)
    if prediction is None:
        return []
    name = request.model.rpartition(":")[2] if request.language_model else request.model
    what = f"{name} {record.dtype}"
    found = [Check("largest batch", what, prediction.max_batch, record.value, "samples")]
    measured_peak = record.params.get("peak_memory_bytes")
    if measured_peak:
        batch = int(record.value)
        found.append(Check("memory", f"{what} at batch {batch}", prediction.peak(batch), measured_peak, "bytes"))
    return found


def _throughput_check(record: MeasurementRecord) -> list[Check]:
    from benchlib.models.trainable import MODELS
    from benchlib.predict.speed import predict_speed

    gpu = _gpu(record)
    model = record.params.get("model")
    if gpu is None or model not in MODELS:
        return []
    try:
        predicted = predict_speed(
            MODELS[model], gpu, mode="inference", dtype=record.dtype or "fp32", batch=int(record.params["batch_size"])
        )
    except (UnknownGPU, ValueError):
        return []
    what = f"{model} inference {record.dtype}, batch {record.params['batch_size']}"
    return [Check("throughput", what, predicted.throughput, record.value, record.metric.unit)]


def _llama_seconds(
    record: MeasurementRecord, mode: str, seq_len: int, decode_context: int
) -> tuple[float, float | None] | None:
    """`benchlib predict`'s seconds for the record's random-weight Llama (the transformer workloads',
    run in eager PyTorch: the transformers engine): one training step, or one decode step reading a
    cache of ``decode_context`` tokens and the prefill of ``seq_len``; None off a GPU the specs know."""
    from benchlib.catalog.language_models import LanguageModel
    from benchlib.models.llama import CONFIG_FIELDS, llama_config
    from benchlib.predict.engines import ENGINES
    from benchlib.predict.llm_memory import make_setup
    from benchlib.predict.llm_speed import count_inference, count_training
    from benchlib.predict.roofline import gpu_rates

    gpu = _gpu(record)
    if gpu is None:
        return None
    p = record.params
    dtype = record.dtype or "fp32"
    config = llama_config({k: p[k] for k in CONFIG_FIELDS}, max(seq_len, decode_context) + 1)
    model = LanguageModel(str(p["model"]), str(p["model"]), config=config)
    engine = ENGINES["transformers"]
    try:
        rates = gpu_rates(gpu)
    except UnknownGPU:
        return None
    batch = int(p["batch_size"])
    if mode == "train":
        # The workload trains fp32 weights under autocast in the record's dtype, with AdamW.
        setup = make_setup("train", weights="fp32", dtype=dtype, batch=batch, seq_len=seq_len)
        return count_training(model, setup).time(rates, engine).seconds, None
    setup = make_setup("inference", weights=dtype, dtype=dtype, batch=batch, seq_len=seq_len)
    calls = count_inference(model, setup, decode_context=decode_context)
    if calls.decode is None:
        return None
    return calls.decode.time(rates, engine).seconds, calls.prefill.time(rates, engine).seconds


def _transformer_check(record: MeasurementRecord) -> list[Check]:
    """`benchlib predict`'s tokens/s for the workload's Llama, trained as the workload trains it
    (fp32 weights, AdamW, autocast in the record's dtype), against the step it measured."""
    p = record.params
    batch, seq_len = int(p["batch_size"]), int(p["seq_len"])
    seconds = _llama_seconds(record, "train", seq_len, seq_len)
    if seconds is None:
        return []
    what = f"{record.workload} {p['model']} {record.dtype}, batch {batch} × {seq_len} tokens"
    return [Check("throughput", what, batch * seq_len / seconds[0], record.value, record.metric.unit)]


def _decode_check(record: MeasurementRecord) -> list[Check]:
    """`benchlib predict`'s prefill or decode tokens/s for the workload's Llama. Decoding reads a
    cache that grows from the prompt's length by one token a step: the prediction takes its middle."""
    p = record.params
    batch, prompt, new = int(p["batch_size"]), int(p["prompt_len"]), int(p["new_tokens"])
    prefill = p["phase"] == "prefill"
    seconds = _llama_seconds(record, "inference", prompt, prompt + new // 2)
    if seconds is None:
        return []
    decode_s, prefill_s = seconds
    predicted = batch * prompt / prefill_s if prefill and prefill_s else batch / decode_s
    what = f"{record.workload} {p['model']} {record.dtype} {p['phase']}, batch {batch}, {prompt}-token prompt"
    return [Check("throughput", what, predicted, record.value, record.metric.unit)]


def _peak_check(record: MeasurementRecord) -> list[Check]:
    from benchlib.predict.roofline import gpu_rates

    gpu = reported_gpu(record.device_name)
    if gpu is None:
        return []
    try:
        rates = gpu_rates(gpu)
    except UnknownGPU:
        return []
    if record.dtype not in rates.peaks_tflops:
        return []
    predicted = rates.peaks_tflops[record.dtype] * rates.compute_efficiency
    what = f"{record.workload} {record.dtype}, best of {len(record.params.get('sizes', []))} sizes"
    return [Check(record.workload, what, predicted, record.value, "TFLOPS")]


# What each kind of check a campaign can measure evaluates to. The others (a reported training
# throughput, a batch a source trained with) are compared where those figures are shown.
EVALUATORS: dict[str, Callable[[MeasurementRecord], list[Check]]] = {
    LARGEST_BATCH: _batch_checks,
    INFERENCE_THROUGHPUT: _throughput_check,
    TRANSFORMER_STEP: _transformer_check,
    TRANSFORMER_DECODE: _decode_check,
    PEAK_COMPUTE: _peak_check,
}


def sweeps(files: list[ResultsFile]) -> list[Sweep]:
    """The short and long sweeps of one campaign, per workload and dtype (the long one has more sizes)."""
    by_dtype: dict[tuple[str, str], list[MeasurementRecord]] = {}
    for results in files:
        for record in _ok(results.measurements):
            if record.dtype and any(c.predicts == LONGER_SWEEP for c in declared(record)):
                by_dtype.setdefault((record.workload, record.dtype), []).append(record)
    out = []
    for (_, dtype), records in by_dtype.items():
        if len(records) >= 2:
            by_reach = sorted(
                records, key=lambda r: (max(r.params.get("sizes") or [0]), len(r.params.get("sizes") or []))
            )
            out.append(Sweep(dtype, by_reach[0], by_reach[-1]))
    return out
