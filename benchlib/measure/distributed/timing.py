"""How every engine's worker times its training steps, so that their reports compare."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from benchlib.measure.distributed.report import RunSize


@dataclass(frozen=True)
class TimedSteps:
    """What `time_steps` measured, named as `WorkerReport`'s fields are."""

    warmup_steps: int
    warmup_s: float
    steps_per_sample: int
    sample_times_s: list[float]
    loss_first: float
    loss_last: float


def time_steps(run: Callable[[int], Any], size: RunSize) -> TimedSteps:
    """Time training as every engine's worker does: ``run(n)`` takes ``n`` steps, waits for the
    device to finish them and returns the last loss.

    The warm-up (its first step compiles, where the engine compiles) is timed as a whole; then
    each of ``size.samples`` blocks of ``size.steps_per_sample`` steps gives one time per step.
    """
    started = time.perf_counter()
    loss_first = float(run(1))
    run(size.warmup_steps - 1)
    warmup_s = time.perf_counter() - started
    times = []
    for _ in range(size.samples):
        start = time.perf_counter()
        loss = run(size.steps_per_sample)
        times.append((time.perf_counter() - start) / size.steps_per_sample)
    return TimedSteps(size.warmup_steps, warmup_s, size.steps_per_sample, times, loss_first, float(loss))
