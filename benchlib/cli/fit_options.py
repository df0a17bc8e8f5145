"""The options `benchlib fit`, `benchlib predict` and `benchlib max-batch` share, the parsers of their sizes
and shapes, and `flags_command`, which hands a command its flags as one object."""

from __future__ import annotations

import dataclasses
import inspect
import re
from collections.abc import Callable
from typing import Annotated, Any, TypeVar, get_type_hints

import typer

Flags = TypeVar("Flags")

_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([kmgt]?i?b?)\s*$", re.IGNORECASE)
_UNITS = {"": 1, "b": 1, "k": 1024, "m": 1024**2, "g": 1024**3, "t": 1024**4}


def parse_bytes(text: str, option: str = "--memory-limit") -> int:
    """``2GiB``, ``1.5G``, ``512MiB``, ``4GB`` or a plain byte count; K/M/G/T are powers of 1024.

    GB is read as GiB too: memory is sized in binary units, whatever the label says.
    """
    match = _SIZE.match(text)
    if match is None:
        raise ValueError(f"{option} {text!r}: expected a size such as 2GiB, 512MiB or 4G")
    number, unit = float(match.group(1)), match.group(2).lower().rstrip("b").rstrip("i")
    value = int(number * _UNITS[unit])
    if value <= 0:
        raise ValueError(f"{option} {text!r}: must be more than zero bytes")
    return value


def parse_shape(text: str) -> tuple[int, ...]:
    """``3x224x224``, ``3,224,224`` or ``512`` (a sequence length) as a tuple of ints."""
    parts = [p for p in re.split(r"[x×,\s]+", text.strip().lower()) if p]
    if not parts or not all(p.isdigit() for p in parts):
        raise ValueError(f"--input {text!r}: expected sizes separated by 'x', such as 3x224x224 or 512")
    return tuple(int(p) for p in parts)


# Far beyond any real run, and below what overflows a trace's tensor sizes (10^20 did) or a list per GPU.
MAX_BATCH = 1 << 20
MAX_LORA_RANK = 1 << 16
MAX_GPUS = 1024

ModelOpt = Annotated[str, typer.Option("--model", help="resnet50, vit_b_16, bert_base, gpt2_small or unet.")]
InputOpt = Annotated[
    str | None,
    typer.Option("--input", help="Input per sample: CxHxW for images, a length for tokens. Default: the model's own."),
]
DtypeOpt = Annotated[str, typer.Option("--dtype", help="fp32, or fp16/bf16 mixed precision (autocast, fp32 weights).")]
OptimizerOpt = Annotated[str, typer.Option("--optimizer", help="adam or sgd (with momentum).")]
ModelSizeOpt = Annotated[str, typer.Option("--size", help="full, or small: the same kind of network, tiny, for tests.")]


WEIGHTS_HELP = (
    "How weights are stored: fp32, fp16, bf16; int8 or nf4 (bitsandbytes); gptq-int4, gptq-int8 or "
    "awq-int4 (group size 128); fp8 (transformers' fine-grained FP8, 128x128 blocks; dequantized on "
    "GPUs before compute capability 8.9); mxfp4 (gpt-oss: MoE experts only); gguf-q4_0, gguf-q4_k_m, "
    "gguf-q5_k_m, gguf-q8_0 or gguf-mxfp4 (llama.cpp's files, run with --engine llama.cpp). Default: "
    "bf16 for inference and lora, fp32 for train, nf4 for qlora; with --engine llama.cpp, the model's own "
    "MXFP4 file where it has one (gpt-oss), else gguf-q4_k_m."
)
ENGINE_HELP = (
    "Language models: transformers (eager PyTorch: generate(), Trainer), vllm (vLLM, SGLang and other "
    "CUDA-graph engines; inference only) or llama.cpp (also Ollama and LM Studio; GGUF files, inference "
    "only). Default: llama.cpp for a gguf-* format, else transformers."
)
KV_CACHE_HELP = (
    "Inference: how the KV cache stores keys and values: fp16, bf16, fp32, fp8 (one byte) or q8_0 "
    "(llama.cpp's, 34 bytes per 32 values). Default: the compute dtype, as transformers keeps it; "
    "fp16 in llama.cpp."
)


def flags_command(flags: type[Flags], run: Callable[[Flags], None]) -> Callable[..., None]:
    """A typer command whose options are the fields of the dataclass ``flags`` (each annotated with its
    ``typer.Option``, in the order ``--help`` lists them) and which calls ``run`` with them as one object.

    typer reads a command's options from its signature, one parameter each; a command with many
    flags gets them here in one object, which it can pass on whole.
    """
    hints = get_type_hints(flags, include_extras=True)
    parameters = [
        inspect.Parameter(
            field.name,
            inspect.Parameter.KEYWORD_ONLY,
            default=inspect.Parameter.empty if field.default is dataclasses.MISSING else field.default,
            annotation=hints[field.name],
        )
        for field in dataclasses.fields(flags)
    ]

    def command(**values: Any) -> None:
        run(flags(**values))

    command.__signature__ = inspect.Signature(parameters, return_annotation=None)  # type: ignore[attr-defined]
    command.__name__ = command.__qualname__ = run.__name__
    command.__doc__ = run.__doc__
    command.__module__ = run.__module__
    return command
