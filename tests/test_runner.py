import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from benchlib.results.schema import MeasurementRecord, Metric
from benchlib.results.store import read_results
from benchlib.runner import check, run_suite
from benchlib.workloads import Workload

METRIC = Metric(name="throughput", unit="TFLOPS", higher_is_better=True)


def fake_workload(name, behaviour):
    def run(ctx, params):
        return behaviour(ctx)

    return Workload(name=name, framework="torch", description=name, metric=METRIC, sizes={"quick": {}}, run=run)


def ok(ctx):
    return [MeasurementRecord(workload="ok", framework="torch", device=ctx.device, metric=METRIC, value=1.0)]


def crash(ctx):
    raise RuntimeError("boom")


def oom(ctx):
    raise RuntimeError("CUDA out of memory. Tried to allocate 2.00 GiB")


def missing(ctx):
    from benchlib.backends import FrameworkMissing

    raise FrameworkMissing("tensorflow is not installed; install it with `pip install 'benchlib[tf]'`")


def test_one_crash_keeps_the_others(tmp_path, machine):
    workloads = [fake_workload("ok", ok), fake_workload("crash", crash), fake_workload("oom", oom), fake_workload("missing", missing)]
    outcome = run_suite(workloads, suite="quick", device="cpu", machine=machine, out_dir=tmp_path)
    saved = read_results(outcome.path)
    assert saved.complete
    by_name = {m.workload: m for m in saved.measurements}
    assert by_name["ok"].status == "ok" and by_name["ok"].value == 1.0
    assert by_name["crash"].status == "error"
    assert "crash raised RuntimeError: boom" in by_name["crash"].message
    assert by_name["oom"].status == "oom" and "oom: out of memory" in by_name["oom"].message
    assert by_name["missing"].status == "skipped" and "pip install" in by_name["missing"].message
    assert {m.workload for m in outcome.failed} == {"crash", "oom"}
    assert outcome.path.parent.name == machine.id


def record(**kw):
    base = dict(workload="matmul", framework="torch", device="cuda", metric=METRIC, value=70.0, peak=65.0)
    return MeasurementRecord(**(base | kw))


def test_value_above_peak_is_invalid():
    checked = check(record(value=80.0), "cuda")
    assert checked.status == "invalid"
    assert "123% of the known peak" in checked.message


def test_value_near_peak_gets_efficiency():
    checked = check(record(value=65.0 * 1.05), "auto")
    assert checked.status == "ok"
    assert checked.efficiency == pytest.approx(1.05)


def test_gpu_request_that_ran_on_cpu_is_an_error():
    checked = check(record(device="cpu", peak=None), "cuda")
    assert checked.status == "error"
    assert "asked for cuda but the work ran on cpu" in checked.message


def test_run_killed_midway_leaves_a_valid_file(tmp_path):
    """SIGKILL after the first workload finished: the file is valid and keeps what finished."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "benchlib.cli", "run", "--suite", "quick", "--out", str(tmp_path)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=os.environ | {"PYTHONUNBUFFERED": "1"},
    )
    try:
        deadline = time.monotonic() + 120
        finished = []
        while time.monotonic() < deadline:
            files = list(Path(tmp_path).rglob("*.json"))
            if files:
                try:
                    finished = read_results(files[0]).measurements
                except Exception:
                    finished = []
                if finished:
                    break
            time.sleep(0.05)
        assert finished, "the run wrote no measurement in time"
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    finally:
        proc.kill()
    files = list(Path(tmp_path).rglob("*.json"))
    assert len(files) == 1
    saved = read_results(files[0])
    assert saved.measurements
    assert all(m.status == "ok" for m in saved.measurements)
    assert not saved.complete
