"""Predicted memory of language models: inference, full fine-tuning, LoRA and QLoRA, without a GPU.

The model is transformers' own class for the config (the one its ``architectures`` field
names), built under ``FakeTensorMode`` with no weights; LoRA adapters come from peft; 4-bit and
8-bit weights are stand-ins equal to bitsandbytes' in memory (:mod:`benchlib.predict.quantized`).
FP8, MXFP4 and GGUF weights, and an fp8 or q8_0 KV cache, are described in
:mod:`benchlib.predict.weight_formats`. One step (a prefill for inference, forward + backward +
optimizer update for training) runs
inside torch's ``MemTracker``, which keeps the peak of live tensors by kind.

Reduced depth: the memory live at any one point of a step is a sum over the decoder layers, so it
is affine in the number of layers of each kind, and a step's peak is the highest of those points.
A phase of the step (a prefill; a forward + backward pass; an optimizer update) keeps its peak at
the same point as layers are added, once there are a few of them. So each phase is traced on the
model's first ``BASE_LAYERS`` layers (more where a kind of layer first shows up later), and again
with one more layer of each kind (``layer_types``: sliding-window and full attention, say), and
extrapolated on its own per kind to the config's layers (`LanguageModel.trace_plan`); the higher
phase is the answer. ``tests/test_predict_llm_memory.py`` checks that against full-depth traces: exact for
models whose layers are alike; for models whose layers differ, what the layers hold is exact and
the peak within 1 % (the layer at which a peak falls can differ by one layer's passing buffers). Plain torch models from
``module:factory``, and MoE models with some dense layers, are traced at full depth.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import time
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from benchlib.catalog.language_models import EXPERT_FIELDS, LanguageModel, TracePlan
from benchlib.core.version import __version__
from benchlib.predict.memory import DeviceMemory, read_traces, solve_max_batch, write_traces
from benchlib.predict.weight_formats import GGUF_FORMATS, KV_CACHE_FORMATS, kv_bytes_per_value

MODES: tuple[str, ...] = ("inference", "train", "lora", "qlora")
# The float formats, then the quantized ones (`benchlib.predict.quantized.QUANTIZED`): bitsandbytes'
# LLM.int8 and NF4, GPTQ/AWQ checkpoints, transformers' fine-grained FP8, gpt-oss's MXFP4 experts and
# llama.cpp's GGUF files (`benchlib.predict.weight_formats`).
WEIGHTS: tuple[str, ...] = (
    "fp32",
    "fp16",
    "bf16",
    "int8",
    "nf4",
    "gptq-int4",
    "gptq-int8",
    "awq-int4",
    "fp8",
    "mxfp4",
    *GGUF_FORMATS,
)
QUANTIZED_WEIGHTS: tuple[str, ...] = WEIGHTS[3:]
COMPUTE_DTYPES: tuple[str, ...] = ("fp32", "fp16", "bf16")
LLM_OPTIMIZERS: tuple[str, ...] = ("adamw", "paged_adamw_8bit")
DEFAULT_WEIGHTS = {"inference": "bf16", "train": "fp32", "lora": "bf16", "qlora": "nf4"}
DEFAULT_SEQ_LEN = 2048
DEFAULT_LORA_RANK = 16
# QLoRA's paper and peft's "all-linear" adapt every linear layer of the decoder but the output.
DEFAULT_LORA_TARGETS = "all-linear"
# The decoder layers of the smallest model a reduced trace builds: enough for each phase's peak to
# settle at the same point as layers are added (see the module's docstring).
BASE_LAYERS = 3
# How --gpus N share the work: split the layers (device_map="auto"), or a whole copy on each (DDP).
PARALLEL = ("layers", "data")
# bitsandbytes' 8-bit optimizers keep each state in one byte per value with an fp32 maximum per
# block of 256 values (``bitsandbytes.optim`` block-wise quantization).
EIGHT_BIT_BLOCK = 256
# 2: the setup's KV-cache format, and FP8, MXFP4 and GGUF weights (MoE experts quantized too);
# 3: GGUF keeps native MXFP4 experts, and Q4_0 and MXFP4_MOE files.
CACHE_VERSION = 3


# The largest batch a search for the largest batch looks at.
LARGEST_BATCH = 1 << 16


@dataclass(frozen=True)
class Setup:
    """How the model runs: what `benchlib fit` is asked about, with every default filled in."""

    mode: str = "inference"
    weights: str = "bf16"
    dtype: str = "bf16"
    batch: int = 1
    seq_len: int = DEFAULT_SEQ_LEN
    lora_rank: int | None = None
    lora_targets: str = DEFAULT_LORA_TARGETS
    grad_checkpointing: bool = False
    optimizer: str = "adamw"
    double_quant: bool = True
    # How the KV cache stores a key or value: the compute dtype (transformers' DynamicCache), or
    # fp8 / llama.cpp's q8_0 (`benchlib.predict.weight_formats.KV_CACHE_FORMATS`).
    kv_cache: str = "bf16"

    @property
    def trains(self) -> bool:
        return self.mode != "inference"

    def describe(self) -> str:
        """One line a reader can check against their own setup."""
        parts = [self.mode, f"{self.weights} weights"]
        if self.dtype != self.weights:
            parts.append(f"{self.dtype} compute" + (" (autocast)" if self.trains else ""))
        if self.kv_cache != self.dtype and not self.trains:
            parts.append(f"{self.kv_cache} KV cache")
        if self.mode in ("lora", "qlora"):
            parts.append(f"rank {self.lora_rank} on {self.lora_targets}")
        if self.trains:
            parts.append(self.optimizer)
            if self.grad_checkpointing:
                parts.append("gradient checkpointing")
        return ", ".join(parts)


def make_setup(
    mode: str,
    *,
    weights: str | None = None,
    dtype: str | None = None,
    batch: int = 1,
    seq_len: int = DEFAULT_SEQ_LEN,
    lora_rank: int | None = None,
    lora_targets: str = DEFAULT_LORA_TARGETS,
    grad_checkpointing: bool = False,
    optimizer: str = "adamw",
    kv_cache: str | None = None,
) -> Setup:
    """A Setup with each mode's defaults; ValueError names the option that doesn't make sense."""
    for option, value, choices in (
        ("--mode", mode, MODES),
        ("--weights", weights, WEIGHTS),
        ("--dtype", dtype, COMPUTE_DTYPES),
        ("--optimizer", optimizer, LLM_OPTIMIZERS),
        ("--kv-cache", kv_cache, KV_CACHE_FORMATS),
    ):
        if value is not None and value not in choices:
            raise ValueError(f"{option} {value!r}: choose one of {', '.join(choices)}")
    if batch < 1 or seq_len < 1:
        raise ValueError(f"--batch and --seq-len must be at least 1, got {batch} and {seq_len}")
    if lora_rank is not None and mode not in ("lora", "qlora"):
        raise ValueError(f"--lora-rank applies to --mode lora or qlora, not {mode}")
    if lora_rank is not None and lora_rank < 1:
        raise ValueError(f"--lora-rank {lora_rank}: must be at least 1")
    if grad_checkpointing and mode == "inference":
        raise ValueError("--grad-checkpointing applies to training modes (train, lora, qlora), not inference")
    if optimizer != "adamw" and mode == "inference":
        raise ValueError("--optimizer applies to training modes (train, lora, qlora), not inference")
    if kv_cache is not None and mode != "inference":
        raise ValueError(f"--kv-cache applies to --mode inference (a training step keeps no KV cache), not {mode}")
    if weights is None:
        # Inference and a LoRA base store the weights in the compute dtype asked for.
        weights = dtype if dtype and mode in ("inference", "lora") else DEFAULT_WEIGHTS[mode]
    if mode == "train" and weights in QUANTIZED_WEIGHTS:
        raise ValueError(
            f"--mode train --weights {weights}: full fine-tuning updates every weight, and "
            "quantized weights can't be trained; use --mode qlora (or lora --weights int8)"
        )
    if mode == "lora" and (weights == "mxfp4" or weights in GGUF_FORMATS):
        raise ValueError(
            f"--mode lora --weights {weights}: transformers can't train on "
            + (
                "MXFP4 experts (it dequantizes them to train)"
                if weights == "mxfp4"
                else "GGUF weights (it dequantizes the file)"
            )
            + "; use --mode lora --weights bf16, or --mode qlora"
        )
    if mode == "qlora" and weights != "nf4":
        raise ValueError(f"--mode qlora stores the base in nf4, not {weights}; use --mode lora --weights {weights}")
    if dtype is None:
        dtype = weights if weights in COMPUTE_DTYPES else "bf16"
    if weights in ("fp16", "bf16") and dtype != weights:
        raise ValueError(f"--weights {weights} computes in {weights}; --dtype {dtype} would need {dtype} weights")
    return Setup(
        mode=mode,
        weights=weights,
        dtype=dtype,
        batch=batch,
        seq_len=seq_len,
        lora_rank=(lora_rank or DEFAULT_LORA_RANK) if mode in ("lora", "qlora") else None,
        lora_targets=lora_targets,
        grad_checkpointing=grad_checkpointing,
        optimizer=optimizer,
        kv_cache=kv_cache or dtype,
    )


# ----------------------------------------------------------------------------- one traced step


def torch_dtype(name: str) -> Any:
    import torch

    return {"fp32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16}[name]


def _eight_bit_adam() -> type:
    import torch

    class EightBitAdamStandIn(torch.optim.Optimizer):
        """bitsandbytes' (paged) 8-bit AdamW in memory: two uint8 states and a maximum per 256 values.

        The update itself doesn't change the peak (it works one parameter at a time), so the
        step only creates the state. A paged optimizer can move its state to the CPU under
        memory pressure; here it stays on the GPU, the cautious case.
        """

        def __init__(self, params: Any) -> None:
            super().__init__(params, {"lr": 1e-4})

        @torch.no_grad()
        def step(self, closure: Callable[[], Any] | None = None) -> None:
            for group in self.param_groups:
                for p in group["params"]:
                    if p.grad is None or self.state[p]:
                        continue
                    blocks = -(-p.numel() // EIGHT_BIT_BLOCK)
                    self.state[p] = {
                        "state1": torch.empty_like(p, dtype=torch.uint8),
                        "state2": torch.empty_like(p, dtype=torch.uint8),
                        "absmax1": p.new_empty(blocks, dtype=torch.float32),
                        "absmax2": p.new_empty(blocks, dtype=torch.float32),
                    }

    return EightBitAdamStandIn


_LAYER = re.compile(r"\.(?:layers|layer|h|blocks)\.(\d+)\.")


def _layer_of(name: str) -> int | None:
    match = _LAYER.search(f".{name}.")
    return int(match.group(1)) if match else None


def _quantize(model: Any, setup: Setup, language_model: LanguageModel) -> None:
    """Swap linear layers for quantized stand-ins: LoRA's base layers too, never the adapters; and,
    where the format quantizes them, MoE experts (:func:`benchlib.predict.quantized.quantize_experts`),
    the token embeddings and the output layer (GGUF).

    ``language_model``: what ``model`` was built from; its real depth is what llama.cpp's GGUF recipe reads.
    """
    from torch import nn

    from benchlib.predict import weight_formats as wf
    from benchlib.predict.quantized import (
        QuantizedEmbedding,
        QuantizedLinear,
        expert_matrices,
        quantize_experts,
        storage_bytes,
    )

    compute = torch_dtype(setup.dtype)
    gguf = setup.weights in GGUF_FORMATS
    depth = language_model.depth or 1
    expert_modules = [
        (name, module)
        for name, module in model.named_modules()
        if name.split(".")[-1] == "experts" and expert_matrices(module)
    ]
    n_experts = language_model.experts or 0
    if expert_modules and not n_experts and setup.weights in ("fp8", "mxfp4", *GGUF_FORMATS):
        raise ValueError(
            f"--weights {setup.weights}: the model has MoE experts but its config gives none of "
            f"{', '.join(EXPERT_FIELDS)}; add the number of experts to the config"
        )
    if setup.weights == "gguf-mxfp4" and not expert_modules:
        raise ValueError(
            "--weights gguf-mxfp4 is llama.cpp's MXFP4_MOE file, for mixtures of experts (gpt-oss), and this "
            "model has no experts; use --weights gguf-q4_k_m or gguf-q8_0"
        )
    if setup.weights == "mxfp4" and not expert_modules:
        raise ValueError(
            "--weights mxfp4 quantizes MoE experts only (as gpt-oss ships them), and this model has none; "
            "use --weights bf16, fp8 or a 4-bit format (nf4, gptq-int4, awq-int4, gguf-q4_k_m)"
        )
    get_out = getattr(model, "get_output_embeddings", None)
    get_in = getattr(model, "get_input_embeddings", None)
    output = get_out() if get_out else None
    embedding = get_in() if get_in else None
    tied = output is not None and embedding is not None and output.weight is getattr(embedding, "weight", None)

    native_mxfp4 = getattr(language_model.text_config, "model_type", None) in wf.NATIVE_MXFP4_MODEL_TYPES

    def gguf_nbytes(name: str, role: str, rows: int, cols: int, expert: bool = False) -> dict[str, int]:
        layer = _layer_of(name)
        return {
            "packed": wf.gguf_bytes(
                setup.weights,
                role,
                rows,
                cols,
                layer_of=layer,
                layers=depth,
                experts=n_experts,
                tied=tied,
                expert_tensor=expert,
                native_mxfp4=native_mxfp4,
            )
        }

    # transformers keeps the output layer unquantized (also when LoRA adapts it: lm_head.base_layer);
    # llama.cpp quantizes it, and MXFP4 quantizes the experts alone.
    targets = [
        (name, module)
        for name, module in model.named_modules()
        if isinstance(module, nn.Linear)
        and (gguf or ("lm_head" not in name.split(".") and module is not output))
        and not (gguf and wf.gguf_role(name.removesuffix(".base_layer")) == "ffn_gate_inp")
        and not any(part.startswith("lora_") for part in name.split("."))
        and setup.weights != "mxfp4"
    ]
    for name, module in targets:
        is_output = module is output or "lm_head" in name.split(".")
        nbytes = None
        if gguf:
            base = name.removesuffix(".base_layer")
            role = "output" if is_output else wf.gguf_role(base)
            nbytes = {} if is_output and tied else gguf_nbytes(base, role, module.out_features, module.in_features)
        stand_in = QuantizedLinear(
            module,
            "gguf" if gguf else setup.weights,
            compute_dtype=compute,
            double_quant=setup.double_quant,
            nbytes=nbytes,
        )
        if gguf and is_output and tied:
            # The tied output layer reads the embedding's bytes, which the embedding holds.
            stand_in.packed_bytes = sum(gguf_nbytes(name, "output", module.out_features, module.in_features).values())
        model.set_submodule(name, stand_in)
    if gguf and isinstance(embedding, nn.Embedding):
        name = next(n for n, m in model.named_modules() if m is embedding)
        size = gguf_nbytes(name, "token_embd", embedding.num_embeddings, embedding.embedding_dim)["packed"]
        model.set_submodule(name, QuantizedEmbedding(embedding, size, compute_dtype=compute))
    if setup.weights not in ("fp8", "mxfp4", *GGUF_FORMATS):
        return  # bitsandbytes, GPTQ and AWQ replace nn.Linear layers only: experts stay in the compute dtype
    for module_name, module in expert_modules:
        nbytes: dict[str, dict[str, int]] = {}
        for param, (experts, out_features, in_features) in expert_matrices(module).items():
            if gguf:
                role = wf.gguf_role(param)
                nbytes[param] = gguf_nbytes(
                    f"{module_name}.{param}", role, experts * out_features, in_features, expert=True
                )
            else:  # FP8Experts and MXFP4 quantize each expert's matrix on its own
                per_expert = storage_bytes(out_features, in_features, setup.weights)
                nbytes[param] = {k: experts * v for k, v in per_expert.items()}
        quantize_experts(module, nbytes, compute_dtype=compute)


@cache
def _experts_on_cpu_fall_back() -> None:
    """Send fp16 and fp32 MoE experts on the CPU (where traces run) to transformers' own grouped-matmul fallback.

    transformers picks ``torch.nn.functional.grouped_mm`` for a MoE layer's experts, but torch's
    grouped_mm takes bf16 only on the CPU (fp16 and fp32 are refused, in a fake trace too): fp16
    experts run inference on a T4, and fp32 ones train (full fine-tuning's fp32 weights, QLoRA's
    experts, which bitsandbytes leaves unquantized and peft casts to fp32). The fallback op computes
    the same tensors (transformers registers their shapes for fake tensors), as the GPU's kernel
    does; a real CPU run in these dtypes would fail the same way, so nothing that works changes.
    """
    try:
        from transformers.integrations import moe
    except ImportError:
        return
    can_use = getattr(moe, "_can_use_grouped_mm", None)
    if can_use is None:
        return

    def can_use_grouped_mm(input: Any, weight: Any, offs: Any) -> bool:
        import torch

        if weight.device.type == "cpu" and weight.dtype != torch.bfloat16:
            return False
        return can_use(input, weight, offs)

    moe._can_use_grouped_mm = can_use_grouped_mm


class StepTracer:
    """One model at one reduced depth in one setup; ``peak(size)`` traces a step and returns the peak by kind.

    ``size`` is the context length for inference and the batch for training.
    """

    def __init__(self, model: LanguageModel, setup: Setup, layers: tuple[str, ...] | None) -> None:
        """``layers``: the kinds of decoder layer to build (`LanguageModel.trace_plan`; None: the model's own)."""
        import torch
        from torch._subclasses.fake_tensor import FakeTensorMode

        self.setup, self.language_model = setup, model
        self.mode = FakeTensorMode(allow_non_fake_inputs=True)
        _experts_on_cpu_fall_back()
        float_weights = setup.weights if setup.weights in COMPUTE_DTYPES else setup.dtype
        # Built on the meta device, where peft and the stand-ins can move and cast tensors
        # freely; then given fake storage for the trace.
        # Upstream deprecation notices (peft calling transformers' old names) say nothing about memory.
        with torch.device("meta"), warnings.catch_warnings():
            warnings.simplefilter("ignore", FutureWarning)
            self.model = model.build(layers, torch_dtype(float_weights))
            if setup.mode in ("lora", "qlora"):
                self._add_adapters()
            if setup.weights in QUANTIZED_WEIGHTS:
                _quantize(self.model, setup, model)
            if setup.mode == "qlora":
                # peft's prepare_model_for_kbit_training, which QLoRA recipes call: every parameter
                # that is not quantized (embeddings, norms, the output layer) is cast to fp32.
                for p in self.model.parameters():
                    if p.dtype in (torch.float16, torch.bfloat16):
                        p.data = p.data.float()
        to_fake(self.model, self.mode)
        if setup.weights in QUANTIZED_WEIGHTS:
            from benchlib.predict.quantized import prepare_fused

            with self.mode:
                prepare_fused(self.model)
        self.vocab = model.vocab_size(self.model)
        self.optimizer = None
        if setup.trains:
            self.model.train()
            if setup.grad_checkpointing:
                no_reentrant = {"use_reentrant": False}
                if hasattr(self.model, "activation_checkpointing_enable"):  # transformers 5's name
                    self.model.activation_checkpointing_enable(activation_checkpointing_kwargs=no_reentrant)
                else:
                    self.model.gradient_checkpointing_enable(gradient_checkpointing_kwargs=no_reentrant)
                if getattr(self.model, "config", None) is not None:
                    self.model.config.use_cache = False  # as recipes set it: no KV cache while checkpointing
            with self.mode:
                self._prime_optimizer()
        else:
            self.model.eval()

    def _add_adapters(self) -> None:
        quiet_bitsandbytes()
        from peft import LoraConfig, get_peft_model

        s = self.setup
        targets = s.lora_targets if s.lora_targets == "all-linear" else s.lora_targets.split(",")
        config = LoraConfig(
            r=s.lora_rank,
            lora_alpha=2 * (s.lora_rank or 1),
            # peft's own default (0) on MoE models: "all-linear" adapts their experts' weights too,
            # and peft's wrapper for those refuses dropout; elsewhere the 0.05 recipes use.
            lora_dropout=0.0 if self.language_model.experts else 0.05,
            target_modules=targets,
            task_type=self.language_model.peft_task,
        )
        self.model = get_peft_model(self.model, config)

    def _prime_optimizer(self) -> None:
        """Create the optimizer's state, as it is in every step after the first, without moving a weight."""
        import torch

        trainable = [p for p in self.model.parameters() if p.requires_grad]
        if self.setup.optimizer == "paged_adamw_8bit":
            self.optimizer = _eight_bit_adam()(trainable)
        else:
            # foreach: the multi-tensor AdamW torch picks on CUDA, which copies as it updates.
            self.optimizer = torch.optim.AdamW(trainable, lr=1e-4, foreach=True)
        for p in trainable:
            p.grad = torch.zeros_like(p)
        self.optimizer.step()
        self.optimizer.zero_grad(set_to_none=True)

    def peak(self, size: int) -> dict[str, dict[str, int]]:
        """The peak of live tensors in each phase of one step at ``size``: weights, gradients, optimizer
        state, activations and KV cache, and the total.

        Training has two phases, forward + backward and the optimizer update, traced apart: each
        grows by its own amount per layer, and which one is higher can change with depth.
        """
        batch, seq_len = (self.setup.batch, size) if not self.setup.trains else (size, self.setup.seq_len)
        return {phase: moments[0] for phase, moments in self._phases(batch, seq_len, timeline=False).items()}

    def moments(self, batch: int, seq_len: int) -> dict[str, list[dict[str, int]]]:
        """Live tensors by kind after each operation of each phase, for ``batch`` sequences of
        ``seq_len`` tokens, in order (`peak` is the largest): the operations are the same at every
        size, so a moment can be followed from size to size."""
        return self._phases(batch, seq_len, timeline=True)

    def _phases(self, batch: int, seq_len: int, timeline: bool) -> dict[str, list[dict[str, int]]]:
        inputs = self.inputs(batch, seq_len)
        if not self.setup.trains:
            with self._tracking(inputs, timeline) as tracker:
                output = self.prefill(inputs)
            # The trace's cache holds the compute dtype; a cache stored as fp8 or q8_0 holds the
            # same values in fewer bytes. Swapping the difference out of the kv_cache kind and the
            # total is exact where the whole cache is live at the peak (the end of a prefill,
            # where logits are made, or its last layer's attention, short of that layer's new keys
            # and values). It leaves out what quantizing costs on the side: the compute-dtype keys
            # and values of the newest tokens, which a quantizing cache converts as it appends.
            traced, stored = _cache_bytes(output), _cache_bytes(output, self.setup.kv_cache)
            moments = [_by_kind(snapshot, traced) for snapshot in _snapshots(tracker, timeline)]
            for kinds in moments:
                kinds["total"] += stored - kinds["kv_cache"]
                kinds["kv_cache"] = stored
            return {"prefill": moments}
        with self._tracking(inputs, timeline) as forward_backward:
            self.forward_backward(inputs)
        with self._tracking(inputs, timeline) as update:
            self.optimizer_step()
        return {
            "forward_backward": [_by_kind(s) for s in _snapshots(forward_backward, timeline)],
            "optimizer_step": [_by_kind(s) for s in _snapshots(update, timeline)],
        }

    # The phases of a step, which `peak` traces and `benchlib.predict.llm_speed` counts.

    def inputs(self, batch: int, seq_len: int) -> dict[str, Any]:
        with self.mode:
            return self.language_model.inputs(self.model, batch, seq_len, self.vocab, self.setup.trains)

    def prefill(self, inputs: dict[str, Any]) -> Any:
        import torch

        with torch.no_grad():
            return self.language_model.prefill(self.model, inputs)

    def forward_backward(self, inputs: dict[str, Any]) -> None:
        import torch

        with torch.autocast("cpu", dtype=torch_dtype(self.setup.dtype), enabled=self._autocast):
            loss = self.language_model.loss(self.model, inputs)
        loss.backward()

    def optimizer_step(self) -> None:
        assert self.optimizer is not None
        self.optimizer.step()
        self.optimizer.zero_grad(set_to_none=True)

    @contextmanager
    def _tracking(self, inputs: dict[str, Any], timeline: bool = False) -> Iterator[Any]:
        tracker = _tracker_class()()
        tracker.timeline = [] if timeline else None
        with self.mode, warnings.catch_warnings():
            # ModTracker's note when a backward hook fires for a module it has already let go of.
            warnings.filterwarnings("ignore", message="Module is None", category=UserWarning)
            tracker.track_external(self.model, *([self.optimizer] if self.optimizer else []), *inputs.values())
            with tracker:
                yield tracker

    @property
    def _autocast(self) -> bool:
        # Mixed precision (fp32 weights) and adapters (Trainer's bf16=True/fp16=True) train under
        # autocast; pure fp16/bf16 full fine-tuning, like torchtune and litgpt's "bf16-true", doesn't.
        pure = self.setup.mode == "train" and self.setup.weights in ("fp16", "bf16")
        return self.setup.dtype != "fp32" and not pure


def _snapshots(tracker: Any, timeline: bool) -> list[dict[Any, int]]:
    """The tracker's live memory after each operation (``timeline``), else at its peak alone."""
    import torch

    if timeline:
        return tracker.timeline
    return [next(s for d, s in tracker.get_tracker_snapshot("peak").items() if isinstance(d, torch.device))]


def _by_kind(snapshot: dict[Any, int], kv_bytes: int = 0) -> dict[str, int]:
    kinds = {str(getattr(k, "value", k)): int(v) for k, v in snapshot.items()}
    return {
        "weights": kinds.get("Parameter", 0) + kinds.get("Buffer", 0),
        "gradients": kinds.get("Gradient", 0),
        "optimizer_state": kinds.get("Optstate", 0),
        "activations": kinds.get("Activation", 0) + kinds.get("Temp", 0) + kinds.get("Other", 0) - kv_bytes,
        "kv_cache": kv_bytes,
        "total": kinds.get("Total", 0),
    }


class _NoHook:
    def remove(self) -> None:
        pass


@cache
def _tracker_class() -> type:
    from benchlib.predict.memory import peak_only_tracker
    from benchlib.predict.quantized import holds_no_memory

    class FrozenAwareTracker(peak_only_tracker()):
        """The peak-only MemTracker, which can also trace frozen parameters (LoRA's base), and
        leaves the fused formats' dense stand-in weights uncounted.

        MemTracker hooks every parameter to see its gradient arrive, and torch refuses a hook
        on a tensor that needs no gradient; frozen ones get a no-op handle instead.
        """

        # Live memory after each operation, when a formula follows each moment across sizes.
        # Only operations that return tensors make a moment: the others (a device query, which a
        # model's first steps make more of) allocate nothing, and would put the moments of one
        # size out of step with another's.
        timeline: list[dict[Any, int]] | None = None
        _makes_tensors = True

        def __torch_dispatch__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
            self._makes_tensors = any("Tensor" in str(r.type) for r in func._schema.returns)
            return super().__torch_dispatch__(func, types, args, kwargs)

        def _update_peak_stats(self, peak_state: Any) -> None:
            import torch

            super()._update_peak_stats(peak_state)
            if self.timeline is not None and self._makes_tensors:
                self.timeline.append(
                    next(dict(s) for d, s in self._curr_mem_snap.items() if isinstance(d, torch.device))
                )

        def _track(self, reftype: Any, t: Any) -> None:
            # The dense weights FP8, MXFP4 and GGUF stand-ins compute on: their kernels read the
            # packed buffers, which are counted, and never hold a dense copy.
            if not holds_no_memory(t):
                super()._track(reftype, t)

        def _track_module_params_and_buffers(self, module: Any, install_grad_hooks: bool = True) -> tuple[int, int]:
            for param in module.parameters():
                if not param.requires_grad:
                    self._param_to_grad_hook_handles.setdefault(param, (_NoHook(), _NoHook()))
            return super()._track_module_params_and_buffers(module, install_grad_hooks)

    return FrozenAwareTracker


def to_fake(model: Any, mode: Any) -> None:
    """Give a meta-device model fake storage, keeping shared (tied) parameters shared."""
    owners: dict[int, list[tuple[Any, str]]] = {}
    for module in model.modules():
        for name, param in module._parameters.items():
            if param is not None:
                owners.setdefault(id(param), []).append((module, name))
    with mode:
        model.to_empty(device="cpu")
    for places in owners.values():
        first_module, first_name = places[0]
        for module, name in places[1:]:
            module._parameters[name] = first_module._parameters[first_name]


def _cache_bytes(output: Any, stored_as: str | None = None) -> int:
    """Bytes of the KV cache a prefill returns (transformers' Cache: one key and value per layer),
    as traced, or with each value stored as ``stored_as`` (a `KV_CACHE_FORMATS` name)."""
    cache = getattr(output, "past_key_values", None)
    if cache is None:
        return 0
    tensors = [t for layer in cache.layers for t in (layer.keys, layer.values) if t is not None]
    if stored_as is None:
        return sum(t.numel() * t.element_size() for t in tensors)
    per_value = kv_bytes_per_value(stored_as)
    return sum(math.ceil(t.numel() * per_value) for t in tensors)


# ----------------------------------------------------------------------------- prediction


@dataclass
class LLMPrediction:
    """What `benchlib fit` answers for a language model, with everything needed to judge it."""

    model: str
    setup: Setup
    device: DeviceMemory
    breakdown: dict[str, int]
    tensor_peak_bytes: int
    peak_bytes: int
    fits: bool
    searched: str
    largest: int
    limit: int
    method: str
    seconds: float
    versions: dict[str, str]
    traces: dict[int, int] = field(default_factory=dict)
    gpus: int = 1
    per_gpu: list[int] = field(default_factory=list)
    # How the GPUs share the work: "layers" (device_map="auto") or "data" (a copy on each, DDP).
    parallel: str = "layers"
    # What a reader should know about the format on this GPU (e.g. transformers dequantizes it), or None.
    note: str | None = None
    # `fit --sizes` (benchlib.predict.formula.other_sizes): batch -> longest context, or length ->
    # largest batch.
    other_sizes: dict[int, int] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["device"]["tensor_budget"] = self.device.tensor_budget
        # The whole model's memory by kind, on all its GPUs (data parallel: on each, as every GPU
        # holds the same); per_gpu has each GPU's peak.
        contexts = self.device.context_bytes * (self.gpus if self.parallel == "layers" else 1)
        if self.gpus > 1 and self.parallel == "layers":
            allocator = sum(self.per_gpu) - contexts - sum(self.breakdown.values())
        else:
            allocator = self.peak_bytes - self.tensor_peak_bytes - contexts
            if self.gpus == 1:
                out.pop("per_gpu")
        out["breakdown"] = {**self.breakdown, "cuda_context": contexts, "allocator": allocator}
        out[f"largest_{self.searched}"] = out.pop("largest")
        sizes = out.pop("other_sizes")
        if sizes:
            given, answer = ("batch", "largest_context") if self.searched == "context" else ("seq_len", "largest_batch")
            out["other_sizes"] = [{given: size, answer: largest} for size, largest in sizes.items()]
        return out


def quiet_bitsandbytes() -> None:
    """peft imports bitsandbytes where it is installed, and on a CPU without its optional kernel
    package bitsandbytes warns about speed; traces use no bitsandbytes kernel, so it doesn't matter."""
    import logging

    logging.getLogger("bitsandbytes.backends.cpu.ops").setLevel(logging.ERROR)


def versions() -> dict[str, str]:
    """The versions a prediction depends on; read from package metadata, as importing peft takes
    ten seconds that inference and full fine-tuning predictions don't need."""
    from importlib.metadata import version

    import torch

    return {
        "torch": str(torch.__version__),
        "transformers": version("transformers"),
        "peft": version("peft"),
        "benchlib": __version__,
    }


@cache
def code_digest() -> str:
    """A hash of the code that traces: a cached trace from other code is traced again."""
    from benchlib.catalog import language_models as llm_models
    from benchlib.predict import quantized, weight_formats

    digest = hashlib.sha256()
    for module in (__file__, llm_models.__file__, quantized.__file__, weight_formats.__file__):
        digest.update(Path(module).read_bytes())
    return digest.hexdigest()[:16]


class LLMPredictor:
    """Predictions for one model and setup over any device; traces shared and cached on disk.

    A trace is keyed by everything that changes it: the config, the setup (less the size being
    searched), the depth and the versions of torch, transformers, peft and benchlib.
    """

    def __init__(
        self, model: LanguageModel, setup: Setup, cache_dir: Path | None = None, gpus: int = 1, parallel: str = "layers"
    ) -> None:
        """``gpus``: GPUs the decoder layers are split over, as ``device_map="auto"`` does (``parallel``
        "layers"), or that each hold the whole model and their own batch (``parallel`` "data", DDP)."""
        if gpus < 1:
            raise ValueError(f"--gpus {gpus}: give 1 or more GPUs")
        if parallel not in PARALLEL:
            raise ValueError(f"--parallel {parallel!r}: choose {' or '.join(PARALLEL)}")
        self.model, self.setup, self.gpus, self.parallel = model, setup, gpus, parallel
        # Data parallel: each GPU runs the one-GPU step, so the traces are the one-GPU traces.
        split = gpus if parallel == "layers" else 1
        self.plan = model.trace_plan(BASE_LAYERS)
        if split > 1 and not self.plan.reduced:
            raise ValueError(
                f"--gpus {gpus}: splitting {model.title} needs what each layer adds, which its traces at full "
                f"depth don't give ({model.depth or 'unknown'} layers); predict it on one GPU"
            )
        self.versions = versions()
        searched = {"batch": setup.batch} if not setup.trains else {"seq_len": setup.seq_len}
        key_setup = {k: v for k, v in asdict(setup).items() if k not in ("batch", "seq_len")} | searched
        self.key = {
            "model": model.fingerprint(),
            "setup": key_setup,
            "plan": [list(layers) if layers else None for layers in self.plan.layers],
            "versions": self.versions,
            "code": code_digest(),
            "cache": CACHE_VERSION,
        } | ({"gpus": split} if split > 1 else {})
        digest = hashlib.sha256(json.dumps(self.key, sort_keys=True).encode()).hexdigest()[:16]
        self.cache = cache_dir / f"{model.name.replace('/', '_')}_{setup.mode}_{digest}.json" if cache_dir else None
        self.traces: dict[int, dict[str, int]] = read_traces(self.cache) if self.cache else {}
        self.cache_dir = cache_dir
        self._tracers: dict[tuple[str, ...] | None, StepTracer] = {}
        self._traced: dict[tuple[tuple[str, ...] | None, int], dict[str, dict[str, int]]] = {}

    def split(self, gpus: int, parallel: str = "layers") -> LLMPredictor:
        """This model and setup on ``gpus`` GPUs (``parallel`` as `__init__`), reusing the traces made so far."""
        other = LLMPredictor(self.model, self.setup, self.cache_dir, gpus, parallel)
        other._tracers, other._traced = self._tracers, self._traced
        return other

    @property
    def searched(self) -> str:
        return "batch" if self.setup.trains else "context"

    def limit(self) -> int:
        return self.model.max_positions() if not self.setup.trains else LARGEST_BATCH

    def _trace(self, layers: tuple[str, ...] | None, size: int) -> dict[str, dict[str, int]]:
        if (layers, size) not in self._traced:
            self._traced[layers, size] = self.tracer(layers).peak(size)
        return self._traced[layers, size]

    def breakdown(self, size: int) -> dict[str, int]:
        """Peak memory by kind at ``size`` (context or batch), extrapolated to the model's depth.

        Each phase of the step is extrapolated on its own; the peak is the higher phase.
        """
        if size not in self.traces:
            self.traces[size] = self.combined([self._trace(layers, size) for layers in self.plan.layers])
            if self.cache:
                write_traces(self.cache, self.key, self.traces)
        return self.traces[size]

    def tracer(self, layers: tuple[str, ...] | None) -> StepTracer:
        """The tracer of the model built with ``layers`` (one of `plan`'s), made once."""
        if layers not in self._tracers:
            self._tracers[layers] = StepTracer(self.model, self.setup, layers)
        return self._tracers[layers]

    def combined(self, traced: list[dict[str, dict[str, int]]]) -> dict[str, int]:
        """The whole model's peak by kind from the peaks of `plan`'s traced depths (their phases, as
        `StepTracer.peak` gives them): each phase extrapolated on its own, the higher one taken;
        with layers split over GPUs, each GPU's peak too."""
        phases = {
            phase: {kind: self.plan.combine([t[phase][kind] for t in traced]) for kind in traced[0][phase]}
            for phase in traced[0]
        }
        figures = dict(max(phases.values(), key=lambda kinds: kinds["total"]))
        if self.gpus > 1 and self.parallel == "layers":
            figures |= {f"gpu{i}": peak for i, peak in enumerate(self._per_gpu(traced))}
        return figures

    def _per_gpu(self, traced: list[dict[str, dict[str, int]]]) -> list[int]:
        tied = bool(getattr(self.model.text_config, "tie_word_embeddings", False))
        return per_gpu_peaks(traced, self.plan, self.gpus, self._embedding_bytes(), tied)

    def _embedding_bytes(self) -> int:
        """The input embeddings' stored bytes (a GGUF file's packed rows are a buffer), and in full
        fine-tuning their gradient and AdamW's two moments."""
        embedding = self._tracers[self.plan.layers[0]].model.get_input_embeddings()
        copies = 4 if self.setup.mode == "train" else 1
        trained = sum(p.numel() * p.element_size() for p in embedding.parameters() if p.requires_grad)
        stored = sum(t.numel() * t.element_size() for t in (*embedding.parameters(), *embedding.buffers()))
        return stored + (copies - 1) * trained

    def peak(self, size: int) -> int:
        """The tensor peak at ``size``: of the whole model on one GPU, of the fullest GPU when split."""
        return self.fullest(self.breakdown(size))

    def fullest(self, traced: dict[str, int]) -> int:
        """The fullest GPU's tensor peak, of a `breakdown` (or `combined`) of the model."""
        if self.parallel == "data":
            return traced["total"] + self._gradient_buckets(traced)
        if self.gpus == 1:
            return traced["total"]
        return max(traced[f"gpu{i}"] for i in range(self.gpus))

    def _gradient_buckets(self, traced: dict[str, int]) -> int:
        """Data parallel, training: DDP's reducer keeps its own flat copy of every gradient in its
        all-reduce buckets; ``gradient_as_bucket_view=False`` is torch's default and accelerate's
        (https://docs.pytorch.org/docs/stable/generated/torch.nn.parallel.DistributedDataParallel.html:
        setting it True saves "the total gradients size")."""
        return traced["gradients"] if self.gpus > 1 and self.setup.trains else 0

    def method(self) -> str:
        return f"one step traced with FakeTensorMode + MemTracker {self.plan.describe(self.model.depth)}"

    def predict(self, device: DeviceMemory, *, verify: bool = True) -> LLMPrediction:
        started = time.perf_counter()
        size = self.setup.seq_len if not self.setup.trains else self.setup.batch
        if self.setup.seq_len > self.model.max_positions():
            raise ValueError(
                f"--seq-len {self.setup.seq_len}: {self.model.title} reads at most {self.model.max_positions()} tokens"
            )
        at = dict(self.breakdown(size))
        largest = solve_max_batch(
            self.peak,
            device.tensor_budget,
            {s: self.peak(s) for s in self.traces},
            limit=self.limit(),
            verify=verify,
        )
        tensor_peak = self.peak(size)
        if self.parallel == "data":
            at["gradient_buckets"] = self._gradient_buckets(at)
            per_gpu = [tensor_peak] * self.gpus if self.gpus > 1 else []
        else:
            per_gpu = [at.pop(f"gpu{i}") for i in range(self.gpus)] if self.gpus > 1 else []
        at.pop("total")
        return LLMPrediction(
            model=self.model.name,
            setup=self.setup,
            device=device,
            breakdown=at,
            tensor_peak_bytes=tensor_peak,
            peak_bytes=device.on_device(tensor_peak),
            fits=tensor_peak <= device.tensor_budget,
            searched=self.searched,
            largest=largest,
            limit=self.limit(),
            method=self.method() + self._parallel_text(),
            seconds=time.perf_counter() - started,
            versions=self.versions,
            traces={s: self.peak(s) for s in sorted(self.traces)},
            gpus=self.gpus,
            per_gpu=[device.on_device(p) for p in per_gpu],
            parallel=self.parallel,
        )

    def _parallel_text(self) -> str:
        if self.gpus == 1:
            return ""
        if self.parallel == "layers":
            return f"; layers split over {self.gpus} GPUs in order"
        return f"; data parallel: each of {self.gpus} GPUs holds the whole model and runs its own batch"


def predict_llm(
    model: LanguageModel,
    setup: Setup,
    device: DeviceMemory,
    *,
    cache_dir: Path | None = None,
    verify: bool = True,
    gpus: int = 1,
    parallel: str = "layers",
) -> LLMPrediction:
    """Predict the peak memory of ``model`` run as ``setup`` on ``device`` (``gpus`` of them, sharing
    the work as ``parallel`` says), and the largest batch or context (data parallel: per GPU)."""
    return LLMPredictor(model, setup, cache_dir, gpus, parallel).predict(device, verify=verify)


def per_gpu_peaks(
    traced: list[dict[str, dict[str, int]]], plan: TracePlan, gpus: int, embedding: int, tied: bool
) -> list[int]:
    """Each GPU's tensor peak with the decoder layers split over ``gpus`` in order, as evenly as
    they go (accelerate's balanced ``device_map="auto"``), from the peaks of ``plan``'s traced
    depths by phase.

    What a layer of each kind adds comes from the traces; the rest (embeddings, final norm,
    output layer, logits and loss) goes to the first GPU if the output layer shares the
    embeddings' weights (``tied``), else the embeddings (``embedding`` bytes) go to the first GPU
    and the rest to the last. Each GPU's peak is taken as if all came at once, the cautious case.
    """
    kinds = list(dict.fromkeys(plan.full))
    base = plan.layers[0]
    assert base is not None
    depth = len(plan.full)
    sizes = [depth // gpus + (1 if i < depth % gpus else 0) for i in range(gpus)]
    starts = [sum(sizes[:i]) for i in range(gpus)]
    peaks = [0] * gpus
    for phase in traced[0]:
        first = traced[0][phase]["total"]
        per_layer = {k: traced[1 + i][phase]["total"] - first for i, k in enumerate(kinds)}
        rest = first - sum(per_layer[k] for k in base)
        front = rest if tied else min(embedding, rest)
        for i in range(gpus):
            own = sum(per_layer[k] for k in plan.full[starts[i] : starts[i] + sizes[i]])
            own += front if i == 0 else 0
            own += rest - front if i == gpus - 1 else 0
            peaks[i] = max(peaks[i], own)
    return peaks
