"""One time budget for `benchlib run --budget` and `benchlib campaign`, and what work is expected to take.

A `TimeBudget` counts seconds from when it started and holds the one rule both commands follow:
start a piece of work only if it is expected to end within the time left. What a kind of work is
expected to take is the mean of what it took so far under this budget, else the caller's guess.

A workload's guess (`expected_duration`) is its wall time in this machine's last run of the same
size, else the time it declares for that size (timed on `EXPECTED_S_MACHINE`), scaled by how this
machine's quick run of it compared with its declared quick time where it has one, else benchlib's
default for the size. The same estimates, summed, are what `benchlib run` prints before it starts
(`suite_estimate`).
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from benchlib.results.schema import ResultsFile
from benchlib.results.store import ResultsError, iter_result_paths, read_results
from benchlib.workloads import EXPECTED_S_MACHINE, Workload

# A workload's estimate when neither an earlier run on this machine nor the workload says better.
FALLBACK_EXPECTED_S = {"quick": 15.0, "standard": 120.0, "full": 600.0}
# A child's interpreter start and imports (mostly torch), until this run has measured one.
STARTUP_GUESS_S = 5.0
# The kind of work a run's start-up overhead is timed as.
STARTUP = "start-up"


@dataclass(frozen=True)
class Estimate:
    """Seconds a piece of work is expected to take, and what that expectation is based on."""

    seconds: float
    source: str
    # What a declared time was multiplied by, from this machine's quick run; None if it wasn't.
    scale: float | None = None


@dataclass
class TimeBudget:
    """``seconds`` to spend from ``started`` (None: no limit), and what each kind of work took so far."""

    seconds: float | None
    started: float = field(default_factory=time.perf_counter)
    timed: dict[str, list[float]] = field(default_factory=dict)

    def left_s(self) -> float:
        """Seconds left; infinite without a limit, negative once overspent."""
        if self.seconds is None:
            return math.inf
        return self.seconds - (time.perf_counter() - self.started)

    def took(self, kind: str, seconds: float) -> None:
        """Remember that a piece of work of ``kind`` took ``seconds``."""
        self.timed.setdefault(kind, []).append(seconds)

    def expected(self, kind: str, guess: Estimate) -> Estimate:
        """What work of ``kind`` is expected to take: the mean of what it took so far, else ``guess``."""
        timed = self.timed.get(kind)
        if not timed:
            return guess
        return Estimate(sum(timed) / len(timed), f"the mean of {len(timed)} timed so far")

    def fits(self, estimate: Estimate) -> bool:
        """Whether work expected to take ``estimate`` would end within the time left."""
        return estimate.seconds <= self.left_s()

    def why_not(self, estimate: Estimate) -> str:
        """Why work expected to take ``estimate`` is not started, in the words a skipped record keeps."""
        return (
            f"not started: expected to take {estimate.seconds:.0f} s ({estimate.source}), "
            f"but {max(self.left_s(), 0):.0f} s of the {self.seconds:g} s budget were left"
        )

    def for_part(self, later_s: float, share: float) -> float:
        """Seconds for work that cuts itself to fit: the time left less ``later_s`` for what
        follows it, but never less than ``share`` of the time left."""
        left = self.left_s()
        return max(left - later_s, left * share)


def past_durations(folder: Path, size: str, *, start_up: bool = True) -> dict[str, float]:
    """Wall seconds per workload in earlier runs at ``size`` in ``folder`` (one machine's); the newest wins.

    Without ``start_up``, the seconds the workload itself ran (its records' duration), without its
    process's start-up: what a workload's declared ``expected_s`` counts.
    """
    runs: list[ResultsFile] = []
    for path in iter_result_paths(folder) if folder.is_dir() else []:
        try:
            results = read_results(path, mark_implausible=False)
        except ResultsError:
            continue  # an unreadable old file only means one estimate fewer
        if results.provenance.kind == "measured" and (results.plan.size if results.plan else results.suite) == size:
            runs.append(results)
    out: dict[str, float] = {}
    for results in sorted(runs, key=lambda r: r.created):
        walls: dict[str, float] = {}
        for m in results.measurements:
            if m.duration_s is not None:
                walls[m.workload] = max(walls.get(m.workload, 0.0), m.duration_s)
        out.update(walls | (results.plan.wall_s if results.plan and start_up else {}))
    return out


# What each kind of estimate is based on, as `suite_estimate` sums them up.
FROM_HISTORY = "its last run on this machine"
SCALED = "by this machine's quick run"
DEFAULT = "benchlib's default"


def quick_ratio(workload: Workload, quick: Mapping[str, float]) -> float | None:
    """How many times its declared quick time ``workload`` took in this machine's quick run
    (``quick``: seconds without start-up); None where either is missing."""
    here, declared = quick.get(workload.name), workload.expected_s.get("quick")
    if here is None or here <= 0 or not declared or declared <= 0:
        return None
    return here / declared


def expected_duration(
    workload: Workload,
    size: str,
    history: Mapping[str, float],
    startup_s: float,
    quick: Mapping[str, float] | None = None,
) -> Estimate:
    """What one run of ``workload`` at ``size`` is expected to take here, start-up included.

    ``history`` holds this machine's wall times at ``size``; ``quick`` the seconds its quick run of
    each workload took without start-up, by which a declared time is scaled
    (declared time × quick time here ÷ declared quick time).
    """
    if workload.name in history:
        return Estimate(history[workload.name], FROM_HISTORY)
    own = workload.expected_s.get(size)
    if own is None:
        return Estimate(
            FALLBACK_EXPECTED_S[size] + startup_s,
            f"{DEFAULT} for a {size} workload that declares no time; no earlier run here",
        )
    timed = f"its {size} time on {EXPECTED_S_MACHINE}"
    ratio = quick_ratio(workload, quick or {}) if size != "quick" else None
    if ratio is None:
        return Estimate(own + startup_s, timed + (f" plus {startup_s:.0f} s start-up" if startup_s else ""))
    scaled = f"{timed}, scaled ×{ratio:.2g} {SCALED}" + (f", plus {startup_s:.0f} s start-up" if startup_s else "")
    return Estimate(own * ratio + startup_s, scaled, ratio)


def _factor(scales: Sequence[float]) -> str:
    """The factors declared times were scaled by: "×0.5", or their range "×0.4–2.1"."""
    low, high = f"{min(scales):.2g}", f"{max(scales):.2g}"
    return f"×{low}" if low == high else f"×{low}–{high}"


@dataclass(frozen=True)
class SuiteEstimate:
    """What a run of some workloads is expected to take, workload by workload."""

    size: str
    estimates: dict[str, Estimate]

    @property
    def seconds(self) -> float:
        return sum(e.seconds for e in self.estimates.values())

    def basis(self) -> list[str]:
        """What the total is based on, one short phrase per kind of estimate: "9 from this machine's last run"."""
        estimates = list(self.estimates.values())
        history = sum(e.source == FROM_HISTORY for e in estimates)
        scales = [e.scale for e in estimates if e.scale is not None]
        default = sum(e.source.startswith(DEFAULT) for e in estimates)
        declared = len(estimates) - history - len(scales) - default
        timings = f"from benchlib's timings on {EXPECTED_S_MACHINE}"
        phrases = [
            (history, f"{history} from this machine's last {self.size} run"),
            (len(scales), f"{len(scales)} {timings}, scaled {_factor(scales)} {SCALED}" if scales else ""),
            (declared, f"{declared} {timings}"),
            (
                default,
                f"{default} declaring no time, at {DEFAULT} of {FALLBACK_EXPECTED_S[self.size]:.0f} s"
                + (" each" if default > 1 else ""),
            ),
        ]
        return [phrase for count, phrase in phrases if count]


def suite_estimate(workloads: Sequence[Workload], size: str, folder: Path, *, isolate: bool) -> SuiteEstimate:
    """What running ``workloads`` at ``size`` should take on the machine whose results are in ``folder``."""
    history = past_durations(folder, size)
    quick = past_durations(folder, "quick", start_up=False) if size != "quick" else {}
    startup = STARTUP_GUESS_S if isolate else 0.0
    return SuiteEstimate(size, {w.name: expected_duration(w, size, history, startup, quick) for w in workloads})
