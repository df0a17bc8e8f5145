"""How close is `benchlib predict` to the training throughput other people measured on GPUs?

Predicts every row of Lambda's ResNet-50 table (FP32 and AMP, Lambda's batch sizes) from the GPU's
specs and prints predicted against reported with the error of each; then the median absolute and
the worst error of each half. The GPUs were split before any fitting: the memory-bandwidth
fraction is fitted on the calibration half only, and this script fits it again, so a change
that moves the best fraction shows here. The target is a median absolute error of 20 % or less.
Rows that can't be compared are listed with the reason. No GPU is needed.

    python benchmarks/speed_published.py
"""

from __future__ import annotations

import time

from benchlib.derive.published_speed import TARGET_MEDIAN_ERROR, compare, fit_memory_efficiency, median_abs_error
from benchlib.predict.roofline import MEMORY_EFFICIENCY


def main() -> None:
    started = time.perf_counter()
    rows, not_compared = compare()
    print(f"{'GPU':<18} {'precision':<9} {'batch':>5} {'half':<11} {'reported':>9} {'predicted':>9} {'error':>6}")
    for r in sorted(rows, key=lambda r: (r.half, r.gpu, r.precision)):
        print(
            f"{r.gpu:<18} {r.precision:<9} {r.batch:>5} {r.half:<11} {r.reported:>9.0f} {r.predicted:>9.0f} {r.error:>+6.0%}"
        )
    print()
    for half in ("calibration", "held out", None):
        chosen = [r for r in rows if half is None or r.half == half]
        for precision in ("FP32", "AMP", None):
            subset = [r for r in chosen if precision is None or r.precision == precision]
            worst = max(subset, key=lambda r: abs(r.error))
            label = f"{half or 'all'}, {precision or 'both'}"
            print(
                f"{label:<24} rows {len(subset):>2}  median |error| {median_abs_error(subset):>4.0%}  "
                f"worst {worst.error:+.0%} ({worst.gpu} {worst.precision})"
            )
    overall = median_abs_error(rows)
    print(
        f"\ntarget: median |error| <= {TARGET_MEDIAN_ERROR:.0%} over all rows: "
        f"{'met' if overall <= TARGET_MEDIAN_ERROR else 'NOT met'} ({overall:.1%})"
    )
    fitted = fit_memory_efficiency()
    print(
        f"memory-bandwidth fraction: {MEMORY_EFFICIENCY} in benchlib/predict/roofline.py; the calibration half's best "
        f"is {fitted}{'' if fitted == MEMORY_EFFICIENCY else '  <- update the constant'}"
    )
    print("\nnot compared:")
    for skipped in not_compared:
        print(f"  {skipped.what} ({skipped.rows} rows): {skipped.reason}")
    print(f"\n{time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
