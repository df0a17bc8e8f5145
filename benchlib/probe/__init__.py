"""What machine is this? Platform, host, accelerators and software, as a `Machine` record."""

import sys
import types

from benchlib.core.units import format_bytes
from benchlib.probe.machine import probe_machine
from benchlib.probe.platform import detect_platform
from benchlib.probe.report import machine_table
from benchlib.results.schema import Machine

__all__ = ["detect_platform", "format_bytes", "machine_table", "probe_machine"]


class _CallableModule(types.ModuleType):
    """Makes ``benchlib.probe()`` work: importing this subpackage replaces the attribute
    ``benchlib.probe``, so the package itself is the callable the public API promises."""

    def __call__(self, results_dir: str | None = None) -> Machine:
        return probe_machine(results_dir=results_dir)


sys.modules[__name__].__class__ = _CallableModule
