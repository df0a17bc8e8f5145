"""How fast one model runs on one GPU: one step traced on fake tensors, counted, then timed.

The models are `benchlib fit`'s: its built-in networks (``resnet50`` ...) and language models
(a shipped name, a Hugging Face id or a ``config.json``), with the same ``--batch``, ``--seq-len``
and ``--dtype`` meanings, so a page can show memory and speed side by side. Training is one full
step (forward, backward, AdamW or Adam update) under autocast with fp32 weights; inference is a
forward pass in the dtype. For a causal language model, inference is a prefill of ``seq_len``
tokens and one decode step that reads a KV cache of ``seq_len`` tokens; its throughput is the
decode rate, which is what "tokens per second" means to a reader.
"""

from __future__ import annotations

import contextlib
import warnings
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

from benchlib.predict.count import OpCost, op_counter
from benchlib.predict.roofline import GpuRates, StepTime, UnknownSpeedGPU, gpu_rates, step_time

if TYPE_CHECKING:
    from benchlib.catalog.gpus import AcceleratorSpec
    from benchlib.catalog.language_models import LanguageModel
    from benchlib.models.trainable import ModelSpec

MODES = ("train", "inference")
DTYPES = ("fp32", "fp16", "bf16")
DEFAULT_IMAGE_BATCH = 64
METHOD = (
    "roofline per op: FLOPs and bytes of one step counted with torch.utils.flop_counter on fake tensors; "
    "compute at the specs' peak x the MAMF fraction for the generation, memory at the peak bandwidth x a "
    "fitted fraction"
)


@dataclass(frozen=True)
class SpeedPrediction:
    """A predicted throughput with everything it was predicted from."""

    model: str
    gpu: str
    mode: str
    dtype: str
    batch: int
    seq_len: int | None
    throughput: float
    unit: str
    step: StepTime
    rates: GpuRates
    prefill: StepTime | None = None

    @property
    def prefill_tokens_per_s(self) -> float | None:
        return self.batch * self.seq_len / self.prefill.seconds if self.prefill and self.seq_len else None

    @property
    def decode_tokens_per_s(self) -> float | None:
        return self.throughput if self.prefill else None

    def as_dict(self) -> dict[str, Any]:
        step = self.step
        return {
            "model": self.model,
            "gpu": self.gpu,
            "mode": self.mode,
            "dtype": self.dtype,
            "batch": self.batch,
            "seq_len": self.seq_len,
            "throughput": self.throughput,
            "unit": self.unit,
            "step_s": step.seconds,
            "compute_bound_s": step.compute_bound_s,
            "memory_bound_s": step.memory_bound_s,
            "compute_bound_share": step.compute_bound_s / step.seconds if step.seconds else 0.0,
            "flops": step.flops,
            "bytes_moved": step.bytes,
            "prefill_tokens_per_s": self.prefill_tokens_per_s,
            "decode_tokens_per_s": self.decode_tokens_per_s,
            "prefill_s": self.prefill.seconds if self.prefill else None,
            "rates": asdict(self.rates),
            "method": METHOD,
            "kind": "predicted",
        }


def _count(run: Any, mode: Any) -> list[OpCost]:
    counter = op_counter()
    with mode, counter:
        run()
    return counter.ops


def builtin_ops(spec: ModelSpec, mode: str, dtype: str, batch: int) -> tuple[list[OpCost], str]:
    """The ops of one step of a built-in network, and its throughput unit."""
    import torch

    from benchlib.predict.memory import PeakTracer

    tracer = PeakTracer(spec.name, dtype=dtype)
    step = tracer.step
    step.set_batch(batch)
    unit = "tokens/s" if spec.kind == "tokens" else "images/s"
    if mode == "train":
        return _count(step.run, tracer.mode), unit

    def forward() -> None:
        step.model.eval()
        with torch.no_grad(), torch.autocast("cpu", dtype=step.amp or torch.float32, enabled=step.amp is not None):
            step.model(step.inputs)

    return _count(forward, tracer.mode), unit


def _language_model_ops(
    language_model: LanguageModel, mode: str, dtype: str, batch: int, seq_len: int
) -> tuple[list[OpCost], list[OpCost] | None, str]:
    """(ops of the step that sets the throughput, ops of the prefill or None, display name)."""
    import torch
    from torch._subclasses.fake_tensor import FakeTensorMode

    from benchlib.predict.llm_memory import to_fake, torch_dtype

    fake = FakeTensorMode(allow_non_fake_inputs=True)
    weights = "fp32" if mode == "train" else dtype
    with torch.device("meta"), warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        model = language_model.build(None, torch_dtype(weights))
    to_fake(model, fake)
    vocab = language_model.vocab_size(model)
    with fake:
        inputs = language_model.inputs(model, batch, seq_len, vocab, mode == "train")
    if mode == "train":
        model.train()
        with fake:
            optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4, foreach=True)
            for p in model.parameters():
                p.grad = torch.zeros_like(p)
            optimizer.step()  # the moments exist in every step after the first

        def train_step() -> None:
            with torch.autocast("cpu", dtype=torch_dtype(dtype), enabled=dtype != "fp32"):
                loss = language_model.loss(model, inputs)
            loss.backward()
            optimizer.step()
            optimizer.zero_grad(set_to_none=True)

        return _count(train_step, fake), None, language_model.title
    model.eval()
    outputs: dict[str, Any] = {}

    def prefill() -> None:
        with torch.no_grad():
            outputs["prefill"] = language_model.prefill(model, inputs)

    prefill_ops = _count(prefill, fake)
    cache = getattr(outputs["prefill"], "past_key_values", None)
    if language_model.kind != "causal" or cache is None:
        return prefill_ops, None, language_model.title
    with fake:
        next_ids = torch.randint(0, vocab, (batch, 1))

    def decode() -> None:
        with torch.no_grad():
            model(input_ids=next_ids, past_key_values=cache, use_cache=True)

    return _count(decode, fake), prefill_ops, language_model.title


def predict_speed(
    model: ModelSpec | LanguageModel,
    gpu: AcceleratorSpec,
    *,
    mode: str = "train",
    dtype: str | None = None,
    batch: int | None = None,
    seq_len: int | None = None,
) -> SpeedPrediction:
    """Predict the throughput of ``model`` (a built-in network or a language model, resolved by the caller)
    on ``gpu``; ValueError or UnknownSpeedGPU say what to change.

    ``dtype`` defaults to fp32 for the built-in networks and to bf16 for language models (fp16 on
    GPUs without bf16); ``batch`` to 64 images or 1 sequence; ``seq_len`` to `benchlib fit`'s
    default, capped at the model's context.
    """
    from benchlib.models.trainable import ModelSpec
    from benchlib.predict.llm_memory import DEFAULT_SEQ_LEN

    if mode not in MODES:
        raise ValueError(f"--mode {mode!r}: choose one of {', '.join(MODES)}")
    if dtype is not None and dtype not in DTYPES:
        raise ValueError(f"--dtype {dtype!r}: choose one of {', '.join(DTYPES)}")
    if (batch is not None and batch < 1) or (seq_len is not None and seq_len < 1):
        raise ValueError("--batch and --seq-len must be at least 1")
    rates = gpu_rates(gpu)
    builtin = isinstance(model, ModelSpec)
    if dtype is None:
        dtype = "fp32" if builtin else language_model_dtype(rates)
    if dtype != "fp32" and dtype not in rates.peaks_tflops:
        raise UnknownSpeedGPU(
            f"{rates.name}: the specs give no {dtype} peak (it may not support {dtype}); try --dtype fp16 or fp32"
        )
    prefill = None
    if builtin:
        if seq_len is not None:
            raise ValueError(f"--seq-len applies to language models; {model.name} has a fixed input")
        batch = batch or DEFAULT_IMAGE_BATCH
        ops, unit = builtin_ops(model, mode, dtype, batch)
        title = model.title
        step = step_time(ops, rates)
        per_step = batch * (model.input_shape()[0] if unit == "tokens/s" else 1)
    else:
        batch = batch or 1
        seq_len = seq_len or min(DEFAULT_SEQ_LEN, model.max_positions())
        with _quiet():
            ops, prefill_ops, title = _language_model_ops(model, mode, dtype, batch, seq_len)
        unit = "tokens/s"
        step = step_time(ops, rates)
        if prefill_ops is not None:
            prefill = step_time(prefill_ops, rates)
            per_step = batch
        else:
            per_step = batch * seq_len
    return SpeedPrediction(
        model=title,
        gpu=rates.name,
        mode=mode,
        dtype=dtype,
        batch=batch,
        seq_len=seq_len,
        throughput=per_step / step.seconds,
        unit=unit,
        step=step,
        rates=rates,
        prefill=prefill,
    )


def language_model_dtype(rates: GpuRates) -> str:
    """A language model's default dtype on a GPU: bf16, or fp16 where the specs give no bf16 peak (T4, P100)."""
    return "bf16" if "bf16" in rates.peaks_tflops else "fp16"


def language_model_ops(
    model: LanguageModel, mode: str, dtype: str, batch: int, seq_len: int
) -> tuple[list[OpCost], list[OpCost] | None]:
    """The ops `predict_speed` times for a language model, decode and prefill for a causal one in
    inference, counted once so a caller can time them on many GPUs with `step_time`."""
    with _quiet():
        ops, prefill_ops, _ = _language_model_ops(model, mode, dtype, batch, seq_len)
    return ops, prefill_ops


@contextlib.contextmanager
def _quiet() -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield
