"""Turning a timing `Measurement` into the results format's `Stats`."""

from __future__ import annotations

from benchlib.core.timing import Measurement
from benchlib.results.schema import Stats


def stats_of(m: Measurement) -> Stats:
    """Every `Stats` field a `Measurement` has (all but ``cache``, whose default a warm Timer run is)."""
    return Stats.model_validate({name: getattr(m, name) for name in Stats.model_fields if hasattr(m, name)})
