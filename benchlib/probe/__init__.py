"""What machine is this? Platform, host, accelerators and software, as a `Machine` record."""

from benchlib.probe.machine import probe_machine
from benchlib.probe.platform import detect_platform
from benchlib.probe.report import machine_table
from benchlib.probe.units import format_bytes

__all__ = ["detect_platform", "format_bytes", "machine_table", "probe_machine"]
