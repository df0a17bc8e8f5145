"""How long a cached rebuild of the site takes, against an earlier commit, measured in one run.

A cached rebuild is what `mkdocs serve` and a second `mkdocs build` do: the build machine's
measurement and the notebook's run are already under .cache/, so the time is the blocks' own
(imports, loading results, drawing charts). This machine is noisy, so the two trees are built in
turns and the report gives medians and their ratio, not one absolute number to trust.

    .venv/bin/python benchmarks/site_rebuild.py [--against 13ab7b0] [--rounds 3] [--zensical]

The earlier commit is checked out into a temporary worktree that shares this clone's .cache/benchlib
(so neither tree measures the machine again) and runs with its own benchlib first on the path.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from timed_run import timed_run

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent


def _build(tree: Path, out: Path, builder: str) -> float:
    env = {
        **os.environ,
        "NO_MKDOCS_2_WARNING": "1",
        "BENCHLIB_MEASURE": "quick",
        "PYTHONPATH": str(tree),
        "SITE_DIR": str(out),
    }
    command = (
        [str(BIN / "mkdocs"), "build", "--strict", "-q", "-d", str(out)]
        if builder == "mkdocs"
        else [str(BIN / "zensical"), "build", "--strict"]
    )
    elapsed, _ = timed_run(command, cwd=tree, env=env, what=f"{builder} build of {tree}")
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--against", default="13ab7b0", help="The earlier commit to compare with.")
    parser.add_argument("--rounds", type=int, default=3, help="Builds of each tree, in turns, after one warm-up each.")
    parser.add_argument("--zensical", action="store_true", help="Also time this tree's cached Zensical rebuild.")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        old = Path(tmp) / "old"
        subprocess.run(
            ["git", "worktree", "add", "--detach", str(old), args.against], cwd=ROOT, check=True, capture_output=True
        )
        try:
            (old / ".cache").mkdir()
            (ROOT / ".cache" / "benchlib").mkdir(parents=True, exist_ok=True)
            (old / ".cache" / "benchlib").symlink_to(ROOT / ".cache" / "benchlib")
            trees = {args.against: old, "this tree": ROOT}
            times: dict[str, list[float]] = {name: [] for name in trees}
            for name, tree in trees.items():  # warm-up: fills caches (notebook run, fit predictions)
                _build(tree, Path(tmp) / f"site-{name.replace(' ', '-')}", "mkdocs")
            for _ in range(args.rounds):
                for name, tree in trees.items():
                    times[name].append(_build(tree, Path(tmp) / f"site-{name.replace(' ', '-')}", "mkdocs"))
            if args.zensical:
                _build(ROOT, ROOT / ".cache" / "zensical-timing-site", "zensical")
                times["this tree, Zensical"] = [
                    _build(ROOT, ROOT / ".cache" / "zensical-timing-site", "zensical") for _ in range(args.rounds)
                ]
        finally:
            subprocess.run(["git", "worktree", "remove", "--force", str(old)], cwd=ROOT, capture_output=True)
    print(f"cached rebuild, median of {args.rounds} (seconds; each build in its own process):")
    for name, values in times.items():
        print(f"  {name:<24} {statistics.median(values):6.1f}   ({', '.join(f'{v:.1f}' for v in values)})")
    before, after = statistics.median(times[args.against]), statistics.median(times["this tree"])
    print(f"  this tree / {args.against}: {after / before:.2f}")


if __name__ == "__main__":
    main()
