"""The multi-device parts that need no second process: formulas, reports, topology, records, launching rules."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
import typer
from typer.testing import CliRunner

from benchlib.cli.launch import launch as launch_command
from benchlib.measure.distributed import launch
from benchlib.measure.distributed.launch import (
    ENGINES,
    Engine,
    ScalingRun,
    WorkerFailed,
    check,
    resolve,
    root_cause,
    run_scaling,
    run_worker,
    scaling_record,
    torch_backend,
    train_record,
)
from benchlib.measure.distributed.report import (
    SIZES,
    AllReduceTiming,
    WorkerReport,
    WorkerSkipped,
    algbw_gbps,
    busbw_gbps,
    read_report,
    scaling_efficiency,
    write_report,
)
from benchlib.measure.distributed.topology import (
    PCIE_LEVELS,
    Interconnect,
    detect_interconnect,
    interconnect_from_nvml,
    visible_gpu_indices,
)
from benchlib.results.schema import Accelerators, GPUInfo, TPUInfo
from benchlib.results.store import read_results

CPU_LINK = Interconnect("none", "CPU processes")


def report(**kw) -> WorkerReport:
    base = dict(
        engine="torch",
        framework="torch",
        framework_version="2.x",
        launcher="torchrun",
        backend="gloo",
        device="cpu",
        device_names=[],
        world_size=2,
        per_device_batch=16,
        threads_per_process=1,
        warmup_steps=2,
        warmup_s=0.5,
        steps_per_sample=1,
        sample_times_s=[0.2, 0.25, 0.3],
        sync="none",
        loss_first=2.3,
        loss_last=1.9,
        replicas_in_sync=True,
    )
    return WorkerReport(**(base | kw))


# --- formulas ----------------------------------------------------------------------------------


def test_busbw_follows_nccl_tests_allreduce_factor():
    size, seconds = 64 * 2**20, 0.01
    algbw = size / seconds / 1e9
    assert algbw_gbps(size, seconds) == pytest.approx(algbw)
    assert busbw_gbps(size, seconds, 1) == 0.0  # nothing crosses a link
    assert busbw_gbps(size, seconds, 2) == pytest.approx(algbw)  # 2(n-1)/n = 1
    assert busbw_gbps(size, seconds, 8) == pytest.approx(algbw * 14 / 8)


def test_scaling_efficiency_is_n_device_rate_over_n_times_one():
    assert scaling_efficiency(100.0, 200.0, 2) == pytest.approx(1.0)
    assert scaling_efficiency(100.0, 150.0, 2) == pytest.approx(0.75)
    assert scaling_efficiency(100.0, 400.0, 8) == pytest.approx(0.5)


def test_every_size_has_warmup_before_the_first_timed_step():
    for size in SIZES.values():
        assert size.warmup_steps >= 2 and size.samples >= 3 and size.steps_per_sample >= 1


# --- the worker's report -----------------------------------------------------------------------


def test_report_round_trip_and_skip(tmp_path):
    ok = report(allreduce=[AllReduceTiming(bytes=4 * 2**20, iterations=5, seconds=0.002)])
    write_report(ok, tmp_path / "ok.json")
    assert read_report(tmp_path / "ok.json") == ok
    write_report(WorkerSkipped(engine="tf", message="no TPU"), tmp_path / "skip.json")
    assert read_report(tmp_path / "skip.json") == WorkerSkipped(engine="tf", message="no TPU")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ok.json", "skip.json"]  # no temp files left


# --- topology ----------------------------------------------------------------------------------


class FakeNVML:
    """The NVML calls topology.py makes, answering for a described machine."""

    NVML_P2P_CAPS_INDEX_NVLINK = 2
    NVML_P2P_STATUS_OK = 0
    NVML_NVLINK_MAX_LINKS = 4
    NVML_FEATURE_ENABLED = 1

    class NVMLError(Exception):
        pass

    def __init__(
        self,
        level: int = 30,
        nvlink_pairs: set[tuple[int, int]] = frozenset(),
        p2p_supported: bool = True,
        active_links: set[int] = frozenset(),
    ):
        self.level, self.nvlink_pairs, self.p2p_supported, self.active_links = (
            level,
            nvlink_pairs,
            p2p_supported,
            active_links,
        )

    def nvmlDeviceGetHandleByIndex(self, i):
        return i

    def nvmlDeviceGetP2PStatus(self, a, b, index):
        if not self.p2p_supported:
            raise self.NVMLError("Not Supported")
        return 0 if (min(a, b), max(a, b)) in self.nvlink_pairs else 4

    def nvmlDeviceGetNvLinkState(self, handle, link):
        if not self.active_links:
            raise self.NVMLError("Not Supported")  # GPUs without NVLink
        return 1 if handle in self.active_links else 0

    def nvmlDeviceGetTopologyCommonAncestor(self, a, b):
        return self.level


def test_two_t4s_are_pcie_through_the_host_bridge():
    link = interconnect_from_nvml(FakeNVML(level=30), [0, 1])
    assert link.kind == "pcie"
    assert PCIE_LEVELS[30] in link.detail and "[0, 1]" in link.detail


def test_nvlink_between_every_pair():
    link = interconnect_from_nvml(FakeNVML(nvlink_pairs={(0, 1), (0, 2), (1, 2)}), [0, 1, 2])
    assert link.kind == "nvlink"


def test_partial_nvlink_is_as_slow_as_its_pcie_pairs():
    link = interconnect_from_nvml(FakeNVML(level=50, nvlink_pairs={(0, 1)}), [0, 1, 2])
    assert link.kind == "pcie"
    assert PCIE_LEVELS[50] in link.detail and "NVLink only between 0-1" in link.detail


def test_nvlink_state_when_the_driver_cannot_answer_per_pair():
    assert interconnect_from_nvml(FakeNVML(p2p_supported=False, active_links={0, 1}), [0, 1]).kind == "nvlink"
    assert interconnect_from_nvml(FakeNVML(p2p_supported=False), [0, 1]).kind == "pcie"


def test_interconnect_without_gpus():
    assert detect_interconnect("cpu", 2).kind == "none"
    assert detect_interconnect("tpu", 8).kind == "ici"
    assert detect_interconnect("cuda", 1).kind == "none"


def test_visible_devices_pick_the_nvml_indices(monkeypatch):
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "2,3")
    assert visible_gpu_indices(2) == [2, 3]
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "GPU-1234,GPU-5678")
    assert visible_gpu_indices(2) == [0, 1]
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES")
    assert visible_gpu_indices(3) == [0, 1, 2]


# --- records -----------------------------------------------------------------------------------


def test_train_record_throughput_is_global_batch_over_median_step():
    r = train_record(report(), CPU_LINK, "Test CPU", "quick")
    assert r.status == "ok" and r.workload == "dp-train"
    assert r.value == pytest.approx(32 / 0.25)
    assert r.params["per_device_samples_per_s"] == pytest.approx(16 / 0.25)
    assert r.params["world_size"] == 2 and r.params["backend"] == "gloo" and r.params["interconnect"] == "none"
    assert r.device_name == "Test CPU" and r.stats.median == pytest.approx(0.25) and r.stats.warmup_s == 0.5


def test_replicas_out_of_sync_are_not_a_data_parallel_number():
    r = train_record(report(replicas_in_sync=False), CPU_LINK, None, "quick")
    assert r.status == "invalid" and "different weights" in r.message


def test_scaling_record_and_the_plausibility_check(machine):
    one = train_record(report(world_size=1, sample_times_s=[0.2]), CPU_LINK, None, "quick")
    two = train_record(report(sample_times_s=[0.25]), CPU_LINK, None, "quick")
    s = check(scaling_record(one, two), "cpu", machine)
    assert s.status == "ok"
    assert s.value == pytest.approx((32 / 0.25) / (2 * 16 / 0.2))
    assert s.params["speedup"] == pytest.approx((32 / 0.25) / (16 / 0.2))
    # Faster than linear by more than 10 %: kept, but marked invalid by the plausibility checks.
    fast = train_record(report(sample_times_s=[0.1]), CPU_LINK, None, "quick")
    s = check(scaling_record(one, fast), "cpu", machine)
    assert s.status == "invalid" and s.value == pytest.approx(2.0) and "scaling efficiency" in s.message


# --- launching rules ---------------------------------------------------------------------------


def with_accelerators(machine, accelerators):
    return machine.model_copy(update={"accelerators": accelerators})


def test_engines_device_and_backend_choice(machine):
    assert resolve(ENGINES["torch"], "auto", machine) == "cpu"
    with pytest.raises(ValueError, match="torch engine does not run on tpu; use one of: tf, jax"):
        resolve(ENGINES["torch"], "tpu", machine)
    gpu_box = with_accelerators(machine, Accelerators(nvidia=[GPUInfo(index=i, name="Tesla T4") for i in range(2)]))
    assert resolve(ENGINES["torch"], "auto", gpu_box) == "cuda"
    assert launch.default_devices(gpu_box, "cuda") == 2
    tpu_box = with_accelerators(machine, Accelerators(tpu=TPUInfo(backend="jax", kind="TPU v5 lite", count=8)))
    assert resolve(ENGINES["jax"], "auto", tpu_box) == "tpu" and launch.default_devices(tpu_box, "tpu") == 8
    assert torch_backend("auto", "cuda") == "nccl" and torch_backend("auto", "cpu") == "gloo"
    with pytest.raises(ValueError, match="nccl backend needs CUDA"):
        torch_backend("nccl", "cpu")


def test_torch_is_started_by_torchrun(tmp_path):
    cmd = ENGINES["torch"].command(2, "quick", "cpu", 1, "gloo", tmp_path / "r.json")
    assert cmd[:3] == [sys.executable, "-m", "torch.distributed.run"]
    assert "--nproc-per-node=2" in cmd and "--standalone" in cmd
    assert cmd[cmd.index("-m", 3) + 1] == "benchlib.measure.distributed.torch_worker"


def test_more_devices_than_the_probe_found_is_a_skip(tmp_path, machine):
    gpu_box = with_accelerators(machine, Accelerators(nvidia=[GPUInfo(index=i, name="Tesla T4") for i in range(2)]))
    outcome = run_scaling(ScalingRun(engines=["torch"], devices=4, device="cuda"), machine=gpu_box, out_dir=tmp_path)
    (r,) = read_results(outcome.path).measurements
    assert r.status == "skipped" and r.skip_reason == "device-unavailable"
    assert "asked for 4 cuda device(s), the probe found 2" in r.message


def test_missing_framework_is_a_skip_naming_the_install(tmp_path, machine, monkeypatch):
    monkeypatch.setitem(ENGINES, "jax", Engine("jax", "no_such_framework_xyz", "x", ("cpu",), "pip install jax"))
    outcome = run_scaling(ScalingRun(engines=["jax"]), machine=machine, out_dir=tmp_path)
    (r,) = read_results(outcome.path).measurements
    assert r.status == "skipped" and r.skip_reason == "framework-missing" and "pip install jax" in r.message


def test_unknown_engine_or_size_is_refused_before_anything_runs(tmp_path, machine):
    with pytest.raises(ValueError, match="unknown engine 'mxnet'"):
        run_scaling(ScalingRun(engines=["mxnet"]), machine=machine, out_dir=tmp_path)
    with pytest.raises(ValueError, match="unknown size 'huge'"):
        run_scaling(ScalingRun(size="huge"), machine=machine, out_dir=tmp_path)
    assert not any(tmp_path.iterdir())


def test_a_crashing_worker_is_an_error_record_and_the_run_goes_on(tmp_path, machine, monkeypatch):
    broken = Engine("jax", "numpy", "benchlib.measure.distributed.no_such_worker", ("cpu",), "")
    monkeypatch.setitem(ENGINES, "jax", broken)
    outcome = run_scaling(ScalingRun(engines=["jax"], devices=2), machine=machine, out_dir=tmp_path)
    saved = read_results(outcome.path)
    assert saved.complete
    assert [(r.status, r.params["world_size"]) for r in saved.measurements] == [("error", 1), ("error", 2)]
    first = saved.measurements[0]
    assert first.message.startswith("jax engine, 1 device: exited with code 1: ")
    assert "No module named benchlib.measure.distributed.no_such_worker" in first.message
    assert first.crash.exit_code == 1 and first.crash.stderr_tail
    assert len(outcome.failed) == 2


def test_run_worker_stops_a_hung_worker(tmp_path):
    out = tmp_path / "r.json"
    with pytest.raises(WorkerFailed, match="no result after 1 s") as info:
        run_worker([sys.executable, "-c", "import time; time.sleep(60)"], out, {}, 1, "hang")
    assert info.value.crash.signal == "SIGKILL"


def test_ctrl_c_stops_the_workers_too(tmp_path, monkeypatch):
    pids = []

    class Interrupted(subprocess.Popen):
        def wait(self, timeout=None):
            if timeout is not None:  # the wait for the worker: Ctrl-C arrives here
                pids.append(self.pid)
                raise KeyboardInterrupt
            return super().wait()

    monkeypatch.setattr(launch.subprocess, "Popen", Interrupted)
    with pytest.raises(KeyboardInterrupt):
        run_worker([sys.executable, "-c", "import time; time.sleep(60)"], tmp_path / "r.json", {}, 30, "x")
    with pytest.raises(ProcessLookupError):
        os.killpg(pids[0], 0)  # the worker's whole process group is gone


def test_run_worker_needs_a_report(tmp_path):
    with pytest.raises(WorkerFailed, match="quiet: exited cleanly but wrote no report"):
        run_worker([sys.executable, "-c", "pass"], tmp_path / "r.json", {}, 30, "quiet")


def test_root_cause_is_the_last_exception_line():
    # The shape of torchrun's failure summary: its own ChildFailedError, then the worker's root cause.
    log = "\n".join(
        [
            "W1121 torch/distributed/run.py: Setting OMP_NUM_THREADS",
            "torch.distributed.elastic.multiprocessing.errors.ChildFailedError: ",
            "Root Cause (first observed failure):",
            "  traceback : Traceback (most recent call last):",
            '      raise RuntimeError("nccl2 requires at least one CUDA device")',
            "  RuntimeError: nccl2 requires at least one CUDA device",
            "============================================================",
        ]
    )
    assert root_cause(log) == "RuntimeError: nccl2 requires at least one CUDA device"
    assert root_cause("only a line\n") == "only a line"
    assert root_cause("") == "no output"


WORKER_THAT_CRASHES_ONCE = """
import json, os, sys
from pathlib import Path
from benchlib.measure.distributed.report import WorkerSkipped, write_report
out, tries = Path(sys.argv[1]), Path(sys.argv[2])
tries.write_text(tries.read_text() + "x" if tries.exists() else "x")
write_report(WorkerSkipped(engine="torch", message=f"attempt {len(tries.read_text())}"), out)
if len(tries.read_text()) == 1 or sys.argv[3] == "always":
    os.abort()  # as gloo's teardown did, after the report was written
"""


@pytest.mark.parametrize("crashes", ["once", "always"])
def test_a_worker_that_crashes_is_launched_afresh_once(tmp_path, crashes):
    script, out, tries = tmp_path / "worker.py", tmp_path / "r.json", tmp_path / "tries"
    script.write_text(WORKER_THAT_CRASHES_ONCE)
    cmd = [sys.executable, str(script), str(out), str(tries), crashes]
    if crashes == "once":
        assert run_worker(cmd, out, dict(os.environ), 60, "flaky", retries=1) == WorkerSkipped(
            engine="torch", message="attempt 2"
        )
    else:
        with pytest.raises(WorkerFailed, match="flaky: exited with code -6"):
            run_worker(cmd, out, dict(os.environ), 60, "flaky", retries=1)
    assert tries.read_text() == "xx", "two launches, no more"


def test_a_hung_worker_is_not_launched_again(tmp_path):
    tries = tmp_path / "tries"
    cmd = [sys.executable, "-c", f"open({str(tries)!r}, 'a').write('x'); import time; time.sleep(60)"]
    with pytest.raises(WorkerFailed, match="no result after 1 s"):
        run_worker(cmd, tmp_path / "r.json", {}, 1, "hang", retries=1)
    assert tries.read_text() == "x"


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--framework", "mxnet"], "unknown framework 'mxnet'; choose one of torch, tf, jax"),
        (["--size", "huge"], "unknown size 'huge'"),
        (["--device", "npu"], "unknown device 'npu'"),
        (["--backend", "mpi"], "unknown backend 'mpi'"),
    ],
)
def test_launch_refuses_bad_input_by_name_before_probing(tmp_path, args, says):
    app = typer.Typer()
    app.command()(launch_command)
    app.command("unused")(lambda: None)
    result = CliRunner().invoke(app, ["launch", *args, "--out", str(tmp_path)])
    assert result.exit_code == 2
    assert says in " ".join(result.output.split())
    assert not any(tmp_path.iterdir())


def test_the_torch_workers_collectives_on_one_gloo_rank():
    """The DDP worker's all-reduce timing (with its sum check) and replica check, in this process at world size 1."""
    torch = pytest.importorskip("torch")
    from benchlib.measure.distributed import torch_worker
    from benchlib.measure.distributed.report import SIZES

    dist = torch.distributed
    dist.init_process_group("gloo", store=dist.HashStore(), rank=0, world_size=1)
    try:
        size = SIZES["quick"]
        timings = torch_worker._time_allreduce(torch, dist, "cpu", lambda: None, size)
        assert [t.bytes for t in timings] == [int(mib * 2**20) // 4 * 4 for mib in size.allreduce_mib]
        assert all(t.iterations == size.allreduce_iters and t.seconds > 0 for t in timings)
        assert torch_worker._replicas_in_sync(torch, dist, torch.nn.Linear(4, 2))
    finally:
        dist.destroy_process_group()
