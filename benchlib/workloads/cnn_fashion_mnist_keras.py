"""Training the seeds' Fashion-MNIST CNN in Keras on TensorFlow: samples/s and time per epoch.

The seed's own framework. Same sizes, timing and records as the torch workload
(`cnn_fashion_mnist`); records are named ``cnn_fashion_mnist`` with framework ``tensorflow``.
Keras compiles the step with its defaults (``jit_compile='auto'``: XLA where Keras chooses it),
as a user's ``model.fit`` would; the record says which was used.
"""

from __future__ import annotations

from typing import Any

from benchlib.backends import tf_backend as tfb
from benchlib.models import fashion_mnist as fm
from benchlib.models.training import keras_step
from benchlib.results.schema import MeasurementRecord
from benchlib.workloads import RunContext, ScorePart, keras_twin, register
from benchlib.workloads.cnn_fashion_mnist import WORKLOAD, training_records


def run(ctx: RunContext, params: dict[str, Any]) -> list[MeasurementRecord]:
    tf_device, device = tfb.resolve_device(ctx.device)
    keras = tfb.import_keras()
    data = fm.load(fm.load_keras, params["train_samples"], params["data"])
    counts = fm.param_counts_keras(fm.keras_model(keras))
    step = keras_step(lambda: fm.keras_model(keras), data.x, data.y, params["batch_size"], tf_device)
    return training_records(
        # train_on_batch returns numpy values, so every step ends synchronised.
        framework="tensorflow",
        step=step,
        sync=lambda: None,
        sync_name=tfb.SYNC_NAME,
        threads=tfb.threads(),
        device=device,
        device_name=tfb.device_name(tf_device, ctx.cpu_name),
        dtype="fp32",
        params=params,
        extra={"data": data.source, "data_note": data.note, "parameters": counts.total},
    )


register(
    keras_twin(
        WORKLOAD,
        expected_s={"quick": 3.2, "standard": 6.0},
        description="Training samples/s and epoch time of a 2018 Colab TPU article's Fashion-MNIST CNN (Keras on TensorFlow, fp32).",
        run=run,
        score=(
            ScorePart(
                "cnn-tensorflow",
                "training",
                "throughput",
                {"batch_size": 256},
                "Fashion-MNIST CNN training, batch 256, samples/s (Keras on TensorFlow)",
            ),
        ),
    )
)
