"""A small Timer and a plain Measurement record, in the spirit of torch.utils.benchmark.

Timing is kept apart from reporting: a `Timer` produces a `Measurement`, and nothing here knows
about workloads, results files or charts.

How a measurement is taken:
1. Warm-up by time budget (not a fixed call count), which also estimates the cost of one call.
2. Calls are grouped into blocks large enough that the sync and timer overhead is negligible;
   the device is synchronised once per block, not once per call.
3. Blocks are repeated until the noise (IQR / median) is low or the time budget is spent.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass

NOISE_THRESHOLD = 0.10


def _no_sync() -> None:
    return None


@dataclass(frozen=True)
class Measurement:
    """Per-call times (seconds) of each sample, plus what was timed and how."""

    times: tuple[float, ...]
    number_per_sample: int
    warmup_s: float
    sync: str = "none"
    threads: int | None = None
    label: str = ""

    def __post_init__(self) -> None:
        if not self.times:
            raise ValueError("a Measurement needs at least one sample")

    @property
    def n(self) -> int:
        return len(self.times)

    @property
    def median(self) -> float:
        return statistics.median(self.times)

    @property
    def mean(self) -> float:
        return statistics.fmean(self.times)

    @property
    def min(self) -> float:
        return min(self.times)

    @property
    def max(self) -> float:
        return max(self.times)

    @property
    def iqr(self) -> float:
        if self.n < 2:
            return 0.0
        q1, _, q3 = statistics.quantiles(self.times, n=4, method="inclusive")
        return q3 - q1

    @property
    def noisy(self) -> bool:
        """True when IQR / median exceeds 10 %, the level torch.utils.benchmark warns at."""
        return self.median > 0 and self.iqr / self.median > NOISE_THRESHOLD

    def __repr__(self) -> str:
        flag = " (noisy)" if self.noisy else ""
        return (
            f"Measurement({self.label or 'stmt'}: median {self.median * 1e3:.3f} ms, "
            f"IQR {self.iqr * 1e3:.3f} ms, n={self.n} x {self.number_per_sample}{flag})"
        )


class Timer:
    """Times a zero-argument callable.

    ``sync`` is called before reading the clock, so asynchronous devices (CUDA, MPS, TPU) have
    finished their work; pass the backend's sync function and its name.
    """

    def __init__(
        self,
        fn: Callable[[], object],
        *,
        sync: Callable[[], None] = _no_sync,
        sync_name: str = "none",
        threads: int | None = None,
        label: str = "",
        clock: Callable[[], float] = time.perf_counter,
    ) -> None:
        self._fn = fn
        self._sync = sync
        self._sync_name = sync_name
        self._threads = threads
        self._label = label
        self._clock = clock

    def _time_block(self, number: int) -> float:
        fn, sync, clock = self._fn, self._sync, self._clock
        sync()
        start = clock()
        for _ in range(number):
            fn()
        sync()
        return clock() - start

    def warmup(self, budget_s: float) -> tuple[float, float]:
        """Call until ``budget_s`` has passed (at least twice). Returns (seconds spent, per-call estimate)."""
        spent = 0.0
        calls = 0
        last = 0.0
        while calls < 2 or spent < budget_s:
            last = self._time_block(1)
            spent += last
            calls += 1
        return spent, last

    def measure(
        self,
        *,
        warmup_s: float = 0.1,
        min_time_s: float = 0.3,
        max_time_s: float = 2.0,
        min_samples: int = 5,
        max_samples: int = 200,
        target_block_s: float = 0.02,
        noise_threshold: float = NOISE_THRESHOLD,
    ) -> Measurement:
        """Warm up, then sample blocks until noise is below ``noise_threshold`` or time runs out.

        Sampling stops once at least ``min_samples`` blocks and ``min_time_s`` are done and the
        noise is low, or when ``max_time_s`` or ``max_samples`` is reached. Slow calls (longer
        than ``max_time_s`` / ``min_samples``) still get ``min_samples`` samples.
        """
        spent, per_call = self.warmup(warmup_s)
        number = max(1, round(target_block_s / per_call)) if per_call > 0 else 1000
        times: list[float] = []
        elapsed = 0.0
        while len(times) < max_samples:
            block = self._time_block(number)
            elapsed += block
            times.append(block / number)
            if len(times) < min_samples:
                continue
            if elapsed >= max_time_s:
                break
            if elapsed >= min_time_s and _relative_iqr(times) <= noise_threshold:
                break
        return Measurement(
            times=tuple(times),
            number_per_sample=number,
            warmup_s=spent,
            sync=self._sync_name,
            threads=self._threads,
            label=self._label,
        )


def _relative_iqr(times: list[float]) -> float:
    q1, median, q3 = statistics.quantiles(times, n=4, method="inclusive")
    return (q3 - q1) / median if median > 0 else 0.0
