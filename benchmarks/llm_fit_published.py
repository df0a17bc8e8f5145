"""How close is `benchlib fit` to peak memories other people measured on GPUs?

Reads the published measurements in ``benchlib/data/published_llm_memory.yaml`` (source, date and
the setup each one states), predicts each comparable row the way `benchlib fit` does, and
prints predicted against published with the error, then the median absolute error: over all
compared rows, and over those whose source ran plain transformers code (the code the
prediction traces), and per weight format (bf16, int8, nf4, gptq-int4, gptq-int8, awq-int4). The
target is a median absolute error of 10 % or less. Rows that can't be compared are listed with the
reason. Each row is printed as soon as it is predicted. No GPU is needed; traces are cached in .cache/fit-llm.

    python benchmarks/llm_fit_published.py
"""

from __future__ import annotations

import time

from benchlib.core.cache import cache_folder
from benchlib.predict.memory import ALLOCATOR_OVERHEAD
from benchlib.predict.published_memory import (
    TARGET_MEDIAN_ERROR,
    compare,
    median_abs_error,
    median_abs_error_by_weights,
    published_rows,
)


def _percent(value: float | None) -> str:
    return "-" if value is None else f"{value:+.0%}"


def main() -> None:
    started = time.perf_counter()
    print(
        f"{'source':<16} {'model':<22} {'mode':<9} {'weights':<9} {'b x len':>11} {'published':>10} "
        f"{'predicted':>10} {'error':>6}",
        flush=True,
    )
    comparisons = []
    for row in published_rows():
        c = compare(row, overhead=ALLOCATOR_OVERHEAD, cache_dir=cache_folder("fit-llm"))
        comparisons.append(c)
        r = c.published.row
        if c.predicted_bytes is None:
            continue
        unit = r["unit"]
        scale = c.published.measured_bytes / float(r["measured"])
        print(
            f"{r['source'][:16]:<16} {r['model'].split('/')[-1][:22]:<22} {r['mode']:<9} {r['weights']:<9} "
            f"{r['batch']:>3}x{r['seq_len']:<7} {float(r['measured']):>7.2f} {unit:<3}"
            f"{c.predicted_bytes / scale:>7.2f} {unit:<3}{_percent(c.error):>5}",
            flush=True,
        )
    compared = [c for c in comparisons if c.error is not None]
    plain = [c for c in compared if c.published.plain_transformers]
    print()
    print(
        f"median absolute error: {median_abs_error(compared):.1%} over {len(compared)} rows; "
        f"{median_abs_error(plain) or 0:.1%} over the {len(plain)} rows run with plain transformers code "
        f"(target {TARGET_MEDIAN_ERROR:.0%})"
    )
    print("median absolute error per weight format:")
    for weights, (error, count) in median_abs_error_by_weights(compared).items():
        flag = "" if error <= TARGET_MEDIAN_ERROR else f"  (above the {TARGET_MEDIAN_ERROR:.0%} target)"
        print(f"  {weights:<10} {error:.1%} over {count} rows{flag}")
    left_out = [c for c in comparisons if c.reason]
    print(f"left out ({len(left_out)}):")
    for c in left_out:
        r = c.published.row
        print(f"  {r['source']}, {r['model'].split('/')[-1]} {r['mode']}: {c.reason}")
    print(f"({time.perf_counter() - started:.0f} s)")


if __name__ == "__main__":
    main()
