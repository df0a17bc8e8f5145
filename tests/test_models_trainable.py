"""The model registry: the full models have their published sizes, the small ones train on a CPU."""

from __future__ import annotations

import pytest

from benchlib.models.step import TrainingStep
from benchlib.models.trainable import MODELS, UnknownModel, get_model

# Published parameter counts, in millions; ours may differ by the heads we attach.
PUBLISHED_PARAMS_M = {
    "resnet50": (25.6, 0.01),  # torchvision's model card
    "vit_b_16": (86.6, 0.01),  # torchvision's model card
    "bert_base": (110.0, 0.02),  # Devlin et al. 2018: BERT-base 110M
    "gpt2_small": (124.4, 0.01),  # GPT-2 small, 124M with the tied LM head
    "unet": (31.0, 0.03),  # Ronneberger et al.'s U-Net, about 31M with 64 base channels
}


def test_the_registry_holds_the_five_models_of_the_issue():
    assert set(MODELS) == set(PUBLISHED_PARAMS_M)


@pytest.mark.parametrize("name", sorted(PUBLISHED_PARAMS_M))
def test_full_models_have_their_published_size(name):
    import torch

    with torch.device("meta"):  # nothing allocated, nothing downloaded
        model = get_model(name).make("full")
    millions = sum(p.numel() for p in model.parameters()) / 1e6
    expected, tolerance = PUBLISHED_PARAMS_M[name]
    assert abs(millions - expected) <= tolerance * expected, f"{name}: {millions:.1f}M parameters"


@pytest.mark.parametrize("name", sorted(MODELS))
@pytest.mark.parametrize("dtype", ["fp32", "bf16"])
def test_small_models_train_one_step_on_the_cpu(name, dtype):
    import torch

    torch.manual_seed(0)
    step = TrainingStep(get_model(name), 2, size="small", dtype=dtype, device="cpu")
    before = [p.detach().clone() for p in step.model.parameters()]
    step.prime()
    step.run()
    changed = sum(not torch.equal(a, p.detach()) for a, p in zip(before, step.model.parameters()))
    assert changed > 0, "a full step must update the weights"
    assert all(p.grad is None for p in step.model.parameters()), "gradients are released after the step"


def test_batches_match_each_kind_of_model():
    import torch

    device = torch.device("cpu")
    x, y = get_model("resnet50").batch(3, "small", device)
    assert tuple(x.shape) == (3, 3, 64, 64) and tuple(y.shape) == (3,)
    x, y = get_model("gpt2_small").batch(3, "small", device)
    assert x.dtype == torch.int64 and x.shape == y.shape == (3, 32)
    x, y = get_model("unet").batch(3, "small", device)
    assert tuple(y.shape) == (3, 32, 32)


def test_an_input_shape_changes_the_model_where_it_must():
    vit = get_model("vit_b_16")
    assert vit.dims("full", (3, 384, 384)).options["image"] == 384
    assert get_model("unet").dims("full", (1, 128, 128)).options["channels"] == 1
    assert get_model("bert_base").dims("full", (128,)).input_shape == (128,)


@pytest.mark.parametrize(
    ("name", "shape", "message"),
    [
        ("gpt2_small", (2048,), "from 1 to 1024"),
        ("bert_base", (3, 224, 224), "sequence length"),
        ("vit_b_16", (3, 200, 200), "multiple of 16"),
        ("unet", (3, 100, 100), "multiples of 16"),
        ("resnet50", (1, 224, 224), "3-channel"),
        ("resnet50", (3, 16, 16), "at least 32x32"),
    ],
)
def test_bad_input_shapes_name_what_the_model_takes(name, shape, message):
    with pytest.raises(ValueError, match=message):
        get_model(name).dims("full", shape)


def test_unknown_model_names_the_choices_and_a_near_miss():
    with pytest.raises(UnknownModel) as info:
        get_model("vit_b16")
    assert "did you mean 'vit_b_16'" in str(info.value) and "resnet50" in str(info.value)
    with pytest.raises(ValueError, match="unknown size"):
        get_model("unet").dims("tiny")
