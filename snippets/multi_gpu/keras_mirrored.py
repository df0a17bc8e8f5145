"""Keras on every GPU with MirroredStrategy: one process, a model copy per GPU."""
import os

import numpy as np
import tensorflow as tf

strategy = tf.distribute.MirroredStrategy()  # all GPUs; the CPU if there are none
replicas = strategy.num_replicas_in_sync
devices = ", ".join(strategy.extended.worker_devices)
print(f"MirroredStrategy: {replicas} replica(s) on {devices}")

BATCH_PER_REPLICA = 128
batch = BATCH_PER_REPLICA * replicas  # Keras splits each batch between replicas

# Stand-in data: your own arrays here (or a tf.data pipeline with .prefetch()).
rng = np.random.default_rng(0)
x = rng.random((4096, 28, 28, 1), dtype=np.float32)
y = (x.mean(axis=(1, 2, 3)) > 0.5).astype("int32")

with strategy.scope():  # build and compile here: weights are mirrored on each GPU
    model = tf.keras.Sequential([
        tf.keras.Input(shape=(28, 28, 1)),
        tf.keras.layers.Conv2D(32, 3, padding="same", activation="relu"),
        tf.keras.layers.MaxPooling2D(),
        tf.keras.layers.Conv2D(64, 3, padding="same", activation="relu"),
        tf.keras.layers.GlobalAveragePooling2D(),
        tf.keras.layers.Dense(2),
    ])
    model.compile(
        optimizer="adam",
        loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True),
        metrics=["accuracy"],
    )

epochs = int(os.environ.get("EPOCHS", "3"))
model.fit(x, y, batch_size=batch, epochs=epochs, verbose=2)
