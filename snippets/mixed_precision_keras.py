"""Mixed precision in Keras: one global policy, and a float32 output layer."""
import os

import keras
import numpy as np
import tensorflow as tf

# float16 on NVIDIA GPUs (a T4 has no bfloat16); bfloat16 on TPUs and CPUs.
policy = "mixed_float16" if tf.config.list_physical_devices("GPU") else "mixed_bfloat16"
keras.mixed_precision.set_global_policy(policy)

if os.environ.get("SYNTHETIC_DATA"):  # no download: random data of the same shape
    x_train = np.random.randint(0, 256, (1024, 28, 28), dtype=np.uint8)
    y_train = np.random.randint(0, 10, 1024)
else:
    (x_train, y_train), _ = keras.datasets.fashion_mnist.load_data()
x_train = x_train[..., None].astype("float32") / 255.0

model = keras.Sequential([
    keras.Input(shape=(28, 28, 1)),
    keras.layers.Conv2D(64, 5, padding="same", activation="elu"),
    keras.layers.MaxPooling2D(),
    keras.layers.Conv2D(128, 5, padding="same", activation="elu"),
    keras.layers.MaxPooling2D(),
    keras.layers.Flatten(),
    keras.layers.Dense(256, activation="elu"),
    keras.layers.Dense(10),
    # Softmax in float32: in 16 bit it can overflow or lose the small probabilities.
    keras.layers.Activation("softmax", dtype="float32"),
])
# With mixed_float16, compile() wraps the optimizer in a LossScaleOptimizer by itself.
model.compile(optimizer="adam", loss="sparse_categorical_crossentropy", metrics=["accuracy"])
model.fit(x_train, y_train, batch_size=256, epochs=int(os.environ.get("EPOCHS", "2")), verbose=2)

print(f"policy {policy}: layers compute in {model.layers[0].compute_dtype}, "
      f"weights stored in {model.layers[0].variable_dtype}, "
      f"output in {model.layers[-1].compute_dtype}, optimizer {type(model.optimizer).__name__}")
