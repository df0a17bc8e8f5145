"""How fast a language model runs on one GPU, per engine: prefill, decode, serving and fine-tuning.

The model is built as `benchlib fit` builds it (:class:`benchlib.predict.llm_memory.StepTracer`:
transformers' class for the config, peft's adapters, stand-ins for quantized weights), so a speed
and a memory answer are about the same setup. One call (a prefill, a decode step, a training step)
runs on fake tensors inside an op counter (:mod:`benchlib.predict.count`) and the ops are timed by
an engine (:mod:`benchlib.predict.engines`).

* **Inference** is a prefill of ``seq_len`` tokens per sequence, then decode steps that each read
  a KV cache of that length, for ``batch`` sequences at once: decode tokens/s is the batch over
  one step's seconds. A decode step reads every weight once for the whole batch, so it grows
  with the batch until the matmuls turn compute-bound.
* **Training** (``train``, ``lora``, ``qlora``) is one step: forward, backward (with the extra
  forward of gradient checkpointing where asked) and the optimizer update; tokens/s is
  batch x seq_len over its seconds. QLoRA dequantizes each NF4 weight in the forward and again in
  the backward, and those kernels are counted.

Depth: a call's time is a sum over the decoder layers, so it is affine in the number of layers of
each kind; the call is counted on the reduced models `benchlib fit` traces
(`LanguageModel.trace_plan`) and extrapolated per kind, as memory is.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import warnings
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from benchlib.catalog.gpus import AcceleratorSpec
from benchlib.catalog.language_models import LanguageModel, TracePlan
from benchlib.catalog.reached_rates import reached_bandwidth, reached_matmul
from benchlib.predict.count import OpCost, op_counter
from benchlib.predict.engines import (
    DEQUANTIZE,
    DTYPE_BYTES,
    PACKED,
    Engine,
    EngineTime,
    OpTimes,
    matmul_fraction,
    op_times,
    time_ops,
    with_fused_weights,
)
from benchlib.predict.hosts import Host, default_host
from benchlib.predict.llm_memory import BASE_LAYERS, LLMPredictor, Setup, StepTracer, make_setup
from benchlib.predict.memory import gpu_memory
from benchlib.predict.roofline import GpuRates, UnknownSpeedGPU, gpu_rates
from benchlib.predict.weight_formats import GGUF_FORMATS

METHOD = (
    "one call counted op by op on fake tensors (torch.utils.flop_counter FLOPs, bytes each kernel reads and "
    "writes); each op takes the longest of its arithmetic (peak x the MAMF fraction), its memory traffic "
    "(peak bandwidth x the engine's fraction) and, in eager PyTorch, its kernel launch; a served engine adds a "
    "fixed cost per step"
)


@dataclass(frozen=True)
class CountedCall:
    """The ops of one call on each model of a trace plan, ready to time on any GPU and engine."""

    plan: TracePlan
    ops: tuple[tuple[OpCost, ...], ...]
    tokens_per_call: int

    def prepare(self, rates: GpuRates, engine: Engine) -> tuple[OpTimes, ...]:
        """The ops of each traced model as ``engine`` runs them on a GPU with ``rates``, ready for `time_prepared`."""
        return tuple(
            op_times(with_fused_weights(list(ops), engine, self.tokens_per_call), rates, engine) for ops in self.ops
        )

    def time_prepared(self, prepared: tuple[OpTimes, ...], engine: Engine) -> EngineTime:
        return EngineTime.combine([time_ops(t, engine) for t in prepared], self.plan.coefficients)

    def time(self, rates: GpuRates, engine: Engine) -> EngineTime:
        return self.time_prepared(self.prepare(rates, engine), engine)


@dataclass(frozen=True)
class InferenceCalls:
    prefill: CountedCall
    decode: CountedCall | None  # None for a model without a KV cache (an encoder)


_TRACERS: dict[str, StepTracer] = {}


def tracer_of(model: LanguageModel, setup: Setup, layers: tuple[str, ...] | None) -> StepTracer:
    """One tracer per model, setup and traced layers in this process: building the model is most of a count's time."""
    key_setup = {k: v for k, v in asdict(setup).items() if k not in ("batch", "seq_len")}
    key = json.dumps([model.name, model.fingerprint(), key_setup, layers], sort_keys=True, default=str)
    digest = hashlib.sha256(key.encode()).hexdigest()
    if digest not in _TRACERS:
        with _quiet():
            _TRACERS[digest] = StepTracer(model, setup, layers)
    return _TRACERS[digest]


def _count(tracer: StepTracer, run: Callable[[], Any]) -> tuple[OpCost, ...]:
    from benchlib.predict.quantized import observe_dequantize

    counter = op_counter(tracer.language_model.experts_per_token)
    setup = tracer.setup
    dense_bytes = DTYPE_BYTES[setup.dtype]

    # FP8's, MXFP4's and GGUF's kernels read the packed weight at any number of tokens.
    kind = PACKED if setup.weights in ("fp8", "mxfp4", *GGUF_FORMATS) else DEQUANTIZE

    def dequantized(out_features: int, in_features: int, packed: int) -> None:
        # ``packed``: the bytes the stand-in holds for this weight (GGUF's differ per tensor).
        elements = out_features * in_features
        counter.ops.append(
            OpCost(kind, "memory", 0, packed + elements * dense_bytes, setup.dtype, weight_elements=elements)
        )

    with _quiet(), tracer.mode, counter, observe_dequantize(dequantized):
        run()
    return tuple(counter.ops)


def plan_of(model: LanguageModel) -> TracePlan:
    return model.trace_plan(BASE_LAYERS)


def count_inference_at(
    tracer: StepTracer, setup: Setup, context: int
) -> tuple[tuple[OpCost, ...], tuple[OpCost, ...] | None]:
    import torch

    inputs = tracer.inputs(setup.batch, setup.seq_len)
    outputs: list[Any] = []
    prefill = _count(tracer, lambda: outputs.append(tracer.prefill(inputs)))
    with _quiet(), tracer.mode:
        # The counted prefill's cache serves the decode step where it reads the prompt's length.
        filled = outputs[0] if context == setup.seq_len else tracer.prefill(tracer.inputs(setup.batch, context))
        next_ids = torch.randint(0, tracer.vocab, (setup.batch, 1))
    cache = getattr(filled, "past_key_values", None)
    if tracer.language_model.kind != "causal" or cache is None:
        return prefill, None

    def decode() -> None:
        with torch.no_grad():
            tracer.model(input_ids=next_ids, past_key_values=cache, use_cache=True)

    return prefill, _count(tracer, decode)


def count_inference(model: LanguageModel, setup: Setup, *, decode_context: int | None = None) -> InferenceCalls:
    """The prefill of ``setup.seq_len`` tokens and one decode step reading a cache of ``decode_context``
    tokens (default: the prompt), for ``setup.batch`` sequences."""
    plan = plan_of(model)
    context = decode_context or setup.seq_len
    counted = [count_inference_at(tracer_of(model, setup, layers), setup, context) for layers in plan.layers]
    prefill = CountedCall(plan, tuple(p for p, _ in counted), setup.batch * setup.seq_len)
    decodes = tuple(d for _, d in counted if d is not None)
    decode = CountedCall(plan, decodes, setup.batch) if len(decodes) == len(plan.layers) else None
    return InferenceCalls(prefill, decode)


def count_training_step(tracer: StepTracer, setup: Setup) -> tuple[OpCost, ...]:
    """The ops of one training step of ``tracer``'s model on ``setup.batch`` samples of ``setup.seq_len`` tokens."""
    inputs = tracer.inputs(setup.batch, setup.seq_len)

    def step() -> None:
        tracer.forward_backward(inputs)
        tracer.optimizer_step()

    return _count(tracer, step)


def count_training(model: LanguageModel, setup: Setup) -> CountedCall:
    """One training step of ``setup.batch`` samples of ``setup.seq_len`` tokens."""
    plan = plan_of(model)
    steps = tuple(count_training_step(tracer_of(model, setup, layers), setup) for layers in plan.layers)
    return CountedCall(plan, steps, setup.batch * setup.seq_len)


@dataclass(frozen=True)
class Concurrency:
    """How many sequences of ``context`` tokens a GPU serves at once: their KV caches beside the weights."""

    sequences: int
    context: int
    kv_bytes_per_sequence: int
    free_bytes: int
    basis: str


def max_concurrency(
    model: LanguageModel, setup: Setup, gpu: AcceleratorSpec, cache_dir: Path | None = None
) -> Concurrency:
    """From `benchlib fit`'s breakdown at batch 1: the tensor budget less the weights and one prefill's
    activations, over one sequence's KV cache."""
    one = make_setup(
        "inference",
        weights=setup.weights,
        dtype=setup.dtype,
        batch=1,
        seq_len=setup.seq_len,
        kv_cache=setup.kv_cache,
    )
    breakdown = LLMPredictor(model, one, cache_dir).breakdown(setup.seq_len)
    budget = gpu_memory(gpu).tensor_budget
    free = budget - breakdown["weights"] - breakdown["activations"]
    per_sequence = max(1, breakdown["kv_cache"])
    return Concurrency(
        sequences=max(0, free // per_sequence),
        context=setup.seq_len,
        kv_bytes_per_sequence=per_sequence,
        free_bytes=max(0, free),
        basis="benchlib fit at batch 1: tensor budget less weights and one prefill's activations, over one KV cache",
    )


@dataclass(frozen=True)
class LLMSpeed:
    """A language model's predicted speed on one GPU and engine, with what it was predicted from."""

    model: str
    gpu: str
    engine: Engine
    setup: Setup
    rates: GpuRates
    host: Host
    prefill: EngineTime | None = None
    decode: EngineTime | None = None
    train: EngineTime | None = None
    concurrency: Concurrency | None = None

    @property
    def prefill_tokens_per_s(self) -> float | None:
        return self.setup.batch * self.setup.seq_len / self.prefill.seconds if self.prefill else None

    @property
    def decode_tokens_per_s(self) -> float | None:
        return self.setup.batch / self.decode.seconds if self.decode else None

    @property
    def training_tokens_per_s(self) -> float | None:
        return self.setup.batch * self.setup.seq_len / self.train.seconds if self.train else None

    @property
    def throughput(self) -> float:
        """What "tokens per second" means to a reader: decode, training, or (an encoder) prefill."""
        value = self.training_tokens_per_s or self.decode_tokens_per_s or self.prefill_tokens_per_s
        assert value is not None
        return value

    def as_dict(self) -> dict[str, Any]:
        s = self.setup
        out: dict[str, Any] = {
            "model": self.model,
            "gpu": self.gpu,
            "engine": self.engine.name,
            "engine_title": self.engine.title,
            "mode": s.mode,
            "weights": s.weights,
            "dtype": s.dtype,
            "batch": s.batch,
            "seq_len": s.seq_len,
            "setup": s.describe(),
            "throughput": self.throughput,
            "unit": "tokens/s",
            "prefill_tokens_per_s": self.prefill_tokens_per_s,
            "decode_tokens_per_s": self.decode_tokens_per_s,
            "training_tokens_per_s": self.training_tokens_per_s,
        }
        for name in ("prefill", "decode", "train"):
            call: EngineTime | None = getattr(self, name)
            if call is not None:
                out[f"{name}_bound"] = call.bound
                out[f"{name}_s"] = call.seconds
                out[f"{name}_shares"] = call.shares()
                out[f"{name}_launches"] = call.launches
                out[f"{name}_flops"] = call.flops
                out[f"{name}_bytes_moved"] = call.bytes
        if self.concurrency is not None:
            out["max_concurrency"] = self.concurrency.sequences
            out["concurrency"] = asdict(self.concurrency)
        out["engine_constants"] = {
            "launch_s": self.engine.launch_s,
            "step_s": self.engine.step_s,
            "stream_efficiency": self.engine.stream_efficiency,
            "basis": self.engine.basis,
        }
        out["engine_constants"]["version"] = self.engine.version
        out["engine_constants"]["as_of"] = self.engine.as_of
        out["host"] = asdict(self.host)
        out["rates"] = asdict(self.rates)
        fraction, basis = matmul_fraction(self.rates)
        matmul = reached_matmul(self.rates.name)
        bandwidth = reached_bandwidth(self.rates.name)
        out["reached"] = {
            "matmul_fraction": fraction,
            "matmul_basis": basis,
            "matmul_url": matmul.url if matmul else None,
            "bandwidth_gbps": bandwidth.value if bandwidth else None,
            "bandwidth_source": f"{bandwidth.source}, {bandwidth.as_of}" if bandwidth else None,
            "bandwidth_url": bandwidth.url if bandwidth else None,
        }
        out["method"] = METHOD
        out["kind"] = "predicted"
        return out


def predict_llm_speed(
    model: LanguageModel,
    gpu: AcceleratorSpec,
    setup: Setup,
    engine: Engine,
    *,
    cache_dir: Path | None = None,
    concurrency: bool = True,
    host: Host | None = None,
    counted: InferenceCalls | CountedCall | None = None,
) -> LLMSpeed:
    """Predict ``model`` run as ``setup`` on ``gpu`` under ``engine``, on ``host`` (default: the host
    readers find the GPU on, `default_host`); EngineMismatch, UnknownSpeedGPU or ValueError say what
    to change. ``counted``: the calls at this setup's size, where a formula gave them
    (`benchlib.predict.formula`); otherwise they are counted here."""
    engine.check(setup.mode, setup.weights)
    host = host or default_host(gpu)
    engine = engine.on_host(host.launch_s)
    rates = gpu_rates(gpu)
    if setup.dtype != "fp32" and setup.dtype not in rates.peaks_tflops:
        others = [d for d in ("bf16", "fp16") if d in rates.peaks_tflops and d != setup.dtype]
        instead = f"try --dtype {others[0]}" if others else "try --dtype fp32"
        raise UnknownSpeedGPU(
            f"{rates.name}: the specs give no {setup.dtype} peak (it may not support {setup.dtype}); {instead}, "
            f"or add its {setup.dtype} TFLOPS to benchlib/data/gpus.yaml with a source"
        )
    if setup.seq_len > model.max_positions():
        raise ValueError(f"--seq-len {setup.seq_len}: {model.title} reads at most {model.max_positions()} tokens")
    common = {"model": model.title, "gpu": rates.name, "engine": engine, "setup": setup, "rates": rates, "host": host}
    if setup.trains:
        step = counted if isinstance(counted, CountedCall) else count_training(model, setup)
        return LLMSpeed(**common, train=step.time(rates, engine))
    calls = counted if isinstance(counted, InferenceCalls) else count_inference(model, setup)
    return LLMSpeed(
        **common,
        prefill=calls.prefill.time(rates, engine),
        decode=calls.decode.time(rates, engine) if calls.decode else None,
        # llama.cpp serves from its own buffers (`benchlib.predict.llama_cpp`), not transformers' memory.
        concurrency=max_concurrency(model, setup, gpu, cache_dir)
        if concurrency and calls.decode and engine.name != "llama.cpp"
        else None,
    )


def default_dtype(rates: GpuRates) -> str:
    """A language model's default dtype on a GPU: bf16, or fp16 where the specs give no bf16 peak (T4, P100)."""
    return "bf16" if "bf16" in rates.peaks_tflops else "fp16"


@contextlib.contextmanager
def _quiet() -> Iterator[None]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield
