"""One training step of a model, in torch and in Keras, in fp32 or mixed precision.

Shared by the training and mixed-precision workloads so that "the same step" means the same
code. The whole training set sits on the device before timing starts, in both frameworks, so
a step is compute (forward, backward, Adam update), not input pipeline.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

LEARNING_RATE = 1e-3  # seed 002's Adam learning rate
KERAS_POLICIES = {"fp32": "float32", "fp16": "mixed_float16", "bf16": "mixed_bfloat16"}


@dataclass
class Step:
    """A zero-argument training step over batch after batch, and how many batches make an epoch."""

    run: Callable[[], Any]
    steps_per_epoch: int
    details: dict[str, Any]


def _check_batches(samples: int, batch_size: int) -> int:
    steps = samples // batch_size
    if steps < 1:
        raise ValueError(f"batch_size {batch_size} is larger than the {samples} training samples")
    return steps


def torch_step(model: Any, x: np.ndarray, y: np.ndarray, batch_size: int, device: str, amp: str | None = None) -> Step:
    """Adam on cross-entropy; ``amp`` ``fp16`` (autocast + GradScaler) or ``bf16`` (autocast only).

    ``x`` is uint8 (N, H, W); it is scaled to [0, 1] as float32 with a channel axis (N, 1, H, W).
    """
    import torch

    steps = _check_batches(len(x), batch_size)
    xs = torch.from_numpy(np.ascontiguousarray(x)).to(device).float().div_(255).unsqueeze(1)
    ys = torch.from_numpy(y.astype(np.int64)).to(device)
    model = model.to(device).train()
    opt = torch.optim.Adam(model.parameters(), lr=LEARNING_RATE)
    loss_fn = torch.nn.CrossEntropyLoss()
    dtype = {"fp16": torch.float16, "bf16": torch.bfloat16}.get(amp or "")
    device_type = torch.device(device).type
    # fp16 needs loss scaling against gradient underflow; bf16 has fp32's range and doesn't.
    scaler = torch.amp.GradScaler(device_type, enabled=amp == "fp16")
    batch = [0]

    def run() -> Any:
        k = batch[0] % steps
        batch[0] += 1
        xb, yb = xs[k * batch_size : (k + 1) * batch_size], ys[k * batch_size : (k + 1) * batch_size]
        opt.zero_grad(set_to_none=True)
        with torch.autocast(device_type, dtype=dtype, enabled=dtype is not None):
            loss = loss_fn(model(xb), yb)
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()
        return loss

    return Step(
        run=run,
        steps_per_epoch=steps,
        details={"autocast": str(dtype) if dtype else None, "grad_scaler": amp == "fp16"},
    )


def keras_step(
    build: Callable[[], Any], x: np.ndarray, y: np.ndarray, batch_size: int, tf_device: str, amp: str | None = None
) -> Step:
    """``model.train_on_batch`` with Adam on sparse categorical cross-entropy.

    ``build`` makes the model after the dtype policy is set (a policy applies to layers created
    under it); the policy is set back to float32 afterwards so other workloads are unaffected.
    Under ``mixed_float16`` Keras' compile wraps the optimizer in a LossScaleOptimizer, the
    counterpart of torch's GradScaler.
    """
    from benchlib.backends import tf_backend as tfb

    tf = tfb.import_tf()
    keras = tfb.import_keras()
    steps = _check_batches(len(x), batch_size)
    tfb.set_mixed_precision(KERAS_POLICIES[amp or "fp32"])
    try:
        with tf.device(tf_device):
            model = build()
            model.compile(
                optimizer=keras.optimizers.Adam(learning_rate=LEARNING_RATE), loss="sparse_categorical_crossentropy"
            )
            xf = tf.constant(x[..., None], dtype=tf.float32) / 255.0
            yf = tf.constant(y.astype(np.int32))
            batches = [
                (xf[k * batch_size : (k + 1) * batch_size], yf[k * batch_size : (k + 1) * batch_size])
                for k in range(steps)
            ]
    finally:
        tfb.set_mixed_precision("float32")
    batch = [0]

    def run() -> Any:
        xb, yb = batches[batch[0] % steps]
        batch[0] += 1
        with tf.device(tf_device):
            return tfb.fetch(model.train_on_batch(xb, yb))

    return Step(
        run=run,
        steps_per_epoch=steps,
        details={
            "keras_policy": KERAS_POLICIES[amp or "fp32"],
            "jit_compile": bool(model.jit_compile),
            "keras": keras.__version__,
        },
    )
