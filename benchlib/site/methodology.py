"""Blocks for the Methodology page, rendered from the code that does the measuring.

The page states no thresholds or sizes itself: they are read here from `benchlib.timing`,
`benchlib.runner` and the workload registry, so the page cannot drift from what benchlib does.
"""

from __future__ import annotations

import inspect
from typing import Any

import benchlib
from benchlib.results.plausibility import PEAK_TOLERANCE
from benchlib.runner import SUITES
from benchlib.timing import NOISE_THRESHOLD, Timer

_TIMER_MEANING = {
    "warmup_s": "warm-up budget: calls before any sample is kept",
    "min_time_s": "keep sampling at least this long",
    "max_time_s": "stop sampling after this long, noisy or not",
    "min_samples": "samples always taken",
    "max_samples": "samples never exceeded",
    "target_block_s": "length of one timed block of calls",
    "noise_threshold": "IQR / median at or below which sampling may stop",
}


def _fmt(value: Any, unit: str = "") -> str:
    if isinstance(value, list):
        return ", ".join(str(v) for v in value)
    return f"{value} {unit}".strip()


def version_note() -> str:
    """Markdown: the benchlib and methodology versions this site was built with."""
    return (
        f"This site was built with **benchlib {benchlib.__version__}**, "
        f"**methodology version {benchlib.METHODOLOGY_VERSION}**."
    )


def checks_note() -> str:
    """Markdown: the checks a number must pass, with their thresholds."""
    return (
        f"- **Noise flag.** A measurement whose IQR / median is above {NOISE_THRESHOLD:.0%} after "
        "sampling has ended is kept but flagged *noisy*; the data tables say so.\n"
        f"- **Above the device's peak.** A result more than {PEAK_TOLERANCE - 1:.0%} above the "
        "device's published peak (the record's own, or a verified one from benchlib's specs table) "
        "is marked **invalid**: a timing or sync error is far more likely than a real result.\n"
        "- **Impossible values.** A time or rate that is not a finite number above zero, and a "
        "result that claims a GPU the machine record says it doesn't have (or names a GPU but ran on "
        "the CPU), are marked **invalid** too.\n"
        "- **Asked for an accelerator, ran on the CPU.** When `--device cuda` (or `mps`) was "
        "asked for and the work ran on the CPU, the measurement is an **error**, never a GPU number.\n"
        "- **Failures are kept.** A workload that runs out of memory, raises, or needs a missing "
        "framework is recorded as `oom`, `error` or `skipped` with its message, and the run goes on.\n\n"
        "These checks run when benchlib measures and again whenever a results file is read, so a "
        "contributed or hand-edited file can't bring an impossible number into a chart. Invalid "
        "results stay in their file and in the tables, and are left out of the charts with a note."
    )


def timer_table() -> str:
    """Markdown table of `Timer.measure`'s defaults; workloads override some per suite."""
    rows = ["| Setting | Default | What it does |", "| --- | --- | --- |"]
    for name, p in inspect.signature(Timer.measure).parameters.items():
        if p.default is inspect.Parameter.empty:
            continue
        unit = "s" if name.endswith("_s") else ""
        default = f"{p.default:.0%}" if name == "noise_threshold" else _fmt(p.default, unit)
        rows.append(f"| `{name}` | {default} | {_TIMER_MEANING.get(name, '')} |")
    return "\n".join(rows)


def _params(params: dict[str, Any]) -> str:
    parts = []
    for key, value in params.items():
        if isinstance(value, dict):
            parts.extend(f"`{k}` {_fmt(v, 's' if k.endswith('_s') else '')}" for k, v in value.items())
        else:
            parts.append(f"`{key}` {_fmt(value)}")
    return " · ".join(parts)


def workloads_table() -> str:
    """Markdown table of every registered workload: what it reports, and in which suites."""
    from benchlib.workloads import all_workloads

    rows = ["| Workload | Framework | Measures | Metric | Suites |", "| --- | --- | --- | --- | --- |"]
    for w in all_workloads().values():
        better = "higher is better" if w.metric.higher_is_better else "lower is better"
        suites = ", ".join(f"`{s}`" for s in SUITES if s in w.suites)
        rows.append(f"| `{w.name}` | {w.framework} | {w.description} | {w.metric.unit}, {better} | {suites} |")
    return "\n".join(rows)


def suite_params_table() -> str:
    """Markdown table of each workload's parameters per suite, timer overrides included."""
    from benchlib.workloads import all_workloads

    rows = ["| Workload | Suite | Parameters |", "| --- | --- | --- |"]
    for w in all_workloads().values():
        for suite in (s for s in SUITES if s in w.suites):
            rows.append(f"| `{w.name}` | `{suite}` | {_params(w.params(suite))} |")
    return "\n".join(rows)


def conv2d_note() -> str:
    """Markdown: the seeds' convolution that the conv2d workload times, from its shape table."""
    from benchlib.workloads.conv2d import SEED_SHAPE as s

    return (
        f"The full-size operation is the seeds' convolution: a batch of {s['batch']} images of "
        f"{s['side']}×{s['side']}×{s['channels']}, {s['filters']} filters of {s['kernel']}×{s['kernel']}, "
        f"stride {s['stride']}, padded so the output has TensorFlow's `SAME` size. Smaller suites scale "
        "the batch and the image side by the suite's `scale`; filters, kernel and stride stay the same."
    )
