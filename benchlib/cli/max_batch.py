"""`benchlib max-batch`: the largest batch that trains without running out of memory, measured.

Bad input (a model, dtype or size benchlib doesn't know) ends with a one-line message naming it
and exit code 2.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

from benchlib.cli.fit_options import DtypeOpt, InputOpt, ModelOpt, ModelSizeOpt, OptimizerOpt, parse_bytes, parse_shape
from benchlib.cli.output import at_least, err, usage_error
from benchlib.core.units import format_bytes
from benchlib.measure.max_batch import DEFAULT_BATCH_LIMIT, DEFAULT_STEPS, TrialOutcome

# Without --memory-limit a CPU trial may take this share of the memory free when the search starts.
CPU_DEFAULT_FRACTION = 0.5


def max_batch(
    model: ModelOpt,
    input: InputOpt = None,
    dtype: DtypeOpt = "fp32",
    optimizer: OptimizerOpt = "adam",
    device: Annotated[str, typer.Option(help="auto, cpu, cuda or mps.")] = "auto",
    memory_limit: Annotated[
        str | None,
        typer.Option(
            "--memory-limit",
            help="Cap on the trial's memory, e.g. 2GiB. On CPU the default is half the memory free now.",
        ),
    ] = None,
    start: Annotated[int, typer.Option(callback=at_least(1), help="First batch size tried.")] = 1,
    batch_limit: Annotated[
        int, typer.Option("--batch-limit", callback=at_least(1), help="Largest batch size tried.")
    ] = DEFAULT_BATCH_LIMIT,
    steps: Annotated[
        int, typer.Option(callback=at_least(1), help="Full training steps per trial, after the optimizer state exists.")
    ] = DEFAULT_STEPS,
    size: ModelSizeOpt = "full",
    out: Annotated[
        Path, typer.Option(help="Results folder; the file goes to `OUT/<machine id>/<run id>.json`.")
    ] = Path("results"),
) -> None:
    """Measure the largest batch that completes a training step without running out of memory."""

    from benchlib.backends import DeviceUnavailable, FrameworkMissing
    from benchlib.measure.max_batch import SEARCH_SUITE, TrialRequest, search_max_batch, trial_runner, write_search
    from benchlib.models.step import DTYPES, OPTIMIZERS, check_choice
    from benchlib.models.trainable import UnknownModel, get_model
    from benchlib.probe import probe_machine
    from benchlib.results.store import new_results, results_path

    try:
        spec = get_model(model)
        check_choice("dtype", dtype, DTYPES)
        check_choice("optimizer", optimizer, OPTIMIZERS)
        shape = parse_shape(input) if input else None
        spec.dims(size, shape)
        limit_bytes = parse_bytes(memory_limit) if memory_limit else None
        if batch_limit < start:
            raise ValueError(f"--batch-limit {batch_limit} is below --start {start}; give a limit of at least {start}")
        from benchlib.backends.torch_backend import resolve_device

        resolved = resolve_device(device)
    except (UnknownModel, ValueError, DeviceUnavailable, FrameworkMissing) as exc:
        raise usage_error(str(exc))
    if resolved == "cpu" and limit_bytes is None:
        import psutil

        limit_bytes = int(psutil.virtual_memory().available * CPU_DEFAULT_FRACTION)
        err.print(f"no --memory-limit: capping each CPU trial at half the memory free now, {format_bytes(limit_bytes)}")
    base = TrialRequest(
        model=model,
        batch=start,
        size=size,
        dtype=dtype,
        optimizer=optimizer,
        device=resolved,
        steps=steps,
        memory_limit=limit_bytes,
        input_shape=shape,
    )
    machine = probe_machine(results_dir=str(out))
    header = new_results(machine, SEARCH_SUITE)
    path = results_path(out, header)
    err.print(
        f"machine: [bold]{escape(machine.label)}[/] ({escape(machine.id)}); {spec.title} on {resolved}, {dtype}, {optimizer}"
    )
    trials: list[TrialOutcome] = []

    def on_trial(outcome: TrialOutcome) -> None:
        trials.append(outcome)
        peak = f", peak {format_bytes(outcome.peak_bytes)}" if outcome.peak_bytes is not None else ""
        note = f": {outcome.message}" if outcome.message and outcome.status != "ok" else ""
        err.print(f"  batch {outcome.batch}: {outcome.status}{peak} ({outcome.seconds:.1f} s){escape(note)}")
        # After every trial, so a killed search keeps what it found.
        write_search(path, header, base, trials, start=start, limit=batch_limit)

    result = search_max_batch(trial_runner(base), start=start, limit=batch_limit, on_trial=on_trial)
    write_search(path, header, base, result.trials, start=start, limit=batch_limit, result=result)
    best = result.at(result.max_batch)
    if result.max_batch:
        where = "the batch limit" if result.stopped_by == "limit" else f"batch {result.first_oom} ran out of memory"
        typer.echo(
            f"{model}: largest batch {result.max_batch} ({where}); peak {format_bytes(best.peak_bytes if best else None)}"
        )
    else:
        typer.echo(
            f"{model}: no batch size fits" if result.stopped_by == "oom" else f"{model}: the search stopped on an error"
        )
    err.print(f"wrote [bold]{escape(str(path))}[/]")
    if result.stopped_by == "error":
        raise typer.Exit(1)
