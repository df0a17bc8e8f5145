"""Runs survive being killed: the file stays valid, nothing finished is lost, `--resume` finishes.

The kill test starts the tiny test workloads (tests/benchlib_test_workloads.py) in isolated
children, kills the run at random points, SIGKILL to the whole process group (a Colab
disconnect) or to the parent alone (its children must then exit by themselves), and resumes,
sometimes killing the resume too, until the run completes.
"""

from __future__ import annotations

import errno
import json
import os
import random
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from fakes import python_workload
from site_samples import measurement, results_file
from typer.testing import CliRunner

from benchlib.measure.runner import NothingToResume, ResumeError, find_resumable, resume_run, run_suite, unfinished
from benchlib.results.schema import MeasurementRecord, Metric, Software
from benchlib.results.store import read_results, write_results
from benchlib.workloads import Workload

TESTS = Path(__file__).parent
MODULE = "benchlib_test_workloads"
TINY = [f"tiny-{i}" for i in range(1, 7)]
# Ten kills a run, each at a new random point (every run, a new seed): each costs a few interpreter
# starts. To hunt a rare loss, ask for more, or replay a printed seed with $BENCHLIB_KILL_SEED.
KILLS = int(os.environ.get("BENCHLIB_KILLS", "10"))
ENV = os.environ | {
    "PYTHONPATH": os.pathsep.join([str(TESTS), os.environ.get("PYTHONPATH", "")]),
    "BENCHLIB_WORKLOAD_MODULES": MODULE,
}


def start(command: str, out: Path) -> subprocess.Popen:
    code = f"import {MODULE} as t; t.drive({command!r}, {str(out)!r})"
    # A session of its own, so the test can kill the run and every process it started, and only those.
    return subprocess.Popen(
        [sys.executable, "-c", code],
        env=ENV,
        start_new_session=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )


def group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    return True


def written_file(out: Path) -> Path | None:
    """The one results file the run into ``out`` has written; None before it writes one."""
    files = list(out.rglob("*.json"))
    assert len(files) <= 1, files
    return files[0] if files else None


def kill_at_random_point(proc: subprocess.Popen, out: Path, rng: random.Random) -> str | None:
    """SIGKILL the run after a random delay; returns how it was killed, or None if it finished first."""
    deadline = time.monotonic() + 60
    while written_file(out) is None and proc.poll() is None:
        assert time.monotonic() < deadline, "the run wrote no file"
        time.sleep(0.01)
    time.sleep(rng.uniform(0, 2.0))
    if proc.poll() is not None:
        return None
    how = rng.choice(["group", "parent"])
    if how == "group":
        os.killpg(proc.pid, signal.SIGKILL)
    else:
        proc.send_signal(signal.SIGKILL)
    proc.wait()
    # With the parent gone, the forkserver and a running workload must notice and exit.
    deadline = time.monotonic() + 15
    while group_alive(proc.pid):
        assert time.monotonic() < deadline, "a child outlived its killed run"
        time.sleep(0.05)
    return how


def finished_records(path: Path) -> dict[str, list[dict]]:
    results = read_results(path)
    assert results.plan is not None
    return {name: [m.model_dump() for m in results.measurements if m.workload == name] for name in results.plan.wall_s}


@pytest.mark.slow
def test_random_kills_never_lose_work_and_resume_completes(tmp_path):
    seed = int(os.environ.get("BENCHLIB_KILL_SEED", time.time_ns() % 2**32))
    rng = random.Random(seed)
    kills: list[str] = []
    runs = 0
    while len(kills) < KILLS:
        out = tmp_path / f"run-{runs}"
        runs += 1
        proc = start("run", out)
        killed = kill_at_random_point(proc, out, rng)
        if killed is None:
            assert proc.returncode == 0, proc.stderr.read().decode()
            continue
        kills.append(killed)
        kept: dict[str, list[dict]] = {}
        while True:
            path = written_file(out)
            # Every time: a valid file that keeps everything finished before.
            current = finished_records(path)
            for name, records in kept.items():
                assert current[name] == records, f"seed {seed}: {name} changed after a kill"
            kept = current
            if read_results(path).complete:
                break  # killed after its last write: nothing left to resume
            proc = start("resume", out)
            if len(kills) < KILLS and rng.random() < 0.6:
                killed = kill_at_random_point(proc, out, rng)
                if killed is not None:
                    kills.append(killed)
                    continue
            assert proc.wait(60) == 0, f"seed {seed}: {proc.stderr.read().decode()}"
            break
        final = read_results(written_file(out))
        assert final.complete, f"seed {seed}"
        assert [m.workload for m in final.measurements] == sorted(m.workload for m in final.measurements)
        assert sorted(m.workload for m in final.measurements) == TINY, f"seed {seed}: each workload exactly once"
        assert all(m.status == "ok" for m in final.measurements)
        for name, records in kept.items():
            assert [m.model_dump() for m in final.measurements if m.workload == name] == records
        assert not list(out.rglob("*.tmp")), "resume leaves no temp files behind"
    print(
        f"seed {seed}: {len(kills)} kills ({kills.count('group')} of the process group, "
        f"{kills.count('parent')} of the parent alone) over {runs} runs"
    )
    assert len(kills) >= KILLS


# In-process tests of what resume does, with fake workloads put in the registry for one test.

METRIC = Metric(name="time", unit="ms", higher_is_better=False)


def fake(name: str, calls: list[str], expected_s: float = 0.01) -> Workload:
    """A workload that adds its name to ``calls`` when it runs."""
    return python_workload(name, {"quick": expected_s}, calls.append)


@pytest.fixture
def fakes(monkeypatch):
    from benchlib import workloads

    calls: list[str] = []
    registry = dict(workloads.all_workloads())
    made = {n: fake(n, calls) for n in ("a", "b", "c", "d")}
    registry.update(made)
    monkeypatch.setattr(workloads, "_REGISTRY", registry)
    return made, calls


def interrupted_run(tmp_path, machine, fakes, stop_after: str) -> Path:
    """A run of a, b, c, d whose process 'died' once ``stop_after`` was written."""
    made, calls = fakes

    class Killed(BaseException):
        pass

    def on_done(w, records):
        if w.name == stop_after:
            raise Killed

    with pytest.raises(Killed):
        run_suite(list(made.values()), suite="quick", device="cpu", machine=machine, out_dir=tmp_path, on_done=on_done)
    (path,) = tmp_path.rglob("*.json")
    return path


def test_resume_runs_only_what_is_unfinished(tmp_path, machine, fakes):
    made, calls = fakes
    path = interrupted_run(tmp_path, machine, fakes, stop_after="b")
    before = read_results(path)
    assert not before.complete and unfinished(before) == ["c", "d"]
    calls.clear()
    outcome = resume_run(path, machine=machine)
    assert calls == ["c", "d"]
    after = read_results(path)
    assert after.complete and after.run_id == before.run_id
    assert [m.workload for m in after.measurements] == ["a", "b", "c", "d"]
    assert after.measurements[:2] == before.measurements
    assert outcome.path == path


def test_budget_skips_with_reason_and_resume_runs_them(tmp_path, machine, fakes):
    made, calls = fakes
    slow = fake("slow", calls, expected_s=500.0)
    from benchlib import workloads

    workloads._REGISTRY["slow"] = slow
    outcome = run_suite(
        [made["a"], slow, made["b"]], suite="quick", device="cpu", machine=machine, out_dir=tmp_path, budget_s=60
    )
    saved = read_results(outcome.path)
    by_name = {m.workload: m for m in saved.measurements}
    assert by_name["slow"].status == "skipped" and by_name["slow"].skip_reason == "budget"
    assert "expected to take 500 s" in by_name["slow"].message and "60 s budget" in by_name["slow"].message
    assert by_name["b"].status == "ok", "a later workload that fits still runs"
    assert not saved.complete and outcome.skipped_for_budget == ["slow"]
    assert outcome.failed == [], "a budget skip is not a failure"
    resumed = resume_run(outcome.path, machine=machine)
    final = read_results(resumed.path)
    assert final.complete
    assert [m.workload for m in final.measurements] == ["a", "b", "slow"]
    assert all(m.status == "ok" for m in final.measurements)


def test_budget_estimates_from_this_machines_earlier_run(tmp_path, machine, fakes):
    made, calls = fakes
    first = run_suite([made["a"]], suite="quick", device="cpu", machine=machine, out_dir=tmp_path)
    data = json.loads(first.path.read_text())
    data["plan"]["wall_s"]["a"] = 90.0  # as if a ran for 90 s here last time
    first.path.write_text(json.dumps(data))
    second = run_suite([made["a"]], suite="quick", device="cpu", machine=machine, out_dir=tmp_path, budget_s=60)
    (skip,) = read_results(second.path).measurements
    assert skip.skip_reason == "budget" and "expected to take 90 s (its last run on this machine)" in skip.message


def test_zero_budget_starts_nothing_but_writes_the_plan(tmp_path, machine, fakes):
    made, calls = fakes
    outcome = run_suite(list(made.values()), suite="quick", device="cpu", machine=machine, out_dir=tmp_path, budget_s=0)
    assert calls == []
    saved = read_results(outcome.path)
    assert [m.skip_reason for m in saved.measurements] == ["budget"] * 4 and not saved.complete


def test_find_resumable_in_a_folder(tmp_path, machine, fakes):
    with pytest.raises(ResumeError, match="no unfinished run of this machine"):
        find_resumable(tmp_path, machine.id)
    path = interrupted_run(tmp_path, machine, fakes, stop_after="a")
    assert find_resumable(tmp_path, machine.id) == path
    assert find_resumable(path.parent, machine.id) == path
    with pytest.raises(ResumeError, match="no unfinished run of this machine"):
        find_resumable(tmp_path, "another-machine-1234")
    second = interrupted_run(tmp_path / "other", machine, fakes, stop_after="b")
    with pytest.raises(ResumeError, match="2 unfinished runs") as info:
        find_resumable(tmp_path, machine.id)
    assert str(path) in str(info.value) and str(second) in str(info.value)
    with pytest.raises(ResumeError, match="no such results file or folder"):
        find_resumable(tmp_path / "nope", machine.id)


def test_resume_refuses_a_complete_run_another_machine_and_changed_software(tmp_path, machine, fakes):
    made, calls = fakes
    done = run_suite([made["a"]], suite="quick", device="cpu", machine=machine, out_dir=tmp_path / "done")
    with pytest.raises(NothingToResume, match=f"nothing left to run; {re.escape(str(done.path))} is complete"):
        resume_run(done.path, machine=machine)
    path = interrupted_run(tmp_path / "cut", machine, fakes, stop_after="a")
    other = machine.model_copy(update={"id": "colab-tesla-t4-12345678", "label": "Colab · Tesla T4"})
    with pytest.raises(ResumeError, match="was measured on .*this machine is Colab · Tesla T4"):
        resume_run(path, machine=other)
    upgraded = machine.model_copy(update={"software": Software(python="3.12", benchlib="0.1.0")})
    with pytest.raises(ResumeError, match=r"software changed .*python 3.11 -> 3.12"):
        resume_run(path, machine=upgraded)


def test_resume_removes_temp_files_a_killed_write_left(tmp_path, machine, fakes):
    path = interrupted_run(tmp_path, machine, fakes, stop_after="a")
    stale = path.parent / f".{path.name}.abc123.tmp"
    stale.write_text('{"half": ')
    resume_run(path, machine=machine)
    assert not stale.exists() and read_results(path).complete


def resume_in_a_new_process(target: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """`benchlib run --resume TARGET`, started as a reader would start it."""
    command = [sys.executable, "-m", "benchlib.cli", "run", "--resume", str(target)]
    return subprocess.run(command, env=env, capture_output=True, text=True, timeout=120)


@pytest.mark.slow
def test_cli_kill_then_resume_folder(tmp_path):
    """End to end through `benchlib run` and `benchlib run --resume OUT` (the folder form)."""
    env = ENV | {"PYTHONUNBUFFERED": "1"}
    only = [arg for name in ("tiny-slow", *TINY[:2]) for arg in ("--only", name)]
    proc = subprocess.Popen(
        [sys.executable, "-m", "benchlib.cli", "run", *only, "--out", str(tmp_path)],
        env=env,
        start_new_session=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 90
        while not list(tmp_path.rglob("*.json")):
            assert time.monotonic() < deadline and proc.poll() is None
            time.sleep(0.05)
        time.sleep(0.5)  # inside tiny-slow (3 s)
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    (path,) = tmp_path.rglob("*.json")
    assert unfinished(read_results(path)) == ["tiny-slow", *TINY[:2]]
    done = resume_in_a_new_process(tmp_path, env)
    assert done.returncode == 0, done.stderr
    said = " ".join(done.stderr.split())  # rich wraps at 80 columns: where depends on the path's length
    assert "resuming" in said and "0 of 3 workloads finished" in said
    final = read_results(path)
    assert final.complete and [m.workload for m in final.measurements] == ["tiny-slow", *TINY[:2]]
    again = resume_in_a_new_process(path, env)
    assert again.returncode == 0, again.stderr
    assert f"nothing left to run; {path} is complete" in " ".join(again.stderr.split())
    assert read_results(path) == final, "resuming a complete run leaves its file as it was"


def test_find_resumable_in_a_folder_of_complete_runs_names_the_newest(tmp_path, machine, fakes):
    made, calls = fakes
    older = run_suite([made["a"]], suite="quick", device="cpu", machine=machine, out_dir=tmp_path)
    newer = run_suite([made["b"]], suite="quick", device="cpu", machine=machine, out_dir=tmp_path)
    with pytest.raises(NothingToResume) as info:
        find_resumable(tmp_path, machine.id)
    assert info.value.path == newer.path != older.path
    with pytest.raises(ResumeError, match="no unfinished run of this machine") as other:
        find_resumable(tmp_path, "another-machine-1234")
    assert not isinstance(other.value, NothingToResume), "another machine's finished runs are not this one's"


@pytest.mark.parametrize("form", ["folder", "file"])
def test_cli_resume_of_a_finished_run_says_so_and_exits_0(tmp_path, machine, fakes, monkeypatch, form):
    """What `snippets/site/resume.sh` does after a budgeted run that finished everything."""
    from benchlib import probe
    from benchlib.cli import app

    made, calls = fakes
    monkeypatch.setattr(probe, "probe_machine", lambda **kwargs: machine)
    done = run_suite([made["a"], made["b"]], suite="quick", device="cpu", machine=machine, out_dir=tmp_path)
    before = done.path.read_bytes()
    calls.clear()
    target = tmp_path if form == "folder" else done.path
    result = CliRunner().invoke(app, ["run", "--resume", str(target)])
    assert result.exit_code == 0, result.output
    assert f"nothing left to run; {done.path} is complete" in " ".join(result.output.split())
    assert calls == [] and done.path.read_bytes() == before


def test_resume_with_suite_only_or_device_is_a_usage_error(tmp_path):
    from benchlib.cli import app

    result = CliRunner().invoke(app, ["run", "--resume", str(tmp_path), "--suite", "full", "--only", "matmul"])
    assert result.exit_code == 2
    assert "drop --suite, --only" in result.output


def test_resume_help_says_what_it_takes():
    from benchlib.cli import app

    result = CliRunner().invoke(app, ["run", "--help"])
    text = " ".join(re.sub("[│╭╮╰╯─]", " ", result.output).split())
    assert "--resume" in text and "results file" in text and "exactly one unfinished run of this machine" in text
    assert "--budget" in text


def test_write_results_refuses_what_would_not_read_back(tmp_path, machine):
    from benchlib.results.schema import Stats
    from benchlib.results.store import ResultsError

    nan = float("nan")
    stats = Stats(median=nan, iqr=0, mean=1, min=1, max=1, n=1, noisy=False)
    record = measurement("w", METRIC, 1.0, device="cpu", stats=stats)
    bad = results_file(machine, [record], run_id="x", created="2026-11-21T00:00:00Z", benchlib_version="0")
    target = tmp_path / "x.json"
    with pytest.raises(ResultsError, match=r"would not read back: field 'measurements.0.stats.median'"):
        write_results(bad, target)
    assert not target.exists() and not list(tmp_path.iterdir())


def interruptible() -> None:
    # A child inherits SIGINT's disposition and mask. Late in the full suite the run ignored the
    # interrupt although signal.getsignal here still showed Python's handler, so something at the C
    # level left SIGINT ignored or blocked. Start the run as a shell or notebook kernel would.
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})


@pytest.mark.slow
def test_ctrl_c_stops_the_run_keeps_the_file_and_says_how_to_resume(tmp_path):
    env = ENV | {"PYTHONUNBUFFERED": "1"}
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "benchlib.cli",
            "run",
            "--only",
            "tiny-1",
            "--only",
            "tiny-slow",
            "--out",
            str(tmp_path),
        ],
        env=env,
        start_new_session=True,
        preexec_fn=interruptible,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 90
        while not (files := list(tmp_path.rglob("*.json"))) or not read_results(files[0]).plan.wall_s:
            assert time.monotonic() < deadline and proc.poll() is None
            time.sleep(0.05)
        time.sleep(0.5)  # inside tiny-slow
        proc.send_signal(signal.SIGINT)  # what a notebook's "interrupt" sends: to the parent only
        _, stderr = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert proc.returncode == 130, stderr
    assert f"benchlib run --resume {tmp_path}" in stderr
    saved = read_results(files[0])
    assert not saved.complete and unfinished(saved) == ["tiny-slow"]
    deadline = time.monotonic() + 10
    while group_alive(proc.pid):
        assert time.monotonic() < deadline, "the workload outlived the interrupted run"
        time.sleep(0.05)


def interrupt_the_group_when(command: list[str], said: str, out: Path) -> tuple[int, str]:
    """Start ``benchlib COMMAND`` as a terminal would, then press Ctrl-C once its output shows ``said``:
    SIGINT to its whole process group, children included. Its exit code and everything it printed."""
    env = ENV | {"PYTHONUNBUFFERED": "1", "COLUMNS": "80", "HF_HUB_OFFLINE": "1"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "benchlib.cli", *command, "--out", str(out)],
        env=env,
        start_new_session=True,
        preexec_fn=interruptible,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    lines: list[str] = []
    reader = threading.Thread(target=lambda: lines.extend(proc.stdout), daemon=True)
    reader.start()
    try:
        deadline = time.monotonic() + 120
        while not any(said in line for line in lines):
            assert time.monotonic() < deadline and proc.poll() is None, "".join(lines)
            time.sleep(0.02)
        os.killpg(proc.pid, signal.SIGINT)
        proc.wait(timeout=60)
        reader.join(timeout=10)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    deadline = time.monotonic() + 10
    while group_alive(proc.pid):
        assert time.monotonic() < deadline, "a child outlived the interrupted command"
        time.sleep(0.05)
    return proc.returncode, "".join(lines)


@pytest.mark.slow
@pytest.mark.parametrize(
    ("command", "said", "message"),
    [
        # At once: the process server is still importing torch for the children.
        (["contribute", "--device", "cpu", "--tiny"], "machine:", "interrupted"),
        # Inside a workload's child.
        (["run", "--only", "tiny-1", "--only", "tiny-slow"], "tiny-1:", "interrupted; what finished is saved"),
    ],
)
def test_ctrl_c_in_a_terminal_ends_with_the_clean_message_alone(tmp_path, command, said, message):
    code, output = interrupt_the_group_when(command, said, tmp_path)
    assert code == 130, output
    assert message in output and "Traceback" not in output, output


# A full disk: simulated by a writer that fails after some writes succeeded (tests run as root,
# so a read-only folder would not refuse them).


def disk_full_after(monkeypatch, writes: int) -> None:
    from benchlib.measure import runner

    real = runner.write_results
    done = []

    def write(results, path):
        if len(done) >= writes:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(path))
        done.append(path)
        return real(results, path)

    monkeypatch.setattr(runner, "write_results", write)


def test_full_disk_stops_the_run_with_one_message_and_how_to_resume(tmp_path, machine, fakes, monkeypatch):
    from benchlib import probe
    from benchlib.cli import app

    made, calls = fakes
    monkeypatch.setattr(probe, "probe_machine", lambda **kwargs: machine)
    disk_full_after(monkeypatch, writes=2)  # the plan, then workload a
    only = [arg for name in ("a", "b", "c") for arg in ("--only", name)]
    result = CliRunner().invoke(app, ["run", *only, "--no-isolate", "--out", str(tmp_path)])
    assert result.exit_code == 1, result.output
    assert isinstance(result.exception, SystemExit) and "Traceback" not in result.output
    (path,) = tmp_path.rglob("*.json")
    text = " ".join(result.output.split())
    assert f"cannot write {path}: No space left on device" in text
    assert "holds the 1 finished workload(s) a;" in text
    assert f"`benchlib run --resume {path}`" in text
    saved = read_results(path)
    assert unfinished(saved) == ["b", "c"] and [m.workload for m in saved.measurements] == ["a"]
    assert calls == ["a", "b"], "the run stops at the first write that fails"
    assert not list(tmp_path.rglob("*.tmp"))

    monkeypatch.undo()  # space freed: the printed command finishes the run
    calls.clear()
    monkeypatch.setattr(probe, "probe_machine", lambda **kwargs: machine)
    from benchlib import workloads

    monkeypatch.setattr(workloads, "_REGISTRY", {**workloads.all_workloads(), **made})
    resumed = CliRunner().invoke(app, ["run", "--resume", str(path), "--no-isolate"])
    assert resumed.exit_code == 0, resumed.output
    assert calls == ["b", "c"] and read_results(path).complete


def test_full_disk_before_anything_is_saved_says_to_choose_another_folder(tmp_path, machine, fakes, monkeypatch):
    from benchlib import probe
    from benchlib.cli import app

    monkeypatch.setattr(probe, "probe_machine", lambda **kwargs: machine)
    disk_full_after(monkeypatch, writes=0)
    result = CliRunner().invoke(app, ["run", "--only", "a", "--no-isolate", "--out", str(tmp_path)])
    assert result.exit_code == 1 and "Traceback" not in result.output
    text = " ".join(result.output.split())
    assert f"cannot write {tmp_path / machine.id}" in text and "No space left on device" in text
    assert "Nothing was saved; free some space or choose another --out folder" in text
    assert not list(tmp_path.rglob("*.json"))


def test_an_unwritable_folder_says_so_rather_than_to_free_space(tmp_path, machine, fakes, monkeypatch):
    from benchlib import probe
    from benchlib.cli import app
    from benchlib.measure import runner

    monkeypatch.setattr(probe, "probe_machine", lambda **kwargs: machine)

    def refuse(results, path):
        raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), str(path.parent))

    monkeypatch.setattr(runner, "write_results", refuse)
    result = CliRunner().invoke(app, ["run", "--only", "a", "--no-isolate", "--out", str(tmp_path)])
    assert result.exit_code == 1 and "Traceback" not in result.output
    text = " ".join(result.output.split())
    assert "Permission denied. Nothing was saved; make the folder writable or choose another --out folder" in text


def test_a_failed_write_keeps_the_previous_file_whole(tmp_path, machine):
    """write_results itself: the temp file goes, the file it would have replaced stays as it was."""
    from benchlib.core import files
    from benchlib.results.schema import ResultsFile

    results = ResultsFile(
        run_id="r", created="2026-11-21T00:00:00Z", benchlib_version="0", methodology_version="1", machine=machine
    )
    target = write_results(results, tmp_path / "r.json")
    before = target.read_bytes()
    results.measurements.append(
        MeasurementRecord(workload="w", framework="python", device="cpu", metric=METRIC, value=1.0)
    )

    class FullDisk:
        def __init__(self, fd, *args, **kwargs):
            os.close(fd)

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return False

        def write(self, text):
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(files.os, "fdopen", FullDisk)
        with pytest.raises(OSError, match="No space left on device"):
            write_results(results, target)
    assert target.read_bytes() == before and read_results(target).measurements == []
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.json"]
