"""Run conditions: other processes' CPU, steal and GPU use between two snapshots, and when that disturbs."""

import json
import os
import subprocess
import sys
import time
from datetime import datetime, timezone
from types import SimpleNamespace

import pytest
from site_samples import results_file

from benchlib.measure import conditions as cond
from benchlib.measure.conditions import ConditionsSampler, Snapshot, compare
from benchlib.measure.runner import run_suite
from benchlib.results.plausibility import disturbed_line, disturbed_workloads, run_disturbed
from benchlib.results.schema import Conditions, RunPlan
from benchlib.results.store import read_results


def snap(at, *, user=0.0, system=0.0, idle=0.0, steal=0.0, own=0.0, gpu=None, pids=(1,)):
    return Snapshot(
        at=at,
        unix_us=int(at * 1e6),
        load_1m=0.5,
        own_cpu_s=own,
        own_pids=frozenset(pids),
        gpu_processes=gpu,
        cpu_s={"user": user, "system": system, "idle": idle, "iowait": 0.0, "steal": steal, "guest": 0.0},
    )


def test_busy_time_outside_the_run_is_others_and_disturbs():
    # 10 s on 2 CPUs: 20 CPU-seconds, 12 busy of which the run used 8.
    c = compare(snap(0), snap(10, user=10, system=2, idle=8, own=8))
    assert c.others_cpu_s == pytest.approx(4) and c.others_cpu_share == pytest.approx(0.2)
    assert c.seconds == 10 and c.load_avg_before == 0.5
    assert c.disturbed == ["other processes took 20% of the CPU (0.40 CPUs on average)"]


def test_a_quiet_interval_is_not_disturbed():
    c = compare(snap(0), snap(10, user=11.8, system=0.1, idle=8.05, steal=0.05, own=11.8))
    assert c.others_cpu_s == pytest.approx(0.1) and c.steal_share == pytest.approx(0.0025)
    assert c.disturbed == []


def test_clock_tick_rounding_on_a_short_workload_is_not_others():
    # 0.1 s: a few 10 ms ticks the run's counters missed would be 20 % of the CPU without the slack.
    c = compare(snap(0), snap(0.1, user=0.1, idle=0.08, steal=0.02, own=0.06))
    assert c.others_cpu_share == pytest.approx(0.2) and c.steal_share == pytest.approx(0.1)
    assert c.disturbed == []


def test_steal_above_the_threshold_disturbs():
    c = compare(snap(0), snap(10, user=12, idle=6, steal=2, own=12))
    assert c.steal_share == pytest.approx(0.1)
    assert c.disturbed == ["the hypervisor gave 10% of the CPU time to other virtual machines (steal)"]


def test_without_cpu_counters_nothing_is_guessed():
    before = Snapshot(at=0, unix_us=0, load_1m=None, cpu_s=None, own_cpu_s=None, own_pids=frozenset())
    c = compare(before, before)
    assert c.others_cpu_s is None and c.steal_share is None and c.gpu is None and c.disturbed == []


class FakeNVML:
    NVML_ERROR_NOT_FOUND = 6

    class NVMLError(Exception):
        def __init__(self, value):
            self.value = value

    def __init__(self, processes, samples=None, error=None):
        self.processes = processes
        self.samples = samples or []
        self.error = error

    def nvmlInit(self):
        pass

    def nvmlDeviceGetHandleByIndex(self, index):
        return f"gpu{index}"

    def nvmlDeviceGetComputeRunningProcesses(self, handle):
        return [SimpleNamespace(pid=pid, usedGpuMemory=memory) for pid, memory in self.processes]

    def nvmlDeviceGetProcessUtilization(self, handle, since_us):
        if self.error is not None:
            raise self.NVMLError(self.error)
        return [SimpleNamespace(pid=pid, timeStamp=since_us + 1, smUtil=sm) for pid, sm in self.samples]


def test_other_processes_on_the_gpu_are_counted_and_their_sm_use_disturbs():
    child = 999_999  # an isolated workload's process: ended by the time of the after snapshot
    nvml = FakeNVML(processes=[(os.getpid(), 1 << 30), (424242, 2 << 30)], samples=[(child, 97), (424242, 40)])
    sampler = ConditionsSampler(gpu_index=0, nvml=nvml)
    before = sampler.snapshot()
    c = sampler.after(before, run_pids=[child])
    assert c.gpu.processes_before == 1 and c.gpu.processes_after == 1 and c.gpu.memory_bytes == 2 << 30
    assert c.gpu.sm_percent == 40  # the run's own 97 % is not another process's
    assert "another process kept the GPU's SMs 40% busy" in c.disturbed


def test_gpu_use_nvml_cannot_sample_is_left_unknown():
    unsupported = ConditionsSampler(gpu_index=0, nvml=FakeNVML(processes=[], error=3))
    c = unsupported.after(unsupported.snapshot())
    assert c.gpu.processes_before == 0 and c.gpu.sm_percent is None
    assert not any("GPU" in reason for reason in c.disturbed)
    idle = ConditionsSampler(gpu_index=0, nvml=FakeNVML(processes=[], error=FakeNVML.NVML_ERROR_NOT_FOUND))
    assert idle.after(idle.snapshot()).gpu.sm_percent == 0.0  # NOT_FOUND: no process computed since


def test_a_cpu_run_or_a_machine_without_nvml_records_no_gpu():
    class Broken(FakeNVML):
        def nvmlInit(self):
            raise RuntimeError("NVML Shared Library Not Found")

    assert ConditionsSampler(gpu_index=None).snapshot().gpu_processes is None
    broken = ConditionsSampler(gpu_index=0, nvml=Broken(processes=[]))
    assert broken.after(broken.snapshot()).gpu is None


BURN = "import time\nend = time.process_time() + {s}\nwhile time.process_time() < end: pass\n"


def test_a_finished_child_process_counts_as_the_runs_own_time():
    sampler = ConditionsSampler()
    before = sampler.snapshot()
    subprocess.run([sys.executable, "-c", BURN.format(s=0.4)], check=True)
    after = sampler.snapshot()
    assert after.own_cpu_s - before.own_cpu_s >= 0.35


def test_a_process_outside_the_run_counts_as_others(tmp_path):
    # The busy process leaves this process tree (double fork), as another user's job would be.
    done = tmp_path / "done"
    code = f"import os\nif os.fork(): os._exit(0)\n{BURN.format(s=0.6)}open({str(done)!r}, 'w').close()\n"
    sampler = ConditionsSampler()
    before = sampler.snapshot()
    subprocess.run([sys.executable, "-c", code], check=True)
    deadline = time.monotonic() + 30
    while not done.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    c = sampler.after(before)
    assert c.others_cpu_s >= 0.5
    assert c.load_avg_before is not None and c.logical_cpus == os.cpu_count()
    assert c.disturbed and c.disturbed[-1].startswith("other processes took")


def test_thresholds_are_documented_from_the_constants():
    from benchlib.site.score_blocks import thresholds_table

    text = thresholds_table()
    assert f"{cond.OTHERS_MAX_CPU_SHARE:.0%}" in text and f"{cond.STEAL_MAX_SHARE:.0%}" in text
    assert f"{cond.GPU_OTHERS_MAX_SM_PERCENT:g}%" in text


class ScriptedSampler:
    """Stands in for the real sampler in a run: the workloads at the indices in ``busy`` were disturbed."""

    busy: frozenset[int] = frozenset()
    calls: list[tuple[int, ...]] = []

    def __init__(self, gpu_index=None):
        pass

    def snapshot(self):
        return snap(time.perf_counter())

    def after(self, before, run_pids=()):
        index = len(ScriptedSampler.calls)
        ScriptedSampler.calls.append(tuple(run_pids))
        busy = index in self.busy
        return Conditions(
            seconds=1.0,
            logical_cpus=2,
            others_cpu_s=0.9 if busy else 0.0,
            others_cpu_share=0.45 if busy else 0.0,
            disturbed=["other processes took 45% of the CPU (0.90 CPUs on average)"] if busy else [],
        )


@pytest.fixture
def scripted(monkeypatch):
    from benchlib.measure import runner

    ScriptedSampler.calls = []
    monkeypatch.setattr(runner, "ConditionsSampler", ScriptedSampler)
    return ScriptedSampler


def select(names):
    from benchlib.measure.runner import select_workloads

    return select_workloads("quick", names)


def test_a_run_records_each_workloads_conditions_and_is_marked_disturbed(tmp_path, machine, scripted, tiny):
    scripted.busy = frozenset({1})
    outcome = run_suite(
        select(["tiny-1", "tiny-2", "tiny-3"]), suite="quick", device="cpu", machine=machine, out_dir=tmp_path
    )
    saved = read_results(outcome.path)
    assert saved.disturbed is True
    assert list(saved.plan.conditions) == ["tiny-1", "tiny-2", "tiny-3"]
    assert saved.plan.conditions["tiny-2"].disturbed == ["other processes took 45% of the CPU (0.90 CPUs on average)"]
    assert saved.plan.conditions["tiny-1"].disturbed == [] and saved.plan.conditions["tiny-1"].others_cpu_s == 0.0
    assert disturbed_workloads(saved) == {"tiny-2": ["other processes took 45% of the CPU (0.90 CPUs on average)"]}


def test_a_quiet_run_is_marked_not_disturbed(tmp_path, machine, scripted, tiny):
    scripted.busy = frozenset()
    outcome = run_suite(select(["tiny-1", "tiny-2"]), suite="quick", device="cpu", machine=machine, out_dir=tmp_path)
    saved = read_results(outcome.path)
    assert saved.disturbed is False and len(saved.plan.conditions) == 2
    assert disturbed_line(saved) is None


def test_an_isolated_workloads_process_is_the_runs_own(tmp_path, machine, scripted, tiny):
    # Its GPU samples carry its pid after it has ended; the sampler must know it was ours.
    scripted.busy = frozenset()
    run_suite(select(["tiny-1"]), suite="quick", device="cpu", machine=machine, out_dir=tmp_path, isolate=True)
    [(pid,)] = scripted.calls
    assert pid != os.getpid() and pid > 0


def test_a_real_run_records_conditions_for_every_workload(tmp_path, machine, tiny):
    outcome = run_suite(select(["tiny-1", "tiny-2"]), suite="quick", device="cpu", machine=machine, out_dir=tmp_path)
    saved = read_results(outcome.path)
    for c in saved.plan.conditions.values():
        assert c.seconds >= 0.05 and c.others_cpu_s is not None and c.others_cpu_s >= 0 and c.load_avg_after is not None
    # Whether this shared machine was quiet is not up to the test; the flag must agree with the reasons.
    assert saved.disturbed is any(c.disturbed for c in saved.plan.conditions.values())


def test_files_without_conditions_stay_valid(tmp_path, machine):
    plan = RunPlan(workloads=["x"], size="quick", device="cpu")
    old = results_file(machine, run_id="old", created=datetime(2026, 1, 1, tzinfo=timezone.utc), plan=plan)
    data = old.model_dump(mode="json", exclude_none=True)
    del data["plan"]["conditions"]
    path = tmp_path / "old.json"
    path.write_text(json.dumps(data))
    assert read_results(path).disturbed is None and disturbed_line(read_results(path)) is None


def test_a_run_resumed_from_a_file_without_conditions_is_not_called_quiet(machine):
    plan = RunPlan(
        workloads=["a", "b"],
        size="quick",
        device="cpu",
        wall_s={"a": 1.0, "b": 1.0},
        conditions={"b": Conditions(seconds=1.0)},
    )
    run = results_file(machine, run_id="r", created=datetime(2026, 1, 1, tzinfo=timezone.utc), plan=plan)
    assert run_disturbed(run) is None  # "a" ran before conditions were recorded
    plan.conditions["a"] = Conditions(seconds=1.0)
    assert run_disturbed(run) is False
    plan.conditions["a"] = Conditions(seconds=1.0, disturbed=["steal"])
    assert run_disturbed(run) is True
