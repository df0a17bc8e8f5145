"""`benchlib launch`: data-parallel training on 1 and N devices, and the scaling between them.

`benchlib run --devices N` is the same as ``launch(nproc=N, size=suite, device=device, out=out)``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

from benchlib.cli.output import at_least, console, err, exit_if_failed, records_table, usage_error


def launch(
    nproc: Annotated[
        int | None,
        typer.Option(
            "--nproc-per-node",
            "--nproc",
            "-n",
            callback=at_least(1),
            help="N, the devices to scale to (torch: processes). Default: every GPU or TPU chip, or 2 on a CPU.",
        ),
    ] = None,
    framework: Annotated[
        list[str] | None,
        typer.Option(
            "--framework",
            "-f",
            help="torch (DDP through torchrun), tf (MirroredStrategy, TPUStrategy on TPUs) or jax "
            "(jax.sharding mesh). Repeatable. Default: torch.",
        ),
    ] = None,
    size: Annotated[
        str, typer.Option(help="quick (seconds on a CPU), standard (minutes on Kaggle's T4 x2) or full.")
    ] = "quick",
    device: Annotated[
        str, typer.Option(help="auto, cpu, cuda or tpu. auto picks this machine's accelerator.")
    ] = "auto",
    backend: Annotated[
        str, typer.Option(help="torch only: auto (nccl on GPUs, gloo on the CPU), nccl or gloo.")
    ] = "auto",
    out: Annotated[
        Path, typer.Option(help="Results folder; the file goes to `OUT/<machine id>/<run id>.json`.")
    ] = Path("results"),
) -> None:
    """Train on 1 device and on N in one launch; report throughput, scaling efficiency and all-reduce bandwidth."""
    from benchlib.measure.distributed.launch import BACKENDS, DEVICES, ENGINES, ScalingRun, run_scaling
    from benchlib.measure.distributed.report import SIZES
    from benchlib.probe import probe_machine

    engines = framework or ["torch"]
    for name, value, allowed in (
        ("size", size, tuple(SIZES)),
        ("device", device, DEVICES),
        ("backend", backend, BACKENDS),
    ):
        if value not in allowed:
            raise usage_error(f"unknown {name} {value!r}; choose one of {', '.join(allowed)}")
    for engine in engines:
        if engine not in ENGINES:
            raise usage_error(f"unknown framework {engine!r}; choose one of {', '.join(ENGINES)}")

    machine = probe_machine(results_dir=str(out))
    err.print(f"machine: [bold]{escape(machine.label)}[/] ({escape(machine.id)})")
    plan = ScalingRun(engines=engines, devices=nproc, size=size, device=device, backend=backend)
    outcome = run_scaling(
        plan,
        machine=machine,
        out_dir=out,
        on_start=lambda what: err.print(f"  {what} ...", markup=False),
        on_done=lambda what, records: err.print(
            f"  {what}: " + ", ".join(f"{r.workload} {r.status}" for r in records), markup=False
        ),
    )
    console.print(records_table(outcome.results.measurements, f"{machine.label}: data-parallel training, {size}"))
    err.print(f"wrote [bold]{escape(str(outcome.path))}[/] in {outcome.wall_s:.1f} s")
    exit_if_failed(outcome.failed)
