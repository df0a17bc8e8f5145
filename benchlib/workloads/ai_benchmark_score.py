"""ai-benchmark's training score, as seed 001 reports it for Colab's machines: reported only.

ai-benchmark (the `ai-benchmark` package) scores a device on its own scale; benchlib doesn't run
it, and its score is not the benchlib score. The figures are carried as reported results files.
"""

from __future__ import annotations

from benchlib.results.schema import Metric
from benchlib.workloads import Chart, Plot, not_run, register

register(
    not_run(
        name="ai_benchmark_score",
        framework="tensorflow",
        description="ai-benchmark training score (reported by sources; benchlib doesn't run it).",
        metric=Metric(name="training_score", unit="points", higher_is_better=True),
        plots=(
            Plot(
                Chart(
                    "ai_benchmark_score",
                    "ai-benchmark training score (reported; not the benchlib score)",
                    "score",
                    axis_title="ai-benchmark score",
                ),
                "training_score",
                "ai-benchmark training score",
            ),
        ),
    )
)
