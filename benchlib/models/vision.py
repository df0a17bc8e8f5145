"""ImageNet-shaped classifiers by name, from torchvision and keras.applications, untrained.

``weights=None`` everywhere: nothing is downloaded, and speed doesn't depend on the weights.
"""

from __future__ import annotations

from typing import Any

TORCHVISION = {"resnet18": "resnet18", "resnet34": "resnet34", "resnet50": "resnet50", "mobilenet_v2": "mobilenet_v2"}
KERAS_APPLICATIONS = {"resnet50": "ResNet50", "mobilenet_v2": "MobileNetV2"}
INPUT_SIDE = 224


def _known(name: str, table: dict[str, str], where: str) -> str:
    if name not in table:
        raise ValueError(f"unknown model {name!r} for {where}; known: {', '.join(sorted(table))}")
    return table[name]


def torch_classifier(name: str) -> Any:
    import torchvision.models

    return getattr(torchvision.models, _known(name, TORCHVISION, "torchvision"))(weights=None)


def keras_classifier(keras: Any, name: str, side: int = INPUT_SIDE) -> Any:
    """Keras fixes the input size when the model is built (torch models take any size)."""
    return getattr(keras.applications, _known(name, KERAS_APPLICATIONS, "keras.applications"))(
        weights=None, input_shape=(side, side, 3)
    )
