"""The blocks of the contributing pages: the time `benchlib contribute` takes, and what its file keeps.

Both come from the code that decides them (the campaign's budget, `KEPT`), so the pages can't
drift from what the command does.
"""

from __future__ import annotations

import types
import typing
from collections.abc import Iterator
from typing import Any

from pydantic import BaseModel

from benchlib.core.budgets import DEFAULT_MINUTES, TINY_MINUTES
from benchlib.results.contribution import KEPT
from benchlib.results.schema import REPORTED_ONLY, ResultsFile
from benchlib.site.render import render


def time_budget() -> str:
    """How long a contribution takes: the campaign's budget, which bounds it on any GPU."""
    return render("contribute_time.html", minutes=DEFAULT_MINUTES, tiny_minutes=TINY_MINUTES)


def _model_of(annotation: Any) -> type[BaseModel] | None:
    """The model a field holds, through Optional, list and dict."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    if typing.get_origin(annotation) in (typing.Union, types.UnionType, list, dict):
        for arg in typing.get_args(annotation):
            found = _model_of(arg)
            if found:
                return found
    return None


def _fields(model: type[BaseModel], spec: Any, prefix: str = "") -> Iterator[tuple[str, str, bool]]:
    """Every field of ``model`` as (dotted path, description, kept), whole sub-objects where kept whole."""
    for name, info in model.model_fields.items():
        if info.exclude or info.json_schema_extra == REPORTED_ONLY:
            continue  # never written to any file, or only to a reported one: never in a contribution
        path = prefix + name
        sub_spec = spec.get(name, False) if isinstance(spec, dict) else spec
        if isinstance(sub_spec, dict) and "__all__" in sub_spec:
            sub_spec = sub_spec["__all__"]
            path += "[]"
        sub_model = _model_of(info.annotation)
        if sub_model is not None and isinstance(sub_spec, dict):
            yield from _fields(sub_model, sub_spec, path + ".")
        else:
            yield path, info.description or "", sub_spec is not False


def field_rows() -> list[dict[str, Any]]:
    """Every field a measured run writes, with its description and whether a contribution keeps it (`KEPT`)."""
    return [{"field": f, "description": d, "kept": k} for f, d, k in _fields(ResultsFile, KEPT)]


def kept_table() -> str:
    """The Contributing page's table of `field_rows`."""
    return render("contribute_kept.html", rows=field_rows())
