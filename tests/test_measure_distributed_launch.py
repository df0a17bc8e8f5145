"""The engines for real, on this CPU: MirroredStrategy on 2 logical CPUs, a torchrun that fails, and
the TPU paths up to the point where a TPU is needed. torchrun with 2 gloo processes is checked
where the "More than one GPU" page's measure.sh runs it (tests/snippets/test_multi_gpu_snippets.py)."""

from __future__ import annotations

import os

import pytest
import typer
from typer.testing import CliRunner

from benchlib.cli.launch import launch
from benchlib.measure.distributed.launch import ENGINES, ScalingRun, WorkerFailed, run_scaling, run_worker
from benchlib.measure.distributed.report import scaling_efficiency
from benchlib.results.store import read_results

pytestmark = pytest.mark.slow


def by_world(records, workload):
    return {r.params["world_size"]: r for r in records if r.workload == workload}


def test_a_torchrun_failure_names_the_workers_root_cause(tmp_path):
    pytest.importorskip("torch")
    out = tmp_path / "report.json"
    # NCCL on a machine without GPUs; one process fails as two would, for one worker's start-up.
    cmd = ENGINES["torch"].command(1, "quick", "cpu", 1, "nccl", out)
    with pytest.raises(WorkerFailed) as info:
        run_worker(cmd, out, dict(os.environ), 300, "torch engine, 1 process")
    message = str(info.value)
    # The user reads which launch failed and the worker's root cause; the exception class and
    # wording of that cause belong to torch and change between releases.
    assert message.startswith("torch engine, 1 process: exited with code 1: ")
    assert "CUDA" in message or "GPU" in message
    assert info.value.crash.exit_code == 1


def test_mirrored_strategy_on_two_logical_cpus(tmp_path, machine):
    pytest.importorskip("tensorflow")
    outcome = run_scaling(ScalingRun(engines=["tf"], devices=2, device="cpu"), machine=machine, out_dir=tmp_path)
    saved = read_results(outcome.path)
    train = by_world(saved.measurements, "dp-train")
    assert set(train) == {1, 2}
    for n, r in train.items():
        assert r.status == "ok", r.message
        assert r.framework == "tensorflow"
        assert r.params["backend"] == "MirroredStrategy/ReductionToOneDevice"
        assert r.params["launcher"] == "one process" and r.params["world_size"] == n
        assert r.params["loss_last"] < r.params["loss_first"]  # it trained
    (scaling,) = [r for r in saved.measurements if r.workload == "dp-scaling"]
    assert scaling.value == pytest.approx(scaling_efficiency(train[1].value, train[2].value, 2))


def test_tpu_paths_stop_where_the_tpu_is_needed(tmp_path):
    pytest.importorskip("tensorflow")
    pytest.importorskip("jax")
    app = typer.Typer()
    app.command()(launch)
    args = ["--framework", "tf", "--framework", "jax", "--device", "tpu", "-n", "8", "--out", str(tmp_path)]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output  # a skip is not a failure
    (path,) = tmp_path.rglob("*.json")
    records = read_results(path).measurements
    # One record per engine: what stops one chip stops eight, so the 8-chip run isn't started.
    assert [(r.framework, r.status, r.skip_reason, r.params["world_size"]) for r in records] == [
        ("tensorflow", "skipped", "device-unavailable", 1),
        ("jax", "skipped", "device-unavailable", 1),
    ]
    assert "no TPU for TensorFlow: TPU initialisation failed" in records[0].message
    assert "JAX has no tpu backend here" in records[1].message
