"""How close is `benchlib predict` to the language-model speeds other people published?

Predicts every published row (benchlib/data/published_llm_speed*.yaml: Qwen's speed benchmarks,
transformers and vLLM on an A100 80GB, llama-bench runs on eight GPUs, bitsandbytes' own
benchmark on a T4, an RTX 4090 and an H100; published_llm_training_speed.yaml: fine-tuning
tokens/s) in its stated setup and prints predicted against published: per engine, kind and half,
for every GPU and again per class of GPU (free, consumer, datacenter), the median and worst
absolute error and predicted / published at p10, median and p90 ("long prompt": the requests
whose prompt takes a third or more of the predicted time). Calibration and held-out rows are
split by source: the engines' constants are fitted on the calibration sources only, and this
script fits them again, so a change that moves the best constants shows here. Targets on the
held-out rows: a median absolute error of 20 % or less for decode and prefill per engine, 25 %
or less for fine-tuning, and no class of GPU worse than 30 %. Rows that can't be predicted are
counted with their reason. No GPU is needed; it takes minutes.

    python benchmarks/llm_speed_published.py            # summary, left-out reasons, the fit
    python benchmarks/llm_speed_published.py --rows     # and every row
"""

from __future__ import annotations

import argparse
import collections
import time

from benchlib.derive.published_llm_speed import (
    FITTED,
    HELD_OUT,
    LONG_PROMPT_SHARE,
    TARGETS,
    compare,
    count_rows,
    fit_engine,
    fit_host,
    summaries,
)
from benchlib.predict.engines import ENGINES
from benchlib.predict.hosts import HOSTS


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
    print(
        f"{'engine':<12} {'kind':<11} {'half':<11} {'GPUs':<10} {'rows':>4} {'median':>6} {'worst':>6}"
        f" {'p10':>5} {'p50':>5} {'p90':>5}  target"
    )
    for s in summaries(rows):
        target = s["target"]
        verdict = (
            "" if target is None else f"<= {target:.0%}: {'met' if s['median_abs_error'] <= target else 'NOT met'}"
        )
        ratio = s["ratio"]
        print(
            f"{s['engine']:<12} {s['kind']:<11} {s['half']:<11} {s['gpu_class']:<10} {s['rows']:>4} "
            f"{s['median_abs_error']:>6.0%} {s['worst_error']:>+6.0%} {ratio['p10']:>5.2f} {ratio['median']:>5.2f} "
            f"{ratio['p90']:>5.2f}  {verdict}"
        )
    for name, engine in ENGINES.items():
        if not any(s["engine"] == name and s["half"] == HELD_OUT for s in summaries(rows)):
            print(f"{name}: no held-out source measured with the release its constants stand for ({engine.version})")
    checked = {(s["kind"]) for s in summaries(rows) if s["half"] == HELD_OUT}
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
        changed = [
            f"{field} {getattr(engine, field)!r} -> {getattr(best, field)!r}"
            for field in FITTED
            if getattr(engine, field) != getattr(best, field)
        ]
        print(
            f"  {name}: "
            + ("; ".join(changed) + "  <- update benchlib/predict/engines.py" if changed else "as shipped")
        )
    print("\nhosts (shipped -> the calibration rows' best launch cost):")
    for name, host in HOSTS.items():
        best_launch = fit_host(name, counted)
        if name == "server" or best_launch is None:
            print(f"  {name}: {host.launch_s * 1e6:g} us, {host.basis}")
            continue
        change = "" if best_launch == host.launch_s else "  <- update benchlib/predict/hosts.py"
        print(f"  {name}: {host.launch_s * 1e6:g} -> {best_launch * 1e6:g} us{change}")
    print(f"\n{time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
