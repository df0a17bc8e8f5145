"""Stand-ins for bitsandbytes' quantized linear layers, equal to them in memory, for fake-tensor traces.

bitsandbytes' kernels need CUDA, and its layers can't run on fake tensors. These modules hold
the same tensors bitsandbytes keeps on the GPU (the packed weight and its quantization
constants) and compute the way it does on many tokens at once: dequantize the weight for one
matmul and drop it again, saving nothing for the backward pass but the quantized weight
(bitsandbytes' ``MatMul4Bit`` dequantizes again there).

Storage, as bitsandbytes lays it out (``bitsandbytes.functional.quantize_4bit`` and
``Linear8bitLt``):

* NF4: two weights per byte, its 16-value fp32 code, and one absolute maximum per block of 64
  weights: an fp32 each, or with double quantization a uint8 each, plus one fp32 per 256 of
  those, a 256-entry fp32 code and an fp32 offset.
* int8 (LLM.int8): one byte per weight and one fp32 scale per output row. Its matmul runs in
  int8; the stand-in dequantizes instead, which needs a little more memory for one layer at a time.
* GPTQ and AWQ (AutoGPTQ's and AutoAWQ's packing, group size 128): the weights packed into int32
  (eight 4-bit or four 8-bit values each), one fp16 scale and one packed zero point per group of
  128 input weights and output, and for GPTQ an int32 group index per input column.

* FP8, MXFP4 and GGUF (:mod:`benchlib.predict.weight_formats`): the bytes their libraries keep;
  GGUF's are given to the stand-in per tensor (``nbytes``), as its types differ from tensor to tensor.

MoE experts (transformers 5's 3-D ``gate_up_proj`` / ``down_proj`` parameters, not linear layers)
are quantized in place by :func:`quantize_experts`: the parameters become packed buffers.

FP8, MXFP4 and GGUF kernels (transformers' triton FP8 block matmul, ``FP8Experts``, triton's
MXFP4 ``matmul_ogs``, llama.cpp's ``mul_mat`` / ``mul_mat_id``) read the packed weights without a
dense copy. Their stand-ins compute on dense stand-in weights that :func:`prepare_fused` creates
before a trace, outside it, so they hold no memory in it: only the packed buffers count.

`benchlib predict` counts the work of dequantizing: every dequantization a trace runs is reported
to the callbacks registered with :func:`observe_dequantize`, with the packed bytes it read.

Imported only by :mod:`benchlib.predict.llm_memory`, which imports torch anyway.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import torch
from torch import nn
from torch.utils.weak import WeakIdKeyDictionary

NF4_BLOCK = 64
DOUBLE_QUANT_BLOCK = 256
DOUBLE_QUANT_CODE = 256
NF4_CODE = 16
GROUP_SIZE = 128
# Bits per stored weight of the GPTQ/AWQ formats.
PACKED_BITS = {"gptq-int4": 4, "gptq-int8": 8, "awq-int4": 4}
# GGUF's bytes differ per tensor (its type mix): the stand-in is given them (``nbytes``).
PER_TENSOR = ("gguf",)
QUANTIZED = ("nf4", "int8", *PACKED_BITS, "fp8", "mxfp4", *PER_TENSOR)
_DEQUANTIZE_OBSERVERS: list[Callable[[int, int, int], None]] = []
# The storages of prepare_fused's dense stand-ins (by identity, as MemTracker keys storages).
_FREE_STORAGES: WeakIdKeyDictionary = WeakIdKeyDictionary()


def storage_bytes(out_features: int, in_features: int, weights: str, double_quant: bool = True) -> dict[str, int]:
    """The tensors (name: bytes) bitsandbytes keeps for one ``out_features`` x ``in_features`` weight
    (or GPTQ/AWQ, transformers' FP8 and MXFP4: :mod:`benchlib.predict.weight_formats`)."""
    from benchlib.predict.weight_formats import fp8_bytes, mxfp4_bytes

    n = out_features * in_features
    if weights == "fp8":
        return fp8_bytes(out_features, in_features)
    if weights == "mxfp4":
        return mxfp4_bytes(out_features, in_features)
    if weights in PACKED_BITS:
        groups = math.ceil(in_features / GROUP_SIZE)
        packed = {
            "qweight": math.ceil(n * PACKED_BITS[weights] / 8),
            "qzeros": math.ceil(groups * out_features * PACKED_BITS[weights] / 8),
            "scales": 2 * groups * out_features,
        }
        return packed | ({"g_idx": 4 * in_features} if weights.startswith("gptq") else {})
    if weights == "int8":
        return {"weight_int8": n, "row_scale": 4 * out_features}
    blocks = math.ceil(n / NF4_BLOCK)
    packed = {"packed": math.ceil(n / 2), "code": 4 * NF4_CODE}
    if not double_quant:
        return packed | {"absmax": 4 * blocks}
    return packed | {
        "absmax": blocks,
        "absmax2": 4 * math.ceil(blocks / DOUBLE_QUANT_BLOCK),
        "code2": 4 * DOUBLE_QUANT_CODE,
        "offset": 4,
    }


@contextmanager
def observe_dequantize(callback: Callable[[int, int, int], None]) -> Iterator[None]:
    """Call ``callback(out_features, in_features, packed_bytes)`` for every weight a trace dequantizes
    inside this block."""
    _DEQUANTIZE_OBSERVERS.append(callback)
    try:
        yield
    finally:
        _DEQUANTIZE_OBSERVERS.remove(callback)


def _report(out_features: int, in_features: int, packed: int) -> None:
    for callback in _DEQUANTIZE_OBSERVERS:
        callback(out_features, in_features, packed)


def _dequantized(like: torch.Tensor, shape: tuple[int, int], packed: int) -> torch.Tensor:
    _report(*shape, packed)
    return like.new_empty(shape)


class _DequantizeMatmul(torch.autograd.Function):
    """``x @ W.T`` where W is dequantized for the op and dropped after it, in both passes."""

    @staticmethod
    def forward(ctx: Any, x: torch.Tensor, out_features: int, packed: int, *storage: torch.Tensor) -> torch.Tensor:
        ctx.shape, ctx.packed = (out_features, x.shape[-1]), packed
        return x @ _dequantized(x, ctx.shape, packed).t()

    @staticmethod
    def backward(ctx: Any, grad: torch.Tensor) -> Any:
        rest = (None for _ in ctx.needs_input_grad[3:])
        return (grad @ _dequantized(grad, ctx.shape, ctx.packed), None, None, *rest)


def _fuse(module: nn.Module, name: str, shape: tuple[int, ...], dtype: torch.dtype) -> None:
    """Ask :func:`prepare_fused` for a dense ``shape`` stand-in weight at ``module.<name>``."""
    module.__dict__.setdefault("_fused", {})[name] = (shape, dtype)


def prepare_fused(model: nn.Module) -> None:
    """Create the dense stand-in weights the fused formats compute on (plain attributes, neither
    parameters nor buffers), under the trace's FakeTensorMode; :func:`holds_no_memory` tells the
    tracker to leave them, and their views, uncounted, so only the packed buffers are counted."""
    for module in model.modules():
        for name, (shape, dtype) in module.__dict__.get("_fused", {}).items():
            dense = torch.empty(shape, dtype=dtype)
            _FREE_STORAGES[dense.untyped_storage()] = True
            object.__setattr__(module, name, dense)


def holds_no_memory(t: torch.Tensor) -> bool:
    """Whether ``t`` is (a view of) a dense stand-in weight of :func:`prepare_fused`."""
    return t.untyped_storage() in _FREE_STORAGES


class QuantizedLinear(nn.Module):
    """A frozen linear layer stored as ``weights`` (one of ``QUANTIZED``), as its library stores it."""

    def __init__(
        self,
        linear: nn.Linear,
        weights: str,
        *,
        compute_dtype: torch.dtype,
        double_quant: bool = True,
        nbytes: dict[str, int] | None = None,
    ) -> None:
        """``nbytes``: the tensors (name: bytes) of a per-tensor format (``PER_TENSOR``); empty for
        an output layer tied to a quantized embedding, whose bytes that embedding holds."""
        super().__init__()
        if weights not in QUANTIZED:
            raise ValueError(f"unknown quantized storage {weights!r}; choose one of {', '.join(QUANTIZED)}")
        if (nbytes is None) != (weights not in PER_TENSOR):
            raise ValueError(f"{weights}: give nbytes exactly for the per-tensor formats {', '.join(PER_TENSOR)}")
        self.in_features, self.out_features, self.weights = linear.in_features, linear.out_features, weights
        self.compute_dtype = compute_dtype
        device = linear.weight.device
        if nbytes is None:
            nbytes = storage_bytes(self.out_features, self.in_features, weights, double_quant)
        self.packed_bytes = sum(nbytes.values())
        for name, size in nbytes.items():
            self.register_buffer(name, torch.empty(size, dtype=torch.uint8, device=device))
        # FP8's block matmul and llama.cpp's quantized matmuls read the packed weight; bitsandbytes
        # (and GPTQ/AWQ) at many tokens dequantize it first.
        self.fused = weights in ("fp8", "mxfp4", *PER_TENSOR)
        if self.fused:
            _fuse(self, "dense", (self.out_features, self.in_features), compute_dtype)
        bias = linear.bias
        self.bias = None if bias is None else nn.Parameter(bias.detach().to(compute_dtype), requires_grad=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        given = x.dtype
        if self.fused:
            _report(self.out_features, self.in_features, self.packed_bytes)
            out = x.to(self.compute_dtype) @ self.dense.t()
        else:
            if self.weights == "nf4":  # Linear4bit computes in its compute dtype and returns the input's
                x = x.to(self.compute_dtype)
            out = _DequantizeMatmul.apply(x, self.out_features, self.packed_bytes, *self.buffers())
        if self.bias is not None:
            out = out + self.bias.to(out.dtype)
        return out.to(given)


class QuantizedEmbedding(nn.Module):
    """A GGUF token embedding: ``nbytes`` of packed rows; a lookup dequantizes only the rows it reads."""

    def __init__(self, embedding: nn.Embedding, nbytes: int, *, compute_dtype: torch.dtype) -> None:
        super().__init__()
        self.num_embeddings, self.embedding_dim = embedding.num_embeddings, embedding.embedding_dim
        self.padding_idx = embedding.padding_idx
        self.register_buffer("packed", torch.empty(nbytes, dtype=torch.uint8, device=embedding.weight.device))
        _fuse(self, "dense", (self.num_embeddings, self.embedding_dim), compute_dtype)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        return nn.functional.embedding(ids, self.dense)


def expert_matrices(module: nn.Module) -> dict[str, tuple[int, int, int]]:
    """An experts module's 3-D weights: name -> (experts, out_features, in_features).

    transformers 5 stores them [experts, out, in], or [experts, in, out] where the module says
    ``is_transposed`` (gpt-oss's ``GptOssExperts``).
    """
    transposed = getattr(module, "is_transposed", type(module).__name__ == "GptOssExperts")
    out: dict[str, tuple[int, int, int]] = {}
    for name, param in module.named_parameters(recurse=False):
        if param.ndim == 3:
            experts, a, b = param.shape
            out[name] = (experts, b, a) if transposed else (experts, a, b)
    return out


def quantize_experts(module: nn.Module, nbytes: dict[str, dict[str, int]], *, compute_dtype: torch.dtype) -> None:
    """Store an experts module's 3-D weights as ``nbytes[name]`` (tensor: bytes), read in each
    forward through dense stand-ins that hold no memory (:func:`prepare_fused`); each forward
    reports the weights it reads to `observe_dequantize`'s callbacks."""
    sizes = expert_matrices(module)
    device = next(iter(module._parameters.values())).device
    for name, tensors in nbytes.items():
        shape = tuple(module._parameters.pop(name).shape)
        for part, size in tensors.items():
            module.register_buffer(f"{name}_{part}", torch.empty(size, dtype=torch.uint8, device=device))
        _fuse(module, name, shape, compute_dtype)

    def report(mod: nn.Module, args: Any) -> None:
        for name, tensors in nbytes.items():
            experts, out_features, in_features = sizes[name]
            _report(experts * out_features, in_features, sum(tensors.values()))

    module.register_forward_pre_hook(report)
