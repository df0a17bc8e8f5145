"""The seeds' Fashion-MNIST CNN in PyTorch and Keras, and its data, real or synthetic.

The network (seed 002): three blocks of BatchNorm -> Conv 5x5 'same' ELU -> MaxPool 2 ->
Dropout 0.25 with 64, 128 and 256 filters, then Flatten -> Dense 256 ELU -> Dropout 0.5 ->
Dense 10 softmax. Both versions have the same layers and the same parameter counts
(`param_counts_torch`, `param_counts_keras`). The torch version ends in logits and its loss
applies the softmax (CrossEntropyLoss): the same maths, the numerically stable way in torch.
"""

from __future__ import annotations

import io
import os
import socket
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager, redirect_stderr, redirect_stdout
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import numpy as np

from benchlib.core.cache import cache_dir

FILTERS = (64, 128, 256)
KERNEL = 5
DENSE = 256
CLASSES = 10
SIDE = 28
TRAIN_SAMPLES = 60_000


@dataclass(frozen=True)
class ParamCounts:
    """Trainable weights, and non-trainable state that is saved with the model (BatchNorm statistics)."""

    trainable: int
    non_trainable: int

    @property
    def total(self) -> int:
        return self.trainable + self.non_trainable


def torch_model() -> Any:
    import torch.nn as nn

    layers: list[nn.Module] = []
    channels = 1
    for filters in FILTERS:
        layers += [
            nn.BatchNorm2d(channels),
            nn.Conv2d(channels, filters, KERNEL, padding="same"),
            nn.ELU(),
            nn.MaxPool2d(2),
            nn.Dropout(0.25),
        ]
        channels = filters
    side = SIDE
    for _ in FILTERS:
        side //= 2  # MaxPool rounds down, as Keras' 'valid' pooling does: 28 -> 14 -> 7 -> 3
    layers += [
        nn.Flatten(),
        nn.Linear(channels * side * side, DENSE),
        nn.ELU(),
        nn.Dropout(0.5),
        nn.Linear(DENSE, CLASSES),
    ]
    return nn.Sequential(*layers)


def keras_model(keras: Any) -> Any:
    """The seed's Sequential model; ``keras`` is passed in so the caller picks TF's Keras."""
    layers = keras.layers
    model = keras.Sequential([keras.Input(shape=(SIDE, SIDE, 1))])
    for filters in FILTERS:
        model.add(layers.BatchNormalization())
        model.add(layers.Conv2D(filters, (KERNEL, KERNEL), padding="same", activation="elu"))
        model.add(layers.MaxPooling2D(pool_size=(2, 2)))
        model.add(layers.Dropout(0.25))
    model.add(layers.Flatten())
    model.add(layers.Dense(DENSE, activation="elu"))
    model.add(layers.Dropout(0.5))
    model.add(layers.Dense(CLASSES))
    # float32 output even under a mixed-precision policy, as Keras' mixed-precision guide asks.
    model.add(layers.Activation("softmax", dtype="float32"))
    return model


def param_counts_torch(model: Any) -> ParamCounts:
    """Parameters, plus floating-point buffers (BatchNorm running mean and variance).

    BatchNorm's integer ``num_batches_tracked`` is a step counter, not a weight, and Keras has
    no counterpart, so it is left out.
    """
    trainable = sum(p.numel() for p in model.parameters() if p.requires_grad)
    frozen = sum(p.numel() for p in model.parameters() if not p.requires_grad)
    buffers = sum(b.numel() for b in model.buffers() if b.is_floating_point())
    return ParamCounts(trainable=trainable, non_trainable=frozen + buffers)


def param_counts_keras(model: Any) -> ParamCounts:
    def count(weights: list[Any]) -> int:
        return int(sum(np.prod(w.shape) for w in weights))

    return ParamCounts(trainable=count(model.trainable_weights), non_trainable=count(model.non_trainable_weights))


@dataclass(frozen=True)
class FashionData:
    """Training images (N, 28, 28) uint8 and labels (N,), and where they came from."""

    x: np.ndarray
    y: np.ndarray
    source: Literal["real", "synthetic"]
    note: str


def synthetic(samples: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Random images and labels with Fashion-MNIST's shape and dtype: the speed is the same."""
    rng = np.random.default_rng(seed)
    return (
        rng.integers(0, 256, size=(samples, SIDE, SIDE), dtype=np.uint8),
        rng.integers(0, CLASSES, size=samples, dtype=np.uint8),
    )


def data_root() -> Path:
    return Path(os.environ.get("BENCHLIB_DATA") or cache_dir() / "datasets")


def load_torchvision() -> tuple[np.ndarray, np.ndarray]:
    """The training split through torchvision (a cached copy, or a download)."""
    from torchvision.datasets import FashionMNIST

    ds = FashionMNIST(str(data_root()), train=True, download=True)
    return ds.data.numpy(), ds.targets.numpy().astype(np.uint8)


def load_keras() -> tuple[np.ndarray, np.ndarray]:
    """The training split through Keras (cached in ~/.keras/datasets, or a download)."""
    from benchlib.backends.tf_backend import import_keras

    (x, y), _ = import_keras().datasets.fashion_mnist.load_data()
    return x, y


@contextmanager
def _socket_timeout(seconds: float) -> Iterator[None]:
    # Neither loader takes a timeout; without one a blocked network hangs the run.
    previous = socket.getdefaulttimeout()
    socket.setdefaulttimeout(seconds)
    try:
        yield
    finally:
        socket.setdefaulttimeout(previous)


def load(
    loader: Callable[[], tuple[np.ndarray, np.ndarray]], samples: int, data: str = "auto", timeout_s: float = 10.0
) -> FashionData:
    """``samples`` training images: real where ``loader`` gets them, else synthetic (``data='auto'``).

    ``data='synthetic'`` skips the attempt (tests, and runs that must not touch the network).
    The loaders' own output (download attempts, progress bars, their tracebacks) is not shown;
    a fallback prints one line instead.
    """
    if data not in ("auto", "synthetic"):
        raise ValueError(f"data must be 'auto' or 'synthetic', not {data!r}")
    if data == "auto":
        try:
            with _socket_timeout(timeout_s), redirect_stdout(io.StringIO()), redirect_stderr(io.StringIO()):
                x, y = loader()
            return FashionData(x=x[:samples], y=y[:samples], source="real", note="Fashion-MNIST training split")
        except Exception as exc:  # no network, a broken cache: the timing needs only the shape
            note = f"real data unavailable ({type(exc).__name__}: {str(exc).splitlines()[0][:160] if str(exc) else ''})"
            print(
                "Fashion-MNIST could not be loaded; synthetic data of the same shape stands in "
                "(data_note in the results file says why)",
                file=sys.stderr,
            )
    else:
        note = "synthetic data requested"
    x, y = synthetic(samples)
    return FashionData(x=x, y=y, source="synthetic", note=note)
