"""`benchlib list`: the registered workloads."""

from __future__ import annotations

from rich.console import Group, RenderableType
from rich.text import Text

from benchlib.cli.output import DETAIL_INDENT, Wrapped, console


def list_workloads() -> None:
    """List the workloads `benchlib run` can run, their framework and the suites they belong to."""
    from benchlib.workloads import all_workloads

    lines: list[RenderableType] = [Text("name  framework · metric (unit) · suites", style="dim")]
    # Records that other commands write (max-batch, launch) or only sources report are declared too.
    for w in (w for w in all_workloads().values() if w.run is not None):
        suites = ", ".join(w.suites) or "in no suite; run it with --only"
        facts = f"  {w.framework} · {w.metric.name} ({w.metric.unit}) · {suites}"
        lines.append(Wrapped(Text.assemble((w.name, "bold"), facts), hanging=len(w.name) + 2))
        lines.append(Wrapped(Text(w.description), indent=DETAIL_INDENT))
    console.print(Group(*lines))
