"""A largest-batch search as its records state it: the request each trial ran, read back from a record.

`benchlib.measure.max_batch` runs a search's trials from a `TrialRequest` and writes its params
into the records; `request_of` reads the request back from them. `search_key` names one search the
same way for the record it came from and for the committed table of fit's predictions
(``benchlib/tables/searched.json``), so the buying guide finds a search's prediction without
predicting anything.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any

DEFAULT_STEPS = 2


@dataclass(frozen=True)
class TrialRequest:
    """What one child process is asked to run."""

    model: str
    batch: int
    size: str = "full"
    dtype: str = "fp32"
    optimizer: str = "adam"
    device: str = "cpu"
    steps: int = DEFAULT_STEPS
    memory_limit: int | None = None
    input_shape: tuple[int, ...] | None = None
    # Set for a language model: ``model`` is then what `benchlib fit --model` takes (a shipped
    # name or a config.json path), trained on sequences of this many tokens.
    seq_len: int | None = None

    @property
    def language_model(self) -> bool:
        return self.seq_len is not None


def request_of(params: Mapping[str, Any], dtype: str | None, device: str) -> TrialRequest:
    """The search a ``max_batch`` or ``llm_max_batch`` record's ``params`` describe: the inverse of
    `benchlib.measure.max_batch._params`, at batch 1."""
    limit = params.get("memory_limit_bytes")
    common = {
        "model": params["model"],
        "batch": 1,
        "dtype": dtype or "fp32",
        "device": device,
        "steps": int(params.get("steps") or DEFAULT_STEPS),
        "memory_limit": int(limit) if limit else None,
    }
    if params.get("seq_len"):
        return TrialRequest(**common, seq_len=int(params["seq_len"]))
    return TrialRequest(
        **common, size=params["size"], optimizer=params["optimizer"], input_shape=tuple(params["input_shape"])
    )


def search_key(request: TrialRequest, device_name: str | None) -> str:
    """One search as text, the same for the record it came from and the table it is looked up in."""
    name = device_name if isinstance(device_name, str) else None  # a results frame's missing name is NaN
    return json.dumps({**asdict(request), "device_name": name}, sort_keys=True, default=list)
