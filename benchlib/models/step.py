"""One full training step (forward, backward, optimizer update), the same for measuring and predicting.

`benchlib max-batch` runs it for real; `benchlib fit` runs it on fake tensors. Sharing the code
means both see the same tensors: fp32, or automatic mixed precision with ``fp16`` (autocast and a
GradScaler, against gradient underflow) or ``bf16`` (autocast alone), with fp32 weights and
optimizer state in every case, which is how mixed-precision training is normally run.
"""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING, Any

from benchlib.models.trainable import ModelSpec

if TYPE_CHECKING:
    import torch

DTYPES: tuple[str, ...] = ("fp32", "fp16", "bf16")
OPTIMIZERS: tuple[str, ...] = ("adam", "sgd")
LEARNING_RATE = 1e-3
SGD_MOMENTUM = 0.9


def check_choice(kind: str, value: str, choices: tuple[str, ...]) -> None:
    if value not in choices:
        raise ValueError(f"unknown {kind} {value!r}; choose one of {', '.join(choices)}")


def make_optimizer(name: str, params: Any, foreach: bool | None) -> torch.optim.Optimizer:
    import torch

    check_choice("optimizer", name, OPTIMIZERS)
    if name == "adam":
        return torch.optim.Adam(params, lr=LEARNING_RATE, foreach=foreach)
    return torch.optim.SGD(params, lr=LEARNING_RATE, momentum=SGD_MOMENTUM, foreach=foreach)


class TrainingStep:
    """A model, its optimizer and a synthetic batch on one device; ``run()`` does one full step.

    With a ``FakeTensorMode`` as ``fake_mode`` (build outside it, run inside it) nothing is
    allocated: the model is built on the meta device and then given fake storage, because some
    initialisers (ViT's truncated normal) look at values a fake tensor doesn't have; and fp16 runs
    without the GradScaler, whose overflow check reads a value too. The scaler's own memory is a
    few scalars, so the peak is unchanged.

    ``foreach`` picks the optimizer implementation; None is torch's default for the device (the
    multi-tensor one on CUDA, which makes temporary copies the size of the parameters).
    """

    def __init__(
        self,
        spec: ModelSpec,
        batch: int,
        *,
        size: str = "full",
        dtype: str = "fp32",
        optimizer: str = "adam",
        device: str = "cpu",
        foreach: bool | None = None,
        fake_mode: Any = None,
        input_shape: tuple[int, ...] | None = None,
    ) -> None:
        import torch

        check_choice("dtype", dtype, DTYPES)
        spec.dims(size, input_shape)  # a bad size or input shape fails here, before any work
        self.spec, self.size, self.input_shape, self.device, self.fake_mode = spec, size, input_shape, device, fake_mode
        self.device_type = torch.device(device).type
        fake = fake_mode is not None
        with torch.device("meta" if fake else device):
            self.model = spec.make(size, input_shape)
        with self._mode():
            if fake:
                self.model.to_empty(device=device)
            self.model.train()
            self.optimizer = make_optimizer(optimizer, self.model.parameters(), foreach)
        self.set_batch(batch)
        self.amp = {"fp16": torch.float16, "bf16": torch.bfloat16}.get(dtype)
        self.scaler = torch.amp.GradScaler(self.device_type, enabled=dtype == "fp16" and not fake)

    def _mode(self) -> Any:
        return self.fake_mode or contextlib.nullcontext()

    def set_batch(self, batch: int) -> None:
        """Replace the batch with ``batch`` new samples; the model and optimizer state stay."""
        if batch < 1:
            raise ValueError(f"batch must be at least 1, got {batch}")
        self.batch = batch
        self.inputs = self.targets = None  # drop the old batch before making the new one
        with self._mode():
            self.inputs, self.targets = self.spec.batch(batch, self.size, self.device, self.input_shape)

    def prime(self) -> None:
        """Create the optimizer's state (Adam's moments, SGD's momentum) without a forward pass.

        Training memory is at its highest in a steady-state step, when that state already
        exists; a zero gradient creates it without moving the weights.
        """
        import torch

        with self._mode():
            for p in self.model.parameters():
                p.grad = torch.zeros_like(p)
            self.optimizer.step()
            self.optimizer.zero_grad(set_to_none=True)

    def loss(self) -> torch.Tensor:
        return self.spec.loss(self.model(self.inputs), self.targets)

    def run(self) -> None:
        import torch

        with torch.autocast(self.device_type, dtype=self.amp or torch.float32, enabled=self.amp is not None):
            loss = self.loss()
        self.scaler.scale(loss).backward()
        self.scaler.step(self.optimizer)
        self.scaler.update()
        self.optimizer.zero_grad(set_to_none=True)
