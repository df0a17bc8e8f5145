"""What every command prints with: the two consoles, errors, wrapped text, the measurements table and the
progress bar.

Every string that comes from a results file is printed as plain text (`Text`, `escape`), never
as rich markup: a device name like "[/]" must neither style the output nor crash it.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import typer
from rich.console import Console, ConsoleOptions, Group, RenderableType, RenderResult
from rich.progress import BarColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn
from rich.text import Text

from benchlib.results.schema import MeasurementRecord

console = Console()
err = Console(stderr=True)

STATUS_STYLE = {"ok": "green", "skipped": "yellow", "oom": "red", "error": "red", "invalid": "magenta"}
DETAIL_INDENT = 4


def print_error(message: str) -> None:
    """``error: message`` on stderr."""
    # Plain text: messages quote file names and user input; soft wrap keeps paths copyable.
    err.print(Text.assemble(("error:", "bold red"), " ", message), soft_wrap=True)


def usage_error(message: str) -> typer.Exit:
    """Print ``error: message`` and return the exit (code 2) for the caller to raise."""
    print_error(message)
    return typer.Exit(2)


def at_least(
    minimum: float, *, at_most: float | None = None
) -> Callable[[typer.CallbackParam, float | None], float | None]:
    """An option's callback that refuses a number below ``minimum``, above ``at_most`` or not finite in
    one line naming the option, while the command line is read: before a model is looked up or a run starts.

    Each numeric option declares its range with it, so every command checks its numbers the same way.
    """

    def check(param: typer.CallbackParam, value: float | None) -> float | None:
        if value is None:
            return value
        flag = param.opts[0]
        if not math.isfinite(value):
            raise usage_error(f"{flag} must be a finite number, got {_number(value)}")
        if value < minimum:
            raise usage_error(f"{flag} must be at least {_number(minimum)}, got {_number(value)}")
        if at_most is not None and value > at_most:
            raise usage_error(f"{flag} must be at most {_number(at_most)}, got {_number(value)}")
        return value

    return check


def _number(value: float) -> str:
    """A whole number in full (1048576, not 1.04858e+06); a fraction as short as it reads (0.5, not 0.500000)."""
    return f"{value:g}" if isinstance(value, float) else str(value)


def exit_if_failed(failed: Sequence[MeasurementRecord]) -> None:
    """Exit 1, saying how many, if any measurement failed; the results file keeps the rest."""
    if failed:
        err.print(f"[red]{len(failed)} measurement(s) failed; the others are kept in the file.[/]")
        raise typer.Exit(1)


def progress_bar() -> Progress:
    """The bar the long commands (run, campaign, tables) draw on stderr: what runs, how many of how many
    are done and the time so far; it stays on the screen when done."""
    return Progress(
        SpinnerColumn(),
        TextColumn("{task.description}"),
        BarColumn(),
        TextColumn("{task.completed}/{task.total}"),
        TimeElapsedColumn(),
        console=err,
        transient=False,
    )


class Wrapped:
    """Text wrapped to the console's width, indented (continuation lines by ``hanging`` more), none
    padded or ending in spaces.

    `list` and the run tables put long text (descriptions, parameters, messages) on lines of its
    own, indented under a line of short fields: a table column per field wrapped it one word per
    line at 80 columns or in a notebook cell. Nor is any line padded to the full width: a notebook
    cell narrower than that would wrap the padding.
    """

    def __init__(self, text: Text, indent: int = 0, hanging: int = 0) -> None:
        self.text = text
        self.indent = indent
        self.hanging = hanging

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        width = max(options.max_width - self.indent, 20)
        first = self.text.wrap(console, width, justify="default")[0]
        rest = self.text[len(first.plain) :]
        rest = rest[len(rest.plain) - len(rest.plain.lstrip()) :]  # the space the line broke at
        more = rest.wrap(console, max(width - self.hanging, 20), justify="default") if rest.plain else []
        for line, indent in [(first, self.indent), *((m, self.indent + self.hanging) for m in more)]:
            line.rstrip()
            yield Text(" " * indent) + line


def records_table(measurements: Sequence[MeasurementRecord], title: str) -> Group:
    """The measurements as aligned lines of short fields, each with its parameters and message under it."""
    devices = {m.device_name or m.device for m in measurements}
    heading = Text(title, style="bold")
    if len(devices) == 1:
        heading.append(f" · device: {next(iter(devices))}")
    rows: list[tuple[list[Text], list[Text]]] = []
    for m in measurements:
        value = f"{m.value:.4g} {m.metric.unit}" if m.value is not None else "—"
        if m.efficiency is not None:
            value += f" ({m.efficiency:.0%} of peak)"
        noise = f"±{m.stats.iqr / m.stats.median:.0%}" if m.stats and m.stats.median else ""
        if m.stats and m.stats.noisy:
            noise += " noisy"
        status = Text(m.status, style=STATUS_STYLE.get(m.status, "white"))
        params = " ".join(f"{k}={v}" for k, v in m.params.items() if not isinstance(v, (list, dict)))
        device = (m.device_name or m.device) if len(devices) > 1 else ""
        details = [Text(" · ".join(filter(None, (device, params))), style="dim"), Text(m.message or "")]
        cells = [Text(m.workload), Text(m.dtype or ""), Text(value), Text(noise), status]
        rows.append((cells, [d for d in details if d.plain]))
    header = [Text(name, style="bold") for name in ("workload", "dtype", "value", "noise", "status")]
    widths = [max(row[i].cell_len for row in [header] + [cells for cells, _ in rows]) for i in range(len(header))]

    def line(cells: list[Text]) -> Text:
        padded = [cell.copy() for cell in cells]
        for cell, width in zip(padded[:-1], widths):
            cell.pad_right(width - cell.cell_len)
        return Text("  ").join(padded)

    out: list[RenderableType] = [Wrapped(heading)]
    if not rows:
        out.append(Text("no measurements", style="dim"))
        return Group(*out)
    out.append(Wrapped(line(header)))
    for cells, details in rows:
        out.append(Wrapped(line(cells)))
        out.extend(Wrapped(d, indent=DETAIL_INDENT) for d in details)
    return Group(*out)
