"""The training step of a Llama-style decoder in tokens/s: fp32 and mixed precision, eager and compiled.

The model is `benchlib.models.llama`'s: transformers' ``LlamaForCausalLM`` with random weights
(RMSNorm, RoPE, SwiGLU, grouped-query attention), nothing downloaded. A step is the forward pass
on a batch of random token ids with next-token cross-entropy (labels = inputs), the backward
pass and an AdamW step; tokens/s = batch size x sequence length / median step time.

Precision: fp32; bf16 under ``torch.autocast``; fp16 under autocast with ``torch.amp.GradScaler``
(bf16 has fp32's exponent range and needs no loss scaling). Weights and optimizer state stay
fp32 in all three. A dtype runs only where the device has it, as in `amp`: fp16 on CUDA and MPS,
bf16 on the CPU and on CUDA compute capability 8.0+; the others get a ``skipped`` record.

``torch.compile`` (default mode) compiles the model; its first call, which compiles, is timed
apart as the record's ``compile_s`` and is not in the step time. Where compiling fails (no C++
compiler, an unsupported platform) that variant is ``skipped`` with the error. The quick size
runs eager only: on the 2-core build machine the first compiled step of the quick model took
16 to 45 s (fp32, bf16), more than the whole quick suite should; standard and full compile.

On a CPU the standard size trains the quick size's model, eager and compiled (`CPU_STANDARD`).
On the 2-core build machine, the standard model's fp32 step took 15 to 38 s at a quarter of the
standard batch (4 x 256 tokens), and the quick model's bf16 step took 8 times its fp32 step
(autocast, which a CPU without AVX-512 BF16 emulates): the standard model's 4 CPU variants
would take the better part of an hour.

Every variant starts from a model built with the same seed, so all train the same network.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from benchlib.backends import torch_backend as tb
from benchlib.core.timing import Timer
from benchlib.models.llama import llama_shape, model_label, parameter_count, random_llama, require_transformers
from benchlib.results.schema import MeasurementRecord, Metric
from benchlib.workloads import TRANSFORMER_STEP, Chart, Plot, PredictionCheck, RunContext, Workload, register
from benchlib.workloads._record import stats_of

NAME = "transformer_train"
METRIC = Metric(name="throughput", unit="tokens/s", higher_is_better=True)
MIXED = ("fp16", "bf16")
EAGER, COMPILED = "eager", "torch.compile"
LEARNING_RATE = 1e-4
TIMER_QUICK = {"warmup_s": 0.05, "min_time_s": 0.2, "max_time_s": 0.5, "min_samples": 3}
ALL_DTYPES = ["fp32", "bf16", "fp16"]
STANDARD: dict[str, Any] = {
    "model": llama_shape(hidden=768, intermediate=2048, layers=6, heads=12, kv_heads=4, vocab=32000),
    "batch_size": 8,
    "seq_len": 512,
    "dtypes": ALL_DTYPES,
    "modes": [EAGER, COMPILED],
    "timer": {"warmup_s": 0.5, "min_time_s": 1.0, "max_time_s": 4.0, "min_samples": 5},
}
SIZES: dict[str, dict[str, Any]] = {
    "quick": {
        "model": llama_shape(hidden=256, intermediate=688, layers=2, heads=4, kv_heads=2, vocab=4096),
        "batch_size": 4,
        "seq_len": 128,
        "dtypes": ALL_DTYPES,
        "modes": [EAGER],
        "timer": TIMER_QUICK,
    },
    "standard": STANDARD,
    # The standard batch and modes on a larger model and longer sequences.
    "full": {
        **STANDARD,
        "model": llama_shape(hidden=2048, intermediate=5632, layers=8, heads=16, kv_heads=4, vocab=32000),
        "seq_len": 1024,
        "timer": {"warmup_s": 2.0, "min_time_s": 3.0, "max_time_s": 10.0, "min_samples": 5},
    },
}
# The quick model, eager and compiled (see the module note).
CPU_STANDARD = {k: SIZES["quick"][k] for k in ("model", "batch_size", "seq_len", "timer")}
CHART = Chart(
    NAME,
    "Llama-style decoder training step (random weights)",
    "model · precision · mode",
    axis_title="tokens/s",
    setting_order=tuple(
        f"{model_label(p['model'])} · {d} · {m}" for p in SIZES.values() for d in ALL_DTYPES for m in (EAGER, COMPILED)
    ),
)
PLOTS = (Plot(CHART, METRIC.name, "{param_model} · {dtype} · {param_compile}"),)


def train_step(llama: Any, ids: Any, device: str, dtype: str) -> Callable[[], Any]:
    """Forward, backward and AdamW on ``ids``; ``dtype`` fp16 or bf16 runs under autocast (fp16 with a GradScaler)."""
    torch = tb.import_torch()
    optimizer = torch.optim.AdamW(llama.parameters(), lr=LEARNING_RATE)
    device_type = torch.device(device).type
    autocast = tb.torch_dtype(dtype) if dtype in MIXED else None
    scaler = torch.amp.GradScaler(device_type, enabled=dtype == "fp16")

    def step() -> Any:
        optimizer.zero_grad(set_to_none=True)
        with torch.autocast(device_type, dtype=autocast, enabled=autocast is not None):
            loss = llama(input_ids=ids, labels=ids).loss
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
        return loss

    return step


def first_compiled_step(step: Callable[[], Any], sync: Callable[[], None]) -> tuple[float, str | None]:
    """Seconds the first call of a compiled step took (it compiles), or the error that stopped it.

    Out of memory is not a compile failure and is raised, for the runner to record.
    """
    started = time.perf_counter()
    try:
        step()
        sync()
    except Exception as exc:
        if tb.is_oom(exc):
            raise
        first_line = (str(exc).strip().splitlines() or [""])[0]
        return time.perf_counter() - started, f"{type(exc).__name__}: {first_line}"
    return time.perf_counter() - started, None


def run(ctx: RunContext, params: dict[str, Any]) -> list[MeasurementRecord]:
    require_transformers()
    torch = tb.import_torch()
    sync, sync_name = tb.sync_function(ctx.device)
    name = tb.device_name(ctx.device, ctx.cpu_name)
    batch, seq_len = params["batch_size"], params["seq_len"]
    available = ["fp32", *(d for d in tb.supported_dtypes(ctx.device) if d in MIXED)]
    torch.manual_seed(1)
    ids = torch.randint(0, params["model"]["vocab_size"], (batch, seq_len), device=ctx.device)
    common = {
        "model": model_label(params["model"]),
        **params["model"],
        "batch_size": batch,
        "seq_len": seq_len,
        "optimizer": "AdamW",
        "data": "synthetic",
    }
    base = dict(workload=NAME, framework="torch", device=ctx.device, device_name=name, metric=METRIC)

    def skipped(dtype: str, setting: dict[str, Any], why: str) -> MeasurementRecord:
        return MeasurementRecord(**base, dtype=dtype, params=setting, status="skipped", message=f"{NAME}: {why}")

    records = []
    for dtype in params["dtypes"]:
        for mode in params["modes"]:
            setting = common | {"compile": mode, "autocast": dtype in MIXED, "grad_scaler": dtype == "fp16"}
            if dtype not in available:
                why = (
                    f"{dtype} mixed precision is not available on {name}: autocast here runs only {', '.join(available)} "
                    "(fp16 needs CUDA or MPS; bf16 needs a CPU or CUDA compute capability 8.0+)"
                )
                records.append(skipped(dtype, setting, why))
                continue
            llama = random_llama(params["model"], ctx.device, seq_len).train()
            setting["parameters"] = parameter_count(llama)
            if mode == COMPILED:
                torch._dynamo.reset()  # each variant compiles its own model from scratch
                llama = torch.compile(llama)
            step = train_step(llama, ids, ctx.device, dtype)
            if mode == COMPILED:
                compile_s, failure = first_compiled_step(step, sync)
                if failure is not None:
                    why = f"torch.compile doesn't work here for {dtype} on {name}: {failure}"
                    records.append(skipped(dtype, setting, why))
                    continue
                setting["compile_s"] = round(compile_s, 3)
            m = Timer(
                step, sync=sync, sync_name=sync_name, threads=tb.threads(), label=f"{NAME} {dtype} {mode}"
            ).measure(**params["timer"])
            records.append(
                MeasurementRecord(
                    **base,
                    dtype=dtype,
                    params=setting | {"step_ms": m.median * 1e3},
                    value=batch * seq_len / m.median,
                    stats=stats_of(m),
                )
            )
            del llama, step
            tb.empty_cache(ctx.device)
    return records


register(
    Workload(
        name=NAME,
        framework="torch",
        description="Training step (forward, backward, AdamW) of a random-weight Llama-style decoder in tokens/s: "
        "fp32, bf16 and fp16 mixed precision, eager and torch.compile.",
        metric=METRIC,
        sizes=SIZES,
        run=run,
        suites=("quick", "standard", "full"),
        expected_s={"quick": 3.8, "standard": 10.1},
        device_sizes={"cpu": {"standard": CPU_STANDARD}},
        plots=PLOTS,
        # torch.compile fuses ops that predict counts one by one: only the eager step is predicted.
        checks=(PredictionCheck(TRANSFORMER_STEP, where={"compile": EAGER}),),
    )
)
