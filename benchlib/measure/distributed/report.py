"""What a worker process reports to the parent, the run sizes, and the formulas applied to it.

A worker writes one small JSON file (rank 0 only, atomically); the parent reads it back. The
file either describes a finished run (`WorkerReport`) or says why the run could not start on
this machine (`WorkerSkipped`, e.g. no TPU), so a missing accelerator is a skip, not a crash.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

from benchlib.core.files import write_atomically

Device = Literal["cpu", "cuda", "tpu"]


@dataclass(frozen=True)
class RunSize:
    """How long a run is: the per-device batch and how many optimizer steps are timed."""

    per_device_batch: int
    warmup_steps: int
    samples: int  # timed blocks
    steps_per_sample: int  # optimizer steps per block, timed together
    allreduce_mib: tuple[float, ...]  # message sizes of the all-reduce timing
    allreduce_iters: int
    timeout_s: float  # per worker run; a hung collective is killed after this


# One per suite size (benchlib.workloads.SIZES, the same keys): `benchlib run --suite S --devices N` runs size S.
SIZES: dict[str, RunSize] = {
    # Seconds on a CPU: a few small steps, enough to exercise every code path.
    "quick": RunSize(
        per_device_batch=16,
        warmup_steps=2,
        samples=6,
        steps_per_sample=1,
        allreduce_mib=(1.0, 4.0),
        allreduce_iters=5,
        timeout_s=300,
    ),
    # A minute or two on Kaggle's T4 x2; the batch is the seeds' 128 per device.
    "standard": RunSize(
        per_device_batch=128,
        warmup_steps=10,
        samples=20,
        steps_per_sample=5,
        allreduce_mib=(1.0, 16.0, 64.0, 256.0),
        allreduce_iters=20,
        timeout_s=900,
    ),
    "full": RunSize(
        per_device_batch=256,
        warmup_steps=20,
        samples=40,
        steps_per_sample=5,
        allreduce_mib=(1.0, 16.0, 64.0, 256.0, 1024.0),
        allreduce_iters=40,
        timeout_s=1800,
    ),
}


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class AllReduceTiming(_Model):
    """One all-reduce message size: seconds per operation, as the slowest rank saw it."""

    bytes: int = Field(gt=0)
    iterations: int = Field(ge=1)
    seconds: float = Field(gt=0)


class WorkerReport(_Model):
    status: Literal["ok"] = "ok"
    engine: str
    framework: str
    framework_version: str
    launcher: str = Field(description="What started the worker processes: torchrun, or one process for all devices.")
    backend: str = Field(description="nccl, gloo, MirroredStrategy, TPUStrategy, jax.sharding ...")
    device: Device
    device_names: list[str]
    world_size: int = Field(ge=1)
    per_device_batch: int = Field(ge=1)
    threads_per_process: int | None = None
    warmup_steps: int
    warmup_s: float = Field(ge=0, description="Seconds the warm-up steps took, compilation included.")
    steps_per_sample: int = Field(ge=1)
    sample_times_s: list[float] = Field(min_length=1, description="Seconds per step, one entry per timed block.")
    sync: str = Field(description="How the end of a block was awaited before reading the clock.")
    loss_first: float
    loss_last: float
    replicas_in_sync: bool = Field(description="Every replica ended with the same weights.")
    allreduce: list[AllReduceTiming] = Field(default_factory=list)


class WorkerSkipped(_Model):
    status: Literal["skipped"] = "skipped"
    engine: str
    message: str


Report = Annotated[WorkerReport | WorkerSkipped, Field(discriminator="status")]
_ADAPTER: TypeAdapter[WorkerReport | WorkerSkipped] = TypeAdapter(Report)


def write_report(report: WorkerReport | WorkerSkipped, path: Path | str) -> None:
    """Write atomically, so the parent never reads half a report from a worker killed mid-write."""
    write_atomically(path, report.model_dump_json())


def read_report(path: Path | str) -> WorkerReport | WorkerSkipped:
    return _ADAPTER.validate_json(Path(path).read_text(encoding="utf-8"))


def worker_arguments(description: str) -> argparse.ArgumentParser:
    """The command line every worker takes; the launcher fills it in."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--size", choices=sorted(SIZES), default="quick")
    parser.add_argument("--out", type=Path, required=True, help="Where rank 0 writes its JSON report.")
    parser.add_argument("--device", choices=["cpu", "cuda", "tpu"], required=True)
    parser.add_argument("--devices", type=int, default=1, help="World size (torchrun sets it for torch).")
    parser.add_argument("--threads", type=int, default=None, help="CPU threads per process.")
    return parser


def algbw_gbps(size_bytes: int, seconds: float) -> float:
    """Algorithm bandwidth in GB/s: message size over time."""
    return size_bytes / seconds / 1e9


def busbw_gbps(size_bytes: int, seconds: float, world_size: int) -> float:
    """All-reduce bus bandwidth in GB/s, as nccl-tests defines it.

    busbw = algbw × 2(n−1)/n: an all-reduce moves each element 2(n−1) times over n links,
    so this factor makes the figure comparable with the hardware link speed whatever n is
    (NVIDIA/nccl-tests, doc/PERFORMANCE.md, "Bus bandwidth", AllReduce section). It is 0 for
    one rank, where nothing crosses a link.
    """
    return algbw_gbps(size_bytes, seconds) * 2 * (world_size - 1) / world_size


def scaling_efficiency(baseline_per_s: float, scaled_per_s: float, world_size: int) -> float:
    """N-device throughput over N times the one-device throughput measured in the same launch."""
    return scaled_per_s / (world_size * baseline_per_s)
