"""The "More than one GPU" page's snippets, run as a reader runs them, on this CPU machine.

What needs GPUs or TPU chips gets the smallest stand-in: the DDP and FSDP scripts run as 2 gloo
processes through the real torchrun (FSDP's model a tiny random Qwen2 under the snippet's model id,
the hub offline), `accelerate launch` starts 2 processes of a stand-in script that prints its FSDP
settings, DataParallel is told there are 2 GPUs (and, as torch does without CUDA, runs the model
as is), MirroredStrategy has its one CPU replica, and the JAX mesh gets 8
XLA host devices in place of a v5e-8's 8 chips.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from snippet_runner import REPO, SNIPPETS, RunSnippet, snippet_env
from tiny_models import cache_tiny_qwen2

FOLDER = SNIPPETS / "multi_gpu"
VENV_BIN = str(Path(sys.executable).parent)  # torchrun and benchlib, as a notebook's PATH has them


def commands(name: str) -> list[str]:
    """The shell lines of a snippet, comments left out."""
    lines = (FOLDER / name).read_text(encoding="utf-8").splitlines()
    return [line for line in lines if line.strip() and not line.lstrip().startswith("#")]


def run_shell(
    line: str, cwd: Path, env: dict[str, str], timeout: float, check: bool = True
) -> subprocess.CompletedProcess[str]:
    full = snippet_env(env=env | {"PATH": VENV_BIN + os.pathsep + os.environ.get("PATH", "")})
    result = subprocess.run(["bash", "-c", line], cwd=cwd, env=full, capture_output=True, text=True, timeout=timeout)
    if check:
        assert result.returncode == 0, (
            f"{line!r} failed ({result.returncode}):\n{result.stdout}\n{result.stderr[-4000:]}"
        )
    return result


@pytest.mark.slow
def test_ddp_script_trains_on_two_processes_through_torchrun(tmp_path: Path) -> None:
    torch = pytest.importorskip("torch")
    (tmp_path / "ddp_train.py").write_text((FOLDER / "ddp_train.py").read_text(encoding="utf-8"), encoding="utf-8")
    (line,) = commands("launch_ddp.sh")
    out = run_shell(line, tmp_path, {"EPOCHS": "2"}, timeout=600).stdout
    pattern = r"^epoch (\d): (\d+) samples on (\d) processes in [\d.]+ s \(\d+ samples/s\), loss [\d.]+$"
    assert re.findall(pattern, out, re.M) == [("0", "4096", "2"), ("1", "4096", "2")]
    state = torch.load(tmp_path / "model.pt")  # saved once, by rank 0, without DDP's "module." prefix
    assert not any(key.startswith("module.") for key in state) and "7.weight" in state


@pytest.mark.slow
def test_fsdp_script_shards_a_language_model_over_two_processes_and_trains_it(tmp_path: Path) -> None:
    pytest.importorskip("transformers")
    from transformers import AutoModelForCausalLM

    script = (FOLDER / "fsdp_finetune.py").read_text(encoding="utf-8")
    model_id = re.search(r'^MODEL_ID = "([^"]+)"', script, re.M).group(1)
    config = cache_tiny_qwen2(tmp_path / "hf", model_id)
    total = sum(p.numel() for p in AutoModelForCausalLM.from_config(config).parameters())
    (tmp_path / "fsdp_finetune.py").write_text(script, encoding="utf-8")
    (line,) = commands("launch_fsdp.sh")
    offline = {"HF_HOME": str(tmp_path / "hf"), "HF_HUB_OFFLINE": "1", "CUDA_VISIBLE_DEVICES": "", "STEPS": "4"}
    out = run_shell(line, tmp_path, offline | {"OMP_NUM_THREADS": "1"}, timeout=600).stdout

    # Each process holds about half of the model: its shard of every weight.
    shards = re.findall(rf"^rank (\d): ([\d,]+) of {total:,} parameters \(([\d.]+)%\) on cpu$", out, re.M)
    assert [rank for rank, _, _ in shards] == ["0", "1"], out
    counts = [int(n.replace(",", "")) for _, n, _ in shards]
    assert sum(counts) == total and all(abs(float(share) - 50) < 1 for _, _, share in shards), out
    # The two processes train one model together: one loss per step, falling.
    steps = re.findall(r"^step (\d)/4 loss ([\d.]+)$", out, re.M)
    assert [int(s) for s, _ in steps] == [1, 2, 3, 4], out
    assert float(steps[-1][1]) < float(steps[0][1]), out
    # Rank 0 saved the whole model, gathered from both shards, and it loads like any other.
    assert "saved fsdp-finetuned/" in out
    saved = AutoModelForCausalLM.from_pretrained(tmp_path / "fsdp-finetuned")
    assert sum(p.numel() for p in saved.parameters()) == total


# Stands in for the reader's train.py under `accelerate launch`: prints what the launcher told this
# process, read back as Accelerate's own FSDP settings.
ACCELERATE_TRAIN_STAND_IN = """
import os
from accelerate.utils import FullyShardedDataParallelPlugin

fsdp = FullyShardedDataParallelPlugin()  # its defaults come from the launcher
print(f"process {os.environ['RANK']} of {os.environ['WORLD_SIZE']}: FSDP {fsdp.fsdp_version}, "
      f"wrapped by {fsdp.auto_wrap_policy.__name__}")
"""


@pytest.mark.slow
def test_accelerate_launch_starts_two_processes_that_shard_with_fsdp2(tmp_path: Path) -> None:
    """Accelerate shards only on GPUs, so on this CPU the launch is checked up to the script: two
    processes start, each with Accelerate's FSDP settings as the options on the page ask."""
    pytest.importorskip("accelerate")
    (tmp_path / "train.py").write_text(ACCELERATE_TRAIN_STAND_IN, encoding="utf-8")
    script = (FOLDER / "launch_fsdp_accelerate.sh").read_text(encoding="utf-8")
    out = run_shell(script, tmp_path, {"OMP_NUM_THREADS": "1"}, timeout=600).stdout
    lines = sorted(re.findall(r"^process \d of \d: .*$", out, re.M))
    assert lines == [
        "process 0 of 2: FSDP 2, wrapped by transformer_auto_wrap_policy",
        "process 1 of 2: FSDP 2, wrapped by transformer_auto_wrap_policy",
    ], out


@pytest.mark.slow  # accelerate imports torch
def test_the_pages_deepspeed_options_are_accelerates() -> None:
    launch = pytest.importorskip("accelerate.commands.launch")
    page = (REPO / "docs" / "guides" / "multi-gpu.md").read_text(encoding="utf-8")
    options = shlex.split(re.search(r"`(--use_deepspeed [^`]+)`", page).group(1))
    deepspeed = launch.launch_command_parser().parse_args([*options, "train.py"])  # exits on an unknown option
    assert deepspeed.use_deepspeed and deepspeed.zero_stage == 3


@pytest.mark.slow
def test_data_parallel_without_gpus_runs_the_plain_model(run_snippet: RunSnippet) -> None:
    pytest.importorskip("torch")
    out = run_snippet("multi_gpu/data_parallel.py").stdout
    assert out.strip() == "0 GPU(s), Sequential: output (256, 10) on cpu"


@pytest.mark.slow
def test_data_parallel_wraps_the_model_when_there_are_two_gpus(run_snippet: RunSnippet, tmp_path: Path) -> None:
    pytest.importorskip("torch")
    fake = tmp_path / "two-gpus"
    fake.mkdir()
    # Only the GPU count is faked; nn.DataParallel then runs the model as it does without CUDA.
    (fake / "sitecustomize.py").write_text("import torch\ntorch.cuda.device_count = lambda: 2\n")
    out = run_snippet("multi_gpu/data_parallel.py", env={"PYTHONPATH": str(fake)}).stdout
    assert out.strip() == "2 GPU(s), DataParallel: output (256, 10) on cpu"


@pytest.mark.slow
def test_keras_mirrored_strategy_trains_with_one_cpu_replica(run_snippet: RunSnippet) -> None:
    pytest.importorskip("tensorflow")
    out = run_snippet("multi_gpu/keras_mirrored.py", env={"EPOCHS": "1"}).stdout
    assert "MirroredStrategy: 1 replica(s) on /job:localhost/replica:0/task:0/device:CPU:0" in out
    assert re.search(r"^32/32 - .* - loss: [\d.]+$", out, re.M), out  # 4096 samples / batch 128, one epoch


@pytest.mark.slow
def test_jax_data_parallel_splits_the_batch_over_eight_devices(run_snippet: RunSnippet) -> None:
    pytest.importorskip("jax")
    eight = {"XLA_FLAGS": "--xla_force_host_platform_device_count=8"}
    first = run_snippet("multi_gpu/jax_data_parallel.py", env=eight | {"STEPS": "1"}).stdout
    later = run_snippet("multi_gpu/jax_data_parallel.py", env=eight | {"STEPS": "30"}).stdout
    assert first.startswith("8 cpu device(s), cpu\n")
    assert "each batch split over 8 devices, weights copied to 8" in later

    def loss(out: str) -> float:
        return float(re.search(r"^loss ([\d.]+);", out, re.M).group(1))

    assert loss(later) < loss(first)  # the replicas learn together


@pytest.mark.slow
def test_measure_commands_write_scaling_results(tmp_path: Path) -> None:
    pytest.importorskip("torch")
    pytest.importorskip("jax")
    from benchlib.measure.distributed.report import scaling_efficiency
    from benchlib.results.store import read_results

    out = tmp_path / "results"
    exit_codes = []
    for line in commands("measure.sh"):
        # --size standard is sized for Kaggle's GPUs and TPU; quick runs the same code here in seconds.
        args = shlex.split(line.replace("--size standard", "--size quick")) + ["--out", str(out)]
        exit_codes.append(run_shell(shlex.join(args), tmp_path, {}, timeout=900, check=False).returncode)
    files = sorted(out.rglob("*.json"))
    assert len(files) == 2
    for path, framework, exit_code in zip(files, ("torch", "jax"), exit_codes):
        saved = read_results(path)
        assert saved.complete
        records = saved.measurements
        train = {r.params["world_size"]: r for r in records if r.workload == "dp-train"}
        assert sorted(train) == [1, 2] and all(r.status == "ok" and r.framework == framework for r in train.values())
        (scaling,) = [r for r in records if r.workload == "dp-scaling"]
        # Two processes on a shared 2-core machine can time above linear; the run must then flag the
        # record and exit 1, and otherwise exit 0.
        if scaling.status == "ok":
            assert exit_code == 0
        else:
            assert scaling.status == "invalid" and "above 1.1" in (scaling.message or "") and exit_code == 1
        assert scaling.value == pytest.approx(scaling_efficiency(train[1].value, train[2].value, 2))
        assert scaling.params["baseline_samples_per_s"] == train[1].value
    check_torchrun_records(read_results(files[0]).measurements)


def check_torchrun_records(records: list) -> None:
    """What `benchlib launch` records for DDP on this CPU: torchrun starting 1, then 2 gloo processes
    (the engine's own test, tests/test_measure_distributed_launch.py, would launch the same again)."""
    from benchlib.measure.distributed.report import busbw_gbps

    for n, r in {r.params["world_size"]: r for r in records if r.workload == "dp-train"}.items():
        assert r.device == "cpu", r.message
        p = r.params
        assert (p["launcher"], p["backend"], p["interconnect"], p["threads_per_process"]) == (
            "torchrun",
            "gloo",
            "none",
            1,
        )
        assert p["global_batch"] == n * p["per_device_batch"]
        assert r.value == pytest.approx(p["global_batch"] / r.stats.median)
        assert p["per_device_samples_per_s"] == pytest.approx(r.value / n)
    # Bus bandwidth, nccl-tests' way, for each message size; for two ranks it equals algbw.
    allreduce = [r for r in records if r.workload == "allreduce"]
    assert [r.params["bytes"] for r in allreduce] == [2**20, 4 * 2**20]
    for r in allreduce:
        assert r.status == "ok" and r.params["world_size"] == 2
        assert r.value == pytest.approx(busbw_gbps(r.params["bytes"], r.params["seconds_per_op"], 2))
        assert r.value == pytest.approx(r.params["algbw_gbps"])
