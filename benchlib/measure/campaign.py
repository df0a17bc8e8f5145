"""`benchlib campaign`: what the guide predicts about a device, measured on it within one time budget.

A campaign is a list of steps, each writing ordinary results files into the results folder:

1. the standard suite (``--tiny``: quick), telemetry per workload, as `benchlib run` runs it;
2. the largest batch of two small language models (``--tiny``: one toy Llama) against fit's prediction;
3. `max-batch` for `benchlib fit`'s models in fp16 and fp32 (``--tiny``: the UNet in fp32), each
   search starting at fit's prediction;
4. the longer matmul sweep (``full``; ``--tiny``: standard), next to the suite's.

Each step has an expected duration; a step that would end after the budget is not started and is
listed as skipped, by the rule `benchlib run --budget` follows too (`benchlib.measure.budget`).
Where each search starts is the caller's ``guess`` (`benchlib campaign` gives fit's prediction,
`benchlib.derive.searched.fit_guess`). The checks of predictions against the measurements
(`benchlib.derive.checks`) are derived afterwards from the files alone, so the table can be
rebuilt from a campaign's folder at any time.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from benchlib.measure.budget import Estimate, TimeBudget
from benchlib.measure.max_batch import TrialRequest
from benchlib.models.trainable import MODELS
from benchlib.results.schema import GPUInfo, Machine, MeasurementRecord

FIT_DTYPES = ("fp16", "fp32")
# A tiny run tries each kind of step once: one model, in the dtype every device runs.
TINY_FIT_MODELS = ("unet",)
TINY_FIT_DTYPES = ("fp32",)
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
    # Where a largest-batch search starts (None: doubling from 1), given the request and the GPU.
    guess: Callable[[TrialRequest, GPUInfo | None], int | None] = lambda request, gpu: None
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
    for dtype in TINY_FIT_DTYPES if tiny else FIT_DTYPES:
        for model in TINY_FIT_MODELS if tiny else tuple(MODELS):
            plan.append(Step("max_batch", f"max-batch {model} {dtype}", _search_step(model, dtype)))
    plan.append(Step("sweep", f"{' and '.join(swept())} sweep", run_sweep))
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


def swept() -> list[str]:
    """The workloads whose longer sweep the campaign runs: those that declare the check."""
    from benchlib.workloads import LONGER_SWEEP, checked_by

    return list(checked_by(LONGER_SWEEP))


def run_sweep(campaign: Campaign) -> list[Path]:
    # The campaign has already judged it fits (`run_campaign`); the runner's own guess for a workload
    # it hasn't timed here is minutes.
    return _run_workloads(campaign, swept(), campaign.long_sweep, None)


def _search_step(model: str, dtype: str) -> Callable[[Campaign], list[Path]]:
    def run(campaign: Campaign) -> list[Path]:
        size = "small" if campaign.tiny else "full"
        request = TrialRequest(
            model=model, batch=1, size=size, dtype=dtype, device=campaign.device, memory_limit=campaign.memory_limit
        )
        return [_search(campaign, request, campaign.guess(request, campaign.gpu))]

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
        return [_search(campaign, request, campaign.guess(request, campaign.gpu))]

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

    from benchlib.core.units import format_bytes
    from benchlib.measure.max_batch import (
        SEARCH_SUITE,
        TrialOutcome,
        search_from_guess,
        search_max_batch,
        trial_runner,
        write_search,
    )
    from benchlib.measure.telemetry import TelemetrySampler
    from benchlib.results.store import new_results, results_path

    header = new_results(campaign.machine, SEARCH_SUITE)
    path = results_path(campaign.out, header)
    start, how = (guess, "guess") if guess else (1, "doubling")
    trials: list[TrialOutcome] = []

    def on_trial(outcome: TrialOutcome) -> None:
        trials.append(outcome)
        peak = f", peak {format_bytes(outcome.peak_bytes)}" if outcome.peak_bytes is not None else ""
        campaign.on_output(f"  batch {outcome.batch}: {outcome.status}{peak} ({outcome.seconds:.1f} s)")
        write_search(path, header, request, trials, start=start, limit=BATCH_LIMIT, search=how)

    # The GPU's clocks, temperature and power through the whole search (a CPU campaign has none).
    sampler = TelemetrySampler(index=campaign.gpu.index) if campaign.gpu else None
    with sampler or contextlib.nullcontext():
        if guess:
            result = search_from_guess(trial_runner(request), guess, limit=BATCH_LIMIT, on_trial=on_trial)
        else:
            result = search_max_batch(trial_runner(request), limit=BATCH_LIMIT, on_trial=on_trial)
    write_search(
        path,
        header,
        request,
        result.trials,
        start=start,
        limit=BATCH_LIMIT,
        result=result,
        search=how,
        telemetry=sampler.result() if sampler else None,
    )
    return path
