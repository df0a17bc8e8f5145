"""One time budget for `benchlib run --budget` and `benchlib campaign`, and what work is expected to take.

A `TimeBudget` counts seconds from when it started and holds the one rule both commands follow:
start a piece of work only if it is expected to end within the time left. What a kind of work is
expected to take is the mean of what it took so far under this budget, else the caller's guess.

A workload's guess (`expected_duration`) is its wall time in this machine's last run of the same
size, else the time it declares for that size, else benchlib's default for the size. The same
estimates, summed, are what `benchlib run` prints before it starts (`suite_estimate`).
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


def past_durations(folder: Path, size: str) -> dict[str, float]:
    """Wall seconds per workload in earlier runs at ``size`` in ``folder`` (one machine's); the newest wins."""
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
        out.update(walls | (results.plan.wall_s if results.plan else {}))
    return out


# What each kind of estimate is based on, as `suite_estimate` sums them up.
FROM_HISTORY = "its last run on this machine"


def expected_duration(workload: Workload, size: str, history: Mapping[str, float], startup_s: float) -> Estimate:
    """What one run of ``workload`` at ``size`` is expected to take here, start-up included."""
    if workload.name in history:
        return Estimate(history[workload.name], FROM_HISTORY)
    own = workload.expected_s.get(size)
    if own is not None:
        return Estimate(
            own + startup_s,
            f"its {size} time on {EXPECTED_S_MACHINE}" + (f" plus {startup_s:.0f} s start-up" if startup_s else ""),
        )
    return Estimate(
        FALLBACK_EXPECTED_S[size] + startup_s, f"benchlib's default for a {size} workload; no earlier run here"
    )


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
        history = sum(e.source == FROM_HISTORY for e in self.estimates.values())
        declared = sum(EXPECTED_S_MACHINE in e.source for e in self.estimates.values())
        default = len(self.estimates) - history - declared
        phrases = [
            (history, f"{history} from this machine's last {self.size} run"),
            (declared, f"{declared} from benchlib's timings on {EXPECTED_S_MACHINE}"),
            (default, f"{default} at benchlib's default of {FALLBACK_EXPECTED_S[self.size]:.0f} s each"),
        ]
        return [phrase for count, phrase in phrases if count]


def suite_estimate(workloads: Sequence[Workload], size: str, folder: Path, *, isolate: bool) -> SuiteEstimate:
    """What running ``workloads`` at ``size`` should take on the machine whose results are in ``folder``."""
    history = past_durations(folder, size)
    startup = STARTUP_GUESS_S if isolate else 0.0
    return SuiteEstimate(size, {w.name: expected_duration(w, size, history, startup) for w in workloads})
