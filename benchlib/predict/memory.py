"""Predicted training memory: will a model fit on a GPU, and at which batch size?

The training step runs under ``FakeTensorMode`` (tensors have shapes and dtypes but no storage)
inside torch's ``MemTracker``, which adds up every live tensor and keeps the peak: parameters,
gradients, optimizer state, activations and temporaries. Nothing is allocated and no GPU is
needed, so a ResNet-50 step is traced in a few seconds on a laptop CPU.

The trace runs with CPU kernels (autograd cannot run fake CUDA tensors without a GPU); on the GPU
the same step keeps the same activations, so the tensor peak carries over, except for attention,
which is traced as the GPU's fused kernel (:func:`fused_attention`). The CUDA context and the
caching allocator's overhead are added as stated allowances (below).

Peak memory is a maximum over the step of sums of tensors, each of which is either fixed or
proportional to the batch: a convex, piecewise-linear function of the batch size. So two traces
give a line whose crossing with the budget bounds the answer, and one more trace verifies it
(:func:`solve_max_batch`).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import math
import statistics
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from benchlib.catalog.gpus import AcceleratorSpec, UnknownGPU, load_accelerators, reported_gpu
from benchlib.core.cache import write_cache_json
from benchlib.core.units import GIB, MIB
from benchlib.core.version import __version__
from benchlib.models.step import DTYPES, OPTIMIZERS, TrainingStep, check_choice
from benchlib.models.trainable import get_model

# Memory the CUDA driver takes for the context (kernels, driver state) outside PyTorch's
# allocator: "around 400MB if CUDA >= 11.7 is used and lazy module loading enabled (default in
# PyTorch)", ptrblck (NVIDIA) in https://github.com/pytorch/pytorch/issues/109888 (2023-09-23).
CUDA_CONTEXT_BYTES = 400 * MIB
CUDA_CONTEXT_SOURCE = "https://github.com/pytorch/pytorch/issues/109888"
# The caching allocator reserves more than the tensors it hands out (block rounding, cuDNN and
# cuBLAS workspaces, fragmentation). 10 % is our assumption. On an H200 it measured 0 to 10 %
# (median 1 %) at the largest batch of 11 searches; one GPU is no basis for a new figure, so the
# buying guide shows those measurements beside it.
ALLOCATOR_OVERHEAD = 0.10

# The batch sizes the first two traces use; any pair works, these keep the line close to
# the answers that matter (a few samples to a few thousand).
FIRST_BATCHES = (4, 16)
BATCH_LIMIT = 1 << 20
CACHE_VERSION = 2  # 2: attention traced as the GPU's fused kernel (`fused_attention`)


@dataclass(frozen=True)
class DeviceMemory:
    """How much memory a training step may use on a device, and where the figure comes from."""

    name: str
    usable_bytes: int
    basis: str
    status: str
    context_bytes: int = 0
    overhead: float = 0.0
    total_bytes: int | None = None
    source: str | None = None
    as_of: str | None = None

    @property
    def tensor_budget(self) -> int:
        """Bytes of tensors that fit once the context and the allocator's overhead are set aside."""
        return max(0, int((self.usable_bytes - self.context_bytes) / (1 + self.overhead)))

    def on_device(self, tensor_bytes: int) -> int:
        """The device memory a tensor peak needs, allowances included."""
        return int(tensor_bytes * (1 + self.overhead)) + self.context_bytes


def memory_limit(limit_bytes: int) -> DeviceMemory:
    """A plain byte budget with no allowances: the CPU case, checked against `benchlib max-batch`."""
    if limit_bytes <= 0:
        raise ValueError(f"a memory limit must be positive, got {limit_bytes} bytes")
    return DeviceMemory(name="memory limit", usable_bytes=limit_bytes, basis="--memory-limit", status="given")


def searched_device(
    device: str, device_name: str | None, memory_limit_bytes: int | None
) -> tuple[DeviceMemory, bool | None] | None:
    """What `benchlib fit` predicts for a `benchlib max-batch` search run on ``device``: the memory
    it had, and the optimizer implementation it ran (``foreach``; None is torch's default for the
    device). None for an uncapped device that isn't a GPU the specs know."""
    if memory_limit_bytes:
        return memory_limit(memory_limit_bytes), None if device == "cpu" else True
    spec = reported_gpu(device_name) if device == "cuda" else None
    if spec is not None:
        try:
            return gpu_memory(spec), True
        except UnknownGPU:  # the specs give no memory size
            return None
    return None


def smi_share() -> float:
    """What nvidia-smi shows of the label, for a GPU without a published nvidia-smi total: the
    median share over the GPUs with one. A label's GB are read as GiB (a "16 GB" T4 holds 16 GiB,
    of which ECC on GDDR6 leaves 15,360 MiB), so the share is at most one."""
    shares = [
        spec.smi_memory_mib.value * MIB / (spec.memory_gb.value / _devices(spec) * GIB)
        for spec in load_accelerators()
        if spec.smi_memory_mib is not None and spec.memory_gb is not None
    ]
    return statistics.median(shares)


def _devices(spec: AcceleratorSpec) -> int:
    return spec.devices_per_unit.value if spec.devices_per_unit else 1


def gpu_memory(spec: AcceleratorSpec) -> DeviceMemory:
    """The memory one GPU gives a process (`benchlib.catalog.gpus.find_gpu` turns a name into its spec):
    the total nvidia-smi shows, before the CUDA context and the allocator's overhead are set aside,
    as ``torch.cuda.mem_get_info()`` reports it free on an idle GPU less the context."""
    if spec.memory_gb is None:
        raise UnknownGPU(f"the specs give no memory size for {spec.name}")
    total = int(spec.memory_gb.value / _devices(spec) * GIB)
    fact = spec.smi_memory_mib
    if fact is not None:
        usable, basis, status, source, as_of = (
            fact.value * MIB,
            "nvidia-smi total",
            fact.status,
            fact.source,
            fact.as_of,
        )
    else:
        share = smi_share()
        usable = int(total * share)
        label = f"{spec.memory_gb.value / _devices(spec):g} GB"
        basis = f"rule: {share:.1%} of the {label} label, the median share nvidia-smi shows where published"
        status, source, as_of = "estimated", spec.memory_gb.source, spec.memory_gb.as_of
    return DeviceMemory(
        name=spec.name,
        usable_bytes=usable,
        basis=basis,
        status=status,
        context_bytes=CUDA_CONTEXT_BYTES,
        overhead=ALLOCATOR_OVERHEAD,
        total_bytes=total,
        source=source,
        as_of=as_of,
    )


# ----------------------------------------------------------------------------- tracing


def peak_only_tracker() -> type:
    from torch.distributed._tools.mem_tracker import MemTracker

    class PeakOnlyTracker(MemTracker):
        """MemTracker without its per-module peak snapshots, which we don't use.

        Keeping them walks every module after every operator: half the time of a ResNet-50
        trace. The device-wide peak is kept exactly as MemTracker keeps it (a test compares).
        """

        def _update_peak_stats(self, peak_state: Any) -> None:
            for dev, snap in self._curr_mem_snap.items():
                if self._peak_mem.get(dev, 0) < snap["Total"]:
                    self._peak_mem[dev] = snap["Total"]
                    self._peak_mem_snap[dev] = dict(snap)

    return PeakOnlyTracker


@contextlib.contextmanager
def fused_attention() -> Iterator[None]:
    """Scaled dot-product attention as a CUDA GPU runs it, for the length of a trace.

    On a GPU, ``scaled_dot_product_attention`` picks a fused kernel (flash or memory-efficient)
    even with dropout or a mask, and keeps per head only its output and one log-sum-exp row. The
    CPU trace falls back to the math path there and keeps the seq × seq probabilities: BERT and
    GPT-2 in training (dropout 0.1, GPT-2's mask) were predicted at 2 to 3 times the peak an H200
    measured. So the trace calls the op of the kernel CUDA picks (flash attention in fp16 or bf16
    without a mask, else memory-efficient attention), whose shapes torch defines without a GPU,
    and whose backward saves what the GPU's saves.
    """
    import torch
    import torch.nn.functional as functional

    original = functional.scaled_dot_product_attention

    def fused(
        query: Any,
        key: Any,
        value: Any,
        attn_mask: Any = None,
        dropout_p: float = 0.0,
        is_causal: bool = False,
        scale: float | None = None,
        enable_gqa: bool = False,
    ) -> Any:
        if key.shape[-3] != query.shape[-3]:  # grouped-query heads: the kernel takes one key per query head
            repeat = query.shape[-3] // key.shape[-3]
            key, value = key.repeat_interleave(repeat, -3), value.repeat_interleave(repeat, -3)
        bias = attn_mask
        if bias is not None and bias.dtype == torch.bool:
            bias = torch.zeros(bias.shape, dtype=query.dtype, device=query.device).masked_fill(~bias, float("-inf"))
        elif bias is not None:
            bias = bias.to(query.dtype)
        if bias is not None:
            bias = bias.expand(*query.shape[:-2], query.shape[-2], key.shape[-2])
        if bias is None and query.dtype in (torch.float16, torch.bfloat16):  # where CUDA picks flash attention
            output, *_ = torch.ops.aten._scaled_dot_product_flash_attention(
                query, key, value, dropout_p, is_causal, scale=scale
            )
            return output
        output, *_ = torch.ops.aten._scaled_dot_product_efficient_attention(
            query, key, value, bias, torch.is_grad_enabled(), dropout_p, is_causal, scale=scale
        )
        return output

    functional.scaled_dot_product_attention = fused
    try:
        yield
    finally:
        functional.scaled_dot_product_attention = original


class PeakTracer:
    """Traces training steps of one model under FakeTensorMode; ``peak(batch)`` is the tensor peak.

    The model and its optimizer state are built once; each call swaps in a new batch and
    traces one steady-state step. ``foreach=True`` mirrors the optimizer torch picks on CUDA.
    """

    def __init__(
        self,
        model: str,
        *,
        dtype: str = "fp32",
        optimizer: str = "adam",
        size: str = "full",
        foreach: bool | None = True,
        input_shape: tuple[int, ...] | None = None,
    ) -> None:
        from torch._subclasses.fake_tensor import FakeTensorMode

        spec = get_model(model)
        check_choice("dtype", dtype, DTYPES)
        check_choice("optimizer", optimizer, OPTIMIZERS)
        # Real tensors may meet fake ones only where the step creates constants (masks, ranges).
        self.mode = FakeTensorMode(allow_non_fake_inputs=True)
        self.step = TrainingStep(
            spec,
            1,
            size=size,
            dtype=dtype,
            optimizer=optimizer,
            foreach=foreach,
            fake_mode=self.mode,
            input_shape=input_shape,
        )
        self.step.prime()
        self.traces = 0

    def peak(self, batch: int, tracker_class: type | None = None) -> int:
        """Tensor peak of one step at ``batch``; ``tracker_class`` defaults to the peak-only tracker."""
        import torch

        self.step.set_batch(batch)
        tracker = (tracker_class or peak_only_tracker())()
        s = self.step
        with self.mode:
            tracker.track_external(s.model, s.optimizer, s.inputs, s.targets)
            with tracker, fused_attention():
                s.run()
        self.traces += 1
        peaks = tracker.get_tracker_snapshot("peak")
        return int(sum(snap["Total"] for dev, snap in peaks.items() if isinstance(dev, torch.device)))


# ----------------------------------------------------------------------------- solving


def solve_max_batch(
    peak: Callable[[int], int],
    budget: int,
    known: dict[int, int] | None = None,
    *,
    first: tuple[int, ...] = FIRST_BATCHES,
    limit: int = BATCH_LIMIT,
    verify: bool = True,
) -> int:
    """The largest batch in ``[0, limit]`` whose ``peak`` is within ``budget`` (0: not even one).

    Assumes ``peak`` is non-decreasing, and speeds up while it looks convex (a maximum of lines).
    Then the line through two known points lies below ``peak`` outside them, which bounds the
    answer from above, and the chord between a fitting and a failing point lies above ``peak``,
    which bounds it from below. A peak extrapolated from reduced depths is a difference of such
    maxima, which need not be convex: so with ``verify`` the answer returned has been traced, and
    so has the size after it, which must not fit (else the search goes on by bisection alone).
    Without ``verify``, an answer pinned by both bounds is returned untraced (many budgets, as on
    the buying guide, then share a few traces). ``known`` (batch -> peak) is read and extended.
    """
    known = {} if known is None else known

    def f(batch: int) -> int:
        if batch not in known:
            known[batch] = peak(batch)
        return known[batch]

    if known and all(v > budget for v in known.values()):
        f(1)  # nothing traced so far fits: batch 1 decides whether anything does
    for batch in first:
        batch = min(batch, limit)
        # The peak never falls as the batch grows: a batch at or above one that fails fails too.
        if not any(b <= batch and v > budget for b, v in known.items()):
            f(batch)
    convex = True  # until a trace past the bounds' answer fits
    while True:
        lo = max((b for b, v in known.items() if v <= budget), default=0)
        hi = min((b for b, v in known.items() if v > budget and b > lo), default=None)
        if lo == limit or hi == lo + 1:
            return lo
        if lo == 0:
            if 1 in known:
                return 0
            f(1)
            continue
        if not convex:
            f((lo + hi) // 2 if hi is not None else min(limit, 2 * lo))
            continue
        upper = hi - 1 if hi is not None else limit
        below = [b for b in known if b < lo]
        slope = (known[lo] - known[max(below)]) / (lo - max(below)) if below else 0.0
        if slope > 0:
            upper = min(upper, lo + math.floor((budget - known[lo]) / slope))
        elif hi is None:
            upper = min(upper, 2 * lo)  # no slope yet: grow exponentially
        above = [b for b in known if hi is not None and b > hi]
        if above:
            # The line through hi and the next traced batch lies below the peak to their left too.
            right = (known[min(above)] - known[hi]) / (min(above) - hi)
            if right > 0:
                upper = min(upper, math.floor(hi - (known[hi] - budget) / right))
        if upper <= lo:
            if not verify:
                return lo
            convex = f(lo + 1) > budget
            continue
        chord = lo + math.floor((budget - known[lo]) * (hi - lo) / (known[hi] - known[lo])) if hi is not None else lo
        if not verify and chord >= upper:
            return upper
        if hi is None or (upper < hi - 1 and upper not in known):
            f(upper)
        else:
            f(chord if lo < chord < hi else (lo + hi) // 2)


# ----------------------------------------------------------------------------- prediction


@dataclass
class Prediction:
    """What `benchlib fit` answers, with everything needed to judge it."""

    model: str
    input_shape: tuple[int, ...]
    device: DeviceMemory
    dtype: str
    optimizer: str
    max_batch: int
    tensor_peak_at_max: int | None
    batch: int | None = None
    tensor_peak_at_batch: int | None = None
    traces: dict[int, int] = field(default_factory=dict)
    seconds: float = 0.0
    torch_version: str = ""
    benchlib_version: str = __version__

    @property
    def fits(self) -> bool | None:
        return None if self.batch is None else self.batch <= self.max_batch

    def as_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["device"]["tensor_budget"] = self.device.tensor_budget
        out["fits"] = self.fits
        return out


def read_traces(path: Path) -> dict[int, Any]:
    """Cached traces by size (a batch or a context length); {} if missing or damaged."""
    try:
        return {int(b): v for b, v in json.loads(path.read_text(encoding="utf-8"))["traces"].items()}
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return {}  # a missing or damaged cache entry is traced again


def write_traces(path: Path, key: dict[str, Any], traces: dict[int, Any]) -> None:
    """Write ``traces`` with the ``key`` they were traced under, atomically."""
    write_cache_json(path, {"key": key, "traces": {str(b): v for b, v in sorted(traces.items())}})


class Predictor:
    """Predictions for one model, input, dtype and optimizer, over any number of devices.

    Traces are shared across devices and, with ``cache_dir``, across runs: a cache entry is
    keyed by everything that changes a trace, the torch and benchlib versions included.
    """

    def __init__(
        self,
        model: str,
        *,
        dtype: str = "fp32",
        optimizer: str = "adam",
        size: str = "full",
        foreach: bool | None = True,
        input_shape: tuple[int, ...] | None = None,
        cache_dir: Path | None = None,
    ) -> None:
        import torch

        spec = get_model(model)
        check_choice("dtype", dtype, DTYPES)
        check_choice("optimizer", optimizer, OPTIMIZERS)
        self.input_shape = spec.dims(size, input_shape).input_shape
        self.model, self.dtype, self.optimizer, self.size, self.foreach = model, dtype, optimizer, size, foreach
        self.torch_version = str(torch.__version__)
        self.key = {
            "model": model,
            "size": size,
            "input_shape": list(self.input_shape),
            "dtype": dtype,
            "optimizer": optimizer,
            "foreach": foreach,
            "torch": self.torch_version,
            "benchlib": __version__,
            "cache": CACHE_VERSION,
        }
        self.cache = cache_dir / f"{_key_name(self.key)}.json" if cache_dir else None
        self.traces: dict[int, int] = {b: int(v) for b, v in read_traces(self.cache).items()} if self.cache else {}
        self._tracer: PeakTracer | None = None

    def peak(self, batch: int) -> int:
        """The tensor peak of a training step at ``batch``, traced once."""
        if batch not in self.traces:
            if self._tracer is None:
                self._tracer = PeakTracer(
                    self.model,
                    dtype=self.dtype,
                    optimizer=self.optimizer,
                    size=self.size,
                    foreach=self.foreach,
                    input_shape=self.input_shape,
                )
            self.traces[batch] = self._tracer.peak(batch)
            if self.cache:
                write_traces(self.cache, self.key, self.traces)
        return self.traces[batch]

    def predict(self, device: DeviceMemory, batch: int | None = None, *, verify: bool = True) -> Prediction:
        """The largest batch for ``device`` (see :func:`solve_max_batch` for ``verify``)."""
        started = time.perf_counter()
        if batch is not None and batch < 1:
            raise ValueError(f"--batch must be at least 1, got {batch}")
        best = solve_max_batch(self.peak, device.tensor_budget, self.traces, verify=verify)
        at_batch = self.peak(batch) if batch is not None else None
        return Prediction(
            model=self.model,
            input_shape=self.input_shape,
            device=device,
            dtype=self.dtype,
            optimizer=self.optimizer,
            max_batch=best,
            tensor_peak_at_max=self.traces.get(best) if best else None,
            batch=batch,
            tensor_peak_at_batch=at_batch,
            traces=dict(sorted(self.traces.items())),
            seconds=time.perf_counter() - started,
            torch_version=self.torch_version,
        )


def _key_name(key: dict[str, Any]) -> str:
    readable = "_".join(str(key[k]) for k in ("model", "size", "dtype", "optimizer"))
    digest = hashlib.sha256(json.dumps(key, sort_keys=True).encode()).hexdigest()[:12]
    return f"{readable}_{digest}"


def predict(
    model: str,
    device: DeviceMemory,
    *,
    batch: int | None = None,
    dtype: str = "fp32",
    optimizer: str = "adam",
    size: str = "full",
    foreach: bool | None = True,
    input_shape: tuple[int, ...] | None = None,
    cache_dir: Path | None = None,
) -> Prediction:
    """Predict the largest batch of ``model`` that trains within ``device``'s memory."""
    predictor = Predictor(
        model,
        dtype=dtype,
        optimizer=optimizer,
        size=size,
        foreach=foreach,
        input_shape=input_shape,
        cache_dir=cache_dir,
    )
    return predictor.predict(device, batch)
