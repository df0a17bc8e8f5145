"""Seconds for each op on one GPU: the slower of its arithmetic and its memory traffic.

Arithmetic runs at the GPU's dense peak for the op's dtype (specs) times the fraction of peak that
matmul benchmarks reach on the GPU's architecture generation: the MAMF figures imported from
ml-engineering (``results/reported/mamf-*.json``), set once per generation and never per GPU.
Memory traffic runs at the peak bandwidth times one achievable fraction for eager PyTorch's
elementwise and normalisation kernels, fitted on half of Lambda's ResNet-50 rows
(``benchmarks/speed_published.py`` fits it and reports the other half).

Like PyTorch's defaults, fp32 convolutions use TF32 tensor cores where the GPU has them
(``torch.backends.cudnn.allow_tf32``) and fp32 matmuls don't. Eager PyTorch launches each op from
the host, so no op takes less than one launch (``EAGER_LAUNCH_S``): kernels run asynchronously,
so a launch overlaps the kernel before it and only the longer of the two counts. Without that
floor ResNet-50 inference at batch 1 was predicted 15 times faster than an H200 measured it.
"""

from __future__ import annotations

import re
import statistics
from dataclasses import asdict, dataclass

from benchlib.catalog.gpus import AcceleratorSpec, UnknownGPU
from benchlib.predict.count import OpCost

# Median of the MAMF bf16 figures' fraction of peak, per generation (tests/test_predict_speed.py recomputes it).
COMPUTE_EFFICIENCY: dict[str, float] = {
    "Ampere": 0.840,
    "Hopper": 0.821,
    "Blackwell": 0.752,
    "Blackwell Ultra": 0.786,
    "CDNA 3": 0.559,
    "CDNA 4": 0.626,
}
NVIDIA_GENERATIONS = ("Ampere", "Hopper", "Blackwell", "Blackwell Ultra")
# For a generation MAMF hasn't measured (Volta, Turing, Ada, Pascal): the median NVIDIA generation.
DEFAULT_COMPUTE_EFFICIENCY = round(statistics.median(COMPUTE_EFFICIENCY[g] for g in NVIDIA_GENERATIONS), 3)
# Fitted by benchmarks/speed_published.py on the calibration half of Lambda's ResNet-50 rows.
MEMORY_EFFICIENCY = 0.5
# Host seconds per kernel launch in eager PyTorch: fitted by benchmarks/llm_speed_published.py on
# the calibration half of Qwen's transformers generate() rows, where launches bound decoding, and
# used unchanged here (the transformers engine, `benchlib.predict.engines`, is eager PyTorch too).
EAGER_LAUNCH_S = 21e-6
_CHIP_CODE = re.compile(r"^(?:[A-Z]{2}\d{3}[A-Z]?|\(.*\))$")


class UnknownSpeedGPU(UnknownGPU):
    """A GPU the specs know but `predict` can't time: a figure it needs is missing."""


def generation(architecture: str) -> str:
    """The generation an architecture fact names, without its chip code ("Ampere GA100" -> "Ampere")."""
    return " ".join(word for word in architecture.split() if not _CHIP_CODE.match(word))


@dataclass(frozen=True)
class GpuRates:
    """The figures a prediction uses for one GPU, with where each comes from."""

    name: str
    generation: str
    peaks_tflops: dict[str, float]
    tf32_convolutions: bool
    bandwidth_gbps: float
    compute_efficiency: float
    efficiency_basis: str
    unverified: tuple[str, ...]
    memory_efficiency: float = MEMORY_EFFICIENCY

    def compute_tflops(self, op: OpCost) -> float:
        """The achievable rate for a compute op, in TFLOPS."""
        if op.dtype in ("fp16", "bf16"):
            dtype = op.dtype
        elif op.kind == "conv" and self.tf32_convolutions and "tf32" in self.peaks_tflops:
            dtype = "tf32"
        else:
            dtype = "fp32"
        if dtype not in self.peaks_tflops:
            raise UnknownSpeedGPU(
                f"the specs give no {dtype} peak for {self.name}; add it to benchlib/data/gpus.yaml "
                "with its source, or predict another --dtype"
            )
        return self.peaks_tflops[dtype] * self.compute_efficiency

    def seconds(self, op: OpCost) -> tuple[float, float]:
        """(compute, memory) seconds of one op; the op takes the larger."""
        compute = op.flops / (self.compute_tflops(op) * 1e12) if op.flops else 0.0
        return compute, op.bytes / (self.bandwidth_gbps * 1e9 * self.memory_efficiency)


def gpu_rates(spec: AcceleratorSpec) -> GpuRates:
    """The rates of one GPU (`benchlib.catalog.gpus.find_gpu` turns a name into its spec); UnknownSpeedGPU
    names a missing figure.

    Spec figures marked ``unverified`` are used (a prediction needs some figure) and listed, so
    the reader sees which inputs nobody re-checked.
    """
    per_device = spec.devices_per_unit.value if spec.devices_per_unit else 1
    unverified = []
    peaks = {}
    figures = {
        "fp32": spec.fp32_tflops,
        "tf32": spec.tf32_tensor_tflops,
        "fp16": spec.fp16_tensor_tflops or spec.fp16_tflops,
        "bf16": spec.bf16_tensor_tflops,
    }
    for dtype, fact in figures.items():
        if fact is not None:
            peaks[dtype] = fact.value / per_device
            if fact.status == "unverified":
                unverified.append(f"{dtype} peak")
    if spec.bandwidth_gbps is None:
        raise UnknownSpeedGPU(f"the specs give no memory bandwidth for {spec.name}; add it to benchlib/data/gpus.yaml")
    if spec.bandwidth_gbps.status == "unverified":
        unverified.append("bandwidth")
    gen = generation(spec.architecture.value)
    if gen in COMPUTE_EFFICIENCY:
        efficiency, basis = COMPUTE_EFFICIENCY[gen], f"MAMF matmul figures for {gen}"
    else:
        efficiency, basis = DEFAULT_COMPUTE_EFFICIENCY, f"no MAMF figure for {gen}: the median NVIDIA generation's"
    return GpuRates(
        name=spec.name,
        generation=gen,
        peaks_tflops=peaks,
        tf32_convolutions=bool(spec.tf32_supported and spec.tf32_supported.value),
        bandwidth_gbps=spec.bandwidth_gbps.value / per_device,
        compute_efficiency=efficiency,
        efficiency_basis=basis,
        unverified=tuple(unverified),
    )


def engine_figures(rates: GpuRates) -> dict[str, object]:
    """The figures the language-model engines time with: everything but the roofline's own fitted
    bandwidth fraction, which only the built-in networks use (a table's digest of them stays put
    when that fraction is refitted)."""
    figures = asdict(rates)
    del figures["memory_efficiency"]
    return figures


@dataclass(frozen=True)
class StepTime:
    """One step's predicted seconds, split by what bounds each op."""

    seconds: float
    compute_bound_s: float
    memory_bound_s: float
    flops: int
    bytes: int
    launch_bound_s: float = 0.0  # ops shorter than a launch, at one launch each


def step_time(ops: list[OpCost], rates: GpuRates) -> StepTime:
    """Seconds of one eager step: each op takes the longest of its arithmetic, its traffic and one launch."""
    compute_bound = memory_bound = launch_bound = 0.0
    for op in ops:
        compute, memory = rates.seconds(op)
        if EAGER_LAUNCH_S >= max(compute, memory):
            launch_bound += EAGER_LAUNCH_S
        elif compute > memory:
            compute_bound += compute
        else:
            memory_bound += memory
    return StepTime(
        compute_bound + memory_bound + launch_bound,
        compute_bound,
        memory_bound,
        sum(op.flops for op in ops),
        sum(op.bytes for op in ops),
        launch_bound,
    )
