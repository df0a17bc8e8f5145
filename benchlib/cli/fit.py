"""`benchlib fit`: peak memory and the largest batch (or context) that fits, predicted without a GPU.

Two kinds of model: the five built-in networks (ResNet-50 ... U-Net, full training only, as
before) and language models (:mod:`benchlib.predict.llm_memory`: shipped configs, a config.json, a hub id or
``module:factory``) in four modes. A shipped model in a setup the "Can I run it?" page offers is
answered from the committed formulas without building it (:mod:`benchlib.cli.formulas`; ``--trace``
traces it). Bad input (a model, GPU, mode or option that doesn't apply) ends with a one-line message
naming it and exit code 2.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated

import typer
from rich.table import Table

from benchlib.cli.collector import collector_paused
from benchlib.cli.fit_options import (
    ENGINE_HELP,
    KV_CACHE_HELP,
    MAX_BATCH,
    MAX_GPUS,
    MAX_LORA_RANK,
    WEIGHTS_HELP,
    InputOpt,
    ModelSizeOpt,
    flags_command,
    parse_bytes,
    parse_shape,
)
from benchlib.cli.formulas import TRACE_HELP
from benchlib.cli.output import at_least, console, usage_error
from benchlib.core.units import format_bytes

if TYPE_CHECKING:
    from benchlib.catalog.gpus import AcceleratorSpec
    from benchlib.catalog.language_models import LanguageModel
    from benchlib.predict.formula_file import ModelFormulas
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


@dataclass(frozen=True)
class FitFlags:
    """`benchlib fit`'s flags as given, in the order `--help` lists them."""

    model: ModelOpt
    gpu: Annotated[
        str | None, typer.Option("--gpu", help="A GPU in benchlib's specs, e.g. T4, 'A100 40GB SXM', 'RTX 4090'.")
    ] = None
    mode: ModeOpt = None
    batch: Annotated[
        int | None,
        typer.Option(
            "--batch",
            callback=at_least(1, at_most=MAX_BATCH),
            help="Also say whether this batch fits (language models: default 1).",
        ),
    ] = None
    seq_len: Annotated[
        int | None,
        typer.Option(
            "--seq-len",
            callback=at_least(1),
            help="Language models: tokens per sample (default 2048, or the model's limit if shorter).",
        ),
    ] = None
    lora_rank: Annotated[
        int | None,
        typer.Option(
            "--lora-rank",
            callback=at_least(1, at_most=MAX_LORA_RANK),
            help="lora/qlora: the adapters' rank (default 16).",
        ),
    ] = None
    lora_targets: Annotated[
        str, typer.Option("--lora-targets", help="lora/qlora: all-linear, or module names such as q_proj,v_proj.")
    ] = "all-linear"
    weights: Annotated[str | None, typer.Option("--weights", help=WEIGHTS_HELP)] = None
    kv_cache: Annotated[str | None, typer.Option("--kv-cache", help=KV_CACHE_HELP)] = None
    engine: Annotated[str | None, typer.Option("--engine", help=ENGINE_HELP)] = None
    dtype: DtypeOpt = None
    grad_checkpointing: Annotated[
        bool, typer.Option("--grad-checkpointing", help="Training modes: recompute activations in the backward pass.")
    ] = False
    optimizer: OptimizerOpt = None
    input: InputOpt = None
    memory_limit: Annotated[
        str | None,
        typer.Option(
            "--memory-limit", help="Instead of --gpu: a plain memory budget with no CUDA allowances (the CPU case)."
        ),
    ] = None
    size: ModelSizeOpt = "full"
    gpus: Annotated[
        int,
        typer.Option(
            "--gpus",
            callback=at_least(1, at_most=MAX_GPUS),
            help="Language models: this many GPUs, sharing the work as --parallel says (Kaggle's two "
            "T4s: --gpus 2); the answer is the fullest GPU's.",
        ),
    ] = 1
    parallel: Annotated[
        str,
        typer.Option(
            "--parallel",
            help='With --gpus: layers (split the layers in order, as device_map="auto" does) or data '
            "(a whole copy on each GPU, as DDP and accelerate launch do; --batch and the largest batch "
            "are per GPU, and training adds DDP's gradient buckets).",
        ),
    ] = "layers"
    sizes: Annotated[
        bool,
        typer.Option(
            "--sizes",
            help="Language models: also the longest context at 1, 4, 16 and 64 sequences (inference), or "
            "the largest batch at 512 to 32,768 tokens (training), from the memory as a formula in the "
            "batch and the length (a few more traces; within 1 % of a trace's peak).",
        ),
    ] = False
    trace: Annotated[bool, typer.Option("--trace", help=TRACE_HELP)] = False
    as_json: Annotated[bool, typer.Option("--json", help="Print the prediction as one JSON object.")] = False


@collector_paused()
def predict_fit(flags: FitFlags) -> None:
    """Predict peak memory and the largest batch (or, for inference, context) that fits, without a GPU."""
    from benchlib.models.trainable import MODELS

    if flags.model in MODELS:
        if flags.sizes:
            raise usage_error(
                f"--sizes: the longest context and largest batch at other sizes are for language models, not {flags.model}"
            )
        if flags.gpus != 1 or flags.parallel != "layers":
            flag = f"--gpus {flags.gpus}" if flags.gpus != 1 else f"--parallel {flags.parallel}"
            raise usage_error(f"{flag}: sharing work over GPUs applies to language models, not {flags.model}")
        _fit_builtin(flags)
    else:
        _fit_language_model(flags)


fit = flags_command(FitFlags, predict_fit)


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


def _fit_builtin(flags: FitFlags) -> None:
    from benchlib.catalog.gpus import UnknownGPU
    from benchlib.models.step import DTYPES, OPTIMIZERS, check_choice
    from benchlib.models.trainable import get_model
    from benchlib.predict.llm_options import check_bf16
    from benchlib.predict.memory import predict

    dtype, optimizer = flags.dtype or "fp32", flags.optimizer or "adam"
    try:
        given = [
            flag
            for flag, value in (
                ("--seq-len", flags.seq_len),
                ("--lora-rank", flags.lora_rank),
                ("--weights", flags.weights),
                ("--kv-cache", flags.kv_cache),
                ("--engine", flags.engine),
                ("--grad-checkpointing", flags.grad_checkpointing or None),
                ("--trace", flags.trace or None),
            )
            if value is not None
        ]
        if flags.mode not in (None, "train"):
            given.insert(0, f"--mode {flags.mode}")
        if given:
            raise ValueError(
                f"{', '.join(given)}: {flags.model} is one of the five built-in networks, predicted for full "
                "training only; these options are for language models (e.g. --model llama-3.2-1b)"
            )
        check_choice("dtype", dtype, DTYPES)
        check_choice("optimizer", optimizer, OPTIMIZERS)
        spec = _gpu(flags.gpu, flags.memory_limit)
        device = _device(spec, flags.memory_limit)
        shape = parse_shape(flags.input) if flags.input else None
        get_model(flags.model).dims(flags.size, shape)
        if spec and dtype == "bf16":
            check_bf16(spec, "--dtype bf16")
    except (UnknownGPU, ValueError) as exc:
        raise usage_error(str(exc))
    # On a GPU torch's optimizers default to the multi-tensor (foreach) code; on the CPU they don't.
    prediction = predict(
        flags.model,
        device,
        batch=flags.batch,
        dtype=dtype,
        optimizer=optimizer,
        size=flags.size,
        foreach=True if flags.gpu else None,
        input_shape=shape,
    )
    if flags.as_json:
        typer.echo(json.dumps(prediction.as_dict(), indent=2))
        return
    _print_prediction(prediction)


def _fit_language_model(flags: FitFlags) -> None:
    from benchlib.catalog.gpus import UnknownGPU
    from benchlib.catalog.language_models import ModelNotFound, tracing
    from benchlib.cli.formulas import resolve
    from benchlib.core.cache import cache_folder
    from benchlib.models.trainable import MODELS
    from benchlib.predict.formula import memory_formula, other_sizes
    from benchlib.predict.llm_memory import predict_llm
    from benchlib.predict.llm_options import LLMOptions

    try:
        if flags.input is not None:
            raise ValueError("--input is for the five built-in networks; a language model takes --seq-len")
        spec = _gpu(flags.gpu, flags.memory_limit)
        device = _device(spec, flags.memory_limit)
        options = LLMOptions(
            spec,
            mode=flags.mode,
            weights=flags.weights,
            dtype=flags.dtype,
            kv_cache=flags.kv_cache,
            batch=flags.batch,
            seq_len=flags.seq_len,
            lora_rank=flags.lora_rank,
            lora_targets=flags.lora_targets,
            grad_checkpointing=flags.grad_checkpointing,
            optimizer=flags.optimizer,
            engine=flags.engine,
        )
        asked = resolve(flags.model, options, tuple(MODELS), trace=flags.trace, parallel=flags.parallel)
        language_model, resolved = asked.model, asked.resolved
        with tracing(language_model):
            if resolved.engine.name == "llama.cpp":
                if flags.sizes:
                    raise ValueError(
                        "--sizes: llama.cpp's memory is a sum of its buffers, one context at a time; ask for another --seq-len instead"
                    )
                _fit_llama_cpp(flags, language_model, resolved.setup, device, asked.formulas)
                return
            if asked.formulas is not None:
                prediction = asked.formulas.predict(device, flags.gpus)
                if flags.sizes:
                    prediction.other_sizes = asked.formulas.other_sizes(device.tensor_budget, flags.gpus)
            else:
                prediction = predict_llm(
                    language_model,
                    resolved.setup,
                    device,
                    cache_dir=cache_folder("fit-llm"),
                    gpus=flags.gpus,
                    parallel=flags.parallel,
                )
                if flags.sizes:
                    formula = memory_formula(language_model, resolved.setup, flags.gpus, flags.parallel)
                    prediction.other_sizes = other_sizes(formula, device.tensor_budget)
        prediction.note = resolved.note
    except (ModelNotFound, UnknownGPU, ValueError) as exc:
        raise usage_error(str(exc))
    if flags.as_json:
        typer.echo(json.dumps(prediction.as_dict(), indent=2))
        return
    _print_llm_prediction(prediction, language_model.title)


def _fit_llama_cpp(
    flags: FitFlags, model: LanguageModel, setup: Setup, device: DeviceMemory, formulas: ModelFormulas | None
) -> None:
    """llama.cpp's buffers instead of PyTorch's: `benchlib.predict.llama_cpp`, from the committed
    formulas' shape of the GGUF file where they hold it."""
    from benchlib.cli.formulas import llama_cpp_fit

    if flags.parallel != "layers":
        raise ValueError(
            f"--parallel {flags.parallel} with --engine llama.cpp: llama.cpp splits the layers over GPUs "
            "(--split-mode layer); use --parallel layers"
        )
    if flags.batch not in (None, 1):
        raise ValueError(f"--batch {flags.batch} with --engine llama.cpp: its memory is predicted for one sequence")
    fit = llama_cpp_fit(model, setup, device, formulas, flags.gpus)
    if flags.as_json:
        typer.echo(json.dumps(fit.as_dict(), indent=2))
        return
    table = Table(title=f"{model.title} in llama.cpp: {setup.weights} weights; predicted", show_header=False)
    table.add_column("what")
    table.add_column("value", overflow="fold")
    _device_rows(table, device)
    table.add_row("  model buffer", f"{format_bytes(fit.model_buffer)} ({fit.gpu_layers} of {fit.layers} layers)")
    table.add_row("  KV cache", f"{format_bytes(fit.kv_cache)} ({fit.context:,} tokens, {setup.kv_cache})")
    table.add_row("  compute buffer", format_bytes(fit.compute_buffer))
    table.add_row("  CUDA context", format_bytes(fit.cuda_context))
    table.add_row(
        "  in host memory", f"{format_bytes(fit.host_model_buffer)} (token embeddings, and layers left on the CPU)"
    )
    if fit.fits:
        table.add_row(f"at {fit.context:,} tokens", f"{format_bytes(fit.gpu_bytes)}: [green]fits[/] (-ngl 99)")
    else:
        table.add_row(
            f"at {fit.context:,} tokens",
            f"[red]does not fit whole[/]: -ngl {fit.gpu_layers} puts {fit.gpu_layers} of {fit.layers} layers on "
            "the GPU and runs the rest on the CPU, much slower",
        )
    longest = f"{fit.largest_context:,} tokens" if fit.largest_context else "none: the weights alone don't fit"
    if fit.largest_context and fit.largest_context == fit.limit:
        longest += " (the model's maximum)"
    table.add_row("longest context, all layers on the GPU", longest)
    table.add_row("how", fit.as_dict()["method"])
    console.print(table)
    typer.echo("A prediction, not a measurement: check it with llama-cli's load log (model, KV and compute buffers).")


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


def _other_sizes_row(p: LLMPrediction) -> tuple[str, str]:
    """`fit --sizes`: the largest context per batch, or the largest batch per length."""
    per_gpu = " per GPU" if p.gpus > 1 and p.parallel == "data" else ""
    if p.searched == "context":
        answers = [f"{b} x {n:,}" if n else f"{b} x none" for b, n in p.other_sizes.items()]
        return "longest context at other batches", "; ".join(answers) + " tokens"
    answers = [f"{n}{per_gpu} at {length:,}" if n else f"none at {length:,}" for length, n in p.other_sizes.items()]
    return "largest batch at other lengths", "; ".join(answers) + " tokens"


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
    if p.other_sizes:
        table.add_row(*_other_sizes_row(p))
    table.add_row("how", f"{p.method}; {p.seconds:.1f} s; " + ", ".join(f"{k} {v}" for k, v in p.versions.items()))
    console.print(table)
    if p.note:
        typer.echo(f"Note: {p.note}.")
    typer.echo("A prediction, not a measurement: benchmarks/llm_fit_published.py compares it with published peaks.")
