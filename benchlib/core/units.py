"""Byte counts and durations for people. Bytes are binary (GiB) or decimal (GB), always labelled.

Vendors print "16 GB" where ``nvidia-smi`` prints "15360MiB" for the same card, and readers mix
them up; so every size the project shows says which unit it is in.
"""

from __future__ import annotations

_BINARY_UNITS = ("B", "KiB", "MiB", "GiB", "TiB", "PiB")
_DECIMAL_UNITS = ("B", "kB", "MB", "GB", "TB", "PB")

MIB = 1024**2
GIB = 1024**3


def format_bytes(n: int | None, binary: bool = True) -> str:
    """``15.0 GiB`` (binary, powers of 1024) or ``16.1 GB`` (decimal, powers of 1000); None is ``unknown``."""
    if n is None:
        return "unknown"
    if n < 0:
        raise ValueError(f"format_bytes: a byte count cannot be negative, got {n}")
    step = 1024 if binary else 1000
    units = _BINARY_UNITS if binary else _DECIMAL_UNITS
    value = float(n)
    unit = units[0]
    for unit in units:
        if value < step or unit == units[-1]:
            break
        value /= step
    if unit == "B":
        return f"{n} B"
    return f"{value:.1f} {unit}"


def format_duration(seconds: float) -> str:
    """A rough duration as a person says it: ``40 s``, ``6 min``, ``1 h 20 min`` (rounded to the unit shown)."""
    if seconds < 0:
        raise ValueError(f"format_duration: a duration cannot be negative, got {seconds}")
    if seconds < 90:
        return f"{seconds:.0f} s"
    minutes = round(seconds / 60)
    if minutes < 60:
        return f"{minutes} min"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes} min" if minutes else f"{hours} h"
