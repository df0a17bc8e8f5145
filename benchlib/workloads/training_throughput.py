"""Training throughput of a named model on one GPU, as sources report it: reported only.

benchlib doesn't run these; the figures are carried as reported results files (Lambda's
ResNet-50 table, the throughput in Lambda's 2020 memory tables), with the model in the record's
``model`` param. The buying guide charts the ResNet-50 rows, compares each GPU with the fastest,
and divides the mixed-precision rate by each dated cloud price.
"""

from __future__ import annotations

from benchlib.results.schema import Metric
from benchlib.workloads import (
    TRAINED_BATCH,
    TRAINING_THROUGHPUT,
    Chart,
    NotPredicted,
    PerDollar,
    Plot,
    PredictionCheck,
    Relative,
    not_run,
    register,
)

NAME = "training_throughput"
THROUGHPUT = Metric(name="throughput", unit="images/s", higher_is_better=True)
PER_DOLLAR = PerDollar("images per dollar", "images/$", of=THROUGHPUT.name)
OF_FASTEST = Relative("relative to the fastest", of=THROUGHPUT.name, same=("dtype", "param_model"))
RESNET50_CHART = Chart(
    "resnet50-throughput",
    "ResNet-50 training throughput (reported)",
    "precision",
    axis_title="images/s",
    setting_order=("FP32", "AMP"),
)
# Plotted on the buying guide, not on the Results page: declared in `page_plots`.
RESNET50 = Plot(RESNET50_CHART, THROUGHPUT.name, "{param_precision}", where={"param_model": "resnet50"})
PRICE_CHART = Chart(
    "price-performance",
    "Price-performance: ResNet-50 images per dollar",
    "price",
    axis_title="ResNet-50 training images per dollar",
    setting_order=("list price", "price range, low end"),
)
PRICE_PERFORMANCE = Plot(
    PRICE_CHART, PER_DOLLAR.metric, "{price_kind}", where={"param_model": "resnet50", "dtype": "fp16"}
)

WORKLOAD = register(
    not_run(
        name=NAME,
        framework="torch",
        description="Training images/s of a named model on one GPU, as sources report it (benchlib doesn't run it).",
        metric=THROUGHPUT,
        derived=(OF_FASTEST, PER_DOLLAR),
        page_plots=(RESNET50, PRICE_PERFORMANCE),
        checks=(
            PredictionCheck(TRAINING_THROUGHPUT, metric=THROUGHPUT.name, where={"model": "resnet50"}),
            # A batch that trained is a lower bound on the largest one. NVIDIA's ResNet-50 example,
            # which Lambda's batches come from, trains with SGD and momentum.
            PredictionCheck(
                TRAINED_BATCH, metric=THROUGHPUT.name, where={"model": "resnet50"}, options={"optimizer": "sgd"}
            ),
        ),
        not_predicted=NotPredicted(
            "Lambda's 2020 tables (NasNet Large, DeepLabv3, YOLOv3, Pix2Pix HD, StyleGAN, MaskRCNN)",
            "benchlib doesn't build these networks",
        ),
    )
)
