import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from benchlib.measure.runner import RunOutcome, check, run_suite, select_workloads
from benchlib.results.schema import FAILED_STATUSES, MeasurementRecord, Metric
from benchlib.results.store import read_results
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
    workloads = [
        fake_workload("ok", ok),
        fake_workload("crash", crash),
        fake_workload("oom", oom),
        fake_workload("missing", missing),
    ]
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


@pytest.mark.slow
def test_run_killed_midway_leaves_a_valid_file(tmp_path):
    """SIGKILL after the first workload finished: the file is valid and keeps what finished.

    The tiny test workloads: what is tested is the runner's file, not what a workload measures.
    The 3 s one after the first leaves the time to kill the run between two workloads.
    """
    only = [arg for name in ("tiny-1", "tiny-slow", "tiny-2") for arg in ("--only", name)]
    proc = subprocess.Popen(
        [sys.executable, "-m", "benchlib.cli", "run", *only, "--out", str(tmp_path)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=os.environ
        | {
            "PYTHONUNBUFFERED": "1",
            "PYTHONPATH": str(Path(__file__).parent),
            "BENCHLIB_WORKLOAD_MODULES": "benchlib_test_workloads",
        },
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
    assert not [m for m in saved.measurements if m.status in FAILED_STATUSES]
    assert not saved.complete


# Isolation: each workload in its own process (tests/benchlib_test_workloads.py has the crashers).


def run_isolated(names: list[str], machine, out_dir: Path, on_output=lambda w, text: None) -> RunOutcome:
    """A quick run of the tiny workloads ``names`` into ``out_dir``, each in a child process."""
    workloads = select_workloads("quick", names)
    return run_suite(
        workloads, suite="quick", device="cpu", machine=machine, out_dir=out_dir, isolate=True, on_output=on_output
    )


@pytest.mark.slow
def test_a_workload_that_kills_its_interpreter_is_an_error_and_the_run_goes_on(tmp_path, machine, tiny):
    names = ["tiny-1", "tiny-segfault", "tiny-exit", "tiny-sigkill", "tiny-2"]
    outcome = run_isolated(names, machine, tmp_path)
    saved = read_results(outcome.path)
    assert saved.complete and saved.plan.isolated
    by_name = {m.workload: m for m in saved.measurements}
    assert by_name["tiny-1"].status == by_name["tiny-2"].status == "ok"
    segv = by_name["tiny-segfault"]
    assert segv.status == "error" and segv.crash.signal == "SIGSEGV" and segv.crash.exit_code == -signal.SIGSEGV
    # faulthandler's stack names the workload's own frame, and the message says where it died.
    assert any("_segfault" in line for line in segv.crash.stderr_tail)
    assert "killed by SIGSEGV; it crashed in" in segv.message and "string_at" in segv.message
    code3 = by_name["tiny-exit"]
    assert code3.status == "error" and code3.crash.exit_code == 3 and code3.crash.signal is None
    assert code3.crash.stderr_tail == ["line one", "fatal: giving up with code 3"]
    assert "exited with code 3 before reporting a result; last output: fatal: giving up with code 3" in code3.message
    killed = by_name["tiny-sigkill"]
    assert killed.crash.signal == "SIGKILL" and "out-of-memory killer" in killed.message
    assert {m.workload for m in outcome.failed} == {"tiny-segfault", "tiny-exit", "tiny-sigkill"}
    assert set(outcome.overhead_s) == set(names) and all(v >= 0 for v in outcome.overhead_s.values())
    # duration_s is the workload's own time, not the child's start-up.
    assert by_name["tiny-1"].duration_s < outcome.per_workload_s["tiny-1"]


def test_isolated_and_in_process_records_agree(tmp_path, machine, tiny):
    workloads = select_workloads("quick", ["tiny-1"])
    inside = run_suite(workloads, suite="quick", device="cpu", machine=machine, out_dir=tmp_path / "in")
    child = run_suite(workloads, suite="quick", device="cpu", machine=machine, out_dir=tmp_path / "iso", isolate=True)
    strip = lambda r: r.model_dump(exclude={"duration_s"})  # noqa: E731
    assert [strip(r) for r in inside.results.measurements] == [strip(r) for r in child.results.measurements]


def test_isolation_needs_registered_workloads(tmp_path, machine):
    with pytest.raises(ValueError, match="not in the registry"):
        run_suite(
            [fake_workload("ok", ok)], suite="quick", device="cpu", machine=machine, out_dir=tmp_path, isolate=True
        )


def test_a_record_that_cannot_be_stored_becomes_an_error(tmp_path, machine):
    def nan(ctx):
        return [MeasurementRecord(workload="nan", framework="torch", device="cpu", metric=METRIC, value=float("nan"))]

    outcome = run_suite(
        [fake_workload("nan", nan), fake_workload("ok", ok)],
        suite="quick",
        device="cpu",
        machine=machine,
        out_dir=tmp_path,
    )
    saved = read_results(outcome.path)
    first, second = saved.measurements
    # NaN is caught by the plausibility check first: kept as 'invalid', which JSON can carry as null.
    assert first.status == "invalid" and first.value is None and "not a finite number" in first.message
    assert second.status == "ok"


def test_plausibility_applies_to_new_measurements(machine):
    zero = check(record(value=0.0, peak=None, device="cpu"), "cpu", machine)
    assert zero.status == "invalid" and "not a possible rate" in zero.message
    gpu_named = check(record(device="cpu", device_name="Tesla T4", peak=None), "auto", machine)
    assert gpu_named.status == "invalid" and "names the GPU 'Tesla T4'" in gpu_named.message


@pytest.mark.slow
def test_cli_run_budget_skips_and_reports_resume(tmp_path):
    env = os.environ | {
        "PYTHONPATH": str(Path(__file__).parent),
        "BENCHLIB_WORKLOAD_MODULES": "benchlib_test_workloads",
    }
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "benchlib.cli",
            "run",
            "--only",
            "tiny-slow",
            "--only",
            "tiny-1",
            "--budget",
            "1",
            "--out",
            str(tmp_path),
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    (path,) = tmp_path.rglob("*.json")
    saved = read_results(path)
    by_name = {m.workload: m for m in saved.measurements}
    assert by_name["tiny-slow"].skip_reason == "budget" and by_name["tiny-1"].status == "skipped"
    assert "skipped for the budget" in done.stderr and f"--resume {path}" in " ".join(done.stderr.split())
    # Before it starts, the run says what it expects: 3 s and 0.05 s of sleep, 5 s start-up each.
    said = " ".join(done.stderr.split())
    assert "expected: about 13 s for 2 workload(s) (2 from benchlib's timings on a 2-core CPU)" in said
    assert "more than the --budget, so what would end after it is skipped" in said


def test_framework_noise_from_a_child_is_not_shown_but_its_own_output_is(tmp_path, machine, tiny):
    shown: list[str] = []
    run_isolated(["tiny-noisy"], machine, tmp_path, on_output=lambda w, text: shown.append(text))
    assert shown == [tiny.NOT_NOISE]


@pytest.mark.slow
def test_spawned_children_as_on_macos_and_windows(tmp_path, machine, tiny, monkeypatch):
    from benchlib.measure.isolation import default_start_method

    monkeypatch.setenv("BENCHLIB_START_METHOD", "spawn")
    assert default_start_method() == "spawn"
    outcome = run_isolated(["tiny-1", "tiny-exit"], machine, tmp_path)
    assert [m.status for m in outcome.results.measurements] == ["ok", "error"]
    assert outcome.results.measurements[1].crash.exit_code == 3


def test_a_ctrl_c_while_a_child_starts_is_raised_once_it_has_started() -> None:
    # Raised mid-start, it left a child without its data, which printed an EOFError traceback.
    from benchlib.measure.isolation import _holding_sigint

    before = signal.signal(signal.SIGINT, signal.default_int_handler)  # as in a terminal, whatever runs the tests
    try:
        reached = []
        with pytest.raises(KeyboardInterrupt):
            with _holding_sigint():
                os.kill(os.getpid(), signal.SIGINT)
                reached.append("the start went on")
        assert reached == ["the start went on"]
        # A second Ctrl-C raises at once: a start stuck waiting must still be stoppable.
        with pytest.raises(KeyboardInterrupt):
            with _holding_sigint():
                os.kill(os.getpid(), signal.SIGINT)
                os.kill(os.getpid(), signal.SIGINT)
                reached.append("never")
        assert reached == ["the start went on"]
        assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    finally:
        signal.signal(signal.SIGINT, before)
