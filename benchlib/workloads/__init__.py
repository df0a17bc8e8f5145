"""Workloads: one small module each, registered by name, with parameters as data.

A workload module defines a `Workload` and calls `register(...)` at import time. Adding a
workload means adding one file to this package; `all_workloads()` imports every module here.

A workload's `run(ctx, params)` returns `MeasurementRecord`s. It never writes files: the runner
does that, stamps the workload's name and framework on every record, and applies the sanity
checks (peak, device) to what comes back.

A workload also declares how its records are shown and checked, so charts, tables, the score
and the checks of predictions need no knowledge of any workload: which `Chart` each metric goes
on and what a bar's setting is (`Plot`), what it adds to the score (`ScorePart`), figures derived
from its records (`Ratio`, `Rate`, `WorkRate`, `PerDollar`, `Relative`), and which prediction
benchlib sets beside its records (`PredictionCheck`, evaluated by `benchlib.derive.checks`) or
why it has none (`NotPredicted`). Records that other commands write (`benchlib max-batch`,
`benchlib launch`) or that only sources report are declared the same way, with ``run=None``.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from benchlib.core.registry import add_named, import_modules
from benchlib.results.schema import Machine, MeasurementRecord, Metric

SIZES = ("quick", "standard", "full")
# Where a workload's declared ``expected_s`` were timed: the 2-core machine that builds the site, idle, one
# run of each size (2026-11-29: the standard suite in 3 min 33 s).
EXPECTED_S_MACHINE = "a 2-core CPU"
# Comma-separated modules that register your own workloads (the tests' tiny ones too).
WORKLOAD_MODULES_ENV = "BENCHLIB_WORKLOAD_MODULES"


class WorkloadModuleError(ImportError):
    """A module named in ``$BENCHLIB_WORKLOAD_MODULES`` can't be imported."""

    def __init__(self, name: str, cause: BaseException) -> None:
        super().__init__(
            f"${WORKLOAD_MODULES_ENV} names {name!r}, which can't be imported ({type(cause).__name__}: {cause}); "
            "check the module name and that its folder is on PYTHONPATH"
        )


def import_workload_modules() -> list[str]:
    """Import the modules named in ``$BENCHLIB_WORKLOAD_MODULES`` (comma-separated) so their workloads register.

    This is how your own workloads (and the tests' tiny ones) join a run and a site build; isolated
    children inherit the variable and import them too.
    """
    names = [n.strip() for n in os.environ.get(WORKLOAD_MODULES_ENV, "").split(",") if n.strip()]
    for name in names:
        try:
            importlib.import_module(name)
        except ImportError as exc:
            raise WorkloadModuleError(name, exc) from exc
    return names


class NotRunnable(ValueError):
    """A declared workload that `benchlib run` doesn't run: another command writes it, or sources report it."""

    def __init__(self, workload: Workload) -> None:
        super().__init__(f"{workload.name!r} is not something `benchlib run` measures: {workload.description}")


class UnknownWorkload(KeyError):
    def __init__(self, name: str, known: Iterable[str]) -> None:
        self.name = name
        super().__init__(f"unknown workload {name!r}; known workloads: {', '.join(sorted(known))}")

    def __str__(self) -> str:
        return str(self.args[0])


@dataclass(frozen=True)
class Chart:
    """One chart on the site. Workloads that share a `Chart` object share the chart (amp and amp_keras).

    ``label`` formats a bar's value label (``{value}`` is the value to three significant digits);
    ``rule_at`` draws a dashed line at that value (1 for a speedup).
    """

    id: str
    title: str
    setting_title: str
    axis_title: str | None = None
    setting_order: tuple[str, ...] = ()
    label: str = "{value}"
    rule_at: float | None = None
    tick_title: str | None = None


@dataclass(frozen=True)
class Plot:
    """Which of a workload's records go on ``chart``, and the setting (the bar's colour) of each.

    ``setting`` is a format string over the frame's columns (``{dtype}``, ``{param_batch_size}``,
    ``{framework_name}``); ``setting_names`` renames what it gives (``device_copy`` → ``copy on
    device``). ``where`` keeps only rows whose columns equal those values. ``tick_metric`` draws,
    on each bar, a tick at the value of that other metric for the same run and setting (p90 on a
    p50 latency bar); a known peak is always drawn that way.
    """

    chart: Chart
    metric: str
    setting: str
    setting_names: Mapping[str, str] = field(default_factory=dict)
    where: Mapping[str, Any] = field(default_factory=dict)
    tick_metric: str | None = None


@dataclass(frozen=True)
class ScorePart:
    """A measurement the benchlib score uses: this workload's record with this metric, dtype and params."""

    key: str
    kind: str
    metric: str
    params: Mapping[str, Any]
    label: str
    dtype: str = "fp32"


@dataclass(frozen=True)
class _Figure:
    """A derived figure's name and unit: every kind's but `Relative`'s, a fraction of the best."""

    metric: str
    unit: str


@dataclass(frozen=True)
class Ratio(_Figure):
    """A derived figure: ``metric`` = value at ``over`` = numerator / value at denominator.

    Pairs are records of one results file that agree on ``same`` (frame columns), e.g. fastai's
    fp32 epoch time over its fp16 one at the same batch size.
    """

    over: str
    numerator: str
    denominator: str
    same: tuple[str, ...]


@dataclass(frozen=True)
class Rate(_Figure):
    """A derived figure: ``metric`` = (product of the ``count`` params) / the ``of`` metric's seconds.

    For sources that report a total time for a known amount of work (epochs x steps x batch).
    """

    of: str
    count: tuple[str, ...]


@dataclass(frozen=True)
class WorkRate(_Figure):
    """A derived figure: ``metric`` = ``work(params)`` / the ``of`` metric's time, times ``scale``.

    For a timed operation whose amount of work follows from its params: the rate the time implies
    (a convolution's floating-point operations per second). ``work`` returns None for params that
    don't describe the operation; ``work_unit`` names what it counts. Unlike `Ratio` and `Rate`,
    it is derived for invalid records too, which keep their status: the implied rate is what
    shows a reader why such a time cannot be right.
    """

    of: str
    work: Callable[[Mapping[str, Any]], float | None]
    work_unit: str
    scale: float = 1.0


@dataclass(frozen=True)
class PerDollar(_Figure):
    """A derived figure: ``metric`` = the ``of`` metric (a rate per second) x 3600 / an hourly price.

    One figure for each cloud price of the record's accelerator in the specs, dated as the price is
    (`benchlib.catalog.gpus.AcceleratorSpec.hourly_prices`): work per dollar rented.
    """

    of: str


@dataclass(frozen=True)
class Relative:
    """A derived figure: ``metric`` = a record's ``of`` value as a fraction of the best one (1 = the best).

    The best is taken among the records that agree on ``same`` (frame columns), across files:
    value / best where higher is better, best / value where lower is.
    """

    metric: str
    of: str
    same: tuple[str, ...]


# What a `PredictionCheck` predicts for a record; `benchlib.derive.checks` evaluates each kind.
LARGEST_BATCH = "largest batch"  # fit's largest batch (and peak memory) for a largest-batch search
TRAINED_BATCH = "trained batch"  # fit's largest batch, at least the batch a source trained with
INFERENCE_THROUGHPUT = "inference throughput"  # predict's images/s for one of fit's models, inference
TRAINING_THROUGHPUT = "training throughput"  # predict's images/s for one of fit's models, training
TRANSFORMER_STEP = "transformer step"  # predict's tokens/s for the record's Llama, one training step
TRANSFORMER_DECODE = "transformer decode"  # predict's prefill or decode tokens/s for the record's Llama
PEAK_COMPUTE = "peak compute"  # the specs' peak x the generation's MAMF fraction, for a best-of-sizes rate
LONGER_SWEEP = "longer sweep"  # not a prediction: the same workload's best over more sizes, run beside it
PREDICTIONS = (
    LARGEST_BATCH,
    TRAINED_BATCH,
    INFERENCE_THROUGHPUT,
    TRAINING_THROUGHPUT,
    TRANSFORMER_STEP,
    TRANSFORMER_DECODE,
    PEAK_COMPUTE,
    LONGER_SWEEP,
)


@dataclass(frozen=True)
class PredictionCheck:
    """A prediction benchlib sets beside some of this workload's records, to check it against them.

    ``predicts`` says which (one of `PREDICTIONS`). It applies to the records whose metric is
    ``metric``, that ran on ``device`` and whose params equal ``where`` (each left out: any).
    ``options`` go to the prediction: what the record doesn't say but its setup fixes (the
    optimizer a source trained with).
    """

    predicts: str
    metric: str | None = None
    device: str | None = None
    where: Mapping[str, Any] = field(default_factory=dict)
    options: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.predicts not in PREDICTIONS:
            raise ValueError(f"unknown prediction {self.predicts!r}; choose one of {', '.join(PREDICTIONS)}")

    def applies(self, metric: str, device: str, params: Mapping[str, Any]) -> bool:
        """Whether a record with this metric, device and params is one this check is for."""
        return (
            (self.metric is None or metric == self.metric)
            and (self.device is None or device == self.device)
            and all(params.get(key) == value for key, value in self.where.items())
        )


@dataclass(frozen=True)
class NotPredicted:
    """Why this workload's records that none of its `PredictionCheck`s apply to have no prediction.

    A comparison of predictions with reported figures lists such records as left out, grouped by
    ``what`` (what they are, as a reader knows them) with ``why``.
    """

    what: str
    why: str


@dataclass
class RunContext:
    """What a workload may know about the run: the device it must use and the machine it is on."""

    device: str
    machine: Machine
    size: str = "quick"

    @property
    def cpu_name(self) -> str | None:
        return self.machine.host.cpu.model if self.machine.host else None


@dataclass(frozen=True)
class Workload:
    name: str
    framework: str
    description: str
    metric: Metric
    sizes: dict[str, dict[str, Any]]
    # None for records only other commands write, or only sources report.
    run: Callable[[RunContext, dict[str, Any]], list[MeasurementRecord]] | None
    suites: tuple[str, ...] = SIZES
    # Seconds one run of a size took on EXPECTED_S_MACHINE, without its process's start-up (its
    # records' duration): what `benchlib run` expects, and what `--budget` counts on, before this
    # machine has run that size; scaled by this machine's quick run where it has one.
    expected_s: dict[str, float] = field(default_factory=dict)
    # Per device, per size, the params that differ there from the size's own (``sizes``): a
    # smaller shape of the same operation, where the size's own would take a CPU many minutes. The
    # methodology page shows them under the size's row.
    device_sizes: dict[str, dict[str, dict[str, Any]]] = field(default_factory=dict)
    plots: tuple[Plot, ...] = ()
    score: tuple[ScorePart, ...] = ()
    derived: tuple[Ratio | Rate | WorkRate | PerDollar | Relative, ...] = ()
    # Charts a guide page draws itself (`declared_plot`), kept off the Results page.
    page_plots: tuple[Plot, ...] = ()
    # The predictions set beside its records, then why the others have none.
    checks: tuple[PredictionCheck, ...] = ()
    not_predicted: NotPredicted | None = None
    # Names this workload's records had in files older benchlibs wrote (Keras twins wrote "amp").
    formerly: tuple[str, ...] = ()

    def params(self, size: str, device: str | None = None) -> dict[str, Any]:
        """Parameters for a size on ``device`` ("cpu", "cuda" or "mps"; None for the size's own).

        A size a workload doesn't define falls back to the next smaller one; then what
        ``device_sizes`` declares for the device and that size replaces those params.
        """
        order = list(SIZES)
        for candidate in reversed(order[: order.index(size) + 1]):
            if candidate in self.sizes:
                return dict(self.sizes[candidate]) | self.device_params(size, device)
        raise KeyError(f"workload {self.name!r} has no parameters for size {size!r}")

    def device_params(self, size: str, device: str | None) -> dict[str, Any]:
        """The params of ``size`` that differ on ``device`` (none for None or a device without any)."""
        return dict(self.device_sizes.get(device, {}).get(size, {})) if device else {}


def keras_twin(
    workload: Workload,
    *,
    description: str,
    run: Callable[[RunContext, dict[str, Any]], list[MeasurementRecord]],
    score: tuple[ScorePart, ...] = (),
    expected_s: Mapping[str, float] | None = None,
) -> Workload:
    """The Keras-on-TensorFlow twin of a torch workload: the same sizes, suites, charts and figures.

    It is named ``<name>_keras``; older benchlibs named its records ``<name>``, as the torch
    workload's are. Score parts name their framework, so a twin gives its own; benchlib's
    predictions trace torch models, so a twin checks none. Nor does it take the torch workload's
    ``expected_s``: TensorFlow's times are its own.
    """
    return replace(
        workload,
        name=f"{workload.name}_keras",
        framework="tensorflow",
        description=description,
        run=run,
        score=score,
        expected_s=dict(expected_s or {}),
        checks=(),
        formerly=(workload.name,),
    )


def not_run(name: str, framework: str, description: str, metric: Metric, **declarations: Any) -> Workload:
    """A workload `benchlib run` doesn't run, in no suite and with no sizes: other commands write its
    records, or only sources report them. ``declarations`` are the other `Workload` fields."""
    return Workload(
        name=name,
        framework=framework,
        description=description,
        metric=metric,
        sizes={},
        run=None,
        suites=(),
        **declarations,
    )


_REGISTRY: dict[str, Workload] = {}
_loaded = False


def register(workload: Workload) -> Workload:
    return add_named(_REGISTRY, workload, "workload")


def _load_all() -> None:
    """Import every module of this package, and your own named in ``$BENCHLIB_WORKLOAD_MODULES``."""
    global _loaded
    if _loaded:
        return
    import_modules(__name__, __path__)
    import_workload_modules()
    _loaded = True


def all_workloads() -> dict[str, Workload]:
    _load_all()
    return dict(sorted(_REGISTRY.items()))


def get(name: str) -> Workload:
    workloads = all_workloads()
    if name not in workloads:
        raise UnknownWorkload(name, workloads)
    return workloads[name]


def owner(workload: str, framework: str) -> Workload | None:
    """The registered workload a record named ``workload`` with ``framework`` belongs to, if any.

    Its own name when that workload has this framework, else one that was formerly so named.
    """
    workloads = all_workloads()
    named = workloads.get(workload)
    if named is not None and named.framework == framework:
        return named
    for candidate in workloads.values():
        if workload in candidate.formerly and candidate.framework == framework:
            return candidate
    return named


def charts() -> dict[str, Chart]:
    """Every declared chart by id, in the order workloads declare them."""
    return {plot.chart.id: plot.chart for w in all_workloads().values() for plot in w.plots}


def declared_plot(chart_id: str) -> tuple[Workload, Plot]:
    """The workload and plot that draw the chart ``chart_id``, a Results chart or a guide page's own."""
    for workload in all_workloads().values():
        for plot in (*workload.plots, *workload.page_plots):
            if plot.chart.id == chart_id:
                return workload, plot
    raise KeyError(f"no workload declares a chart {chart_id!r}")


def checked_by(predicts: str) -> dict[str, PredictionCheck]:
    """Each workload that declares a check of kind ``predicts``, by name, with that check."""
    return {w.name: check for w in all_workloads().values() for check in w.checks if check.predicts == predicts}


def checks_of(
    workload: str, framework: str, metric: str, device: str, params: Mapping[str, Any]
) -> list[PredictionCheck]:
    """The checks that apply to a record (its owning workload's, by `owner`)."""
    found = owner(workload, framework)
    return [c for c in found.checks if c.applies(metric, device, params)] if found else []


def not_predicted(
    workload: str, framework: str, metric: str, device: str, params: Mapping[str, Any]
) -> NotPredicted | None:
    """Why a record has no prediction, where its workload says so and none of its checks applies."""
    found = owner(workload, framework)
    if found is None or found.not_predicted is None:
        return None
    return None if any(c.applies(metric, device, params) for c in found.checks) else found.not_predicted


def runnable(name: str) -> Workload:
    """The workload ``name`` for `benchlib run`: UnknownWorkload if there is none, NotRunnable if it isn't run."""
    workload = get(name)
    if workload.run is None:
        raise NotRunnable(workload)
    return workload


def in_suite(suite: str) -> list[Workload]:
    return [w for w in all_workloads().values() if w.run is not None and suite in w.suites]
