"""The "More than one GPU" page's table of what sharded training (FSDP) holds on Kaggle's two T4s.

Everything comes from the committed "Can I run it?" table (``benchlib/tables/can_i_run_it.json``):
its full fine-tuning predictions split a model's memory into weights, gradients and optimizer
state, the three things FSDP shards. Halving their sum is arithmetic on that table, not a
prediction of FSDP itself: each GPU also needs its activations, the layer being gathered whole and
the CUDA context, so the table says how much of the T4's usable memory the half leaves for them.
"""

from __future__ import annotations

from typing import Any

from benchlib.core.units import format_bytes
from benchlib.site.render import page_link, render
from benchlib.site.sources import read_table

CAN_I_RUN_IT = "gpus/can-i-run-it.md"
TASK = "train"  # full fine-tuning: the task whose weights, gradients and optimizer state all train
ONE, PAIR = "t4", "t4x2"  # the table's columns for one T4 and for Kaggle's two


def _state_bytes(row: dict[str, Any]) -> int:
    peak = row["peaks_at_one"][TASK]
    return peak["weights"] + peak["gradients"] + peak["optimizer_state"]


def sharding_rows(table: dict[str, Any], gpus: int = 2) -> list[dict[str, Any]]:
    """The models in size order, from the smallest to the first whose share of the state alone
    outgrows a T4: whether a full fine-tune fits one T4, the state, and each GPU's share of it."""
    usable = next(c for c in table["columns"] if c["key"] == ONE)["usable_bytes"]
    models = sorted((r for r in table["rows"] if r["cells"][TASK][ONE] is not None), key=_state_bytes)
    rows = []
    for row in models:
        state = _state_bytes(row)
        share = state // gpus
        batch = row["cells"][TASK][ONE]
        rows.append(
            {
                "model": row["model"],
                "title": row["title"],
                "one_gpu": f"fits, batch {batch}" if batch else "does not fit",
                "state": format_bytes(state),
                "share": format_bytes(share),
                "left": format_bytes(usable - share) if share < usable else None,
            }
        )
        if share >= usable:
            break
    return rows


def sharding_table(here: str) -> str:
    """The table, with what it assumes and where its numbers come from."""
    table = read_table("can_i_run_it")
    task = next(t for t in table["tasks"] if t["key"] == TASK)
    one = next(c for c in table["columns"] if c["key"] == ONE)
    return render(
        "sharding_table.html",
        rows=sharding_rows(table),
        task=task,
        usable=format_bytes(one["usable_bytes"]),
        created=table["created"][:10],
        link=page_link(CAN_I_RUN_IT, here),
    )
