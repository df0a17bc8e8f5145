"""What one step does, op by op: floating-point operations and bytes moved, counted on fake tensors.

FLOPs come from ``torch.utils.flop_counter``'s formulas (matmuls, convolutions, attention). Bytes
are what an op reads and writes as a kernel would: its tensor inputs and outputs. Views and
allocations move nothing; a gather (an embedding lookup) reads only the rows it returns.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

# Ops that only describe or allocate memory: no kernel reads or writes it.
NO_TRAFFIC = frozenset(
    {
        "empty",
        "empty_strided",
        "empty_like",
        "new_empty",
        "new_empty_strided",
        "detach",
        "_unsafe_view",  # a reshape of a fresh tensor: a view in all but name
        "alias",
        "lift_fresh",
        "lift_fresh_copy",
        "_local_scalar_dense",
        "set_",
        "resize_",
        "device",  # prim.device: reads a tensor's metadata, moves none of its bytes
    }
)
GATHERS = frozenset({"embedding", "index_select", "index"})
CONVOLUTIONS = frozenset(
    {
        "convolution",
        "convolution_backward",
        "_convolution",
        "cudnn_convolution",
        "convolution_overrideable",
        "_slow_conv2d_forward",
    }
)
# A MoE layer's experts as one op: rows of tokens, each row multiplied by its expert's weight
# (transformers' grouped_mm experts, or its fallback op where torch's grouped_mm can't run).
GROUPED_MATMULS = frozenset({"_grouped_mm", "grouped_mm", "grouped_mm_fallback"})
GROUPED_MATMUL_BACKWARDS = frozenset({"grouped_mm_fallback_backward"})
DTYPE_NAMES = {"torch.float32": "fp32", "torch.float16": "fp16", "torch.bfloat16": "bf16"}


@dataclass(frozen=True)
class OpCost:
    """One op of the step: its name, the work it does and the memory it moves.

    ``kind`` is ``conv``, ``matmul`` or ``attention`` for ops with a FLOP formula (they run on
    tensor cores where the dtype allows), ``memory`` for the rest (elementwise, norms, copies).
    """

    op: str
    kind: str
    flops: int
    bytes: int
    dtype: str
    weight_elements: int = 0  # a dequantize op: the weights it unpacks (`benchlib.predict.engines`)
    largest_input_bytes: int = 0  # a concatenation: its largest input (a KV cache it appends to)
    weight_share: float = 1.0  # a MoE layer's grouped matmul: the share of its experts' weights it reads
    # A MoE layer's grouped matmul: all its experts' weight bytes, how many experts and how many rows
    # (tokens times experts per token), from which ``weight_share`` comes (`experts_touched`).
    expert_bytes: int = 0
    experts: int = 0
    rows: int = 0


def _tensors(tree: Any) -> list[Any]:
    import torch
    from torch.utils._pytree import tree_flatten

    return [t for t in tree_flatten(tree)[0] if isinstance(t, torch.Tensor)]


def _nbytes(tensors: list[Any]) -> int:
    return sum(t.numel() * t.element_size() for t in tensors)


def _as_query_heads(query: Any, kv: Any) -> tuple[int, ...]:
    """A grouped-query key or value shape with the query's head count: each query head does the
    same arithmetic whether or not it shares its key, and torch before 2.14 asserts equal heads."""
    return (*kv.shape[:-3], query.shape[-3], *kv.shape[-2:])


def _flash_for_cpu_flops(query: Any, key: Any, value: Any, *args: Any, out_val: Any = None, **kwargs: Any) -> int:
    from torch.utils.flop_counter import sdpa_flop_count

    return sdpa_flop_count(query.shape, _as_query_heads(query, key), _as_query_heads(query, value))


def _flash_for_cpu_backward_flops(
    grad_out: Any, query: Any, key: Any, value: Any, *args: Any, out_val: Any = None, **kwargs: Any
) -> int:
    from torch.utils.flop_counter import sdpa_backward_flop_count

    return sdpa_backward_flop_count(
        grad_out.shape, query.shape, _as_query_heads(query, key), _as_query_heads(query, value)
    )


def _formulas() -> dict[Any, Callable[..., int]]:
    """flop_counter's registry, plus CPU's fused attention: traced here, it stands in for the GPU's."""
    import torch
    from torch.utils.flop_counter import flop_registry

    aten = torch.ops.aten
    return {
        **flop_registry,
        aten._scaled_dot_product_flash_attention_for_cpu: _flash_for_cpu_flops,
        aten._scaled_dot_product_flash_attention_for_cpu_backward: _flash_for_cpu_backward_flops,
    }


def _grouped_matmul_flops(name: str, inputs: list[Any], outputs: list[Any]) -> int:
    """2 x rows x inner x outer: each row meets one expert's weight, whichever it is; the backward
    computes the gradients of the input and of the weights, twice that."""
    if name in GROUPED_MATMULS:
        rows, inner = inputs[0].shape[-2:]
        return 2 * rows * inner * outputs[0].shape[-1]
    grad_input = outputs[0]
    rows, inner = grad_input.shape[-2:]
    outer = inputs[-1].shape[-1]  # the gradient of the op's output
    return 4 * rows * inner * outer


def experts_touched(experts: int, per_token: int, tokens: float) -> float:
    """The expected share of a MoE layer's experts that ``tokens`` tokens route to, each to
    ``per_token`` different experts, with routing spread evenly: 1 - (1 - k/E)^tokens."""
    return 1.0 - (1.0 - per_token / experts) ** tokens


def _kind(name: str) -> str:
    if name in CONVOLUTIONS:
        return "conv"
    if "attention" in name:
        return "attention"
    return "matmul"


def op_counter(experts_per_token: int = 1) -> Any:
    """A TorchDispatchMode that appends an `OpCost` to its ``ops`` for every op run inside it.

    ``experts_per_token``: a MoE model's experts per token; a grouped matmul reads only the weights
    of the experts its rows route to (`experts_touched`), not all of them.
    """
    from torch.utils._python_dispatch import TorchDispatchMode

    formulas = _formulas()

    class OpCounter(TorchDispatchMode):
        def __init__(self) -> None:
            super().__init__()
            self.ops: list[OpCost] = []

        def __torch_dispatch__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
            kwargs = kwargs or {}
            out = func(*args, **kwargs)
            name = func._overloadpacket.__name__
            if func.is_view or name in NO_TRAFFIC:
                return out
            inputs, outputs = _tensors((args, kwargs)), _tensors(out)
            if not inputs and not outputs:
                return out
            formula = formulas.get(func._overloadpacket)
            flops = int(formula(*args, **kwargs, out_val=out)) if formula else 0
            if name in GROUPED_MATMULS | GROUPED_MATMUL_BACKWARDS:
                flops = _grouped_matmul_flops(name, inputs, outputs)
            expert_bytes = experts = rows = 0
            if name in GROUPED_MATMULS and inputs[1].dim() == 3:
                weight = inputs[1]
                expert_bytes, experts, rows = _nbytes([weight]), weight.shape[0], inputs[0].shape[-2]
                touched = experts_touched(experts, min(experts_per_token, experts), rows / experts_per_token)
                moved = _nbytes(inputs) - expert_bytes + int(touched * expert_bytes) + _nbytes(outputs)
            elif name in GATHERS:
                moved = 2 * _nbytes(outputs)
            elif out is None and inputs:
                # In-place ops on lists (the optimizer's _foreach_*_): read everything, write the first list.
                moved = _nbytes(inputs) + _nbytes(_tensors(args[0]))
            else:
                moved = _nbytes(inputs) + _nbytes(outputs)
            first = (inputs or outputs)[0]
            dtype = DTYPE_NAMES.get(str(first.dtype), "other")
            largest = max((_nbytes([t]) for t in inputs), default=0) if name == "cat" else 0
            share = touched if expert_bytes else 1.0
            kind = _kind(name) if flops else "memory"
            self.ops.append(OpCost(name, kind, flops, moved, dtype, 0, largest, share, expert_bytes, experts, rows))
            return out

    return OpCounter()
