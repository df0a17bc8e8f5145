"""How a software stack turns a step's ops into seconds: eager ``generate()``, a served engine, or llama.cpp.

The roofline (:mod:`benchlib.predict.roofline`) gives each op's GPU time: the slower of its
arithmetic and its memory traffic. What it leaves out is the host and the engine's own kernels:

* **transformers** (eager PyTorch, ``model.generate()``, ``Trainer``): Python and the dispatcher
  launch every kernel one by one. Kernels run asynchronously, so a launch overlaps the kernel
  before it, and an op takes the longer of its launch and its GPU time. A 0.5B model's decode
  step has about a thousand small ops, each far shorter than its launch: the host sets the speed,
  and the launch cost is the host's (:mod:`benchlib.predict.hosts`).
* **vllm** (vLLM, SGLang, gpt-fast and other engines that replay a decode step as one CUDA
  graph): no per-kernel launch, a fixed cost per step for scheduling and sampling, and each
  op at its roofline time. Its KV cache is allocated up front (paged), so a step writes only the
  new token's keys and values, where transformers' ``DynamicCache`` concatenates, copying the
  whole cache every step.
* **llama.cpp** (llama.cpp, Ollama, LM Studio, on GGUF files): a CUDA graph too, with a small GPU
  time per kernel as a floor, a step cost, and a ceiling on its own matmuls' rate.

Each engine has its own fractions of peak bandwidth: one for the kernels that stream memory
(matmuls reading dense weights, elementwise ops), one for attention reading the KV cache, and one
for the fused kernels that read packed GPTQ, AWQ, NF4 or GGUF weights. No kernel streams faster
than the best copy bandwidth reported for its card, and matmuls run at the best half-precision
rate reported for the card (:mod:`benchlib.catalog.reached_rates`), else at its architecture's
MAMF share of peak. (The built-in networks' roofline keeps its own elementwise fraction, fitted on
ResNet-50: convolution nets' normalisation kernels run slower than a transformer's.)

The constants are set once per engine and release, never per GPU or model:
``benchmarks/llm_speed_published.py`` fits them on the calibration sources of the published speed
benchmarks (``benchlib/data/published_llm_speed*.yaml``) and reports the held-out sources;
``tests/test_predict_llm_speed.py`` checks that the fit still picks them. Each engine names the
release its constants were fitted on; a published row measured with a release they don't stand
for (vLLM 0.4, before 0.6 cut the scheduler's time per step) is not compared with them. What they
came to says something of the stacks measured: transformers' attention reads a long cache slowly
(flash-attention without split-KV keeps most of an A100 idle at batch 1), and AutoGPTQ's and
AutoAWQ's kernels reach half the bandwidth vLLM's do.

Quantized weights (:mod:`benchlib.predict.quantized`): a decode step that feeds one token to a
layer reads the packed weights in a fused kernel (bitsandbytes' ``gemv_4bit``, the GPTQ/AWQ
kernels); a served engine and llama.cpp do so at any batch (Marlin, MMQ). Otherwise each layer
dequantizes its weight into the compute dtype first: one more kernel, reading the packed weight
and writing a dense one.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass, replace
from typing import Any

from benchlib.catalog.reached_rates import reached_bandwidth, reached_matmul
from benchlib.predict.count import OpCost
from benchlib.predict.roofline import EAGER_LAUNCH_S, GpuRates
from benchlib.predict.weight_formats import GGUF_FORMATS, LLAMA_CPP_WEIGHTS

DEQUANTIZE = "dequantize"
# A weight in a format whose kernels always read it packed (FP8, MXFP4, GGUF): never a dequantize pass.
PACKED = "packed weight"
FUSED_QUANTIZED = "fused quantized matmul"
# The kinds of op whose traffic runs at a bandwidth fraction of its own; the rest stream (`OpTimes.kinds`).
TRAFFIC_KINDS = ("stream", "attention", FUSED_QUANTIZED)
DTYPE_BYTES = {"fp32": 4, "fp16": 2, "bf16": 2}
BOUNDS = ("compute", "memory", "overhead")


# llama.cpp's constants: fitted by benchmarks/llm_speed_published.py on its calibration source, Xiongjie
# Dai's llama-bench runs of May 2024 (RunPod servers, builds 2824-2843; tg and pp rows on eight GPUs).
# Its decode step is a CUDA graph: no host launch per kernel, but each kernel still takes a few
# microseconds of GPU time however little it reads (``launch_s``, here a floor per traced op), and a
# step has a fixed cost (sampling, the graph's update). Its prompt matmuls of that time (MMQ on
# quantized weights, cuBLAS on F16) reached no more than about a hundred TFLOPS on any card measured,
# an A100's or an H100's included: a ceiling, not a share of the card's peak. No llama-bench row
# reads a long cache, so attention's share can't be fitted: it is vLLM's, fitted on Qwen's long
# prompts, as both read a cache of f16 keys and values with flash-decoding kernels at batch 1.
LLAMA_CPP_KERNEL_S = 0.5e-6
LLAMA_CPP_STEP_S = 1e-3
LLAMA_CPP_STREAM = 0.85
LLAMA_CPP_ATTENTION = 0.50
LLAMA_CPP_QUANTIZED = 0.70
LLAMA_CPP_MATMUL_CEILING = 100.0
LLAMA_CPP_VERSION = "builds 2824-2843"
LLAMA_CPP_AS_OF = "2024-05"
LLAMA_CPP_BASIS = "fitted by benchmarks/llm_speed_published.py on Xiongjie Dai's llama-bench rows (May 2024, 8 GPUs)"


class EngineMismatch(ValueError):
    """A mode or weight format the engine can't run: the message names the pair."""


@dataclass(frozen=True)
class Engine:
    """One software stack's costs beyond the roofline, each set once for the engine."""

    name: str
    title: str
    launch_s: float  # host seconds per kernel launch; 0 where a CUDA graph replays the step
    step_s: float  # fixed host seconds per forward call (a served engine's scheduling and sampling)
    stream_efficiency: float  # fraction of peak bandwidth its kernels reach: matmuls reading weights, elementwise ops
    attention_efficiency: float  # ... that attention reaches reading the KV cache
    quantized_efficiency: float  # ... that a fused kernel reading packed (GPTQ, AWQ, NF4) weights reaches
    fused_quantized_tokens: int | None  # most tokens per call a fused quantized kernel takes (None: any)
    matmul_ceiling_tflops: float | None  # the most its matmuls reach on any card (None: the card's rate)
    appends_in_place: bool  # writes a new token into a preallocated KV cache instead of concatenating
    host_launched: bool  # its launch_s is the host's (eager PyTorch), set by the host class it runs on
    modes: tuple[str, ...]
    weights: tuple[str, ...]
    basis: str
    version: str  # the release the constants were fitted on
    as_of: str  # when that release was current
    # Releases these constants stand for (prefixes; empty: any): a published row measured with another
    # is not predicted with them, for the reason in version_note.
    versions: tuple[str, ...]
    version_note: str
    # The command that measures the same setup on a reader's GPU ({model}, {prompt}, {batch} filled in).
    check_command: str

    def check(self, mode: str, weights: str) -> None:
        """EngineMismatch where this engine doesn't run ``mode`` with ``weights``."""
        if mode not in self.modes:
            runs = " and ".join(self.modes)
            raise EngineMismatch(
                f"--mode {mode} with --engine {self.name}: {self.title} runs {runs} only; "
                "training speed is predicted for --engine transformers"
            )
        runs = self.weights + LATER_WEIGHTS.get(self.name, ())
        if weights not in runs:
            instead = [
                name for name, engine in ENGINES.items() if weights in engine.weights + LATER_WEIGHTS.get(name, ())
            ]
            use = f"use --engine {' or '.join(instead)} for {weights}" if instead else "choose one of those"
            raise EngineMismatch(
                f"--weights {weights} with --engine {self.name}: {self.title} runs {', '.join(runs)}; {use}"
            )

    def on_host(self, launch_s: float) -> Engine:
        """This engine with ``launch_s`` host seconds per kernel launch, where the host launches its
        kernels (eager PyTorch); an engine that replays CUDA graphs is the same on any host."""
        return replace(self, launch_s=launch_s) if self.host_launched else self

    def check_text(self, hf_id: str, prompt: int, batch: int) -> str:
        """The command a reader runs to measure this setup themselves."""
        return self.check_command.format(model=hf_id, prompt=prompt, batch=batch)


# Formats an engine runs beyond its record's: FP8 and MXFP4, read packed like the others (their bytes
# per tensor come from the stand-ins). Kept out of the Engine record because the committed tables are
# keyed on a digest of its fields, and these formats change none of their numbers.
LATER_WEIGHTS: dict[str, tuple[str, ...]] = {"transformers": ("fp8", "mxfp4")}
BENCHLIB_CHECK = (
    "time model.generate() for 128 new tokens after a {prompt}-token prompt, batch {batch}, after one warm-up "
    "call; benchlib contribute measures a 1.1B model's decode on your GPU for the guide"
)
# An engine's fields that are prose: they change no number, so no table's digest covers them.
PROSE_FIELDS = ("title", "basis", "check_command", "version_note")

ENGINES: dict[str, Engine] = {
    "transformers": Engine(
        name="transformers",
        title="transformers (eager PyTorch: generate(), Trainer)",
        launch_s=EAGER_LAUNCH_S,
        step_s=0.0,
        stream_efficiency=0.85,
        attention_efficiency=0.10,
        quantized_efficiency=0.30,
        fused_quantized_tokens=1,
        matmul_ceiling_tflops=None,
        appends_in_place=False,
        host_launched=True,
        modes=("inference", "train", "lora", "qlora"),
        weights=("fp32", "fp16", "bf16", "int8", "nf4", "gptq-int4", "gptq-int8", "awq-int4"),
        basis=(
            "fitted by benchmarks/llm_speed_published.py on its calibration sources: Qwen2.5's transformers tables "
            "(A100 servers) and bitsandbytes' benchmark (T4, RTX 4090, H100)"
        ),
        version="4.46.0",
        as_of="2024-10",
        versions=(),
        version_note="one record for every release: no source found compares generate()'s speed across releases",
        check_command=BENCHLIB_CHECK,
    ),
    "vllm": Engine(
        name="vllm",
        title="vLLM (CUDA graphs; also SGLang and other served engines)",
        launch_s=0.0,
        step_s=2.5e-3,
        stream_efficiency=0.75,
        attention_efficiency=0.50,
        quantized_efficiency=0.60,
        fused_quantized_tokens=None,
        matmul_ceiling_tflops=None,
        appends_in_place=True,
        host_launched=False,
        modes=("inference",),
        weights=("fp16", "bf16", "gptq-int4", "gptq-int8", "awq-int4"),
        basis="fitted by benchmarks/llm_speed_published.py on its calibration source: Qwen2.5's vLLM 0.6.3 tables (A100)",
        version="0.6.3",
        as_of="2024-10",
        # vLLM 0.6.0 reworked the scheduler to cut its CPU time per step (multi-step scheduling,
        # asynchronous output processing); V1 (0.8 on) rewrote it again.
        versions=("0.6",),
        version_note="vLLM 0.6 cut the scheduler's time per step, and V1 rewrote it; each needs its own constants",
        check_command=(
            "vllm bench serve --model {model} --dataset-name random --random-input-len {prompt} "
            "--random-output-len 128 --max-concurrency {batch}"
        ),
    ),
    # llama.cpp's CUDA backend, as llama-bench, llama-server, Ollama and LM Studio run it: a decode
    # step replayed as a CUDA graph (no launch per kernel), quantized weights read packed by its
    # fused dequantizing matmuls (mmvq; MMQ for prompts) at any batch.
    "llama.cpp": Engine(
        name="llama.cpp",
        title="llama.cpp (CUDA; also Ollama and LM Studio)",
        launch_s=LLAMA_CPP_KERNEL_S,
        step_s=LLAMA_CPP_STEP_S,
        stream_efficiency=LLAMA_CPP_STREAM,
        attention_efficiency=LLAMA_CPP_ATTENTION,
        quantized_efficiency=LLAMA_CPP_QUANTIZED,
        fused_quantized_tokens=None,
        matmul_ceiling_tflops=LLAMA_CPP_MATMUL_CEILING,
        appends_in_place=True,
        host_launched=False,
        modes=("inference",),
        weights=LLAMA_CPP_WEIGHTS,
        basis=LLAMA_CPP_BASIS,
        version=LLAMA_CPP_VERSION,
        as_of=LLAMA_CPP_AS_OF,
        versions=(),
        version_note="llama-bench sources rarely state the build; the constants stand for builds of 2024",
        check_command="llama-bench -m MODEL.gguf -p {prompt} -n 128 -ngl 99  (MODEL.gguf: the GGUF file of {model})",
    ),
}


def engine_numbers(engine: Engine) -> dict[str, Any]:
    """An engine's fields without its prose: what a table's digest covers."""
    return {k: v for k, v in asdict(engine).items() if k not in PROSE_FIELDS}


def default_engine(weights: str | None) -> str:
    """The engine a format is run with when ``--engine`` isn't given: llama.cpp for a GGUF file."""
    return "llama.cpp" if weights in GGUF_FORMATS else "transformers"


def find_engine(name: str) -> Engine:
    """The engine called ``name``; ValueError lists the engines."""
    if name not in ENGINES:
        raise ValueError(f"--engine {name!r}: choose one of {', '.join(ENGINES)}")
    return ENGINES[name]


@dataclass(frozen=True)
class EngineTime:
    """One call's predicted seconds, split by what bounds each op."""

    compute_s: float
    memory_s: float
    overhead_s: float
    launches: float
    flops: float
    bytes: float

    @property
    def seconds(self) -> float:
        return self.compute_s + self.memory_s + self.overhead_s

    @property
    def bound(self) -> str:
        """compute, memory or overhead: whichever takes most of the time."""
        return max(BOUNDS, key=lambda b: getattr(self, f"{b}_s"))

    def shares(self) -> dict[str, float]:
        total = self.seconds or 1.0
        return {b: getattr(self, f"{b}_s") / total for b in BOUNDS}

    @staticmethod
    def combine(times: Sequence[EngineTime], coefficients: Sequence[float]) -> EngineTime:
        """``sum(c * t)``: the whole model's time from the times of a trace plan's models."""
        fields = ("compute_s", "memory_s", "overhead_s", "launches", "flops", "bytes")
        return EngineTime(
            **{f: sum(c * getattr(t, f) for c, t in zip(coefficients, times, strict=True)) for f in fields}
        )


def with_fused_weights(ops: list[OpCost], engine: Engine, tokens_per_call: int) -> list[OpCost]:
    """The ops as ``engine`` runs them: where its kernels read packed weights directly, a dequantize
    op goes and the matmul after it reads the packed bytes instead of the dense ones. A ``PACKED``
    weight (FP8, MXFP4, GGUF) is read so at any number of tokens."""
    fused = engine.fused_quantized_tokens is None or tokens_per_call <= engine.fused_quantized_tokens
    merged = {PACKED, DEQUANTIZE} if fused else {PACKED}
    if not any(op.op in merged for op in ops):
        return ops
    out: list[OpCost] = []
    # In the order the matmuls read them: an experts module reports gate_up and down before both.
    pending: list[OpCost] = []
    for op in ops:
        if op.op in merged:
            pending.append(op)
            continue
        if pending and op.kind == "matmul":
            weight = pending.pop(0)
            full = weight.weight_elements * DTYPE_BYTES.get(op.dtype, 2)
            # A MoE layer's matmul reads the experts its tokens route to: that share of the packed bytes.
            dense, packed = full * op.weight_share, (weight.bytes - full) * op.weight_share
            op = replace(op, kind=FUSED_QUANTIZED, bytes=int(max(0, op.bytes - dense) + packed))
        out.append(op)
    return out


@dataclass(frozen=True)
class OpTimes:
    """A call's ops on one GPU, as arrays: what doesn't depend on an engine's constants, computed once."""

    arithmetic_s: Any  # numpy arrays, one entry per op
    op_flops: Any
    bytes: Any
    kinds: Any  # index into TRAFFIC_KINDS: which bandwidth fraction the op's traffic runs at
    bandwidth: float  # bytes/s
    flops: float
    reached_bandwidth: float | None = None  # bytes/s: the most a copy was reported to reach on this card

    @property
    def launches(self) -> int:
        return len(self.bytes)


def _traffic(op: OpCost, engine: Engine) -> float:
    if engine.appends_in_place and op.largest_input_bytes:
        return float(op.bytes - 2 * op.largest_input_bytes)  # reads and writes the new piece only
    return float(op.bytes)


def matmul_fraction(rates: GpuRates) -> tuple[float, str]:
    """The share of its half-precision peak this card's matmuls reach, and the basis: the best figure
    reported for the card (`benchlib.catalog.reached_rates`), else its architecture's MAMF fraction."""
    reached = reached_matmul(rates.name)
    peak = rates.peaks_tflops.get(reached.dtype or "") if reached else None
    if reached is None or not peak:
        return rates.compute_efficiency, f"estimated: {rates.efficiency_basis}"
    return (
        reached.value / peak,
        f"reported: {reached.value:g} {reached.dtype} TFLOPS ({reached.source}, {reached.as_of})",
    )


def _compute_tflops(op: OpCost, rates: GpuRates, fraction: float) -> float:
    if op.dtype in ("fp16", "bf16") and op.dtype in rates.peaks_tflops:
        return rates.peaks_tflops[op.dtype] * fraction
    return rates.compute_tflops(op)


def op_times(ops: list[OpCost], rates: GpuRates, engine: Engine) -> OpTimes:
    import numpy as np

    fraction, _ = matmul_fraction(rates)
    reached = reached_bandwidth(rates.name)
    return OpTimes(
        arithmetic_s=np.array(
            [op.flops / (_compute_tflops(op, rates, fraction) * 1e12) if op.flops else 0.0 for op in ops]
        ),
        op_flops=np.array([float(op.flops) for op in ops]),
        bytes=np.array([_traffic(op, engine) for op in ops]),
        kinds=np.array([TRAFFIC_KINDS.index(op.kind) if op.kind in TRAFFIC_KINDS else 0 for op in ops]),
        bandwidth=rates.bandwidth_gbps * 1e9,
        flops=float(sum(op.flops for op in ops)),
        reached_bandwidth=reached.value * 1e9 if reached else None,
    )


def time_ops(t: OpTimes, engine: Engine) -> EngineTime:
    """Seconds of one call under ``engine``: each op takes the longest of its arithmetic, its traffic and its launch."""
    import numpy as np

    fractions = (engine.stream_efficiency, engine.attention_efficiency, engine.quantized_efficiency)
    rate = t.bandwidth * np.array(fractions)[t.kinds]
    if t.reached_bandwidth is not None:  # no kernel streams faster than the card was reported to
        rate = np.minimum(rate, t.reached_bandwidth)
    traffic = t.bytes / rate
    arithmetic = t.arithmetic_s
    if engine.matmul_ceiling_tflops is not None:
        arithmetic = np.maximum(arithmetic, t.op_flops / (engine.matmul_ceiling_tflops * 1e12))
    launch_bound = engine.launch_s > np.maximum(arithmetic, traffic)
    compute_bound = ~launch_bound & (arithmetic > traffic)
    memory_bound = ~launch_bound & ~compute_bound
    return EngineTime(
        compute_s=float(arithmetic[compute_bound].sum()),
        memory_s=float(traffic[memory_bound].sum()),
        overhead_s=float(launch_bound.sum()) * engine.launch_s + engine.step_s,
        launches=float(t.launches),
        flops=t.flops,
        bytes=float(t.bytes.sum()),
    )
