"""How close is `benchlib fit`'s predicted training memory to what a real step uses? (on this CPU)

Two comparisons, both on the CPU (a GPU run of the same script is the check this cannot make):

1. Peak memory of one training step at a given batch: predicted (FakeTensorMode + MemTracker,
   nothing allocated) against measured (a real step in a child process; its peak resident memory
   above the resident memory before the model was built, as `benchlib max-batch` measures it).
2. The largest batch under a memory cap: `benchlib fit --memory-limit` against the
   `benchlib max-batch --memory-limit` search (on the small models, so the search takes minutes).

Run:

    python benchmarks/fit_accuracy.py            # both parts, full-size models at small batches (~15 min)
    python benchmarks/fit_accuracy.py --quick    # small models only (~3 min)
"""

from __future__ import annotations

import argparse
import statistics
import time
from dataclasses import dataclass

from benchlib.measure.max_batch import TrialRequest, isolated_trial, search_max_batch, trial_runner
from benchlib.predict.memory import Predictor, memory_limit

MIB = 1024**2

# (model, size, dtype, batches): full models at batches a 2-core CPU trains in seconds to a minute.
FULL_CASES = [
    ("resnet50", "full", "fp32", (4, 16)),
    ("resnet50", "full", "bf16", (8,)),
    ("vit_b_16", "full", "fp32", (4, 16)),
    ("bert_base", "full", "fp32", (2, 8)),
    ("gpt2_small", "full", "fp32", (1, 4)),
    ("gpt2_small", "full", "bf16", (2,)),
    ("unet", "full", "fp32", (2, 8)),
]
SMALL_CASES = [
    (name, "small", "fp32", (16, 256)) for name in ("resnet50", "vit_b_16", "bert_base", "gpt2_small", "unet")
]
# (model, cap): small models, caps that put the answer in the tens to hundreds.
CAP_CASES = [
    ("resnet50", 256 * MIB),
    ("vit_b_16", 16 * MIB),
    ("bert_base", 64 * MIB),
    ("gpt2_small", 64 * MIB),
    ("unet", 64 * MIB),
]


@dataclass
class Row:
    model: str
    size: str
    dtype: str
    batch: int
    predicted: int
    measured: int | None
    note: str = ""

    @property
    def error(self) -> float | None:
        return None if not self.measured else (self.predicted - self.measured) / self.measured


def peak_rows(cases: list[tuple[str, str, str, tuple[int, ...]]]) -> list[Row]:
    rows = []
    for model, size, dtype, batches in cases:
        # The CPU's own optimizer code (foreach off), as the measured step runs it.
        predictor = Predictor(model, size=size, dtype=dtype, foreach=None)
        for batch in batches:
            predicted = predictor.peak(batch)
            outcome = isolated_trial(
                TrialRequest(model=model, size=size, dtype=dtype, batch=batch, steps=1, device="cpu")
            )
            row = Row(
                model,
                size,
                dtype,
                batch,
                predicted,
                outcome.peak_bytes if outcome.status == "ok" else None,
                "" if outcome.status == "ok" else f"{outcome.status}: {outcome.message}",
            )
            print_row(row)
            rows.append(row)
    return rows


def print_row(row: Row) -> None:
    measured = f"{row.measured / MIB:>10.1f}" if row.measured else f"{'-':>10}"
    error = f"{row.error:>+8.1%}" if row.error is not None else f"{'-':>8}"
    print(
        f"{row.model:<11}{row.size:<6}{row.dtype:<6}{row.batch:>6}{row.predicted / MIB:>12.1f}{measured}{error}  {row.note}",
        flush=True,
    )


def summarise(rows: list[Row]) -> None:
    errors = [r.error for r in rows if r.error is not None]
    if not errors:
        return
    print(
        f"\n{len(errors)} comparisons: error median {statistics.median(errors):+.1%}, "
        f"range {min(errors):+.1%} to {max(errors):+.1%}; |error| median {statistics.median(map(abs, errors)):.1%}, "
        f"max {max(map(abs, errors)):.1%}"
    )
    print("Negative: the prediction is below the measured peak (memory outside tensors: oneDNN buffers, allocator).")


def cap_rows() -> None:
    print(f"\n{'model':<11}{'cap MiB':>8}{'predicted':>11}{'measured':>10}{'trials':>8}{'search s':>10}")
    for model, cap in CAP_CASES:
        predicted = Predictor(model, size="small", foreach=None).predict(memory_limit(cap)).max_batch
        base = TrialRequest(model=model, size="small", batch=1, steps=1, device="cpu", memory_limit=cap)
        started = time.perf_counter()
        # Starting near the prediction only shortens the doubling; the boundary is found by trials.
        result = search_max_batch(trial_runner(base), start=max(1, predicted // 2), limit=100_000)
        took = time.perf_counter() - started
        print(
            f"{model:<11}{cap / MIB:>8.0f}{predicted:>11}{result.max_batch:>10}{len(result.trials):>8}{took:>10.0f}",
            flush=True,
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small models only")
    args = parser.parse_args()
    import torch

    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads, CPU; peak memory in MiB")
    print(f"{'model':<11}{'size':<6}{'dtype':<6}{'batch':>6}{'predicted':>12}{'measured':>10}{'error':>8}")
    rows = peak_rows(SMALL_CASES if args.quick else SMALL_CASES + FULL_CASES)
    summarise(rows)
    cap_rows()


if __name__ == "__main__":
    main()
