"""Predicted against published language-model speeds: decode per engine, and fine-tuning tokens/s.

The published figures are reported data (`benchlib.catalog.published_llm_speeds`: Qwen's speed
benchmarks, transformers and vLLM, batch 1, 2,048 generated tokens after prompts of several
lengths, BF16, GPTQ and AWQ weights, on an A100 80GB; and fine-tuning tokens/s with stated
setups). Each source states its setup; every row is predicted in that setup with
`benchlib.predict.llm_speed` and compared.

A Qwen row's speed is the generated tokens over the time of the whole ``generate()`` call, which
includes the prefill: predicted as the prefill of the prompt plus each decode step, whose cache
grows by a token a step, taken at its middle length.

Halves: the model sizes, smallest first, alternate between ``calibration`` and ``held out``
(Qwen2 and Qwen2.5 models of one size share a half). The engines' constants are fitted on the
calibration half only (`fit_engine`); both halves are reported. No constant is fitted on a
training row, so every training row is held out.
"""

from __future__ import annotations

import re
import statistics
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from typing import Any

from benchlib.catalog.gpus import AcceleratorSpec, find_gpu
from benchlib.catalog.language_models import LanguageModel, ModelNotFound, resolve_model
from benchlib.catalog.published_llm_speeds import PublishedSpeed, published_rows
from benchlib.derive.compared import CALIBRATION, HELD_OUT
from benchlib.predict.engines import ENGINES, Engine, EngineMismatch, EngineTime, OpTimes
from benchlib.predict.llm_memory import make_setup
from benchlib.predict.llm_speed import CountedCall, count_inference, count_training
from benchlib.predict.roofline import GpuRates, gpu_rates

# Targets on the held-out half: median absolute error.
TARGETS = {"decode": 0.25, "prefill": 0.25, "long prompt": 0.25, "training": 0.30}
# No published batch-1 prefill figure has a setup benchlib can predict (a GPU in the specs, an engine
# it models), so the prefill is checked where it weighs: requests whose prompt takes at least this
# share of the predicted time are summarised apart, as "long prompt", against the prefill target.
LONG_PROMPT_SHARE = 1 / 3
# The grids `fit_engine` searches: launch cost (µs) or step cost (ms), and bandwidth fraction.
LAUNCH_US_GRID = tuple(float(x) for x in range(4, 41))
STEP_MS_GRID = tuple(round(0.25 * x, 2) for x in range(0, 25))
STREAM_GRID = tuple(round(0.40 + 0.05 * x, 2) for x in range(12))  # 0.40 ... 0.95
ATTENTION_GRID = tuple(round(0.10 + 0.05 * x, 2) for x in range(18))  # 0.10 ... 0.95
_SIZE = re.compile(r"(\d+(?:\.\d+)?)\s*B\b", re.IGNORECASE)


@dataclass(frozen=True)
class Counted:
    """A published row with the calls its prediction times, counted once."""

    published: PublishedSpeed
    model: LanguageModel
    rates: GpuRates
    calls: tuple[CountedCall, ...]  # (prefill, decode) for inference; (step,) for training
    half: str
    _prepared: dict[str, tuple[tuple[OpTimes, ...], ...]] = field(default_factory=dict, compare=False, repr=False)

    def _times(self, engine: Engine) -> list[EngineTime]:
        # Fitting times each row hundreds of times: the arrays depend on the engine's kind, not its constants.
        if engine.name not in self._prepared:
            self._prepared[engine.name] = tuple(call.prepare(self.rates, engine) for call in self.calls)
        return [call.time_prepared(prepared, engine) for call, prepared in zip(self.calls, self._prepared[engine.name])]

    def predict(self, engine: Engine) -> float:
        r = self.published.row
        if self.published.kind == "training":
            step = self._times(engine)[0]
            return r["batch"] * (self.published.seq_len or 0) / step.seconds
        prefill, decode = self._times(engine)
        if self.published.kind == "prefill":
            return r["batch"] * r["input_tokens"] / prefill.seconds
        generated = r["output_tokens"]
        return r["batch"] * generated / (prefill.seconds + generated * decode.seconds)

    def prompt_share(self, engine: Engine) -> float | None:
        """The share of a whole request's predicted time that reads the prompt; None for training."""
        if self.published.kind != "decode":
            return None
        prefill, decode = self._times(engine)
        return prefill.seconds / (prefill.seconds + self.published.row["output_tokens"] * decode.seconds)


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
    def error(self) -> float:
        """Predicted / published - 1: +10 % predicts 10 % too fast."""
        return self.predicted / self.published - 1


@dataclass(frozen=True)
class LeftOut:
    source: str
    what: str
    reason: str


def size_of(model: LanguageModel) -> float:
    """The parameter count in billions the model's title states (Qwen2.5 14B: 14.0)."""
    match = _SIZE.search(model.title) or _SIZE.search(model.name)
    if match is None:
        raise ValueError(f"{model.name}: its title states no size, which the halves are split by")
    return float(match.group(1))


def halves(sizes: Iterable[float]) -> dict[float, str]:
    """Each size's half: alternate sizes, smallest first, are calibration, the rest held out."""
    return {size: (CALIBRATION if i % 2 == 0 else HELD_OUT) for i, size in enumerate(sorted(set(sizes)))}


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
    dtype = "bf16" if "bf16" in gpu_rates(spec).peaks_tflops else "fp16"
    return make_setup(
        "inference", weights=r["weights"], dtype=dtype, batch=int(r["batch"]), seq_len=max(1, int(r["input_tokens"]))
    )


def _targets(targets: Any) -> str:
    if targets is None or targets == "all-linear":
        return "all-linear"
    return ",".join(targets) if isinstance(targets, list) else str(targets)


def _why_left_out(published: PublishedSpeed, model: LanguageModel) -> str | None:
    r = published.row
    if published.gpu is None:
        return "the source doesn't say which GPU"
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
    needed = int(r["input_tokens"]) + int(r.get("output_tokens") or 0)
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
    half_of = halves(size_of(m) for p, m in resolved if p.kind != "training")
    for published, model in resolved:
        reason = _why_left_out(published, model)
        if reason is None:
            spec = find_gpu(str(published.gpu))
            try:
                setup = _setup(published, spec)
                ENGINES[published.engine].check(setup.mode, setup.weights)
            except (EngineMismatch, ValueError) as exc:
                reason = str(exc)
        if reason is not None:
            left_out.append(LeftOut(published.source["id"], published.describe(), reason))
            continue
        on_row(published.describe())
        r = published.row
        if published.kind == "training":
            calls: tuple[CountedCall, ...] = (count_training(model, setup),)
            half = HELD_OUT
        else:
            middle = int(r["input_tokens"]) + int(r["output_tokens"]) // 2
            inference = count_inference(model, setup, decode_context=middle)
            assert inference.decode is not None
            calls = (inference.prefill, inference.decode)
            half = half_of[size_of(model)]
        counted.append(Counted(published, model, gpu_rates(spec), calls, half))
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

    First the rows with float weights set the per-kernel or per-step cost (an eager engine fits
    its launch cost, a served one its step cost) and the bandwidth fractions of matmuls and of
    attention; then the quantized rows set the fraction their fused kernels reach.
    """
    engine = ENGINES[name]
    calibration = [
        c for c in counted if c.published.engine == name and c.half == CALIBRATION and c.published.kind == "decode"
    ]
    dense = [c for c in calibration if c.published.row["weights"] in ("fp16", "bf16")]
    packed = [c for c in calibration if c.published.row["weights"] not in ("fp16", "bf16")]
    if dense:
        eager = engine.launch_s > 0
        overheads = [x * 1e-6 for x in LAUNCH_US_GRID] if eager else [x * 1e-3 for x in STEP_MS_GRID]
        engine = min(
            (
                replace(engine, **{"launch_s" if eager else "step_s": o}, stream_efficiency=s, attention_efficiency=a)
                for o in overheads
                for s in STREAM_GRID
                for a in ATTENTION_GRID
            ),
            key=lambda candidate: _median_error(dense, candidate),
        )
    if packed:
        engine = min(
            (replace(engine, quantized_efficiency=q) for q in ATTENTION_GRID),
            key=lambda candidate: _median_error(packed, candidate),
        )
    return engine


def _median_error(rows: list[Counted], engine: Engine) -> float:
    return statistics.median(abs(c.predict(engine) / float(c.published.row["value"]) - 1) for c in rows)


def summaries(rows: list[Comparison]) -> list[dict[str, Any]]:
    """Per engine, kind and half: how many rows, the median and the worst absolute error. Decode rows
    whose prompt takes at least `LONG_PROMPT_SHARE` of the time are summarised again as "long prompt"."""
    groups: dict[tuple[str, str, str], list[Comparison]] = {}
    for r in rows:
        groups.setdefault((r.engine, r.kind, r.half), []).append(r)
        if r.prompt_share is not None and r.prompt_share >= LONG_PROMPT_SHARE:
            groups.setdefault((r.engine, "long prompt", r.half), []).append(r)
    out = []
    for (engine, kind, half), group in sorted(groups.items()):
        worst = worst_error(group)
        assert worst is not None
        out.append(
            {
                "engine": engine,
                "kind": kind,
                "half": half,
                "rows": len(group),
                "median_abs_error": median_abs_error(group),
                "worst_error": worst.error,
                "worst": worst.what,
                "target": TARGETS[kind] if half == HELD_OUT else None,
            }
        )
    return out
