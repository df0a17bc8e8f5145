"""Configs of tiny decoders the tests write out as a reader's config.json: shared, so that each
test file doesn't spell out the same shape again."""

from __future__ import annotations

# Qwen2's layout at 64 wide, 4 query heads over 2 key-value heads, 6 layers: enough that a trace is
# reduced in depth and the layers can be split over GPUs, small enough to trace in a moment.
TINY_QWEN2 = {
    "model_type": "qwen2",
    "architectures": ["Qwen2ForCausalLM"],
    "hidden_size": 64,
    "intermediate_size": 128,
    "num_hidden_layers": 6,
    "num_attention_heads": 4,
    "num_key_value_heads": 2,
    "vocab_size": 500,
    "max_position_embeddings": 1024,
}
