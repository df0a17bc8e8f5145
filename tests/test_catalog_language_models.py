"""The shipped configs build the networks their makers published: transformers' own class, on the
meta device (no memory, no weights), has the total parameter count the model's publisher states.

Each published total is cited where it is used; the tolerance is 1 %, wider than the rounding of
a total given to three significant figures and far narrower than a wrong layer count or width.
"""

from __future__ import annotations

import pytest

from benchlib.catalog.language_models import shipped_models

# name: (published total parameters, where it is published)
PUBLISHED_TOTALS = {
    # Qwen's model cards, "Number of Parameters: 14.8B" / "32.8B" (released 2025-04-29):
    # https://huggingface.co/Qwen/Qwen3-14B, https://huggingface.co/Qwen/Qwen3-32B
    "qwen3-14b": 14.8e9,
    "qwen3-32b": 32.8e9,
    # "30.5B total parameters with 3.3B activated per token": vLLM Ascend's Qwen3-30B-A3B tutorial
    # (release v0.22.1rc), https://docs.vllm.ai/projects/ascend/en/releases-v0.22.1rc/tutorials/models/Qwen3-30B-A3B.html,
    # the figure of Qwen's model card https://huggingface.co/Qwen/Qwen3-30B-A3B
    "qwen3-30b-a3b": 30.5e9,
    # "Model size 70.6B params" (Safetensors, BF16): the Hugging Face hub's count of the checkpoint's tensors, shown
    # on an unchanged copy of meta-llama/Llama-3.3-70B-Instruct (the page states no date; the model was released
    # 2024-12): https://huggingface.co/jsulz/Llama-3.3-70B-Instruct-bigtensor
    "llama-3.3-70b": 70.6e9,
    # "Mixtral has 46.7B total parameters but only uses 12.9B parameters per token":
    # Mistral AI, "Mixtral of experts", 2023-12-11, https://mistral.ai/news/mixtral-of-experts/
    "mixtral-8x7b": 46.7e9,
    # OpenAI, "gpt-oss-120b & gpt-oss-20b Model Card", 2025-08, https://arxiv.org/abs/2508.10925:
    # "gpt-oss-120b: 116.8B total parameters (5.1B active) ... gpt-oss-20b: 20.9B total parameters (3.6B active)"
    "gpt-oss-20b": 20.9e9,
    "gpt-oss-120b": 116.8e9,
}

SLOW = ("gpt-oss-20b", "gpt-oss-120b", "llama-3.3-70b")


def build_on_meta(fields: dict, architecture: str):
    import torch
    import transformers
    from transformers import AutoConfig

    fields = dict(fields)
    config = AutoConfig.for_model(fields.pop("model_type"), **fields)
    with torch.device("meta"):
        return getattr(transformers, architecture)(config)


def parameters(model) -> int:
    return sum(p.numel() for p in model.parameters())


@pytest.mark.parametrize(
    "name",
    # These take 20 s or more to build even on the meta device (45 s for Llama 3.3 70B on a busy
    # 2-core machine): transformers initialises every module in Python.
    [pytest.param(n, marks=pytest.mark.slow) if n in SLOW else n for n in sorted(PUBLISHED_TOTALS)],
)
def test_a_shipped_config_builds_the_published_number_of_parameters(name):
    shipped = shipped_models()[name]
    model = build_on_meta(shipped.config, shipped.config["architectures"][0])
    total = parameters(model)
    assert total == pytest.approx(PUBLISHED_TOTALS[name], rel=0.01), f"{name}: {total / 1e9:.3f} B"


def test_gemma_3_ships_the_text_decoder_and_its_note_sizes_the_vision_tower_left_out():
    """The 4B checkpoint (text + SigLIP tower) is what the note says: 0.417 B for the tower and
    1152 x hidden_size for the projector, on top of the text decoder shipped."""
    import torch
    import transformers

    shipped = shipped_models()["gemma-3-4b"]
    assert shipped.config["architectures"] == ["Gemma3ForCausalLM"]
    assert "0.417 B" in shipped.note and "1152 x hidden_size" in shipped.note
    text = dict(shipped.config)
    text.pop("architectures")
    vision = {
        "model_type": "siglip_vision_model",
        "hidden_size": 1152,
        "intermediate_size": 4304,
        "num_hidden_layers": 27,
        "num_attention_heads": 16,
        "image_size": 896,
        "patch_size": 14,
        "vision_use_head": False,
    }
    with torch.device("meta"):
        whole = transformers.Gemma3ForConditionalGeneration(
            transformers.Gemma3Config(text_config=text, vision_config=vision)
        )
    decoder = build_on_meta(shipped.config, "Gemma3ForCausalLM")
    tower = sum(p.numel() for n, p in whole.named_parameters() if "vision_tower" in n)
    assert tower == pytest.approx(0.417e9, rel=0.005)
    projector = sum(p.numel() for n, p in whole.named_parameters() if "multi_modal_projector" in n)
    assert projector == pytest.approx(1152 * text["hidden_size"], rel=0.01)
    assert parameters(whole) == parameters(decoder) + tower + projector
    layer_types = decoder.config.layer_types
    assert layer_types[:6] == ["sliding_attention"] * 5 + ["full_attention"]
    assert len(layer_types) == text["num_hidden_layers"]
