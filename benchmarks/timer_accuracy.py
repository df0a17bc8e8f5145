"""Compare benchlib's Timer with torch.utils.benchmark on the same CPU ops, in one run.

Prints, per op, both medians and their ratio, then the fixed cost each sample pays for the
clock reads and syncs (measured by timing an empty block). Run:

    python benchmarks/timer_accuracy.py
"""

from __future__ import annotations

import statistics
import time

import torch
from torch.utils import benchmark as tub

from benchlib.core.timing import Timer


def ops() -> dict[str, object]:
    a64, b64 = torch.randn(64, 64), torch.randn(64, 64)
    a512, b512 = torch.randn(512, 512), torch.randn(512, 512)
    x = torch.randn(1_000_000)
    conv = torch.nn.Conv2d(3, 64, 5, stride=2, padding=2).eval()
    img = torch.randn(8, 3, 64, 64)
    return {
        "empty call": lambda: None,
        "matmul 64": lambda: torch.mm(a64, b64),
        "matmul 512": lambda: torch.mm(a512, b512),
        "add 1M": lambda: x.add(1.0),
        "conv 5x5 8x3x64x64": lambda: conv(img),
    }


def sample_overhead(repeats: int = 2000) -> float:
    """Seconds one sample spends outside the timed calls: two syncs and two clock reads."""
    timer = Timer(lambda: None)
    return statistics.median(timer._time_block(0) for _ in range(repeats))


def main() -> None:
    threads = torch.get_num_threads()
    print(f"torch {torch.__version__}, {threads} threads, CPU")
    print(f"{'op':<22}{'benchlib median':>18}{'torch.utils median':>21}{'ratio':>8}{'benchlib n':>12}")
    with torch.inference_mode():
        for name, fn in ops().items():
            ours = Timer(fn, threads=threads).measure(warmup_s=0.1, max_time_s=1.0)
            theirs = tub.Timer(stmt="fn()", globals={"fn": fn}, num_threads=threads).blocked_autorange(min_run_time=1.0)
            ratio = ours.median / theirs.median
            print(f"{name:<22}{ours.median * 1e6:>15.3f} us{theirs.median * 1e6:>18.3f} us{ratio:>8.3f}{ours.n:>12}")
    print(f"per-sample overhead (clock reads + sync, cpu): {sample_overhead() * 1e9:.0f} ns")
    t0 = time.perf_counter()
    Timer(lambda: None).measure()
    print(f"default measure() wall time for an empty call: {time.perf_counter() - t0:.2f} s")


if __name__ == "__main__":
    main()
