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

Imported only by :mod:`benchlib.predict.llm_memory`, which imports torch anyway.
"""

from __future__ import annotations

import math
from typing import Any

import torch
from torch import nn

NF4_BLOCK = 64
DOUBLE_QUANT_BLOCK = 256
DOUBLE_QUANT_CODE = 256
NF4_CODE = 16
QUANTIZED = ("nf4", "int8")


def storage_bytes(out_features: int, in_features: int, weights: str, double_quant: bool = True) -> dict[str, int]:
    """The tensors (name: bytes) bitsandbytes keeps for one ``out_features`` x ``in_features`` weight."""
    n = out_features * in_features
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


class _DequantizeMatmul(torch.autograd.Function):
    """``x @ W.T`` where W is dequantized for the op and dropped after it, in both passes."""

    @staticmethod
    def forward(ctx: Any, x: torch.Tensor, out_features: int, *storage: torch.Tensor) -> torch.Tensor:
        ctx.shape = (out_features, x.shape[-1])
        return x @ x.new_empty(ctx.shape).t()

    @staticmethod
    def backward(ctx: Any, grad: torch.Tensor) -> Any:
        return (grad @ grad.new_empty(ctx.shape), None, *(None for _ in ctx.needs_input_grad[2:]))


class QuantizedLinear(nn.Module):
    """A frozen linear layer stored as ``weights`` ("nf4" or "int8"), as bitsandbytes stores it."""

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
