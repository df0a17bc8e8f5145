"""Tiny workloads for the runner's tests: fast ones, and ones that take their interpreter down.

Importing this module registers them. Runs pick them up through ``$BENCHLIB_WORKLOAD_MODULES``
(with ``tests/`` on ``PYTHONPATH``); none is in a suite, so `benchlib run --suite quick` never
runs them. The values are test inputs, not measurements.
"""

from __future__ import annotations

import ctypes
import os
import signal
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from benchlib.results.schema import Machine, MeasurementRecord, Metric, Software, Stats
from benchlib.workloads import RunContext, Workload, register

METRIC = Metric(name="time", unit="ms", higher_is_better=False)
TINY = [f"tiny-{i}" for i in range(1, 7)]
SLEEP_S = 0.05


def _record(name: str, ctx: RunContext, seconds: float) -> MeasurementRecord:
    return MeasurementRecord(
        workload=name,
        framework="python",
        device=ctx.device,
        device_name="Test CPU",
        metric=METRIC,
        value=seconds * 1000,
        params={"sleep_s": seconds},
        stats=Stats(median=seconds, iqr=0.0, mean=seconds, min=seconds, max=seconds, n=1, noisy=False),
    )


def _sleeper(name: str) -> Callable[[RunContext, dict[str, Any]], list[MeasurementRecord]]:
    def run(ctx: RunContext, params: dict[str, Any]) -> list[MeasurementRecord]:
        time.sleep(params["sleep_s"])
        return [_record(name, ctx, params["sleep_s"])]

    return run


def _segfault(ctx: RunContext, params: dict[str, Any]) -> list[MeasurementRecord]:
    print("about to read address 0", file=sys.stderr, flush=True)
    ctypes.string_at(0)
    return []


def _exit(ctx: RunContext, params: dict[str, Any]) -> list[MeasurementRecord]:
    print("line one\nfatal: giving up with code 3", file=sys.stderr, flush=True)
    os._exit(3)


def _sigkill(ctx: RunContext, params: dict[str, Any]) -> list[MeasurementRecord]:
    # What the kernel's OOM killer does.
    os.kill(os.getpid(), signal.SIGKILL)
    return []


# What TensorFlow 2.21 prints on import and its first look for GPUs on a machine without one, with
# TF_CPP_MIN_LOG_LEVEL=2 set: absl writes these before its logging is up, from C++, below Python.
TF_NOISE = (Path(__file__).parent / "fixtures" / "tf_noise.txt").read_text(encoding="utf-8")
NOT_NOISE = "E0000 00:00:1795425360.450892   12416 op_kernel.cc:1] a real error\nthe workload's own line\n"


def _noisy(ctx: RunContext, params: dict[str, Any]) -> list[MeasurementRecord]:
    # Written to the file descriptor, as TF's C++ code does, not through sys.stderr.
    os.write(2, (TF_NOISE + NOT_NOISE).encode())
    return [_record("tiny-noisy", ctx, params["sleep_s"])]


def _pid_then_sleep(ctx: RunContext, params: dict[str, Any]) -> list[MeasurementRecord]:
    # Tells the test its pid, then outlives any test that doesn't kill it.
    with open(os.environ["BENCHLIB_TEST_PID_FILE"], "w") as fh:
        fh.write(str(os.getpid()))
    time.sleep(60)
    return [_record("tiny-hang", ctx, 60.0)]


def _workload(
    name: str, run: Callable[[RunContext, dict[str, Any]], list[MeasurementRecord]], sleep_s: float = SLEEP_S
) -> Workload:
    return register(
        Workload(
            name=name,
            framework="python",
            description=f"test workload {name}",
            metric=METRIC,
            sizes={"quick": {"sleep_s": sleep_s}},
            run=run,
            suites=(),
            expected_s={"quick": sleep_s},
        )
    )


for _name in TINY:
    _workload(_name, _sleeper(_name))
_workload("tiny-slow", _sleeper("tiny-slow"), sleep_s=3.0)
_workload("tiny-segfault", _segfault)
_workload("tiny-exit", _exit)
_workload("tiny-sigkill", _sigkill)
_workload("tiny-hang", _pid_then_sleep)
_workload("tiny-noisy", _noisy)


KILL_MACHINE = Machine(
    id="local-kill-test-00000000",
    label="kill test machine",
    software=Software(python="3.11", benchlib="test"),
)


def drive(command: str, out: str) -> None:
    """``run`` the tiny workloads into ``out``, or ``resume`` the one unfinished run there.

    The same runner calls as `benchlib run` and `benchlib run --resume OUT`, minus the machine
    probe (which imports torch: seconds per start, too slow for a test that starts dozens of runs).
    """
    from benchlib.measure.runner import find_resumable, resume_run, run_suite, select_workloads

    if command == "run":
        run_suite(
            select_workloads("quick", TINY),
            suite="quick",
            device="cpu",
            machine=KILL_MACHINE,
            out_dir=Path(out),
            isolate=True,
        )
    else:
        resume_run(find_resumable(Path(out), KILL_MACHINE.id), machine=KILL_MACHINE, isolate=True)
