"""The results file format: one JSON file per run, validated by pydantic.

Every figure the site shows is a `MeasurementRecord` inside a `ResultsFile`. A file is either
``measured`` by benchlib on the machine it names, or ``reported``: a published figure carried
with its source URL, as-of date and original context.
"""

from __future__ import annotations

from datetime import date, datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

SCHEMA_VERSION = 1

Status = Literal["ok", "oom", "error", "skipped", "invalid"]
SkipReason = Literal["budget", "framework-missing", "device-unavailable"]
# The run went wrong: what `benchlib run` reports as failures.
FAILED_STATUSES: tuple[Status, ...] = ("error", "oom", "invalid")
# Statuses that carry no number: listed in tables, never plotted.
NO_VALUE_STATUSES: tuple[Status, ...] = ("oom", "error", "skipped")


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class CPUInfo(_Model):
    model: str | None = None
    logical_cores: int | None = None
    physical_cores: int | None = None
    flags: list[str] = Field(default_factory=list, description="Flags that matter: avx2, avx512f, amx_tile, ...")


class HostInfo(_Model):
    cpu: CPUInfo = Field(default_factory=CPUInfo)
    memory_total_bytes: int | None = None
    memory_available_bytes: int | None = None
    # Printed by `benchlib probe`, never written to a results file: a folder can hold a user's name.
    disk_path: str | None = Field(None, exclude=True, description="The folder the disk figures are for (not saved).")
    disk_total_bytes: int | None = None
    disk_free_bytes: int | None = None
    shm_total_bytes: int | None = Field(None, description="Size of /dev/shm; small values break DataLoader workers.")
    os: str | None = None
    kernel: str | None = None
    container: bool | None = None


class GPUInfo(_Model):
    index: int
    name: str
    uuid: str | None = None
    memory_total_bytes: int | None = None
    memory_free_bytes: int | None = None
    driver: str | None = None
    cuda_driver: str | None = None
    compute_capability: str | None = None
    power_limit_w: float | None = None
    sm_clock_max_mhz: int | None = None
    mem_clock_max_mhz: int | None = None
    source: Literal["nvml", "nvidia-smi", "torch", "reported"] = "nvml"


class TorchDevices(_Model):
    cuda_available: bool = False
    cuda_device_count: int = 0
    hip_version: str | None = Field(None, description="Set on ROCm builds of torch.")
    mps_available: bool = False
    device_names: list[str] = Field(default_factory=list)


class TPUInfo(_Model):
    backend: Literal["jax", "tensorflow", "torch_xla", "env", "reported"]
    kind: str | None = None
    count: int | None = None


class Accelerators(_Model):
    nvidia: list[GPUInfo] = Field(default_factory=list)
    torch: TorchDevices | None = None
    tpu: TPUInfo | None = None


class PlatformInfo(_Model):
    name: Literal["colab", "kaggle", "ai-studio", "studio-lab", "lightning", "paperspace", "hf-spaces", "local"] = (
        "local"
    )
    variant: str | None = Field(None, description="e.g. Kaggle 'interactive' or 'batch'.")
    signal: str | None = Field(None, description="The environment variable, module or path that decided.")


class Software(_Model):
    python: str | None = None
    benchlib: str | None = None
    numpy: str | None = None
    torch: str | None = None
    torch_cuda: str | None = Field(None, description="The CUDA version PyTorch was built with (torch.version.cuda).")
    cudnn: str | None = Field(None, description="The cuDNN PyTorch loads (torch.backends.cudnn.version()).")
    cuda_toolkit: str | None = Field(
        None, description="The machine's CUDA toolkit (e.g. nvcc), where a source gives it; may differ from torch_cuda."
    )
    system_cudnn: str | None = Field(
        None, description="The machine's cuDNN library, where a source gives it; may differ from cudnn."
    )
    tensorflow: str | None = None
    jax: str | None = None
    fastai: str | None = None


class Machine(_Model):
    id: str = Field(description="Stable fingerprint of the hardware, used for the results folder name.")
    label: str = Field(description="Human-readable, e.g. 'Colab · Tesla T4'.")
    platform: PlatformInfo = Field(default_factory=PlatformInfo)
    host: HostInfo | None = None
    accelerators: Accelerators | None = None
    software: Software | None = None
    probed_at: datetime | None = None


# Marks a field only a reported file (a figure copied from a source) writes; a measured run never does.
REPORTED_ONLY = {"reported_only": True}


class Provenance(_Model):
    kind: Literal["measured", "reported"] = "measured"
    source_url: str | None = Field(
        None, description="Where a reported figure comes from.", json_schema_extra=REPORTED_ONLY
    )
    as_of: date | None = Field(
        None, description="The date the source states for the figure.", json_schema_extra=REPORTED_ONLY
    )
    context: str | None = Field(
        None,
        description="The original setting: hardware, software, method, caveats.",
        json_schema_extra=REPORTED_ONLY,
    )

    @model_validator(mode="after")
    def _reported_needs_source(self) -> Provenance:
        if self.kind == "reported" and (not self.source_url or not self.as_of):
            raise ValueError("a reported result needs source_url and as_of")
        return self


class Metric(_Model):
    name: str
    unit: str
    higher_is_better: bool


class Stats(_Model):
    """Per-call statistics in seconds, plus what was timed and how."""

    median: float
    iqr: float
    mean: float
    min: float
    max: float
    n: int = Field(ge=1)
    noisy: bool
    times: list[float] = Field(default_factory=list, description="Per-call seconds of each sample.")
    number_per_sample: int = 1
    warmup_s: float = 0.0
    threads: int | None = None
    sync: str = "none"
    cache: Literal["warm", "cold"] = "warm"


class Summary(_Model):
    min: float
    median: float
    max: float


class Telemetry(_Model):
    samples: int = 0
    sm_clock_mhz: Summary | None = None
    temperature_c: Summary | None = None
    power_w: Summary | None = None
    throttle_reasons: list[str] = Field(default_factory=list)


class Crash(_Model):
    """How a workload's own process ended when it died before reporting (segfault, OOM killer, exit)."""

    exit_code: int | None = Field(None, description="The process's exit code; negative: killed by that signal.")
    signal: str | None = Field(None, description="e.g. SIGSEGV, SIGKILL.")
    stderr_tail: list[str] = Field(default_factory=list, description="The last lines it wrote to stderr.")


class MeasurementRecord(_Model):
    workload: str
    framework: str
    device: str = Field(description="cpu, cuda, mps, tpu, ...")
    device_name: str | None = None
    dtype: str | None = None
    params: dict[str, Any] = Field(default_factory=dict)
    metric: Metric
    value: float | None = None
    stats: Stats | None = None
    status: Status = "ok"
    message: str | None = None
    peak: float | None = Field(None, description="The device's theoretical peak in the metric's unit, if known.")
    efficiency: float | None = Field(None, description="value / peak.")
    telemetry: Telemetry | None = None
    duration_s: float | None = None
    skip_reason: SkipReason | None = Field(
        None, description="Why a skipped workload did not run; 'budget' ones run again on `benchlib run --resume`."
    )
    crash: Crash | None = None

    @model_validator(mode="after")
    def _ok_needs_value(self) -> MeasurementRecord:
        if self.status == "ok" and self.value is None:
            raise ValueError("a measurement with status 'ok' needs a value")
        if self.skip_reason is not None and self.status != "skipped":
            raise ValueError(f"skip_reason is only for status 'skipped', not {self.status!r}")
        return self


class GPUOthers(_Model):
    """Other processes on the run's GPU, as NVML lists them (in a container, only the container's own)."""

    processes_before: int = Field(
        description="Processes outside this run holding a compute context just before the workload."
    )
    processes_after: int = Field(description="The same, just after it.")
    memory_bytes: int | None = Field(None, description="The most GPU memory those processes held, before or after.")
    sm_percent: float | None = Field(
        None,
        description="The highest SM use NVML sampled for one of them during the workload; absent where NVML keeps no per-process samples.",
    )


class Conditions(_Model):
    """What else the machine did while one workload ran, from snapshots taken just before and just after it.

    A field is absent where the operating system or driver doesn't report it; nothing is guessed.
    """

    seconds: float = Field(description="Time between the two snapshots.")
    logical_cpus: int | None = None
    load_avg_before: float | None = Field(
        None, description="1-minute load average before the workload; counts this run's own processes too."
    )
    load_avg_after: float | None = Field(None, description="1-minute load average after it.")
    others_cpu_s: float | None = Field(
        None,
        description="CPU seconds used by processes outside this run (all CPU busy time minus this run's process tree).",
    )
    others_cpu_share: float | None = Field(
        None,
        description="others_cpu_s over all the CPU time that passed (every CPU, busy or idle): the share of the machine they took.",
    )
    steal_share: float | None = Field(
        None, description="The share of the CPU time the hypervisor gave to other virtual machines (Linux 'steal')."
    )
    gpu: GPUOthers | None = Field(
        None, description="Other processes on the GPU the run used; absent for CPU runs and without NVML."
    )
    disturbed: list[str] = Field(
        default_factory=list,
        description="Why other work may have slowed this workload, one reason each; empty when the machine was quiet.",
    )


class RunPlan(_Model):
    """What a run set out to do, so that `benchlib run --resume` can finish it after a kill."""

    workloads: list[str] = Field(description="Workload names in the order they run.")
    size: str = Field(description="The size (suite) each workload runs at.")
    device: str = Field(description="The device as asked for: auto, cpu, cuda or mps.")
    isolated: bool = Field(True, description="Each workload ran in its own child process.")
    wall_s: dict[str, float] = Field(
        default_factory=dict,
        description="Wall seconds per finished workload, process start-up included; --budget estimates from them.",
    )
    conditions: dict[str, Conditions] = Field(
        default_factory=dict, description="Per finished workload: what else the machine was doing while it ran."
    )


class ResultsFile(_Model):
    schema_version: Literal[1] = SCHEMA_VERSION
    run_id: str
    created: datetime
    benchlib_version: str
    methodology_version: str
    suite: str | None = None
    complete: bool = Field(False, description="False while a run is in progress or after it was killed.")
    machine: Machine
    provenance: Provenance = Field(default_factory=Provenance)
    measurements: list[MeasurementRecord] = Field(default_factory=list)
    plan: RunPlan | None = Field(None, description="Set by `benchlib run`; absent in reported and older files.")
    disturbed: bool | None = Field(
        None,
        description="True when other work on the machine may have slowed any workload (reasons in plan.conditions); "
        "absent where conditions were not recorded (reported and older files). A disturbed run is never a score reference.",
    )

    @field_validator("created")
    @classmethod
    def _created_is_a_real_date(cls, value: datetime) -> datetime:
        # Also keeps every date inside what pandas can hold (1677 to 2262) when results are loaded.
        if not 1970 <= value.year <= 2200:
            raise ValueError(f"{value.year} is not a plausible year for a benchmark run (1970 to 2200)")
        return value

    @model_validator(mode="after")
    def _measured_needs_machine_details(self) -> ResultsFile:
        if self.provenance.kind == "measured" and self.machine.software is None:
            raise ValueError("a measured result needs machine.software (probe the machine)")
        return self
