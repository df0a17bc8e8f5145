"""How long `benchlib tables` takes to recompute each table from nothing, against issue 37's target
of 5 minutes for all of them on a 2-core machine.

Each table is computed as `benchlib tables --only NAME --out DIR --fresh` computes it, in a fresh
process with a fresh empty benchlib cache (no trace kept from an earlier run, and no entry copied
from the committed file), into a temporary folder, in the order `benchlib tables` takes them; the
committed files are not touched. Printed: each table's
wall seconds, its share of the total, and the total against the target. A table that reads another
table's committed file (can_i_run_it reads llm_formulas) reads the committed one, so the run also
says which committed tables are stale, since their times would be a stale table's.

The machine may be shared, and llm_formulas spreads over every core: the wall times move with the
load, so run it on an idle machine and read the shares as much as the seconds.

    .venv/bin/python benchmarks/tables_time.py [--only NAME ...]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

from timed_run import timed_run

ROOT = Path(__file__).resolve().parents[1]
BENCHLIB = Path(sys.executable).with_name("benchlib")
TARGET_S = 5 * 60


def time_table(name: str) -> float:
    """One fresh process's wall seconds computing the table ``name`` into a folder of its own."""
    with tempfile.TemporaryDirectory(prefix="benchlib-tables-") as folder:
        cache, out = Path(folder) / "cache", Path(folder) / "out"
        out.mkdir()
        env = os.environ | {"BENCHLIB_CACHE_DIR": str(cache), "HF_HUB_OFFLINE": "1"}
        # --fresh: nothing copied from the committed file either (llm_formulas keeps unchanged entries).
        command = [str(BENCHLIB), "tables", "--only", name, "--out", str(out), "--fresh"]
        wall, _ = timed_run(command, cwd=ROOT, env=env, what=f"benchlib tables --only {name}")
    return wall


def main() -> None:
    from benchlib import tables

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", action="append", metavar="NAME", help="time only this table (repeatable)")
    args = parser.parse_args()
    known = tables.all_tables()
    unknown = [name for name in args.only or [] if name not in known]
    if unknown:
        parser.error(f"--only: {', '.join(unknown)} is not a table; choose from {', '.join(known)}")
    chosen = tables.in_order(known[name] for name in dict.fromkeys(args.only or known))
    stale = [t.name for t in chosen if tables.stale_reasons(t)]
    if stale:
        print(f"note: committed {', '.join(stale)} stale; a table read from one times a stale table's work")
    print(f"{os.cpu_count()} cores; each table from an empty cache, in a fresh process\n")
    walls: dict[str, float] = {}
    for table in chosen:
        walls[table.name] = time_table(table.name)
        print(f"{table.name:<18} {walls[table.name]:8.1f} s", flush=True)
    total = sum(walls.values())
    print(
        f"\n{'total':<18} {total:8.1f} s  ({total / 60:.1f} min; target {TARGET_S // 60} min: {total / TARGET_S:.1f}x)"
    )
    for name, wall in sorted(walls.items(), key=lambda item: -item[1]):
        print(f"  {name:<16} {wall / total:6.1%} of the total")


if __name__ == "__main__":
    main()
