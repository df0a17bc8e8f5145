"""`benchlib campaign`: what the guide predicts about a device, measured on it within one time budget.

A campaign is a list of steps, each writing ordinary results files into the results folder:

1. the standard suite (``--tiny``: quick), telemetry per workload, as `benchlib run` runs it;
2. the largest batch of two small language models (``--tiny``: one toy Llama) against fit's prediction;
3. `max-batch` for `benchlib fit`'s models in fp16 and fp32, each search starting at fit's prediction;
4. the longer matmul sweep (``full``; ``--tiny``: standard), next to the suite's.

Each step has an expected duration; a step that would end after the budget is not started and is
listed as skipped, by the rule `benchlib run --budget` follows too (`benchlib.measure.budget`).
The checks (`checks`) are derived afterwards from the files alone, so the table can be rebuilt
from a campaign's folder at any time.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from benchlib.catalog.gpus import gpu_spec_name
from benchlib.derive.searched import fit_prediction, request_of
from benchlib.measure.budget import Estimate, TimeBudget
from benchlib.measure.max_batch import TrialRequest
from benchlib.models.trainable import MODELS
from benchlib.results.schema import GPUInfo, Machine, MeasurementRecord, ResultsFile

DEFAULT_MINUTES = 9.0
FIT_DTYPES = ("fp16", "fp32")
TINY_FIT_MODELS = ("unet",)
# Two small shipped models: a trial of each fits a free T4's memory at batch 1.
LANGUAGE_MODELS = ("qwen2.5-0.5b", "llama-3.2-1b")
TINY_LANGUAGE_MODEL = "benchlib.models.llm_step:tiny_llama"
LANGUAGE_SEQ_LEN = 1024
TINY_SEQ_LEN = 32
# A tiny campaign caps each trial, so a search ends in a few small trials on any machine; a CPU
# is always capped (a GPU's own memory is the cap), or a search would fill the machine's memory.
TINY_MEMORY_LIMIT = 16 * 1024**2
CPU_MEMORY_LIMIT = 1024**3
BATCH_LIMIT = 4096
# Expected seconds per step, (full, tiny), until the campaign has timed a step of that kind.
EXPECTED_S = {"suite": (240.0, 60.0), "max_batch": (30.0, 15.0), "llm_max_batch": (60.0, 25.0), "sweep": (90.0, 20.0)}
# The suite cuts itself workload by workload; it may use at least this share of the time left.
SUITE_SHARE = 0.5


@dataclass(frozen=True)
class Step:
    """One unit of a campaign: ``run`` writes results files and returns their paths."""

    kind: str
    title: str
    run: Callable[[Campaign], list[Path]]


@dataclass
class Campaign:
    """The plan and what it has done so far."""

    device: str
    tiny: bool
    out: Path
    machine: Machine
    budget_s: float
    written: list[Path] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)  # "step: why", for steps that stopped on an error
    on_output: Callable[[str], None] = lambda line: None
    suite_budget_s: float | None = None
    budget: TimeBudget = field(init=False)

    def __post_init__(self) -> None:
        self.budget = TimeBudget(self.budget_s)

    @property
    def gpu(self) -> GPUInfo | None:
        """The GPU the campaign runs on, as the probe saw it: reading it through torch would
        initialise CUDA in this process, whose context would then take memory from every trial."""
        from benchlib.measure.conditions import run_gpu_index

        gpus = self.machine.accelerators.nvidia if self.machine.accelerators and self.device == "cuda" else []
        index = run_gpu_index()
        return next((g for g in gpus if g.index == index), gpus[0] if gpus else None)

    @property
    def suite(self) -> str:
        return "quick" if self.tiny else "standard"

    @property
    def long_sweep(self) -> str:
        return "standard" if self.tiny else "full"

    @property
    def memory_limit(self) -> int | None:
        if self.tiny:
            return TINY_MEMORY_LIMIT
        return CPU_MEMORY_LIMIT if self.device == "cpu" else None

    @property
    def timed(self) -> dict[str, list[float]]:
        """Seconds each finished step took, by kind."""
        return self.budget.timed

    def left_s(self) -> float:
        return self.budget.left_s()

    def expected(self, step: Step) -> Estimate:
        """How long ``step`` should take: the mean of its kind's steps so far, else the plan's guess."""
        return self.budget.expected(step.kind, Estimate(EXPECTED_S[step.kind][self.tiny], "the campaign's plan"))

    def expected_s(self, step: Step) -> float:
        return self.expected(step).seconds


def steps(tiny: bool) -> list[Step]:
    """The campaign's steps in the order they run: the most useful first, so a short budget keeps
    them. Most readers fine-tune language models, and most training runs in mixed precision."""
    plan = [Step("suite", "standard suite" if not tiny else "quick suite", run_suite)]
    for model in (TINY_LANGUAGE_MODEL,) if tiny else LANGUAGE_MODELS:
        plan.append(Step("llm_max_batch", f"max-batch {model.rpartition(':')[2]}", _language_step(model)))
    for dtype in FIT_DTYPES:
        for model in TINY_FIT_MODELS if tiny else tuple(MODELS):
            plan.append(Step("max_batch", f"max-batch {model} {dtype}", _search_step(model, dtype)))
    plan.append(Step("sweep", "matmul sweep", run_sweep))
    return plan


def preload_modules(tiny: bool) -> list[str]:
    """What the process server imports once for every child: the suite's modules, and those of the
    max-batch trials, which would otherwise import torchvision and transformers in every trial."""
    from benchlib.measure import max_batch as search
    from benchlib.measure import runner

    suite = runner.preload_modules(runner.select_workloads("quick" if tiny else "standard"))
    return list(
        dict.fromkeys(
            [
                *suite,
                *search.PRELOAD,
                "benchlib.measure.max_batch",
                "benchlib.models.trainable",
                "benchlib.catalog.language_models",
                "transformers",
            ]
        )
    )


def run_campaign(
    campaign: Campaign, plan: list[Step], on_step: Callable[[Step, str], None] = lambda s, what: None
) -> Campaign:
    """Run ``plan``, skipping each step expected to end after the budget; ``on_step`` hears "start", "done" or "skipped"."""
    budget = campaign.budget
    for i, step in enumerate(plan):
        if step.kind == "suite":
            # The suite cuts itself to its budget workload by workload: leave the later steps their time.
            later = sum(campaign.expected_s(s) for s in plan[i + 1 :])
            campaign.suite_budget_s = budget.for_part(later, SUITE_SHARE)
        elif not budget.fits(campaign.expected(step)):
            campaign.skipped.append(step.title)
            on_step(step, "skipped")
            continue
        on_step(step, "start")
        started = time.perf_counter()
        try:
            campaign.written += step.run(campaign)
        except OSError:
            raise  # a full disk or an unwritable folder stops the campaign: the caller says what to do
        except ImportError as exc:
            campaign.failed.append(f"{step.title}: {exc}; install what it needs with pip install 'benchlib[campaign]'")
        except Exception as exc:  # one step's failure must not cost the others
            campaign.failed.append(f"{step.title}: {type(exc).__name__}: {exc}")
        budget.took(step.kind, time.perf_counter() - started)
        on_step(step, "done")
    return campaign


# ----------------------------------------------------------------------------- the steps


def _run_workloads(campaign: Campaign, names: list[str] | None, size: str, budget_s: float | None) -> list[Path]:
    from benchlib.measure import runner

    workloads = runner.select_workloads(size, names)
    outcome = runner.run_suite(
        workloads,
        suite=size,
        device=campaign.device,
        machine=campaign.machine,
        out_dir=campaign.out,
        budget_s=None if budget_s is None else max(budget_s, 0.0),
        isolate=True,
        on_output=lambda w, text: campaign.on_output(text),
        on_done=lambda w, records: campaign.on_output(f"  {w.name}: {_outcome(records)}"),
    )
    return [outcome.path]


def _outcome(records: list[MeasurementRecord]) -> str:
    bad = [r for r in records if r.status != "ok"]
    if not bad:
        return f"{len(records)} measurement(s)"
    return f"{len(records) - len(bad)} ok, {len(bad)} {bad[0].status}: {bad[0].message or ''}"[:200]


def run_suite(campaign: Campaign) -> list[Path]:
    return _run_workloads(campaign, None, campaign.suite, campaign.suite_budget_s or campaign.left_s())


def run_sweep(campaign: Campaign) -> list[Path]:
    # The campaign has already judged it fits (`run_campaign`); the runner's own guess for a workload
    # it hasn't timed here is minutes.
    return _run_workloads(campaign, ["matmul"], campaign.long_sweep, None)


def _search_step(model: str, dtype: str) -> Callable[[Campaign], list[Path]]:
    def run(campaign: Campaign) -> list[Path]:
        size = "small" if campaign.tiny else "full"
        request = TrialRequest(
            model=model, batch=1, size=size, dtype=dtype, device=campaign.device, memory_limit=campaign.memory_limit
        )
        return [_search(campaign, request, fit_guess(request, campaign.gpu))]

    return run


def _language_step(model: str) -> Callable[[Campaign], list[Path]]:
    def run(campaign: Campaign) -> list[Path]:
        request = TrialRequest(
            model=model,
            batch=1,
            dtype=language_dtype(campaign.gpu),
            device=campaign.device,
            memory_limit=campaign.memory_limit,
            seq_len=TINY_SEQ_LEN if campaign.tiny else LANGUAGE_SEQ_LEN,
        )
        return [_search(campaign, request, fit_guess(request, campaign.gpu))]

    return run


def language_dtype(gpu: GPUInfo | None) -> str:
    """bf16 autocast on a GPU that has it (compute capability 8.0 and later), fp16 on older GPUs and
    fp32 on a CPU: how each is usually trained."""
    if gpu is None:
        return "fp32"
    major = int((gpu.compute_capability or "0").split(".")[0])
    return "bf16" if major >= 8 else "fp16"


def _search(campaign: Campaign, request: TrialRequest, guess: int | None) -> Path:
    """Search for the largest batch from ``guess`` (or by doubling without one), writing after each trial."""
    from datetime import datetime, timezone

    from benchlib.core.units import format_bytes
    from benchlib.measure.max_batch import TrialOutcome, search_from_guess, search_max_batch, trial_runner, write_search
    from benchlib.measure.runner import new_run_id
    from benchlib.measure.telemetry import TelemetrySampler

    path = campaign.out / campaign.machine.id / f"{new_run_id(datetime.now(timezone.utc))}.json"
    start, how = (guess, "guess") if guess else (1, "doubling")
    trials: list[TrialOutcome] = []

    def on_trial(outcome: TrialOutcome) -> None:
        trials.append(outcome)
        peak = f", peak {format_bytes(outcome.peak_bytes)}" if outcome.peak_bytes is not None else ""
        campaign.on_output(f"  batch {outcome.batch}: {outcome.status}{peak} ({outcome.seconds:.1f} s)")
        write_search(path, request, trials, machine=campaign.machine, start=start, limit=BATCH_LIMIT, search=how)

    # The GPU's clocks, temperature and power through the whole search (a CPU campaign has none).
    sampler = TelemetrySampler(index=campaign.gpu.index) if campaign.gpu else None
    with sampler or contextlib.nullcontext():
        if guess:
            result = search_from_guess(trial_runner(request), guess, limit=BATCH_LIMIT, on_trial=on_trial)
        else:
            result = search_max_batch(trial_runner(request), limit=BATCH_LIMIT, on_trial=on_trial)
    write_search(
        path,
        request,
        result.trials,
        machine=campaign.machine,
        start=start,
        limit=BATCH_LIMIT,
        result=result,
        search=how,
        telemetry=sampler.result() if sampler else None,
    )
    return path


# ----------------------------------------------------------------------------- predictions


def fit_guess(request: TrialRequest, gpu: GPUInfo | None) -> int | None:
    """Where the search starts: fit's predicted largest batch, if it has one. For a GPU the specs
    don't know, fit's prediction for the usable share of the memory the probe saw on it."""
    from dataclasses import replace

    from benchlib.predict.memory import USABLE_FRACTION

    prediction = fit_prediction(request, gpu.name if gpu else None)
    if prediction is None and gpu is not None and gpu.memory_total_bytes and request.memory_limit is None:
        prediction = fit_prediction(replace(request, memory_limit=int(gpu.memory_total_bytes * USABLE_FRACTION)), None)
    return prediction.max_batch if prediction and prediction.max_batch else None


# ----------------------------------------------------------------------------- checks


@dataclass(frozen=True)
class Check:
    """One prediction next to its measurement."""

    kind: str  # "memory", "largest batch", "throughput" or "matmul"
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
    """How much of the long matmul sweep's best the short one reached, and in what share of its time."""

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


def _ok(records: list[MeasurementRecord]) -> Iterator[MeasurementRecord]:
    return (r for r in records if r.status == "ok" and r.value is not None)


def checks(files: list[ResultsFile]) -> list[Check]:
    """Every prediction benchlib makes for the records in ``files`` that it can check against them."""
    from benchlib.workloads.transformer_train import EAGER

    out: list[Check] = []
    for results in files:
        for record in _ok(results.measurements):
            if record.metric.name == "max_batch":
                out += _batch_checks(record)
            elif record.workload == "inference" and record.metric.name == "throughput":
                out += _throughput_check(record)
            elif record.workload == "transformer_train" and record.params.get("compile") == EAGER:
                out += _transformer_check(record)
            elif record.workload == "llm_decode":
                out += _decode_check(record)
            elif record.workload == "matmul" and record.device == "cuda":
                out += _matmul_check(record)
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
    from benchlib.predict.memory import UnknownGPU
    from benchlib.predict.speed import predict_speed

    gpu = gpu_spec_name(record.device_name) if record.device == "cuda" else None
    model = record.params.get("model")
    if gpu is None or model not in MODELS:
        return []
    try:
        predicted = predict_speed(
            model, gpu, mode="inference", dtype=record.dtype or "fp32", batch=int(record.params["batch_size"])
        )
    except (UnknownGPU, ValueError):
        return []
    what = f"{model} inference {record.dtype}, batch {record.params['batch_size']}"
    return [Check("throughput", what, predicted.throughput, record.value, record.metric.unit)]


def _llama_seconds(
    record: MeasurementRecord, mode: str, seq_len: int, max_positions: int
) -> tuple[float, float | None] | None:
    """`benchlib predict`'s seconds for the record's random-weight Llama (the transformer workloads'):
    one training step, or one decode step and the prefill; None off a GPU the specs know."""
    from benchlib.catalog.language_models import LanguageModel
    from benchlib.models.llama import CONFIG_FIELDS, llama_config
    from benchlib.predict.memory import UnknownGPU
    from benchlib.predict.roofline import gpu_rates, step_time
    from benchlib.predict.speed import language_model_ops

    gpu = gpu_spec_name(record.device_name) if record.device == "cuda" else None
    if gpu is None:
        return None
    p = record.params
    config = llama_config({k: p[k] for k in CONFIG_FIELDS}, max_positions)
    ops, prefill_ops = language_model_ops(
        LanguageModel(str(p["model"]), str(p["model"]), config=config),
        mode,
        record.dtype or "fp32",
        int(p["batch_size"]),
        seq_len,
    )
    try:
        rates = gpu_rates(gpu)
        return step_time(ops, rates).seconds, step_time(prefill_ops, rates).seconds if prefill_ops else None
    except UnknownGPU:
        return None


def _transformer_check(record: MeasurementRecord) -> list[Check]:
    """`benchlib predict`'s tokens/s for the workload's Llama, trained as the workload trains it
    (fp32 weights, AdamW, autocast in the record's dtype), against the eager step it measured."""
    p = record.params
    batch, seq_len = int(p["batch_size"]), int(p["seq_len"])
    seconds = _llama_seconds(record, "train", seq_len, seq_len)
    if seconds is None:
        return []
    what = f"transformer_train {p['model']} {record.dtype}, batch {batch} × {seq_len} tokens"
    return [Check("throughput", what, batch * seq_len / seconds[0], record.value, record.metric.unit)]


def _decode_check(record: MeasurementRecord) -> list[Check]:
    """`benchlib predict`'s prefill or decode tokens/s for llm_decode's Llama. Decoding reads a cache
    that grows from the prompt's length by one token a step: the prediction takes its middle."""
    p = record.params
    batch, prompt, new = int(p["batch_size"]), int(p["prompt_len"]), int(p["new_tokens"])
    prefill = p["phase"] == "prefill"
    seconds = _llama_seconds(record, "inference", prompt if prefill else prompt + new // 2, prompt + new)
    if seconds is None:
        return []
    decode_s, prefill_s = seconds
    predicted = batch * prompt / prefill_s if prefill and prefill_s else batch / decode_s
    what = f"llm_decode {p['model']} {record.dtype} {p['phase']}, batch {batch}, {prompt}-token prompt"
    return [Check("throughput", what, predicted, record.value, record.metric.unit)]


def _matmul_check(record: MeasurementRecord) -> list[Check]:
    from benchlib.predict.memory import UnknownGPU
    from benchlib.predict.roofline import gpu_rates

    gpu = gpu_spec_name(record.device_name)
    if gpu is None:
        return []
    try:
        rates = gpu_rates(gpu)
    except UnknownGPU:
        return []
    if record.dtype not in rates.peaks_tflops:
        return []
    predicted = rates.peaks_tflops[record.dtype] * rates.compute_efficiency
    what = f"matmul {record.dtype}, best of {len(record.params.get('sizes', []))} sizes"
    return [Check("matmul", what, predicted, record.value, "TFLOPS")]


def sweeps(files: list[ResultsFile]) -> list[Sweep]:
    """The short and long matmul sweeps of one campaign, per dtype (the long one has more sizes)."""
    by_dtype: dict[str, list[MeasurementRecord]] = {}
    for results in files:
        for record in _ok(results.measurements):
            if record.workload == "matmul" and record.dtype:
                by_dtype.setdefault(record.dtype, []).append(record)
    out = []
    for dtype, records in by_dtype.items():
        if len(records) >= 2:
            by_reach = sorted(
                records, key=lambda r: (max(r.params.get("sizes") or [0]), len(r.params.get("sizes") or []))
            )
            out.append(Sweep(dtype, by_reach[0], by_reach[-1]))
    return out
