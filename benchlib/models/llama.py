"""A Llama-style decoder with random weights, from transformers' ``LlamaConfig``: nothing is downloaded.

Llama's architecture is RMSNorm, rotary position embeddings, a SwiGLU MLP and grouped-query
attention (fewer key/value heads than query heads); transformers runs its attention through
torch's scaled_dot_product_attention. Speed doesn't depend on the weights, so random ones do.
The `transformer_train` and `llm_decode` workloads share it, sized by their params' ``model``.
"""

from __future__ import annotations

from typing import Any

from benchlib.backends import require
from benchlib.backends import torch_backend as tb

# The params' ``model`` dict names these LlamaConfig fields, and only these.
CONFIG_FIELDS = (
    "hidden_size",
    "intermediate_size",
    "num_hidden_layers",
    "num_attention_heads",
    "num_key_value_heads",
    "vocab_size",
)
SEED = 0


def require_transformers() -> None:
    require("transformers", "install it with `pip install 'benchlib[llm]'`")


def model_label(model: dict[str, Any]) -> str:
    """What a chart calls the model: its depth and width, so runs of different sizes never share a bar."""
    return f"{model['num_hidden_layers']}-layer, {model['hidden_size']}-wide"


def llama_shape(
    *, hidden: int, intermediate: int, layers: int, heads: int, kv_heads: int, vocab: int
) -> dict[str, int]:
    """A params ``model`` dict: these dimensions under their `CONFIG_FIELDS` names."""
    return dict(zip(CONFIG_FIELDS, (hidden, intermediate, layers, heads, kv_heads, vocab)))


def llama_config(model: dict[str, Any], max_positions: int) -> Any:
    """The ``LlamaConfig`` of ``model``'s dimensions; ValueError names a field missing from `CONFIG_FIELDS` or not in it."""
    require_transformers()
    from transformers import LlamaConfig

    missing = [f for f in CONFIG_FIELDS if f not in model]
    unknown = [f for f in model if f not in CONFIG_FIELDS]
    if missing or unknown:
        raise ValueError(
            f"model params: missing {missing or 'none'}, unknown {unknown or 'none'}; give exactly {', '.join(CONFIG_FIELDS)}"
        )
    return LlamaConfig(**model, max_position_embeddings=max_positions, architectures=["LlamaForCausalLM"])


def random_llama(model: dict[str, Any], device: str, max_positions: int) -> Any:
    """``LlamaForCausalLM`` with ``model``'s dimensions and seeded random weights, on ``device``.

    Raises ValueError naming the field when ``model`` lacks one of `CONFIG_FIELDS` or has another.
    """
    config = llama_config(model, max_positions)
    torch = tb.import_torch()
    from transformers import LlamaForCausalLM

    torch.manual_seed(SEED)
    # Built on the device directly: a large model initialised on the CPU first would take as long as the run.
    with torch.device(device):
        return LlamaForCausalLM(config)


def parameter_count(llama: Any) -> int:
    return sum(p.numel() for p in llama.parameters())
