"""Mixed precision in Keras on TensorFlow: the Fashion-MNIST CNN's step in fp32 and mixed.

fp16 is Keras' ``mixed_float16`` policy (compile adds a LossScaleOptimizer, the counterpart of
torch's GradScaler); bf16 is ``mixed_bfloat16``. Same records and chart as `amp`.
"""

from __future__ import annotations

from typing import Any

from benchlib.backends import tf_backend as tfb
from benchlib.models import fashion_mnist as fm
from benchlib.models.training import keras_step
from benchlib.results.schema import MeasurementRecord
from benchlib.workloads import RunContext, keras_twin, register
from benchlib.workloads.amp import WORKLOAD, amp_records


def run(ctx: RunContext, params: dict[str, Any]) -> list[MeasurementRecord]:
    tf_device, device = tfb.resolve_device(ctx.device)
    keras = tfb.import_keras()
    x, y = fm.synthetic(params["train_samples"])
    return amp_records(
        framework="tensorflow",
        make_step=lambda amp: keras_step(lambda: fm.keras_model(keras), x, y, params["batch_size"], tf_device, amp),
        available=tfb.mixed_precision_dtypes(tf_device),
        # train_on_batch returns numpy values, so every step ends synchronised.
        why_not="mixed_float16 is run on GPUs only (TF has no fast fp16 path on CPUs); "
        "mixed_bfloat16 on CPUs and on GPUs of compute capability 8.0+",
        sync=lambda: None,
        sync_name=tfb.SYNC_NAME,
        threads=tfb.threads(),
        device=device,
        device_name=tfb.device_name(tf_device, ctx.cpu_name),
        params=params,
    )


register(
    keras_twin(
        WORKLOAD,
        expected_s={"quick": 5.2, "standard": 13.4},
        description="fp32 vs mixed-precision (mixed_float16, mixed_bfloat16) Keras training step of the Fashion-MNIST CNN, and the speedup.",
        run=run,
    )
)
