"""How close is `benchlib predict` to the language-model speeds other people published?

Predicts every published row (benchlib/data/published_llm_speed.yaml: Qwen's speed benchmarks,
transformers and vLLM on an A100 80GB; published_llm_training_speed.yaml: fine-tuning tokens/s)
in its stated setup and prints predicted against published, then the median and worst absolute
error per engine, kind and half ("long prompt": the requests whose prompt takes a third or more
of the predicted time, the nearest published check of the prefill). Model sizes alternate between the calibration and the held-out
half; the engines' constants are fitted on the calibration half only, and this script fits them
again, so a change that moves the best constants shows here. Targets on the held-out half: a
median absolute error of 25 % or less for decode and prefill, 30 % or less for fine-tuning.
Rows that can't be predicted are counted with their reason. No GPU is needed; it takes minutes.

    python benchmarks/llm_speed_published.py            # summary, left-out reasons, the fit
    python benchmarks/llm_speed_published.py --rows     # and every row
"""

from __future__ import annotations

import argparse
import collections
import time

from benchlib.derive.published_llm_speed import (
    HELD_OUT,
    LONG_PROMPT_SHARE,
    TARGETS,
    compare,
    count_rows,
    fit_engine,
    summaries,
)
from benchlib.predict.engines import ENGINES


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", action="store_true", help="print every compared row")
    args = parser.parse_args()
    started = time.perf_counter()
    counted, left_out = count_rows()
    rows = compare(counted)
    if args.rows:
        print(f"{'engine':<12} {'kind':<8} {'half':<11} {'row':<58} {'published':>9} {'predicted':>9} {'error':>6}")
        for r in rows:
            print(
                f"{r.engine:<12} {r.kind:<8} {r.half:<11} {r.what[:58]:<58} {r.published:>9.1f} "
                f"{r.predicted:>9.1f} {r.error:>+6.0%}"
            )
        print()
    print(f"{'engine':<12} {'kind':<8} {'half':<11} {'rows':>4} {'median':>7} {'worst':>6}  target")
    for s in summaries(rows):
        target = s["target"]
        verdict = (
            "" if target is None else f"<= {target:.0%}: {'met' if s['median_abs_error'] <= target else 'NOT met'}"
        )
        print(
            f"{s['engine']:<12} {s['kind']:<8} {s['half']:<11} {s['rows']:>4} {s['median_abs_error']:>7.0%} "
            f"{s['worst_error']:>+6.0%}  {verdict}"
        )
    checked = {s["kind"] for s in summaries(rows) if s["half"] == HELD_OUT}
    for kind in TARGETS:
        if kind not in checked:
            print(f"{kind}: no published row benchlib can predict, so no held-out error")
    if "prefill" not in checked:
        print(
            f"  (prefill is checked in the 'long prompt' rows: whole requests whose prompt takes "
            f"{LONG_PROMPT_SHARE:.0%} or more of the predicted time)"
        )
    print("\nleft out:")
    for (source, reason), n in collections.Counter((x.source, x.reason) for x in left_out).most_common():
        print(f"  {source}: {n} rows: {reason}")
    print("\nconstants (shipped -> the calibration half's best):")
    for name, engine in ENGINES.items():
        best = fit_engine(name, counted)
        print(
            f"  {name}: launch {engine.launch_s * 1e6:g} -> {best.launch_s * 1e6:g} us, step {engine.step_s * 1e3:g} -> "
            f"{best.step_s * 1e3:g} ms, bandwidth {engine.stream_efficiency:g} -> {best.stream_efficiency:g}"
            + ("" if best == engine else "  <- update benchlib/predict/engines.py")
        )
    print(f"\n{time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
