"""One TensorFlow process driving N devices: MirroredStrategy on GPUs and the CPU, TPUStrategy on TPUs.

    python -m benchlib.measure.distributed.tf_worker --device cuda --devices 2 --out report.json

The model is the project's Keras Fashion-MNIST CNN, trained with a custom loop: ``strategy.run``
inside a ``tf.function`` that runs several steps per call, fed by a distributed dataset that
repeats one cached global batch. On the CPU, ``--devices N`` splits the CPU into N logical
devices (TensorFlow's own way to test MirroredStrategy without GPUs); they share the same cores.
Without a TPU, ``--device tpu`` stops at TPU initialisation and reports a skip, not a crash.
"""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from benchlib.measure.distributed.report import SIZES, WorkerReport, WorkerSkipped, worker_arguments, write_report
from benchlib.measure.distributed.timing import time_steps


class NoDevice(RuntimeError):
    """The devices asked for are not on this machine; the run is skipped with this message."""


def _tpu_strategy(tf: Any, devices: int) -> tuple[Any, str, list[str]]:
    try:
        # On TPU VMs (Kaggle's v5e-8, Colab's v5e-1) the TPU is attached to this host: tpu="local".
        resolver = tf.distribute.cluster_resolver.TPUClusterResolver(tpu="local")
        tf.config.experimental_connect_to_cluster(resolver)
        topology = tf.tpu.experimental.initialize_tpu_system(resolver)
    except (ValueError, tf.errors.NotFoundError) as exc:
        # The first sentence says it ("TPUs not found in the cluster"); the rest is kernel lists.
        first = str(exc).strip().split(". ")[0].splitlines()[0] if str(exc).strip() else ""
        raise NoDevice(f"no TPU for TensorFlow: TPU initialisation failed with {type(exc).__name__}: {first}") from exc
    cores = tf.config.list_logical_devices("TPU")
    if len(cores) < devices:
        raise NoDevice(f"asked for {devices} TPU cores, TensorFlow sees {len(cores)}")
    # A device assignment of N replicas gives the one-core baseline on the same slice.
    assignment = tf.tpu.experimental.DeviceAssignment.build(topology, num_replicas=devices)
    strategy = tf.distribute.TPUStrategy(resolver, experimental_device_assignment=assignment)
    return strategy, "TPUStrategy", ["TPU"] * devices


def _mirrored_strategy(tf: Any, device: str, devices: int) -> tuple[Any, str, list[str]]:
    from benchlib.backends.tf_backend import device_name

    kind = "GPU" if device == "cuda" else "CPU"
    found = tf.config.list_logical_devices(kind)
    if len(found) < devices:
        raise NoDevice(f"asked for {devices} {kind} device(s), TensorFlow sees {len(found)}")
    # NCCL is MirroredStrategy's all-reduce between GPUs; logical CPUs reduce through one device.
    ops = tf.distribute.NcclAllReduce() if device == "cuda" else tf.distribute.ReductionToOneDevice()
    strategy = tf.distribute.MirroredStrategy(devices=[d.name for d in found[:devices]], cross_device_ops=ops)
    names = [device_name("/GPU:0")] * devices if device == "cuda" else []
    return strategy, f"MirroredStrategy/{type(ops).__name__}", names


def _split_cpu(tf: Any, devices: int) -> None:
    cpu = tf.config.list_physical_devices("CPU")[0]
    tf.config.set_logical_device_configuration(cpu, [tf.config.LogicalDeviceConfiguration() for _ in range(devices)])


def train(argv: list[str] | None = None) -> None:
    args = worker_arguments("TensorFlow data-parallel training in one process.").parse_args(argv)
    size = SIZES[args.size]

    from benchlib.backends.tf_backend import SYNC_NAME, import_keras, import_tf
    from benchlib.models import fashion_mnist

    tf = import_tf()
    keras = import_keras()
    if args.threads:
        tf.config.threading.set_intra_op_parallelism_threads(args.threads)
    if args.device == "cpu" and args.devices > 1:
        _split_cpu(tf, args.devices)
    try:
        if args.device == "tpu":
            strategy, backend, names = _tpu_strategy(tf, args.devices)
        else:
            strategy, backend, names = _mirrored_strategy(tf, args.device, args.devices)
    except NoDevice as exc:
        write_report(WorkerSkipped(engine="tf", message=str(exc)), args.out)
        return

    # Seeded, as the torch and JAX workers are: the same start at every world size, and a loss
    # drop the report can be checked on rather than one that depends on the draw.
    keras.utils.set_random_seed(0)
    replicas = strategy.num_replicas_in_sync
    global_batch = size.per_device_batch * replicas
    images, labels = fashion_mnist.synthetic(global_batch)
    dataset = (
        tf.data.Dataset.from_tensor_slices(((images[..., None] / 255.0).astype("float32"), labels.astype("int32")))
        .batch(global_batch, drop_remainder=True)
        .cache()
        .repeat()
    )
    batches = iter(strategy.experimental_distribute_dataset(dataset))
    with strategy.scope():
        model = fashion_mnist.keras_model(keras)
        optimizer = keras.optimizers.Adam()
        loss_obj = keras.losses.SparseCategoricalCrossentropy(reduction="none")

    def step_fn(batch: Any) -> Any:
        x, y = batch
        with tf.GradientTape() as tape:
            loss = tf.nn.compute_average_loss(loss_obj(y, model(x, training=True)), global_batch_size=global_batch)
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    @tf.function
    def run_steps(iterator: Any, steps: Any) -> Any:
        loss = tf.constant(0.0)
        for _ in tf.range(steps):
            loss = strategy.reduce("SUM", strategy.run(step_fn, args=(next(iterator),)), axis=None)
        return loss

    # ``steps`` is a tensor, so one trace serves every call; the first call compiles. The tensors
    # are made before the clock starts.
    steps = {n: tf.constant(n) for n in (1, size.warmup_steps - 1, size.steps_per_sample)}
    timed = time_steps(lambda n: run_steps(batches, steps[n]).numpy(), size)
    # Keras 3 wraps the distributed tf.Variable; its ``.value`` has one copy per replica.
    first_weight = model.trainable_variables[0].value
    copies = [v.numpy() for v in strategy.experimental_local_results(first_weight)]
    in_sync = all((c == copies[0]).all() for c in copies[1:])
    write_report(
        WorkerReport(
            engine="tf",
            framework="tensorflow",
            framework_version=tf.__version__,
            launcher="one process",
            backend=backend,
            device=args.device,
            device_names=names,
            world_size=replicas,
            per_device_batch=size.per_device_batch,
            threads_per_process=args.threads,
            sync=SYNC_NAME,
            replicas_in_sync=bool(in_sync),
            **asdict(timed),
        ),
        args.out,
    )


if __name__ == "__main__":
    train()
