"""`benchlib fit`: peak training memory and the largest batch that fits, predicted without a GPU.

Bad input (a model, GPU, dtype or size benchlib doesn't know) ends with a one-line message
naming it and exit code 2.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Annotated, Optional

import typer
from rich.table import Table

from benchlib.cli.fit_options import DtypeOpt, InputOpt, ModelOpt, ModelSizeOpt, OptimizerOpt, parse_bytes, parse_shape
from benchlib.cli.output import console, usage_error
from benchlib.probe.units import format_bytes

if TYPE_CHECKING:
    from benchlib.fit.predict import DeviceMemory, Prediction


def fit(
    model: ModelOpt,
    gpu: Annotated[Optional[str], typer.Option("--gpu", help="A GPU in benchlib's specs, e.g. T4, 'A100 40GB SXM', 'RTX 4090'.")] = None,
    batch: Annotated[Optional[int], typer.Option("--batch", help="Also predict this batch size and say whether it fits.")] = None,
    dtype: DtypeOpt = "fp32",
    optimizer: OptimizerOpt = "adam",
    input: InputOpt = None,
    memory_limit: Annotated[Optional[str], typer.Option("--memory-limit", help="Instead of --gpu: a plain memory budget with no CUDA allowances (the CPU case).")] = None,
    size: ModelSizeOpt = "full",
    as_json: Annotated[bool, typer.Option("--json", help="Print the prediction as JSON.")] = False,
) -> None:
    """Predict peak training memory and the largest batch that fits, without a GPU."""
    from benchlib.fit.models import UnknownModel, get_model
    from benchlib.fit.predict import UnknownGPU, gpu_memory, memory_limit as limit_budget, predict
    from benchlib.fit.step import DTYPES, OPTIMIZERS, check_choice

    try:
        get_model(model)
        check_choice("dtype", dtype, DTYPES)
        check_choice("optimizer", optimizer, OPTIMIZERS)
        if (gpu is None) == (memory_limit is None):
            raise ValueError("give either --gpu NAME or --memory-limit SIZE")
        shape = parse_shape(input) if input else None
        get_model(model).dims(size, shape)
        if batch is not None and batch < 1:
            raise ValueError(f"--batch {batch}: must be at least 1")
        device = gpu_memory(gpu) if gpu else limit_budget(parse_bytes(memory_limit or ""))
        if gpu and dtype == "bf16":
            _check_bf16(gpu)
    except (UnknownModel, UnknownGPU, ValueError) as exc:
        raise usage_error(str(exc))
    # On a GPU torch's optimizers default to the multi-tensor (foreach) code; on the CPU they don't.
    prediction = predict(model, device, batch=batch, dtype=dtype, optimizer=optimizer, size=size,
                         foreach=True if gpu else None, input_shape=shape)
    if as_json:
        typer.echo(json.dumps(prediction.as_dict(), indent=2))
        return
    _print_prediction(prediction)


def _check_bf16(gpu: str) -> None:
    from benchlib.specs import find_accelerator

    spec = find_accelerator(gpu)
    if spec is not None and spec.bf16_supported is not None and not spec.bf16_supported.value:
        raise ValueError(f"--dtype bf16: the {spec.name} has no hardware bf16 (see its specs); use --dtype fp16")


def _peak_text(tensor_peak: int, device: DeviceMemory) -> str:
    return f"tensor peak {format_bytes(tensor_peak)}, {format_bytes(device.on_device(tensor_peak))} on the device"


def _print_prediction(p: Prediction) -> None:
    d = p.device
    table = Table(title=f"{p.model} ({'x'.join(map(str, p.input_shape))} per sample), {p.dtype}, {p.optimizer}: predicted", show_header=False)
    table.add_column("what")
    table.add_column("value", overflow="fold")
    table.add_row("device", d.name)
    if d.total_bytes is not None:
        table.add_row("memory", format_bytes(d.total_bytes))
    table.add_row("usable", f"{format_bytes(d.usable_bytes)} ({d.basis}; {d.status})")
    if d.context_bytes or d.overhead:
        table.add_row("allowances", f"CUDA context {format_bytes(d.context_bytes)}, allocator overhead {d.overhead:.0%} of tensors")
    table.add_row("for tensors", format_bytes(d.tensor_budget))
    if p.max_batch:
        table.add_row("largest batch", f"{p.max_batch} ({_peak_text(p.tensor_peak_at_max, d)})")
    else:
        table.add_row("largest batch", "none: a batch of 1 does not fit")
    if p.batch is not None:
        verdict = "fits" if p.fits else "does not fit"
        table.add_row(f"batch {p.batch}", f"{verdict} ({_peak_text(p.tensor_peak_at_batch, d)})")
    table.add_row("how", f"{len(p.traces)} steps traced with FakeTensorMode + MemTracker in {p.seconds:.1f} s; torch {p.torch_version}")
    console.print(table)
    typer.echo("A prediction, not a measurement: benchmarks/fit_accuracy.py compares it with measured peaks.")
