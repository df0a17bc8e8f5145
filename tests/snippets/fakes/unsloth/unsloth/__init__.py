"""Stand-in for ``unsloth`` (github.com/unslothai/unsloth), which imports only where there is a GPU.

``FastLanguageModel.from_pretrained`` and ``get_peft_model`` take Unsloth's parameter names and
defaults (unsloth/models/loader.py and llama.py at 015bdef, August 2026), make the choices of
Unsloth's that change what a snippet gets back, and build the model with transformers,
bitsandbytes and peft, on the CPU too. Unsloth's kernels and its offloaded gradient checkpointing
are left out: what it changes is speed and memory, which a CPU run does not measure.

Each import and call is appended as a JSON line to the file named by ``FAKE_UNSLOTH_LOG``, so tests
can check what a snippet asked for.
"""

from __future__ import annotations

import json
import os
import sys
import warnings
from typing import Any

import torch

# Unsloth patches these when it is imported, so it warns when one came first (unsloth/_gpu_init.py).
_ALREADY_IMPORTED = [name for name in ("trl", "transformers", "peft") if name in sys.modules]
# Llama's seven projections: get_peft_model's default target_modules in Unsloth.
_PROJECTIONS = ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"]


def _record(event: str, **details: Any) -> None:
    log = os.environ.get("FAKE_UNSLOTH_LOG")
    if log:
        with open(log, "a", encoding="utf-8") as f:
            f.write(json.dumps({"event": event, **details}, default=str) + "\n")


_record("import", already_imported=_ALREADY_IMPORTED)
if _ALREADY_IMPORTED:
    warnings.warn(
        f"WARNING: Unsloth should be imported before [{', '.join(_ALREADY_IMPORTED)}] "
        "to ensure all optimizations are applied.",
        stacklevel=2,
    )


def is_bfloat16_supported() -> bool:
    """Unsloth's answer: compute capability 8 or more, so False on a T4 and with no GPU at all."""
    return torch.cuda.is_available() and torch.cuda.get_device_capability()[0] >= 8


class FastLanguageModel:
    @staticmethod
    def from_pretrained(
        model_name: str = "unsloth/Llama-3.2-1B-Instruct",
        max_seq_length: int = 2048,
        dtype: torch.dtype | str | None = None,
        load_in_4bit: bool = True,
        token: str | None = None,
        **kwargs: Any,
    ) -> tuple[Any, Any]:
        """The model (4-bit NF4 when ``load_in_4bit``) and its tokenizer, as Unsloth returns them."""
        from transformers import AutoModelForCausalLM, AutoTokenizer, BitsAndBytesConfig

        _record(
            "from_pretrained",
            model_name=model_name,
            max_seq_length=max_seq_length,
            dtype=dtype,
            load_in_4bit=load_in_4bit,
            kwargs=sorted(kwargs),
        )
        if isinstance(dtype, str) and dtype in ("float16", "bfloat16"):
            dtype = getattr(torch, dtype)
        assert dtype in (None, torch.float16, torch.bfloat16, torch.float32)  # as Unsloth asserts
        if dtype is None or (dtype == torch.bfloat16 and not is_bfloat16_supported()):
            dtype = torch.bfloat16 if is_bfloat16_supported() else torch.float16
        if not load_in_4bit and model_name.lower().endswith("-bnb-4bit"):
            # Unsloth's mapper swaps its 4-bit copy for the 16-bit original, too large to train on a T4.
            model_name = model_name[: -len("-bnb-4bit")]
        if load_in_4bit:
            # A pre-quantized repository keeps its own quantization_config; transformers says so.
            kwargs["quantization_config"] = BitsAndBytesConfig(
                load_in_4bit=True,
                bnb_4bit_use_double_quant=True,
                bnb_4bit_quant_type="nf4",
                bnb_4bit_compute_dtype=dtype,
            )
        model = AutoModelForCausalLM.from_pretrained(model_name, dtype=dtype, token=token, **kwargs)
        model.max_seq_length = max_seq_length
        tokenizer = AutoTokenizer.from_pretrained(
            model_name, token=token, model_max_length=max_seq_length, padding_side="right"
        )
        return model, tokenizer

    @staticmethod
    def get_peft_model(
        model: Any,
        r: int = 16,
        target_modules: list[str] = _PROJECTIONS,
        lora_alpha: int = 16,
        lora_dropout: float = 0.0,
        bias: str = "none",
        use_gradient_checkpointing: bool | str = "unsloth",
        random_state: int = 3407,
        use_rslora: bool = False,
    ) -> Any:
        """``model`` with LoRA adapters on ``target_modules``, the rest frozen, ready to train."""
        from peft import LoraConfig, TaskType, get_peft_model
        from transformers import set_seed

        _record(
            "get_peft_model",
            r=r,
            target_modules=target_modules,
            lora_alpha=lora_alpha,
            lora_dropout=lora_dropout,
            bias=bias,
            use_gradient_checkpointing=use_gradient_checkpointing,
            random_state=random_state,
            use_rslora=use_rslora,
        )
        set_seed(random_state)
        if type(r) is not int or r <= 0:
            raise TypeError(f"Unsloth: Rank of {r} must be an integer larger than 0.")
        if use_gradient_checkpointing not in (True, False, "unsloth"):
            raise ValueError(
                f"Unsloth: use_gradient_checkpointing = {use_gradient_checkpointing!r} is not True, False or 'unsloth'."
            )
        for param in model.parameters():
            param.requires_grad_(False)
        if use_gradient_checkpointing:
            # Unsloth's "unsloth" also moves the kept activations to CPU memory; here both are plain checkpointing.
            model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
            model.enable_input_require_grads()
        config = LoraConfig(
            r=r,
            lora_alpha=lora_alpha,
            lora_dropout=lora_dropout,
            bias=bias,
            target_modules=target_modules,
            use_rslora=use_rslora,
            task_type=TaskType.CAUSAL_LM,
        )
        return get_peft_model(model, config)
