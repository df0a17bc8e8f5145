"""Train a small Keras model on a TPU with TPUStrategy, and check where it really ran.

Colab's TPU runtime has no TensorFlow since March 2025; install it first:
!pip install tensorflow-tpu -f https://storage.googleapis.com/libtpu-tf-releases/index.html
"""
import os

import numpy as np
import tensorflow as tf

try:
    # On TPU VMs (Colab v5e-1, Kaggle v5e-8) the TPU is attached to this machine: tpu="local".
    resolver = tf.distribute.cluster_resolver.TPUClusterResolver(tpu="local")
    tf.config.experimental_connect_to_cluster(resolver)
    tf.tpu.experimental.initialize_tpu_system(resolver)
    strategy = tf.distribute.TPUStrategy(resolver)
except (ValueError, tf.errors.NotFoundError) as err:
    print(f"TensorFlow cannot reach a TPU ({type(err).__name__}): this is not a TPU runtime, or "
          "tensorflow-tpu is missing. Using the default strategy (CPU or GPU) instead.")
    strategy = tf.distribute.get_strategy()
print(f"{type(strategy).__name__}: {strategy.num_replicas_in_sync} replica(s); "
      f"TPU devices: {len(tf.config.list_logical_devices('TPU'))}")

if os.environ.get("SYNTHETIC_DATA"):  # no download: random data of the same shape
    x_train = np.random.randint(0, 256, (1024, 28, 28), dtype=np.uint8)
    y_train = np.random.randint(0, 10, 1024)
else:
    (x_train, y_train), _ = tf.keras.datasets.fashion_mnist.load_data()
x_train = (x_train[..., None] / 255.0).astype("float32")

with strategy.scope():  # variables created here live on the TPU
    model = tf.keras.Sequential([
        tf.keras.Input(shape=(28, 28, 1)),
        tf.keras.layers.Conv2D(64, 5, padding="same", activation="elu"),
        tf.keras.layers.MaxPooling2D(),
        tf.keras.layers.Conv2D(128, 5, padding="same", activation="elu"),
        tf.keras.layers.MaxPooling2D(),
        tf.keras.layers.Flatten(),
        tf.keras.layers.Dense(256, activation="elu"),
        tf.keras.layers.Dense(10),
    ])
    model.compile(
        optimizer="adam",
        loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True),
        metrics=["accuracy"],
    )

batch = 128 * strategy.num_replicas_in_sync  # a TPU wants big batches: 128 per core or more
model.fit(x_train, y_train, batch_size=batch, epochs=int(os.environ.get("EPOCHS", "2")), verbose=2)

# The proof: where do the weights live? Expect ".../device:TPU:0", not CPU.
print("first weight lives on:", model.trainable_variables[0].value.device)
