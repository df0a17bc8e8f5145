"""Predicted against published language-model speeds: decode per engine, and fine-tuning tokens/s.

The published figures are reported data (`benchlib.catalog.published_llm_speeds`: Qwen's speed
benchmarks, transformers and vLLM, batch 1, 2,048 generated tokens after prompts of several
lengths, BF16, GPTQ and AWQ weights, on an A100 80GB; and fine-tuning tokens/s with stated
setups). Each source states its setup; every row is predicted in that setup with
`benchlib.predict.llm_speed` and compared.

A Qwen row's speed is the generated tokens over the time of the whole ``generate()`` call, which
includes the prefill: predicted as the prefill of the prompt plus each decode step, whose cache
grows by a token a step, taken at its middle length.

Halves, by source, never by row: a source is all calibration (`CALIBRATION_SOURCES`) or all held
out. The engines' constants are fitted on the calibration sources only (`fit_engine`); both halves
are reported, per engine and per class of GPU (`GPU_CLASSES`). No constant is fitted on a training
row, so every training row is held out.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from typing import Any

from benchlib.catalog.gpus import AcceleratorSpec, find_gpu
from benchlib.catalog.language_models import LanguageModel, ModelNotFound, resolve_model
from benchlib.catalog.published_llm_speeds import PublishedSpeed, published_rows
from benchlib.derive.compared import CALIBRATION, HELD_OUT
from benchlib.predict.engines import ENGINES, Engine, EngineMismatch, EngineTime, OpTimes
from benchlib.predict.hosts import HOSTS, default_host
from benchlib.predict.llm_memory import make_setup
from benchlib.predict.llm_speed import CountedCall, count_inference, count_training
from benchlib.predict.roofline import GpuRates, gpu_rates

# Targets on the held-out half: median absolute error per engine, and no class of GPU worse than CLASS_TARGET.
TARGETS = {"decode": 0.20, "prefill": 0.20, "long prompt": 0.20, "training": 0.25}
CLASS_TARGET = 0.30
# The sources each engine's constants are fitted on; every other source is held out. One per stack:
# Qwen2.5's tables (transformers 4.46 and vLLM 0.6.3 on an A100), the one llama-bench set that
# covers many GPUs (Xiongjie Dai's, llama.cpp builds of May 2024) and bitsandbytes' own benchmark.
# Qwen2's tables, the llama.cpp pull requests' and the fine-tuning sources are held out whole.
CALIBRATION_SOURCES = (
    "qwen2.5-speed-transformers",
    "qwen2.5-speed-vllm",
    "xiongjiedai-gpu-benchmarks-llama3",
    # The one published generate() measurement on a GeForce card: it sets the desktop host's launch
    # cost (`benchlib.predict.hosts`), so it can't also check it.
    "bnb-benchmarking-v0.45",
)
# The metrics a row is compared on; others (a latency, a throughput with the prefill mixed in) are left out.
COMPARED_METRICS = ("decode_tokens_per_s", "prefill_tokens_per_s", "training_tokens_per_s")
# Which readers find a GPU where: the free notebooks' cards, the cards in desktops, the rest in data centres.
GPU_CLASSES = {
    "free": ("T4", "P100 PCIe 16GB", "L4"),
    "consumer": ("GeForce RTX 3090", "GeForce RTX 4090", "GeForce RTX 5090", "RTX A6000", "RTX 6000 Ada"),
}
# No published batch-1 prefill figure has a setup benchlib can predict (a GPU in the specs, an engine
# it models), so the prefill is checked where it weighs: requests whose prompt takes at least this
# share of the predicted time are summarised apart, as "long prompt", against the prefill target.
LONG_PROMPT_SHARE = 1 / 3
# A cache this long or longer makes attention's share of a decode step measurable.
LONG_CACHE = 4096
# The constants `fit_engine` sets.
FITTED = (
    "launch_s",
    "step_s",
    "stream_efficiency",
    "attention_efficiency",
    "quantized_efficiency",
    "matmul_ceiling_tflops",
)
# The grids `fit_engine` searches: launch cost (µs) or step cost (ms), and bandwidth fraction.
LAUNCH_US_GRID = (0.5, *(float(x) for x in range(1, 41)))
# An engine with both a per-kernel floor and a per-step cost (llama.cpp) searches the step on a coarser grid.
COARSE_STEP_MS_GRID = (0.0, 0.25, 0.5, 1.0, 2.0)
CEILING_TFLOPS_GRID = tuple(float(x) for x in range(50, 401, 10))
STEP_MS_GRID = tuple(round(0.25 * x, 2) for x in range(0, 25))
STREAM_GRID = tuple(round(0.40 + 0.05 * x, 2) for x in range(12))  # 0.40 ... 0.95
ATTENTION_GRID = tuple(round(0.05 + 0.05 * x, 2) for x in range(19))  # 0.05 ... 0.95


@dataclass(frozen=True)
class Counted:
    """A published row with the calls its prediction times, counted once."""

    published: PublishedSpeed
    model: LanguageModel
    rates: GpuRates
    calls: tuple[CountedCall, ...]  # (prefill, decode) for inference; (step,) for training
    half: str
    host: str  # the host class the row ran on (`benchlib.predict.hosts`)
    _prepared: dict[str, tuple[tuple[OpTimes, ...], ...]] = field(default_factory=dict, compare=False, repr=False)

    def _times(self, engine: Engine) -> list[EngineTime]:
        # Fitting times each row hundreds of times: the arrays depend on the engine's kind, not its constants.
        if engine.name not in self._prepared:
            self._prepared[engine.name] = tuple(call.prepare(self.rates, engine) for call in self.calls)
        return [call.time_prepared(prepared, engine) for call, prepared in zip(self.calls, self._prepared[engine.name])]

    def on_host(self, engine: Engine, hosts: dict[str, float] | None = None) -> Engine:
        """``engine`` as it runs on this row's host: a server is the engine's own launch cost (what
        `fit_engine` fits); another host class launches at its own (``hosts``: launch seconds by class)."""
        if self.host == "server":
            return engine
        return engine.on_host((hosts or {}).get(self.host, HOSTS[self.host].launch_s))

    def predict(self, engine: Engine, hosts: dict[str, float] | None = None) -> float:
        engine = self.on_host(engine, hosts)
        r = self.published.row
        if self.published.kind == "training":
            step = self._times(engine)[0]
            return r["batch"] * (self.published.seq_len or 0) / step.seconds
        prefill, decode = self._times(engine)
        if self.published.kind == "prefill":
            return r["batch"] * (self.published.input_tokens or 0) / prefill.seconds
        generated = r.get("output_tokens")
        if not generated:  # a per-step decode figure
            return r["batch"] / decode.seconds
        # llama-bench's tg N starts from an empty context: no prompt to read.
        prompt = prefill.seconds if self.published.input_tokens else 0.0
        return r["batch"] * generated / (prompt + generated * decode.seconds)

    def prompt_share(self, engine: Engine) -> float | None:
        """The share of a whole request's predicted time that reads the prompt; None for training."""
        generated = self.published.row.get("output_tokens")
        if self.published.kind != "decode" or not generated or not self.published.input_tokens:
            return None
        prefill, decode = self._times(self.on_host(engine))
        return prefill.seconds / (prefill.seconds + generated * decode.seconds)


@dataclass(frozen=True)
class Comparison:
    """One published figure and its prediction."""

    source: str
    url: str
    as_of: str | None
    engine: str
    kind: str
    what: str
    gpu: str
    half: str
    published: float
    predicted: float
    prompt_share: float | None = None

    @property
    def gpu_class(self) -> str:
        return gpu_class(self.gpu)

    @property
    def error(self) -> float:
        """Predicted / published - 1: +10 % predicts 10 % too fast."""
        return self.predicted / self.published - 1


@dataclass(frozen=True)
class LeftOut:
    source: str
    what: str
    reason: str


def gpu_class(gpu: str) -> str:
    """free, consumer or datacenter (`GPU_CLASSES`)."""
    return next((name for name, gpus in GPU_CLASSES.items() if gpu in gpus), "datacenter")


def half_of(source: str) -> str:
    return CALIBRATION if source in CALIBRATION_SOURCES else HELD_OUT


def _setup(published: PublishedSpeed, spec: AcceleratorSpec) -> Any:
    r = published.row
    if published.kind == "training":
        return make_setup(
            r["mode"],
            weights=r["weights"],
            dtype=r.get("dtype"),
            batch=int(r["batch"]),
            seq_len=published.seq_len or 0,
            lora_rank=r.get("lora_rank"),
            lora_targets=_targets(r.get("lora_targets")),
            grad_checkpointing=bool(r.get("grad_checkpointing")),
            optimizer="paged_adamw_8bit" if "8bit" in str(r.get("optimizer") or "") else "adamw",
        )
    weights = published.weights
    if published.engine == "llama.cpp":
        dtype = "fp16"  # llama.cpp computes in f16 with f32 accumulation, and caches keys and values in f16
    elif weights in ("fp16", "bf16"):
        dtype = weights
    else:
        dtype = r.get("bnb_compute_dtype") or ("bf16" if "bf16" in gpu_rates(spec).peaks_tflops else "fp16")
    return make_setup(
        "inference",
        weights=weights,
        dtype=dtype,
        batch=int(r["batch"]),
        seq_len=max(1, published.input_tokens or 1),
        kv_cache="fp16" if published.engine == "llama.cpp" else None,
    )


def _targets(targets: Any) -> str:
    if targets is None or targets == "all-linear":
        return "all-linear"
    return ",".join(targets) if isinstance(targets, list) else str(targets)


def _why_left_out(published: PublishedSpeed, model: LanguageModel) -> str | None:
    r = published.row
    if published.gpu is None:
        return "the source doesn't say which GPU"
    if published.metric not in COMPARED_METRICS:
        return f"{published.metric} mixes what benchlib predicts apart (or isn't a rate); not compared"
    if r.get("depth"):
        return "llama-bench at a depth: the context is filled without timing it, which isn't modelled"
    if r.get("int8_threshold") not in (None, 0, 0.0):
        return (
            f"LLM.int8 with outlier threshold {r['int8_threshold']}: the outlier decomposition's extra "
            "kernels and host work per layer are not modelled"
        )
    engine = ENGINES[published.engine]
    used = str((published.source.get("software") or {}).get(published.engine) or "")
    if engine.versions and used and not used.startswith(engine.versions):
        return (
            f"measured with {published.engine} {used}; benchlib's {published.engine} constants are for "
            f"{engine.version} ({engine.version_note})"
        )
    if int(r.get("gpus") or 1) > 1 and published.engine != "transformers":
        return (
            f"{published.engine} on {r['gpus']} GPUs splits each layer (tensor parallel), which benchlib doesn't model"
        )
    if published.kind == "training":
        if r.get("compile"):
            return "torch.compile fuses kernels, which benchlib doesn't model"
        if published.seq_len is None or any(r.get(k) is None for k in ("batch", "weights", "mode")):
            return "the source doesn't state the batch, sequence length or weights"
        return None
    if published.input_tokens is None:
        return "the source doesn't state the prompt's length"
    needed = (published.input_tokens or 0) + int(r.get("output_tokens") or 0)
    if needed > model.max_positions():
        return f"{needed:,} tokens need rope scaling (YaRN) beyond the config's {model.max_positions():,} positions"
    return None


def count_rows(
    rows: Iterable[PublishedSpeed] | None = None, on_row: Callable[[str], None] = lambda what: None
) -> tuple[list[Counted], list[LeftOut]]:
    """Every published row counted for prediction, or left out with its reason."""
    rows = list(published_rows() if rows is None else rows)
    counted: list[Counted] = []
    left_out: list[LeftOut] = []
    resolved: list[tuple[PublishedSpeed, LanguageModel]] = []
    for published in rows:
        try:
            model = resolve_model(published.row["model"])
        except ModelNotFound as exc:
            left_out.append(LeftOut(published.source["id"], published.describe(), f"no config: {exc}"))
            continue
        resolved.append((published, model))
    # A count depends on the model, the setup and the context alone, not on the GPU or the engine:
    # the rows that share them (a model on several GPUs, or under two engines) share one count.
    counts: dict[tuple[Any, ...], tuple[CountedCall, ...]] = {}
    for published, model in resolved:
        reason = _why_left_out(published, model)
        if reason is None:
            spec = find_gpu(str(published.gpu))
            try:
                setup = _setup(published, spec)
                ENGINES[published.engine].check(setup.mode, setup.weights)
                if setup.dtype not in gpu_rates(spec).peaks_tflops:
                    reason = f"the specs give no {setup.dtype} peak for the {spec.name}"
            except (EngineMismatch, ValueError) as exc:
                reason = str(exc)
        if reason is not None:
            left_out.append(LeftOut(published.source["id"], published.describe(), reason))
            continue
        on_row(published.describe())
        r = published.row
        if published.kind == "training":
            key: tuple[Any, ...] = (r["model"], setup)
            if key not in counts:
                counts[key] = (count_training(model, setup),)
            half = HELD_OUT
        else:
            middle = max(1, (published.input_tokens or 0) + int(r.get("output_tokens") or 0) // 2)
            key = (r["model"], setup, middle)
            if key not in counts:
                inference = count_inference(model, setup, decode_context=middle)
                assert inference.decode is not None
                counts[key] = (inference.prefill, inference.decode)
            half = half_of(published.source["id"])
        calls = counts[key]
        host = published.host or default_host(spec).name
        counted.append(Counted(published, model, gpu_rates(spec), calls, half, host))
    return counted, left_out


def compare(counted: list[Counted], engines: dict[str, Engine] = ENGINES) -> list[Comparison]:
    """Each counted row predicted with its engine's constants (``engines``: the shipped ones)."""
    out = []
    for c in counted:
        p = c.published
        out.append(
            Comparison(
                source=p.source["id"],
                url=p.source["url"],
                as_of=p.source.get("as_of"),
                engine=p.engine,
                kind=p.kind,
                what=p.describe(),
                gpu=c.rates.name,
                half=c.half,
                published=float(p.row["value"]),
                predicted=c.predict(engines[p.engine]),
                prompt_share=c.prompt_share(engines[p.engine]),
            )
        )
    return out


def median_abs_error(rows: list[Comparison]) -> float | None:
    return statistics.median(abs(r.error) for r in rows) if rows else None


def worst_error(rows: list[Comparison]) -> Comparison | None:
    return max(rows, key=lambda r: abs(r.error)) if rows else None


def fit_engine(name: str, counted: list[Counted]) -> Engine:
    """The engine's constants that give the lowest median absolute error on its calibration rows.

    First the decode rows with float weights set the per-kernel or per-step cost (an eager engine
    fits its launch cost, a served one its step cost, llama.cpp both) and the bandwidth fractions of
    matmuls and of attention; then the quantized decode rows set the fraction their fused kernels
    reach; then, for an engine with a matmul ceiling, the prompt (prefill) rows set it.
    """
    engine = ENGINES[name]
    calibration = [c for c in counted if c.published.engine == name and c.half == CALIBRATION]
    decode = [c for c in calibration if c.published.kind == "decode"]
    dense = [c for c in decode if c.published.weights in ("fp16", "bf16")]
    packed = [c for c in decode if c.published.weights not in ("fp16", "bf16")]
    prefill = [c for c in calibration if c.published.kind == "prefill"]
    if dense:
        if engine.launch_s > 0:
            launches = [x * 1e-6 for x in LAUNCH_US_GRID]
            steps = [x * 1e-3 for x in COARSE_STEP_MS_GRID] if engine.step_s > 0 else [0.0]
        else:
            launches, steps = [0.0], [x * 1e-3 for x in STEP_MS_GRID]
        shipped = engine
        # Attention's share is fitted only where some row reads a long cache; else it stays as set.
        reads_long_cache = any((c.published.input_tokens or 0) >= LONG_CACHE for c in dense)
        attentions = ATTENTION_GRID if reads_long_cache else (engine.attention_efficiency,)
        engine = min(
            (
                replace(engine, launch_s=launch, step_s=step, stream_efficiency=s, attention_efficiency=a)
                for launch in launches
                for step in steps
                for s in STREAM_GRID
                for a in attentions
            ),
            key=lambda candidate: (_median_error(dense, candidate), _distance(candidate, shipped)),
        )
    if packed:
        shipped = engine
        engine = min(
            (replace(engine, quantized_efficiency=q) for q in ATTENTION_GRID),
            key=lambda candidate: (_median_error(packed, candidate), _distance(candidate, shipped)),
        )
    if prefill and engine.matmul_ceiling_tflops is not None:
        shipped = engine
        engine = min(
            (replace(engine, matmul_ceiling_tflops=c) for c in CEILING_TFLOPS_GRID),
            key=lambda candidate: (_median_error(prefill, candidate), _distance(candidate, shipped)),
        )
    return engine


def _distance(candidate: Engine, shipped: Engine) -> float:
    """How far a candidate's constants are from the shipped ones, relatively: where the rows can't
    tell candidates apart (attention, on rows whose context is empty), the shipped value stays."""
    return sum(
        abs(getattr(candidate, f) - getattr(shipped, f)) / (abs(getattr(shipped, f)) or 1.0)
        for f in FITTED
        if getattr(shipped, f) is not None
    )


def fit_host(name: str, counted: list[Counted]) -> float | None:
    """The launch cost of host class ``name`` that gives the lowest median absolute error on the
    calibration rows run on it with float weights by an engine whose host launches its kernels;
    None where no such row exists (the class keeps its assumed figure)."""
    rows = [
        c
        for c in counted
        if c.host == name
        and c.half == CALIBRATION
        and c.published.kind == "decode"
        and ENGINES[c.published.engine].host_launched
        and c.published.weights in ("fp16", "bf16")
    ]
    if not rows:
        return None
    engine = ENGINES[rows[0].published.engine]
    return min(
        (x * 1e-6 for x in LAUNCH_US_GRID),
        key=lambda launch: _median_error(rows, engine, {name: launch}),
    )


def _median_error(rows: list[Counted], engine: Engine, hosts: dict[str, float] | None = None) -> float:
    return statistics.median(abs(c.predict(engine, hosts) / float(c.published.row["value"]) - 1) for c in rows)


def ratio_percentiles(rows: list[Comparison]) -> dict[str, float]:
    """Predicted / published: the median, p10 and p90."""
    ratios = sorted(r.predicted / r.published for r in rows)
    if len(ratios) == 1:
        return {"p10": ratios[0], "median": ratios[0], "p90": ratios[0]}
    deciles = statistics.quantiles(ratios, n=10, method="inclusive")
    return {"p10": deciles[0], "median": statistics.median(ratios), "p90": deciles[-1]}


def summaries(rows: list[Comparison]) -> list[dict[str, Any]]:
    """Per engine, kind and half, and again per class of GPU (``gpu_class`` "all" for every class):
    how many rows, the median and worst absolute error, and predicted / published at p10, median
    and p90. Decode rows whose prompt takes at least `LONG_PROMPT_SHARE` of the time are summarised
    again as "long prompt"."""
    groups: dict[tuple[str, str, str, str], list[Comparison]] = {}
    for r in rows:
        kinds = [r.kind]
        if r.prompt_share is not None and r.prompt_share >= LONG_PROMPT_SHARE:
            kinds.append("long prompt")
        for kind in kinds:
            for cls in ("all", r.gpu_class):
                groups.setdefault((r.engine, kind, r.half, cls), []).append(r)
    out = []
    for (engine, kind, half, cls), group in sorted(groups.items()):
        worst = worst_error(group)
        assert worst is not None
        target = None
        if half == HELD_OUT:
            target = TARGETS[kind] if cls == "all" else CLASS_TARGET
        out.append(
            {
                "engine": engine,
                "kind": kind,
                "half": half,
                "gpu_class": cls,
                "rows": len(group),
                "median_abs_error": median_abs_error(group),
                "worst_error": worst.error,
                "worst": worst.what,
                "ratio": ratio_percentiles(group),
                "target": target,
            }
        )
    return out
