"""Scaled dot-product attention, forward and forward + backward, in TFLOPS per SDPA backend.

Each backend of torch's ``scaled_dot_product_attention`` (math, flash, memory-efficient, cuDNN)
is forced in turn with ``torch.nn.attention.sdpa_kernel``, over a sweep of sequence lengths and
head dims, with and without a causal mask. Shapes follow FlashAttention's benchmark: batch x
sequence length = ``tokens`` and heads x head dim = ``model_dim``, so a longer sequence means a
smaller batch. A backend that can't run a shape (this device, dtype or head dim) is left out for
that shape, with torch's reason in the record's ``not_run``; where it runs no shape at all, a
``skipped`` record per pass and mask says why. Nothing is timed for it, so no number stands in.

FLOPs are counted, not written down: once per shape, ``torch.utils.flop_counter.FlopCounterMode``
counts the math backend on meta tensors (its matmuls have formulas on every device; the CPU's
flash kernel has none). The counter counts the full sequence x sequence score matrix even when
the mask is causal. We report FlashAttention's benchmark convention instead: causal attention is
counted as half those FLOPs, the half of the matrix the mask keeps. A causal rate is then useful
work per second, and the math backend, which computes the whole matrix and masks it afterwards,
shows about half its unmasked rate. The backward pass is what the counter counts, two times the
forward (four matmuls); FlashAttention's benchmark counts 2.5 times (its recomputed scores too),
so its forward + backward TFLOPS read 3.5 / 3, about 17 %, higher than ours for the same time.

A record is the best shape of the sweep for its backend, pass and mask, as `matmul` reports its
best size: the params name that shape and hold every shape's rate in ``sweep_tflops``. The CPU
runs fp32; a GPU runs the first of ``accelerator_dtypes`` it supports (bf16, else fp16).

On a CPU the standard size sweeps the same sequence lengths and head dims on a quarter of the
tokens and an eighth of the model width (`CPU_STANDARD`): each head attends over the same shape,
there are 32 times fewer of them. At the GPU's standard shapes the sweep took 776 s of a 2-core
CPU's standard run, most of the suite's time.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from benchlib.backends import torch_backend as tb
from benchlib.catalog.gpus import peak_tflops
from benchlib.core.timing import Measurement, Timer
from benchlib.results.schema import MeasurementRecord, Metric
from benchlib.workloads import Chart, Plot, RunContext, Workload, register
from benchlib.workloads._record import stats_of

NAME = "attention"
METRIC = Metric(name="throughput", unit="TFLOPS", higher_is_better=True)
# Our names for torch's SDPBackend members, in the order they are tried and charted.
BACKENDS = {
    "math": "MATH",
    "flash": "FLASH_ATTENTION",
    "memory-efficient": "EFFICIENT_ATTENTION",
    "cuDNN": "CUDNN_ATTENTION",
}
MASKS = {"no mask": False, "causal": True}
FORWARD, FORWARD_BACKWARD = "forward", "forward + backward"
CAUSAL_CONVENTION = "FlashAttention benchmark: causal counts half of FlopCounterMode's full-matrix FLOPs"
SETTING = "{param_backend} · {param_mask} · {dtype}"
SETTING_ORDER = tuple(f"{b} · {m} · {d}" for b in BACKENDS for d in ("fp32", "bf16", "fp16") for m in MASKS)


# The standard size's sweep: the quick and full sizes change its shapes and timer.
STANDARD: dict[str, Any] = {
    "tokens": 8192,
    "model_dim": 2048,
    "seq_lens": [512, 1024, 2048],
    "head_dims": [64, 128],
    "backends": list(BACKENDS),
    "accelerator_dtypes": ["bf16", "fp16"],
    "timer": {"warmup_s": 0.1, "min_time_s": 0.2, "max_time_s": 1.0, "min_samples": 3},
}
# The standard sweep's shapes per head, with fewer heads and sequences (see the module note).
CPU_STANDARD = {"tokens": 2048, "model_dim": 256}


def _chart(pass_name: str, chart_id: str) -> Chart:
    return Chart(
        chart_id,
        f"Attention {pass_name} (SDPA), best shape of the sweep",
        "backend · mask · dtype",
        axis_title="TFLOPS (causal counts half the FLOPs)",
        setting_order=SETTING_ORDER,
    )


FORWARD_CHART = _chart(FORWARD, "attention_forward")
FORWARD_BACKWARD_CHART = _chart(FORWARD_BACKWARD, "attention_forward_backward")
PLOTS = (
    Plot(FORWARD_CHART, METRIC.name, SETTING, where={"param_pass": FORWARD}),
    Plot(FORWARD_BACKWARD_CHART, METRIC.name, SETTING, where={"param_pass": FORWARD_BACKWARD}),
)


@dataclass(frozen=True)
class Shape:
    batch_size: int
    heads: int
    seq_len: int
    head_dim: int

    @property
    def key(self) -> str:
        return f"L{self.seq_len} d{self.head_dim}"


def sweep(params: dict[str, Any]) -> list[Shape]:
    """Every (sequence length, head dim) of ``params`` at ``tokens`` per batch and ``model_dim`` per token."""
    shapes = []
    for seq_len in params["seq_lens"]:
        for head_dim in params["head_dims"]:
            if params["tokens"] % seq_len or params["model_dim"] % head_dim:
                raise ValueError(
                    f"{NAME}: tokens {params['tokens']} and model_dim {params['model_dim']} must be multiples of "
                    f"each seq_len and head_dim; seq_len {seq_len} and head_dim {head_dim} aren't"
                )
            shapes.append(Shape(params["tokens"] // seq_len, params["model_dim"] // head_dim, seq_len, head_dim))
    return shapes


def counted_flops(shape: Shape, causal: bool, backward: bool) -> float:
    """FLOPs of one call, counted by FlopCounterMode on meta tensors, halved for causal (see the module note)."""
    torch = tb.import_torch()
    from torch.nn.attention import SDPBackend, sdpa_kernel
    from torch.utils.flop_counter import FlopCounterMode

    dims = (shape.batch_size, shape.heads, shape.seq_len, shape.head_dim)
    q, k, v = (torch.empty(dims, device="meta", requires_grad=backward) for _ in range(3))
    with FlopCounterMode(display=False) as counter, sdpa_kernel(SDPBackend.MATH):
        out = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=causal)
        if backward:
            torch.autograd.grad(out, (q, k, v), torch.empty_like(out))
    return counter.get_total_flops() / (2 if causal else 1)


def _call(shape: Shape, device: str, dtype: str, causal: bool, backward: bool) -> Callable[[], Any]:
    torch = tb.import_torch()
    dims = (shape.batch_size, shape.heads, shape.seq_len, shape.head_dim)
    q, k, v = (torch.randn(dims, device=device, dtype=tb.torch_dtype(dtype), requires_grad=backward) for _ in range(3))
    sdpa = torch.nn.functional.scaled_dot_product_attention
    if not backward:
        return lambda: sdpa(q, k, v, is_causal=causal)
    grad_out = torch.randn(dims, device=device, dtype=q.dtype)
    # autograd.grad, not .backward(): nothing accumulates into q.grad between calls.
    return lambda: torch.autograd.grad(sdpa(q, k, v, is_causal=causal), (q, k, v), grad_out)


def why_it_cannot_run(fn: Callable[[], Any], device: str) -> str | None:
    """None if one call of ``fn`` runs, else why not: torch's error and the warnings that explain it.

    With one backend forced, torch raises a RuntimeError for a shape, dtype or device it lacks,
    and says why in warnings (on CUDA); out of memory at a large shape is a reason too.
    """
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            fn()
            return None
        except RuntimeError as exc:
            # Only torch's first sentence: the rest guesses at a cause (both kernels turned off) that is our choice here.
            reason = "out of memory" if tb.is_oom(exc) else str(exc).strip().split(". ")[0].rstrip(".")
    tb.empty_cache(device)
    told = dict.fromkeys(str(w.message).strip() for w in caught)
    return "; ".join([reason, *told])


def run(ctx: RunContext, params: dict[str, Any]) -> list[MeasurementRecord]:
    tb.import_torch()
    from torch.nn.attention import SDPBackend, sdpa_kernel

    sync, sync_name = tb.sync_function(ctx.device)
    name = tb.device_name(ctx.device, ctx.cpu_name)
    dtype = tb.accelerator_dtype(ctx.device, params["accelerator_dtypes"], NAME)
    passes = {FORWARD: False, FORWARD_BACKWARD: True}
    shapes = sweep(params)
    measured: dict[tuple[str, str, str], list[tuple[float, Shape, float, Measurement]]] = {}
    not_run: dict[tuple[str, str, str], dict[str, str]] = {}
    for shape in shapes:
        for mask, causal in MASKS.items():
            for pass_name, backward in passes.items():
                flops = counted_flops(shape, causal, backward)
                fn = _call(shape, ctx.device, dtype, causal, backward)
                for backend in params["backends"]:
                    key = (backend, pass_name, mask)
                    with sdpa_kernel(getattr(SDPBackend, BACKENDS[backend])):
                        reason = why_it_cannot_run(fn, ctx.device)
                        if reason is not None:
                            not_run.setdefault(key, {})[shape.key] = reason
                            continue
                        m = Timer(
                            fn,
                            sync=sync,
                            sync_name=sync_name,
                            threads=tb.threads(),
                            label=f"{NAME} {backend} {pass_name} {mask} {shape.key} {dtype}",
                        ).measure(**params["timer"])
                    measured.setdefault(key, []).append((flops / m.median / 1e12, shape, flops, m))
                del fn
                tb.empty_cache(ctx.device)

    base = dict(workload=NAME, framework="torch", device=ctx.device, device_name=name, dtype=dtype, metric=METRIC)
    swept = {
        "tokens": params["tokens"],
        "model_dim": params["model_dim"],
        "seq_lens": params["seq_lens"],
        "head_dims": params["head_dims"],
        "flop_convention": CAUSAL_CONVENTION,
    }
    records = []
    for backend in params["backends"]:
        for mask in MASKS:
            for pass_name in passes:
                key = (backend, pass_name, mask)
                setting = {"backend": backend, "pass": pass_name, "mask": mask}
                failures = not_run.get(key, {})
                if key not in measured:
                    reasons = list(dict.fromkeys(failures.values()))
                    records.append(
                        MeasurementRecord(
                            **base,
                            params=setting | swept | ({"not_run": failures} if len(reasons) > 1 else {}),
                            status="skipped",
                            message=f"{NAME}: torch's {backend} backend has no kernel for {dtype} on {name} at any of "
                            f"the {len(shapes)} shapes (torch: {reasons[0]})",
                        )
                    )
                    continue
                tflops, shape, flops, m = max(measured[key], key=lambda found: found[0])
                records.append(
                    MeasurementRecord(
                        **base,
                        value=tflops,
                        stats=stats_of(m),
                        peak=peak_tflops(name, dtype) if ctx.device != "cpu" else None,
                        params=setting
                        | {
                            "batch_size": shape.batch_size,
                            "heads": shape.heads,
                            "seq_len": shape.seq_len,
                            "head_dim": shape.head_dim,
                            "flops": flops,
                            **swept,
                            "sweep_tflops": {s.key: float(f"{t:.4g}") for t, s, _, _ in measured[key]},
                        }
                        | ({"not_run": failures} if failures else {}),
                    )
                )
    return records


register(
    Workload(
        name=NAME,
        framework="torch",
        description="Scaled dot-product attention TFLOPS, forward and forward + backward, per SDPA backend "
        "(math, flash, memory-efficient, cuDNN), causal and not, best over a sequence-length and head-dim sweep.",
        metric=METRIC,
        sizes={
            "quick": {
                **STANDARD,
                "tokens": 512,
                "model_dim": 256,
                "seq_lens": [128, 256],
                "head_dims": [64],
                "timer": {"warmup_s": 0.02, "min_time_s": 0.05, "max_time_s": 0.2, "min_samples": 3},
            },
            "standard": STANDARD,
            "full": {
                **STANDARD,
                "tokens": 16384,
                "seq_lens": [512, 1024, 2048, 4096, 8192, 16384],
                "timer": {"warmup_s": 0.2, "min_time_s": 0.5, "max_time_s": 1.0, "min_samples": 5},
            },
        },
        run=run,
        suites=("quick", "standard", "full"),
        expected_s={"quick": 3.7, "standard": 28.5},
        device_sizes={"cpu": {"standard": CPU_STANDARD}},
        plots=PLOTS,
    )
)
