"""`benchlib probe`: describe this machine."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from benchlib.cli.output import console


def probe(
    as_json: Annotated[bool, typer.Option("--json", help="Print the machine record as JSON.")] = False,
    results_dir: Annotated[
        Path, typer.Option("--out", help="Where results would be written (its disk is reported).")
    ] = Path("results"),
) -> None:
    """Describe this machine: platform, CPU, memory, disk, /dev/shm, GPUs, TPU and software."""
    from benchlib.probe import machine_table, probe_machine

    machine = probe_machine(results_dir=str(results_dir))
    if as_json:
        print(machine.model_dump_json(indent=2))
    else:
        console.print(machine_table(machine))
