"""`benchlib schema`: the JSON Schema of the results format."""

from __future__ import annotations

import json


def schema() -> None:
    """Print the JSON Schema of the results format."""
    from benchlib.results.store import json_schema

    print(json.dumps(json_schema(), indent=2))
