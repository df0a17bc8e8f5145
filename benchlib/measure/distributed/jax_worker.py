"""One JAX process driving N devices: a jitted train step over a ``jax.sharding.Mesh``.

    python -m benchlib.measure.distributed.jax_worker --device tpu --devices 8 --out report.json

The batch is laid out as (replicas, per-device batch, 28, 28, 1) and sharded over the mesh's
"data" axis; weights and optimizer state are replicated. XLA then keeps each replica's forward
pass on its own device and inserts the gradient all-reduce itself: data parallelism as JAX
does it, with no hand-written collectives. On the CPU, ``--devices N`` asks XLA for N host
devices (``--xla_force_host_platform_device_count``); they share the same cores.

The network is the project's Fashion-MNIST CNN (`benchlib.models.fashion_mnist`: same layers,
filters and parameter count as the torch and Keras versions) written with ``jax.lax``, trained
with Adam. BatchNorm normalises over each replica's own batch, as DDP and MirroredStrategy do;
its running averages, used only for inference, are not kept.
"""

from __future__ import annotations

import os
from dataclasses import asdict
from typing import Any

from benchlib.measure.distributed.report import SIZES, WorkerReport, WorkerSkipped, worker_arguments, write_report
from benchlib.measure.distributed.timing import time_steps

PLATFORMS = {"cpu": "cpu", "cuda": "gpu", "tpu": "tpu"}
ADAM = {"lr": 1e-3, "b1": 0.9, "b2": 0.999, "eps": 1e-7}  # Keras' Adam defaults


def init_params(jax: Any, seed: int = 0) -> dict[str, Any]:
    from benchlib.models.fashion_mnist import CLASSES, DENSE, FILTERS, KERNEL, SIDE

    key = jax.random.key(seed)
    jnp = jax.numpy
    blocks = []
    channels, side = 1, SIDE
    for filters in FILTERS:
        key, sub = jax.random.split(key)
        fan_in = KERNEL * KERNEL * channels
        blocks.append(
            {
                "scale": jnp.ones(channels),
                "offset": jnp.zeros(channels),
                "w": jax.random.normal(sub, (KERNEL, KERNEL, channels, filters)) * (2.0 / fan_in) ** 0.5,
                "b": jnp.zeros(filters),
            }
        )
        channels, side = filters, side // 2
    key, k1, k2 = jax.random.split(key, 3)
    flat = channels * side * side
    return {
        "blocks": blocks,
        "dense_w": jax.random.normal(k1, (flat, DENSE)) * (2.0 / flat) ** 0.5,
        "dense_b": jnp.zeros(DENSE),
        "out_w": jax.random.normal(k2, (DENSE, CLASSES)) * (1.0 / DENSE) ** 0.5,
        "out_b": jnp.zeros(CLASSES),
    }


def forward(jax: Any, params: dict[str, Any], x: Any, key: Any) -> Any:
    """Logits for one replica's batch (NHWC), in training mode (batch statistics, dropout)."""
    jnp, lax = jax.numpy, jax.lax
    keys = jax.random.split(key, len(params["blocks"]) + 1)

    def dropout(k: Any, h: Any, rate: float) -> Any:
        keep = jax.random.bernoulli(k, 1.0 - rate, h.shape)
        return jnp.where(keep, h / (1.0 - rate), 0.0)

    for block, k in zip(params["blocks"], keys):
        mean, var = x.mean(axis=(0, 1, 2)), x.var(axis=(0, 1, 2))
        x = (x - mean) * lax.rsqrt(var + 1e-3) * block["scale"] + block["offset"]
        x = lax.conv_general_dilated(x, block["w"], (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC"))
        x = jax.nn.elu(x + block["b"])
        x = lax.reduce_window(x, -jnp.inf, lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")
        x = dropout(k, x, 0.25)
    x = jax.nn.elu(x.reshape(x.shape[0], -1) @ params["dense_w"] + params["dense_b"])
    x = dropout(keys[-1], x, 0.5)
    return x @ params["out_w"] + params["out_b"]


def make_train_step(jax: Any) -> Any:
    """(params, adam state, x, y, step) -> (params, adam state, loss), x and y shaped (replicas, batch, ...)."""
    jnp = jax.numpy

    def loss_fn(params: Any, x: Any, y: Any, key: Any) -> Any:
        keys = jax.random.split(key, x.shape[0])
        logits = jax.vmap(lambda xs, k: forward(jax, params, xs, k))(x, keys)
        log_p = jax.nn.log_softmax(logits)
        return -jnp.take_along_axis(log_p, y[..., None], axis=-1).mean()

    def train_step(params: Any, state: Any, x: Any, y: Any, step: Any) -> Any:
        loss, grads = jax.value_and_grad(loss_fn)(params, x, y, jax.random.fold_in(jax.random.key(1), step))
        m, v, t = state
        t = t + 1
        m = jax.tree.map(lambda m_, g: ADAM["b1"] * m_ + (1 - ADAM["b1"]) * g, m, grads)
        v = jax.tree.map(lambda v_, g: ADAM["b2"] * v_ + (1 - ADAM["b2"]) * g * g, v, grads)
        lr = ADAM["lr"] * jnp.sqrt(1 - ADAM["b2"] ** t) / (1 - ADAM["b1"] ** t)
        params = jax.tree.map(lambda p, m_, v_: p - lr * m_ / (jnp.sqrt(v_) + ADAM["eps"]), params, m, v)
        return params, (m, v, t), loss

    return train_step


def train(argv: list[str] | None = None) -> None:
    args = worker_arguments("JAX data-parallel training in one process.").parse_args(argv)
    size = SIZES[args.size]
    if args.device == "cpu" and args.devices > 1:
        # Must be set before JAX starts its CPU backend.
        flag = f"--xla_force_host_platform_device_count={args.devices}"
        os.environ["XLA_FLAGS"] = f"{os.environ.get('XLA_FLAGS', '')} {flag}".strip()

    import jax
    import numpy as np
    from jax.sharding import Mesh, NamedSharding, PartitionSpec

    from benchlib.models import fashion_mnist

    platform = PLATFORMS[args.device]
    try:
        found = jax.devices(platform)
    except RuntimeError as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
        write_report(WorkerSkipped(engine="jax", message=f"JAX has no {platform} backend here: {first}"), args.out)
        return
    if len(found) < args.devices:
        message = f"asked for {args.devices} {args.device} devices, JAX sees {len(found)}"
        write_report(WorkerSkipped(engine="jax", message=message), args.out)
        return
    devices = found[: args.devices]
    mesh = Mesh(np.array(devices), ("data",))
    replicated = NamedSharding(mesh, PartitionSpec())
    sharded = NamedSharding(mesh, PartitionSpec("data"))

    n, batch = len(devices), size.per_device_batch
    images, labels = fashion_mnist.synthetic(n * batch)
    x = jax.device_put((images / 255.0).astype("float32").reshape(n, batch, 28, 28, 1), sharded)
    y = jax.device_put(labels.astype("int32").reshape(n, batch), sharded)
    params = jax.device_put(init_params(jax), replicated)
    # Adam's two moments need buffers of their own: both are donated to the step.
    moments = [jax.tree.map(jax.numpy.zeros_like, params) for _ in range(2)]
    state = jax.device_put((*moments, jax.numpy.zeros((), "int32")), replicated)
    step = jax.jit(
        make_train_step(jax),
        in_shardings=(replicated, replicated, sharded, sharded, replicated),
        out_shardings=(replicated, replicated, replicated),
        donate_argnums=(0, 1),
    )

    counter = 0

    def run(steps: int) -> Any:
        nonlocal params, state, counter
        for _ in range(steps):
            params, state, loss = step(params, state, x, y, counter)
            counter += 1
        return loss.block_until_ready()

    timed = time_steps(run, size)  # the first step compiles
    leaf = params["dense_w"]
    copies = [np.asarray(shard.data) for shard in leaf.addressable_shards]
    in_sync = leaf.sharding.is_fully_replicated and all(np.array_equal(c, copies[0]) for c in copies[1:])
    write_report(
        WorkerReport(
            engine="jax",
            framework="jax",
            framework_version=jax.__version__,
            launcher="one process",
            backend="jax.sharding (XLA all-reduce)",
            device=args.device,
            device_names=[d.device_kind for d in devices] if args.device != "cpu" else [],
            world_size=n,
            per_device_batch=batch,
            threads_per_process=None,
            sync="block_until_ready",
            replicas_in_sync=bool(in_sync),
            **asdict(timed),
        ),
        args.out,
    )


if __name__ == "__main__":
    train()
