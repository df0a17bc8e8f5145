"""Training on more than one device, measured through the engines people already use.

- ``torch``: DistributedDataParallel, started by ``torchrun`` (NCCL on GPUs, gloo on the CPU).
- ``tf``: ``tf.distribute.MirroredStrategy`` on GPUs (and the CPU), ``TPUStrategy`` on TPUs.
- ``jax``: one jitted train step over a ``jax.sharding.Mesh`` of all devices (TPU, GPU or CPU).

Every engine trains the project's Fashion-MNIST CNN (`benchlib.models.fashion_mnist`) on
synthetic data held on the device, once on one device and once on N, each in a child process:
the parent (`benchlib.measure.distributed.launch.run_scaling`) reads each child's JSON report and writes
one results file through `write_results`. A child that crashes becomes an error record naming
the engine and world size; what finished before it stays in the file.

This package module imports nothing, so the worker processes start without the parent's code.
"""
