"""One full fine-tuning step of a language model, run for real: what `benchlib fit --mode train` traces.

The model is built by transformers from its config with random weights, kept in fp32, trained
with AdamW (the multi-tensor implementation, as the trace uses) and, for ``fp16`` or ``bf16``,
under autocast (fp16 with a GradScaler): `benchlib.predict.llm_memory.Setup` for ``make_setup("train",
dtype=...)``. It shares `TrainingStep`'s priming and update, so both kinds of model are measured
the same way.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from benchlib.models.step import DTYPES, TrainingStep, check_choice

if TYPE_CHECKING:
    import torch

    from benchlib.catalog.language_models import LanguageModel

LEARNING_RATE = 1e-4


class LanguageModelStep(TrainingStep):
    """``model`` (a transformers config) training on ``batch`` random sequences of ``seq_len`` tokens."""

    def __init__(
        self, model: LanguageModel, batch: int, seq_len: int, *, dtype: str = "fp32", device: str = "cpu"
    ) -> None:
        import torch

        check_choice("dtype", dtype, DTYPES)
        if batch < 1 or seq_len < 1:
            raise ValueError(f"batch and sequence length must be at least 1, got {batch} and {seq_len}")
        self.language_model, self.batch, self.device, self.fake_mode = model, batch, device, None
        self.device_type = torch.device(device).type
        with torch.device(device):
            self.model = model.build(None, torch.float32)
        self.model.train()
        trainable = [p for p in self.model.parameters() if p.requires_grad]
        self.optimizer = torch.optim.AdamW(trainable, lr=LEARNING_RATE, foreach=True)
        vocab = model.vocab_size(self.model)
        self.inputs = {k: v.to(device) for k, v in model.inputs(self.model, batch, seq_len, vocab, True).items()}
        self.amp = {"fp16": torch.float16, "bf16": torch.bfloat16}.get(dtype)
        self.scaler = torch.amp.GradScaler(self.device_type, enabled=dtype == "fp16")

    def loss(self) -> torch.Tensor:
        return self.language_model.loss(self.model, self.inputs)


def tiny_llama() -> torch.nn.Module:
    """A toy Llama (two layers, width 64) for `benchlib campaign --tiny`: transformers' own class and
    config, so fit traces it as it traces a real model, at a size any CPU trains in a moment."""
    from transformers import LlamaConfig, LlamaForCausalLM

    config = LlamaConfig(
        hidden_size=64,
        intermediate_size=128,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        vocab_size=1024,
        max_position_embeddings=256,
    )
    return LlamaForCausalLM(config)
