"""Inference in Keras on TensorFlow: images/s and latency (p50, p90) of ResNet50 and MobileNetV2.

keras.applications models with ``weights=None``, called through a ``tf.function`` (the graph
a serving path uses, not Keras' per-call ``predict`` machinery), with ``training=False``.
Each call is synchronised by fetching its output with ``.numpy()``, which adds the copy of
batch x 1000 floats to the host. Same records as `inference`, framework ``tensorflow``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from benchlib.backends import tf_backend as tfb
from benchlib.core.timing import Timer
from benchlib.models.vision import keras_classifier
from benchlib.results.schema import MeasurementRecord
from benchlib.workloads import RunContext, keras_twin, register
from benchlib.workloads.inference import WORKLOAD, each_model, inference_records, oom_record, score_parts


def run(ctx: RunContext, params: dict[str, Any]) -> list[MeasurementRecord]:
    tf_device, device = tfb.resolve_device(ctx.device)
    tf = tfb.import_tf()
    keras = tfb.import_keras()
    name = tfb.device_name(tf_device, ctx.cpu_name)
    side = params["side"]
    rng = np.random.default_rng(0)

    def measure(model_name: str, batch: int) -> list[MeasurementRecord]:
        with tf.device(tf_device):
            model = keras_classifier(keras, model_name, side)
            x = tf.constant(rng.standard_normal((batch, side, side, 3), dtype=np.float32))
            infer = tf.function(lambda images: model(images, training=False))
            m = Timer(
                lambda: tfb.fetch(infer(x)),
                sync_name=tfb.SYNC_NAME,
                threads=tfb.threads(),
                label=f"{model_name} b{batch}",
            ).measure(**params["timer"])
        return inference_records(
            framework="tensorflow",
            model=model_name,
            batch=batch,
            m=m,
            device=device,
            device_name=name,
            extra={"side": side, "call": "tf.function"},
        )

    return each_model(params, measure, tfb.is_oom, oom_record("tensorflow", device, name))


register(
    keras_twin(
        WORKLOAD,
        expected_s={"quick": 12.6, "standard": 24.0},
        description="Inference images/s and p50/p90 latency of ResNet50 and MobileNetV2 at batch 1 and a large batch (Keras on TensorFlow).",
        run=run,
        score=score_parts("tensorflow"),
    )
)
