"""`benchlib predict`: how fast a model trains or runs on a named GPU, predicted from its specs.

The same models and options as `benchlib fit` (:mod:`benchlib.predict.speed`). Bad input (a
model, GPU, mode or dtype that doesn't apply) ends with a one-line message naming it and exit 2.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Annotated

import typer
from rich.table import Table

from benchlib.cli.fit import ModelOpt
from benchlib.cli.output import console, usage_error

if TYPE_CHECKING:
    from benchlib.predict.speed import SpeedPrediction


def predict(
    model: ModelOpt,
    gpu: Annotated[str, typer.Option("--gpu", help="A GPU in benchlib's specs, e.g. T4, 'A100 80GB SXM', 'RTX 4090'.")],
    mode: Annotated[
        str,
        typer.Option(
            "--mode",
            help="train (forward, backward and optimizer update) or inference "
            "(language models: prefill, then decode with a KV cache).",
        ),
    ] = "train",
    dtype: Annotated[
        str | None,
        typer.Option(
            "--dtype",
            help="fp32, fp16 or bf16 (training: autocast over fp32 weights). "
            "Default: fp32 for the built-in networks, bf16 for language models "
            "(fp16 where the GPU has no bf16).",
        ),
    ] = None,
    batch: Annotated[
        int | None, typer.Option("--batch", help="Samples per step (default 64 images, or 1 sequence).")
    ] = None,
    seq_len: Annotated[
        int | None,
        typer.Option(
            "--seq-len",
            help="Language models: tokens per sequence; for inference, the prompt "
            "and the KV cache a decode step reads (default 2048, or the model's limit).",
        ),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the prediction as one JSON object.")] = False,
) -> None:
    """Predict throughput (images/s or tokens/s) on a GPU from its specs, without a GPU."""
    from benchlib.catalog.gpus import UnknownGPU, find_gpu
    from benchlib.catalog.language_models import ModelNotFound, resolve_model
    from benchlib.models.trainable import MODELS
    from benchlib.predict.speed import predict_speed

    try:
        # The names are looked up once, here, and the specs passed on.
        spec = find_gpu(gpu, "`predict` times GPUs only")
        resolved = MODELS.get(model) or resolve_model(model, also_known=tuple(MODELS))
        prediction = predict_speed(resolved, spec, mode=mode, dtype=dtype, batch=batch, seq_len=seq_len)
    except (ModelNotFound, UnknownGPU, ValueError) as exc:
        raise usage_error(str(exc))
    if as_json:
        typer.echo(json.dumps(prediction.as_dict(), indent=2))
        return
    _print(prediction)


def _seconds(value: float) -> str:
    return f"{value * 1e3:,.1f} ms" if value < 1 else f"{value:,.2f} s"


def _flops(value: int) -> str:
    return f"{value / 1e12:,.2f} TFLOP" if value >= 1e11 else f"{value / 1e9:,.2f} GFLOP"


def _print(p: SpeedPrediction) -> None:
    r, step = p.rates, p.step
    shape = f"batch {p.batch}" + (f" x {p.seq_len} tokens" if p.seq_len else "")
    table = Table(title=f"{p.model} on {p.gpu}: {p.mode}, {p.dtype}, {shape}; predicted", show_header=False)
    table.add_column("what")
    table.add_column("value", overflow="fold")
    label = "decode" if p.prefill else "throughput"
    table.add_row(
        label,
        f"[bold]{p.throughput:,.0f} {p.unit}[/]" if p.throughput >= 10 else f"[bold]{p.throughput:,.2f} {p.unit}[/]",
    )
    if p.prefill:
        table.add_row(
            "prefill", f"{p.prefill_tokens_per_s:,.0f} tokens/s ({_seconds(p.prefill.seconds)} for the prompt)"
        )
    table.add_row("one step" if not p.prefill else "one decode step", _seconds(step.seconds))
    share = step.compute_bound_s / step.seconds if step.seconds else 0.0
    table.add_row("bound by", f"compute {share:.0%}, memory {1 - share:.0%} of the time")
    table.add_row("work", f"{_flops(step.flops)}, {step.bytes / 1e9:,.2f} GB moved")
    peaks = ", ".join(f"{k} {v:g}" for k, v in r.peaks_tflops.items())
    table.add_row("GPU figures", f"{peaks} TFLOPS; {r.bandwidth_gbps:g} GB/s ({r.generation})")
    table.add_row(
        "efficiency",
        f"compute {r.compute_efficiency:.0%} of peak ({r.efficiency_basis}); "
        f"memory {r.memory_efficiency:.0%} of bandwidth (fitted)",
    )
    if r.unverified:
        table.add_row("unverified", ", ".join(r.unverified) + " (specs not re-checked)")
    console.print(table)
    typer.echo(
        "A prediction, not a measurement: benchmarks/speed_published.py compares\n"
        "predictions with published throughput."
    )
