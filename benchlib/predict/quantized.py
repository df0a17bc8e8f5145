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

`benchlib predict` counts the work of dequantizing: every dequantization a trace runs is reported
to the callbacks registered with :func:`observe_dequantize`.

Imported only by :mod:`benchlib.predict.llm_memory`, which imports torch anyway.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import torch
from torch import nn

NF4_BLOCK = 64
DOUBLE_QUANT_BLOCK = 256
DOUBLE_QUANT_CODE = 256
NF4_CODE = 16
GROUP_SIZE = 128
# Bits per stored weight of the GPTQ/AWQ formats.
PACKED_BITS = {"gptq-int4": 4, "gptq-int8": 8, "awq-int4": 4}
QUANTIZED = ("nf4", "int8", *PACKED_BITS)
_DEQUANTIZE_OBSERVERS: list[Callable[[int, int], None]] = []


def storage_bytes(out_features: int, in_features: int, weights: str, double_quant: bool = True) -> dict[str, int]:
    """The tensors (name: bytes) bitsandbytes keeps for one ``out_features`` x ``in_features`` weight."""
    n = out_features * in_features
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
def observe_dequantize(callback: Callable[[int, int], None]) -> Iterator[None]:
    """Call ``callback(out_features, in_features)`` for every weight a trace dequantizes inside this block."""
    _DEQUANTIZE_OBSERVERS.append(callback)
    try:
        yield
    finally:
        _DEQUANTIZE_OBSERVERS.remove(callback)


def _dequantized(like: torch.Tensor, shape: tuple[int, int]) -> torch.Tensor:
    for callback in _DEQUANTIZE_OBSERVERS:
        callback(*shape)
    return like.new_empty(shape)


class _DequantizeMatmul(torch.autograd.Function):
    """``x @ W.T`` where W is dequantized for the op and dropped after it, in both passes."""

    @staticmethod
    def forward(ctx: Any, x: torch.Tensor, out_features: int, *storage: torch.Tensor) -> torch.Tensor:
        ctx.shape = (out_features, x.shape[-1])
        return x @ _dequantized(x, ctx.shape).t()

    @staticmethod
    def backward(ctx: Any, grad: torch.Tensor) -> Any:
        return (grad @ _dequantized(grad, ctx.shape), None, *(None for _ in ctx.needs_input_grad[2:]))


class QuantizedLinear(nn.Module):
    """A frozen linear layer stored as ``weights`` (one of ``QUANTIZED``), as its library stores it."""

    def __init__(
        self, linear: nn.Linear, weights: str, *, compute_dtype: torch.dtype, double_quant: bool = True
    ) -> None:
        super().__init__()
        if weights not in QUANTIZED:
            raise ValueError(f"unknown quantized storage {weights!r}; choose one of {', '.join(QUANTIZED)}")
        self.in_features, self.out_features, self.weights = linear.in_features, linear.out_features, weights
        self.compute_dtype = compute_dtype
        device = linear.weight.device
        for name, size in storage_bytes(self.out_features, self.in_features, weights, double_quant).items():
            self.register_buffer(name, torch.empty(size, dtype=torch.uint8, device=device))
        bias = linear.bias
        self.bias = None if bias is None else nn.Parameter(bias.detach().to(compute_dtype), requires_grad=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        given = x.dtype
        if self.weights == "nf4":  # Linear4bit computes in its compute dtype and returns the input's
            x = x.to(self.compute_dtype)
        out = _DequantizeMatmul.apply(x, self.out_features, *self.buffers())
        if self.bias is not None:
            out = out + self.bias.to(out.dtype)
        return out.to(given)
