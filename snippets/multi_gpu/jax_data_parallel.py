"""Data parallelism in JAX: the batch split over all devices, the weights copied.

On Kaggle's TPU v5e-8 that is 8 chips; the same code runs on GPUs or a CPU.
"""
import os

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec

devices = jax.devices()
mesh = Mesh(np.array(devices), ("data",))  # one axis, "data", over every device
split = NamedSharding(mesh, PartitionSpec("data"))  # axis 0 cut, a slice each
copied = NamedSharding(mesh, PartitionSpec())  # a full copy on every device
print(f"{len(devices)} {devices[0].platform} device(s), {devices[0].device_kind}")

BATCH_PER_DEVICE = 128
batch = BATCH_PER_DEVICE * len(devices)


def init(key, sizes=(784, 512, 10)):
    keys = jax.random.split(key, len(sizes) - 1)
    return [(jax.random.normal(k, (m, n)) * (2 / m) ** 0.5, jnp.zeros(n))
            for k, m, n in zip(keys, sizes[:-1], sizes[1:])]


def loss_fn(params, x, y):
    for w, b in params[:-1]:
        x = jax.nn.relu(x @ w + b)
    w, b = params[-1]
    log_p = jax.nn.log_softmax(x @ w + b)
    return -jnp.take_along_axis(log_p, y[:, None], axis=1).mean()


@jax.jit
def train_step(params, x, y):
    # x and y are split, params copied: XLA runs each slice on its own device
    # and adds the all-reduce that averages the gradients. None is written here.
    loss, grads = jax.value_and_grad(loss_fn)(params, x, y)
    return jax.tree.map(lambda p, g: p - 0.1 * g, params, grads), loss


params = jax.device_put(init(jax.random.key(0)), copied)
rng = np.random.default_rng(0)
for _ in range(int(os.environ.get("STEPS", "100"))):
    x = rng.standard_normal((batch, 784), dtype=np.float32)  # your batches here
    y = x[:, :10].argmax(axis=1).astype(np.int32)
    x, y = jax.device_put(x, split), jax.device_put(y, split)
    params, loss = train_step(params, x, y)
print(f"loss {float(loss):.3f}; each batch split over {len(x.sharding.device_set)} "
      f"devices, weights copied to {len(params[0][0].sharding.device_set)}")
