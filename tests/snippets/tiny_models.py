"""A tiny random language model in the Hugging Face cache, under a real model's id, for snippets
that download one: with ``HF_HOME`` pointing at the cache and the hub offline, a snippet's
``from_pretrained(MODEL_ID)`` loads the stand-in instead."""

from __future__ import annotations

from pathlib import Path
from typing import Any

# Qwen2's layout, small enough to train in seconds on 2 CPU processes: the snippets' tests share it.
TINY_QWEN2 = {
    "hidden_size": 64,
    "intermediate_size": 128,
    "num_hidden_layers": 2,
    "num_attention_heads": 4,
    "num_key_value_heads": 2,
    "max_position_embeddings": 1024,
    "tie_word_embeddings": True,
}


def cache_tiny_qwen2(hf_home: Path, model_id: str, config: dict[str, Any] = TINY_QWEN2) -> Any:
    """A random Qwen2 of ``config``'s shape and a Qwen2 byte-level tokenizer with no merges, in the
    HF cache layout under ``model_id``; returns the model's config."""
    import torch
    from tokenizers import pre_tokenizers
    from transformers import AutoModelForCausalLM, Qwen2Config, Qwen2Tokenizer

    revision = "0" * 40
    repo = hf_home / "hub" / f"models--{model_id.replace('/', '--')}"
    snapshot = repo / "snapshots" / revision
    (repo / "refs").mkdir(parents=True)
    (repo / "refs" / "main").write_text(revision)
    vocab = {symbol: i for i, symbol in enumerate(sorted(pre_tokenizers.ByteLevel.alphabet()))}
    vocab["<|endoftext|>"] = len(vocab)
    Qwen2Tokenizer(vocab=vocab, merges=[]).save_pretrained(snapshot)
    qwen2 = Qwen2Config(vocab_size=len(vocab), **config)
    torch.manual_seed(0)
    AutoModelForCausalLM.from_config(qwen2).save_pretrained(snapshot)
    return qwen2
