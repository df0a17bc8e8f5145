"""Run a matrix multiply on the TPU with JAX and check where the result lives."""
import os

import jax
import jax.numpy as jnp

N = int(os.environ.get("MATRIX_SIZE", "8192"))

print(f"JAX {jax.__version__}, default backend: {jax.default_backend()}")
for device in jax.devices():
    print(f"  device {device.id}: {device.platform} {device.device_kind}")
if jax.default_backend() != "tpu":
    print("WARNING: no TPU found; the code below runs on", jax.default_backend().upper())

x = jnp.ones((N, N), dtype=jnp.bfloat16)  # TPUs compute in bfloat16 natively
y = jax.jit(lambda a: a @ a)(x).block_until_ready()  # JAX is asynchronous: wait for the result
print("result lives on:", ", ".join(str(d) for d in y.devices()))
