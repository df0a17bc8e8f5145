"""`benchlib max-batch` (measured) and `benchlib fit` (predicted), as plain typed functions.

benchlib's CLI registers them with ``app.command("max-batch")(max_batch)`` and
``app.command("fit")(fit)``. Bad input (a model, GPU, dtype or size benchlib doesn't know)
ends with a one-line message naming it and exit code 2.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Annotated, Any, Optional

import typer

from benchlib.fit.search import DEFAULT_BATCH_LIMIT, DEFAULT_STEPS

_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([kmgt]?i?b?)\s*$", re.IGNORECASE)
_UNITS = {"": 1, "b": 1, "k": 1024, "m": 1024**2, "g": 1024**3, "t": 1024**4}
CPU_DEFAULT_FRACTION = 0.5


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


def _fail(message: str) -> typer.Exit:
    from benchlib.cli import usage_error

    return usage_error(message)


def _gib(n: int | None) -> str:
    from benchlib.probe.units import format_bytes

    return format_bytes(n)


ModelOpt = Annotated[str, typer.Option("--model", help="resnet50, vit_b_16, bert_base, gpt2_small or unet.")]
InputOpt = Annotated[Optional[str], typer.Option("--input", help="Input per sample: CxHxW for images, a length for tokens. Default: the model's own.")]
DtypeOpt = Annotated[str, typer.Option("--dtype", help="fp32, or fp16/bf16 mixed precision (autocast, fp32 weights).")]
OptimizerOpt = Annotated[str, typer.Option("--optimizer", help="adam or sgd (with momentum).")]
SizeOpt = Annotated[str, typer.Option("--size", help="full, or small: the same kind of network, tiny, for tests.")]


def max_batch(
    model: ModelOpt,
    input: InputOpt = None,
    dtype: DtypeOpt = "fp32",
    optimizer: OptimizerOpt = "adam",
    device: Annotated[str, typer.Option(help="auto, cpu, cuda or mps.")] = "auto",
    memory_limit: Annotated[Optional[str], typer.Option("--memory-limit", help="Cap on the trial's memory, e.g. 2GiB. On CPU the default is half the memory free now.")] = None,
    start: Annotated[int, typer.Option(help="First batch size tried.")] = 1,
    batch_limit: Annotated[int, typer.Option("--batch-limit", help="Largest batch size tried.")] = DEFAULT_BATCH_LIMIT,
    steps: Annotated[int, typer.Option(help="Full training steps per trial, after the optimizer state exists.")] = DEFAULT_STEPS,
    size: SizeOpt = "full",
    out: Annotated[Path, typer.Option(help="Results folder; the file goes to OUT/<machine id>/<run id>.json.")] = Path("results"),
) -> None:
    """Measure the largest batch that completes a training step without running out of memory."""
    from datetime import datetime, timezone

    from rich.console import Console

    from benchlib.backends import DeviceUnavailable, FrameworkMissing
    from benchlib.fit.models import UnknownModel, get_model
    from benchlib.fit.search import TrialRequest, search_max_batch, trial_runner, write_search
    from benchlib.fit.step import DTYPES, OPTIMIZERS, check_choice
    from benchlib.probe import probe_machine
    from benchlib.runner import new_run_id

    err = Console(stderr=True)
    try:
        spec = get_model(model)
        check_choice("dtype", dtype, DTYPES)
        check_choice("optimizer", optimizer, OPTIMIZERS)
        shape = parse_shape(input) if input else None
        spec.dims(size, shape)
        limit_bytes = parse_bytes(memory_limit) if memory_limit else None
        if start < 1 or batch_limit < start:
            raise ValueError(f"--start {start} and --batch-limit {batch_limit}: need 1 <= start <= batch limit")
        if steps < 1:
            raise ValueError(f"--steps {steps}: at least one step is needed")
        from benchlib.backends.torch_backend import resolve_device

        resolved = resolve_device(device)
    except (UnknownModel, ValueError, DeviceUnavailable, FrameworkMissing) as exc:
        raise _fail(str(exc))
    if resolved == "cpu" and limit_bytes is None:
        import psutil

        limit_bytes = int(psutil.virtual_memory().available * CPU_DEFAULT_FRACTION)
        err.print(f"no --memory-limit: capping each CPU trial at half the memory free now, {_gib(limit_bytes)}")
    base = TrialRequest(model=model, batch=start, size=size, dtype=dtype, optimizer=optimizer, device=resolved,
                        steps=steps, memory_limit=limit_bytes, input_shape=shape)
    machine = probe_machine(results_dir=str(out))
    path = out / machine.id / f"{new_run_id(datetime.now(timezone.utc))}.json"
    err.print(f"machine: [bold]{machine.label}[/] ({machine.id}); {spec.title} on {resolved}, {dtype}, {optimizer}")
    trials: list[Any] = []

    def on_trial(outcome: Any) -> None:
        trials.append(outcome)
        peak = f", peak {_gib(outcome.peak_bytes)}" if outcome.peak_bytes is not None else ""
        note = f": {outcome.message}" if outcome.message and outcome.status != "ok" else ""
        err.print(f"  batch {outcome.batch}: {outcome.status}{peak} ({outcome.seconds:.1f} s){note}")
        # After every trial, so a killed search keeps what it found.
        write_search(path, base, trials, machine=machine, start=start, limit=batch_limit)

    result = search_max_batch(trial_runner(base), start=start, limit=batch_limit, on_trial=on_trial)
    write_search(path, base, result.trials, machine=machine, start=start, limit=batch_limit, result=result)
    best = result.at(result.max_batch)
    if result.max_batch:
        where = "the batch limit" if result.stopped_by == "limit" else f"batch {result.first_oom} ran out of memory"
        typer.echo(f"{model}: largest batch {result.max_batch} ({where}); peak {_gib(best.peak_bytes if best else None)}")
    else:
        typer.echo(f"{model}: no batch size fits" if result.stopped_by == "oom" else f"{model}: the search stopped on an error")
    err.print(f"wrote [bold]{path}[/]")
    if result.stopped_by == "error":
        raise typer.Exit(1)


def fit(
    model: ModelOpt,
    gpu: Annotated[Optional[str], typer.Option("--gpu", help="A GPU in benchlib's specs, e.g. T4, 'A100 40GB SXM', 'RTX 4090'.")] = None,
    batch: Annotated[Optional[int], typer.Option("--batch", help="Also predict this batch size and say whether it fits.")] = None,
    dtype: DtypeOpt = "fp32",
    optimizer: OptimizerOpt = "adam",
    input: InputOpt = None,
    memory_limit: Annotated[Optional[str], typer.Option("--memory-limit", help="Instead of --gpu: a plain memory budget with no CUDA allowances (the CPU case).")] = None,
    size: SizeOpt = "full",
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
        raise _fail(str(exc))
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


def _print_prediction(p: Any) -> None:
    from rich.console import Console
    from rich.table import Table

    d = p.device
    table = Table(title=f"{p.model} ({'x'.join(map(str, p.input_shape))} per sample), {p.dtype}, {p.optimizer}: predicted", show_header=False)
    table.add_column("what")
    table.add_column("value", overflow="fold")
    table.add_row("device", d.name)
    if d.total_bytes is not None:
        table.add_row("memory", _gib(d.total_bytes))
    table.add_row("usable", f"{_gib(d.usable_bytes)} ({d.basis}; {d.status})")
    if d.context_bytes or d.overhead:
        table.add_row("allowances", f"CUDA context {_gib(d.context_bytes)}, allocator overhead {d.overhead:.0%} of tensors")
    table.add_row("for tensors", _gib(d.tensor_budget))
    if p.max_batch:
        table.add_row("largest batch", f"{p.max_batch} (tensor peak {_gib(p.tensor_peak_at_max)}, {_gib(d.on_device(p.tensor_peak_at_max))} on the device)")
    else:
        table.add_row("largest batch", "none: a batch of 1 does not fit")
    if p.batch is not None:
        verdict = "fits" if p.fits else "does not fit"
        table.add_row(f"batch {p.batch}", f"{verdict} (tensor peak {_gib(p.tensor_peak_at_batch)}, {_gib(d.on_device(p.tensor_peak_at_batch))} on the device)")
    table.add_row("how", f"{len(p.traces)} steps traced with FakeTensorMode + MemTracker in {p.seconds:.1f} s; torch {p.torch_version}")
    Console().print(table)
    typer.echo("A prediction, not a measurement: benchmarks/fit_accuracy.py compares it with measured peaks.")
