"""`benchlib fit`: peak memory and the largest batch (or context) that fits, predicted without a GPU.

Two kinds of model: the five built-in networks (ResNet-50 ... U-Net, full training only, as
before) and language models (:mod:`benchlib.predict.llm_memory`: shipped configs, a config.json, a hub id or
``module:factory``) in four modes. Bad input (a model, GPU, mode or option that doesn't apply)
ends with a one-line message naming it and exit code 2.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Annotated

import typer
from rich.table import Table

from benchlib.cli.fit_options import (
    KV_CACHE_HELP,
    WEIGHTS_HELP,
    InputOpt,
    ModelSizeOpt,
    language_model_setup,
    parse_bytes,
    parse_shape,
)
from benchlib.cli.output import console, usage_error
from benchlib.core.units import format_bytes

if TYPE_CHECKING:
    from benchlib.catalog.gpus import AcceleratorSpec
    from benchlib.predict.llm_memory import LLMPrediction, Setup
    from benchlib.predict.memory import DeviceMemory, Prediction

ModelOpt = Annotated[
    str,
    typer.Option(
        "--model",
        help="A language model: a shipped one (e.g. llama-3.2-1b, qwen3-8b; an unknown name lists them), a "
        "config.json path, a Hugging Face id or package.module:factory. Or one of the five built-in "
        "networks: resnet50, vit_b_16, bert_base, gpt2_small, unet.",
    ),
]
DtypeOpt = Annotated[
    str | None,
    typer.Option(
        "--dtype",
        help="Compute dtype: fp32, fp16 or bf16 (autocast over fp32 or quantized weights). Default: fp32 "
        "for the built-in networks; for language models the weights' dtype, else bf16 (fp16 where the "
        "GPU has no bf16).",
    ),
]
OptimizerOpt = Annotated[
    str | None,
    typer.Option(
        "--optimizer",
        help="Built-in networks: adam (default) or sgd. Language models: adamw (default) or paged_adamw_8bit.",
    ),
]
ModeOpt = Annotated[
    str | None,
    typer.Option(
        "--mode",
        help="inference, train (full fine-tuning), lora or qlora. Default: train for the five built-in "
        "models, inference for language models.",
    ),
]


def fit(
    model: ModelOpt,
    gpu: Annotated[
        str | None, typer.Option("--gpu", help="A GPU in benchlib's specs, e.g. T4, 'A100 40GB SXM', 'RTX 4090'.")
    ] = None,
    mode: ModeOpt = None,
    batch: Annotated[
        int | None, typer.Option("--batch", help="Also say whether this batch fits (language models: default 1).")
    ] = None,
    seq_len: Annotated[
        int | None,
        typer.Option(
            "--seq-len", help="Language models: tokens per sample (default 2048, or the model's limit if shorter)."
        ),
    ] = None,
    lora_rank: Annotated[
        int | None, typer.Option("--lora-rank", help="lora/qlora: the adapters' rank (default 16).")
    ] = None,
    lora_targets: Annotated[
        str, typer.Option("--lora-targets", help="lora/qlora: all-linear, or module names such as q_proj,v_proj.")
    ] = "all-linear",
    weights: Annotated[str | None, typer.Option("--weights", help=WEIGHTS_HELP)] = None,
    kv_cache: Annotated[str | None, typer.Option("--kv-cache", help=KV_CACHE_HELP)] = None,
    dtype: DtypeOpt = None,
    grad_checkpointing: Annotated[
        bool, typer.Option("--grad-checkpointing", help="Training modes: recompute activations in the backward pass.")
    ] = False,
    optimizer: OptimizerOpt = None,
    input: InputOpt = None,
    memory_limit: Annotated[
        str | None,
        typer.Option(
            "--memory-limit", help="Instead of --gpu: a plain memory budget with no CUDA allowances (the CPU case)."
        ),
    ] = None,
    size: ModelSizeOpt = "full",
    gpus: Annotated[
        int,
        typer.Option(
            "--gpus",
            help="Language models: this many GPUs, sharing the work as --parallel says (Kaggle's two "
            "T4s: --gpus 2); the answer is the fullest GPU's.",
        ),
    ] = 1,
    parallel: Annotated[
        str,
        typer.Option(
            "--parallel",
            help='With --gpus: layers (split the layers in order, as device_map="auto" does) or data '
            "(a whole copy on each GPU, as DDP and accelerate launch do; --batch and the largest batch "
            "are per GPU, and training adds DDP's gradient buckets).",
        ),
    ] = "layers",
    as_json: Annotated[bool, typer.Option("--json", help="Print the prediction as one JSON object.")] = False,
) -> None:
    """Predict peak memory and the largest batch (or, for inference, context) that fits, without a GPU."""
    from benchlib.models.trainable import MODELS

    if model in MODELS:
        if gpus != 1 or parallel != "layers":
            flag = f"--gpus {gpus}" if gpus != 1 else f"--parallel {parallel}"
            raise usage_error(f"{flag}: sharing work over GPUs applies to language models, not {model}")
        _fit_builtin(
            model,
            gpu,
            mode,
            batch,
            seq_len,
            lora_rank,
            weights,
            kv_cache,
            dtype,
            grad_checkpointing,
            optimizer,
            input,
            memory_limit,
            size,
            as_json,
        )
    else:
        _fit_language_model(
            model,
            gpu,
            mode,
            batch,
            seq_len,
            lora_rank,
            lora_targets,
            weights,
            kv_cache,
            dtype,
            grad_checkpointing,
            optimizer,
            input,
            memory_limit,
            gpus,
            parallel,
            as_json,
        )


def _gpu(gpu: str | None, memory_limit: str | None) -> AcceleratorSpec | None:
    """``--gpu``'s specs, looked up once here and passed on; None with ``--memory-limit``."""
    from benchlib.catalog.gpus import find_gpu

    if (gpu is None) == (memory_limit is None):
        raise ValueError("give either --gpu NAME or --memory-limit SIZE")
    return find_gpu(gpu, "`fit` predicts CUDA memory only") if gpu else None


def _device(spec: AcceleratorSpec | None, memory_limit: str | None) -> DeviceMemory:
    from benchlib.predict.memory import gpu_memory
    from benchlib.predict.memory import memory_limit as limit_budget

    return gpu_memory(spec) if spec else limit_budget(parse_bytes(memory_limit or ""))


def _fit_builtin(
    model: str,
    gpu: str | None,
    mode: str | None,
    batch: int | None,
    seq_len: int | None,
    lora_rank: int | None,
    weights: str | None,
    kv_cache: str | None,
    dtype: str | None,
    grad_checkpointing: bool,
    optimizer: str | None,
    input: str | None,
    memory_limit: str | None,
    size: str,
    as_json: bool,
) -> None:
    from benchlib.catalog.gpus import UnknownGPU
    from benchlib.models.step import DTYPES, OPTIMIZERS, check_choice
    from benchlib.models.trainable import get_model
    from benchlib.predict.memory import predict

    dtype, optimizer = dtype or "fp32", optimizer or "adam"
    try:
        given = [
            flag
            for flag, value in (
                ("--seq-len", seq_len),
                ("--lora-rank", lora_rank),
                ("--weights", weights),
                ("--kv-cache", kv_cache),
                ("--grad-checkpointing", grad_checkpointing or None),
            )
            if value is not None
        ]
        if mode not in (None, "train"):
            given.insert(0, f"--mode {mode}")
        if given:
            raise ValueError(
                f"{', '.join(given)}: {model} is one of the five built-in networks, predicted for full "
                "training only; these options are for language models (e.g. --model llama-3.2-1b)"
            )
        check_choice("dtype", dtype, DTYPES)
        check_choice("optimizer", optimizer, OPTIMIZERS)
        spec = _gpu(gpu, memory_limit)
        device = _device(spec, memory_limit)
        shape = parse_shape(input) if input else None
        get_model(model).dims(size, shape)
        if batch is not None and batch < 1:
            raise ValueError(f"--batch {batch}: must be at least 1")
        if spec and dtype == "bf16":
            _check_bf16(spec, "--dtype bf16")
    except (UnknownGPU, ValueError) as exc:
        raise usage_error(str(exc))
    # On a GPU torch's optimizers default to the multi-tensor (foreach) code; on the CPU they don't.
    prediction = predict(
        model,
        device,
        batch=batch,
        dtype=dtype,
        optimizer=optimizer,
        size=size,
        foreach=True if gpu else None,
        input_shape=shape,
    )
    if as_json:
        typer.echo(json.dumps(prediction.as_dict(), indent=2))
        return
    _print_prediction(prediction)


def _fit_language_model(
    model: str,
    gpu: str | None,
    mode: str | None,
    batch: int | None,
    seq_len: int | None,
    lora_rank: int | None,
    lora_targets: str,
    weights: str | None,
    kv_cache: str | None,
    dtype: str | None,
    grad_checkpointing: bool,
    optimizer: str | None,
    input: str | None,
    memory_limit: str | None,
    gpus: int,
    parallel: str,
    as_json: bool,
) -> None:
    from benchlib.catalog.gpus import UnknownGPU
    from benchlib.catalog.language_models import ModelNotFound, resolve_model
    from benchlib.core.cache import cache_folder
    from benchlib.models.trainable import MODELS
    from benchlib.predict.llm_memory import QUANTIZED_WEIGHTS, predict_llm

    try:
        if input is not None:
            raise ValueError("--input is for the five built-in networks; a language model takes --seq-len")
        spec = _gpu(gpu, memory_limit)
        device = _device(spec, memory_limit)
        mode = mode or "inference"
        if spec and not _has_bf16(spec):
            for flag, value in (("--dtype", dtype), ("--weights", weights)):
                if value == "bf16":
                    _check_bf16(spec, f"{flag} bf16")
            if dtype is None and weights in (None, *QUANTIZED_WEIGHTS):
                dtype = "fp16"  # what a reader uses on a GPU without bf16, such as the T4
        language_model = resolve_model(model, also_known=tuple(MODELS))
        setup = language_model_setup(
            language_model,
            mode,
            weights=weights,
            dtype=dtype,
            batch=batch,
            seq_len=seq_len,
            lora_rank=lora_rank,
            lora_targets=lora_targets,
            grad_checkpointing=grad_checkpointing,
            optimizer=optimizer,
            kv_cache=kv_cache,
        )
        traced, note = runs_as(setup, spec)
        prediction = predict_llm(
            language_model, traced, device, cache_dir=cache_folder("fit-llm"), gpus=gpus, parallel=parallel
        )
        prediction.note = note
    except (ModelNotFound, UnknownGPU, ValueError) as exc:
        raise usage_error(str(exc))
    if as_json:
        typer.echo(json.dumps(prediction.as_dict(), indent=2))
        return
    _print_llm_prediction(prediction, language_model.title)


def runs_as(setup: Setup, spec: AcceleratorSpec | None) -> tuple[Setup, str | None]:
    """The setup transformers would run on this GPU, and a note where that differs from the one asked
    for (FP8 or MXFP4 dequantized on a GPU without the kernels) or where the format has a caveat."""
    from dataclasses import replace

    from benchlib.predict.weight_formats import GGUF_FORMATS, GGUF_NOTE, MXFP4_SOFTWARE_NOTE, dequantized_on

    if spec is not None:
        why = dequantized_on(setup.weights, spec.name, spec.architecture.value, setup.dtype)
        if why is not None:
            return replace(setup, weights=setup.dtype), why
    if setup.weights == "mxfp4":
        return setup, MXFP4_SOFTWARE_NOTE
    if setup.weights in GGUF_FORMATS:
        return setup, GGUF_NOTE
    return setup, None


def _has_bf16(spec: AcceleratorSpec) -> bool:
    """False only where the specs say the GPU has no bf16; an unstated support is not ruled out."""
    return not (spec.bf16_supported is not None and not spec.bf16_supported.value)


def _check_bf16(spec: AcceleratorSpec, option: str) -> None:
    if not _has_bf16(spec):
        raise ValueError(f"{option}: the {spec.name} has no hardware bf16 (see its specs); use fp16")


def _peak_text(tensor_peak: int, device: DeviceMemory) -> str:
    return f"tensor peak {format_bytes(tensor_peak)}, {format_bytes(device.on_device(tensor_peak))} on the device"


def _device_rows(table: Table, d: DeviceMemory) -> None:
    table.add_row("device", d.name)
    if d.total_bytes is not None:
        table.add_row("memory", format_bytes(d.total_bytes))
    table.add_row("usable", f"{format_bytes(d.usable_bytes)} ({d.basis}; {d.status})")


def _print_prediction(p: Prediction) -> None:
    d = p.device
    table = Table(
        title=f"{p.model} ({'x'.join(map(str, p.input_shape))} per sample), {p.dtype}, {p.optimizer}: predicted",
        show_header=False,
    )
    table.add_column("what")
    table.add_column("value", overflow="fold")
    _device_rows(table, d)
    if d.context_bytes or d.overhead:
        table.add_row(
            "allowances",
            f"CUDA context {format_bytes(d.context_bytes)}, allocator overhead {d.overhead:.0%} of tensors",
        )
    table.add_row("for tensors", format_bytes(d.tensor_budget))
    if p.max_batch:
        table.add_row("largest batch", f"{p.max_batch} ({_peak_text(p.tensor_peak_at_max, d)})")
    else:
        table.add_row("largest batch", "none: a batch of 1 does not fit")
    if p.batch is not None:
        verdict = "fits" if p.fits else "does not fit"
        table.add_row(f"batch {p.batch}", f"{verdict} ({_peak_text(p.tensor_peak_at_batch, d)})")
    table.add_row(
        "how",
        f"{len(p.traces)} steps traced with FakeTensorMode + MemTracker in {p.seconds:.1f} s; torch {p.torch_version}",
    )
    console.print(table)
    typer.echo("A prediction, not a measurement: benchmarks/fit_accuracy.py compares it with measured peaks.")


def _at_text(setup: Setup) -> str:
    return f"batch {setup.batch} x {setup.seq_len} tokens"


def _print_llm_prediction(p: LLMPrediction, title: str) -> None:
    d, s = p.device, p.setup
    table = Table(title=f"{title}: {s.describe()}; predicted", show_header=False)
    table.add_column("what")
    table.add_column("value", overflow="fold")
    _device_rows(table, d)
    breakdown = p.as_dict()["breakdown"]
    for kind, label in (
        ("weights", "weights"),
        ("gradients", "gradients"),
        ("optimizer_state", "optimizer state"),
        ("activations", "activations"),
        ("kv_cache", "KV cache"),
        ("gradient_buckets", "DDP gradient buckets"),
        ("cuda_context", "CUDA context"),
        ("allocator", f"allocator ({d.overhead:.0%})"),
    ):
        if breakdown.get(kind):
            table.add_row(f"  {label}", format_bytes(breakdown[kind]))
    verdict = "[green]fits[/]" if p.fits else "[red]does not fit[/]"
    if p.gpus > 1 and p.parallel == "data":
        table.add_row(f"at {_at_text(s)} on each", f"{format_bytes(p.peak_bytes)} on each of {p.gpus} GPUs: {verdict}")
    elif p.gpus > 1:
        table.add_row(f"on each of {p.gpus} GPUs", ", ".join(format_bytes(b) for b in p.per_gpu))
        table.add_row(f"at {_at_text(s)}", f"{format_bytes(p.peak_bytes)} on the fullest GPU: {verdict}")
    else:
        table.add_row(f"at {_at_text(s)}", f"{format_bytes(p.peak_bytes)}: {verdict}")
    if p.searched == "context":
        answer = f"{p.largest:,} tokens" if p.largest else "none: even 1 token does not fit"
        if p.largest == p.limit:
            answer += " (the model's maximum)"
        table.add_row(f"longest context (batch {s.batch})", answer)
    else:
        answer = str(p.largest) if p.largest else "none: a batch of 1 does not fit"
        if p.largest and p.gpus > 1 and p.parallel == "data":
            answer += f" per GPU, {p.largest * p.gpus} in all"
        table.add_row(f"largest batch ({s.seq_len} tokens)", answer)
    table.add_row("how", f"{p.method}; {p.seconds:.1f} s; " + ", ".join(f"{k} {v}" for k, v in p.versions.items()))
    console.print(table)
    if p.note:
        typer.echo(f"Note: {p.note}.")
    typer.echo("A prediction, not a measurement: benchmarks/llm_fit_published.py compares it with published peaks.")
