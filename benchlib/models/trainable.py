"""The models `benchlib max-batch` and `benchlib fit` train: a registry by name.

Each entry builds its network (torchvision's with ``weights=None``, or a plain ``torch.nn``
model with the published dimensions, so nothing is downloaded), makes a synthetic batch and says
how the loss is computed. ``size="small"`` builds the same kind of network with small dimensions
and a small input, for tests that must run in seconds on a CPU.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from difflib import get_close_matches
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    import torch
    from torch import nn

# A model's size, not a suite's: "small" is the same kind of network, tiny, for tests.
MODEL_SIZES: tuple[str, ...] = ("full", "small")


class UnknownModel(KeyError):
    """A model name that is not in the registry; the message lists the known ones."""

    def __str__(self) -> str:
        return str(self.args[0])


@dataclass(frozen=True)
class Dimensions:
    """What one size of a model is: its input per sample and the sizes its builder takes."""

    input_shape: tuple[int, ...]
    options: dict[str, int]


@dataclass(frozen=True)
class ModelSpec:
    """One trainable model: how to build it, feed it and score it."""

    name: str
    title: str
    short: str
    description: str
    kind: Literal["image", "tokens", "segmentation"]
    sizes: dict[str, Dimensions]
    build: Callable[..., nn.Module]

    def dims(self, size: str = "full", input_shape: tuple[int, ...] | None = None) -> Dimensions:
        """The dimensions of one size, with the input per sample replaced by ``input_shape`` if given."""
        if size not in self.sizes:
            raise ValueError(f"unknown size {size!r} for model {self.name!r}; choose one of {', '.join(MODEL_SIZES)}")
        dims = self.sizes[size]
        if input_shape is None or tuple(input_shape) == dims.input_shape:
            return dims
        return Dimensions(tuple(input_shape), {**dims.options, **self._input_options(dims, tuple(input_shape))})

    def _input_options(self, dims: Dimensions, shape: tuple[int, ...]) -> dict[str, int]:
        """Builder options a new input shape implies; ValueError naming what the model accepts."""
        default = "x".join(map(str, dims.input_shape))
        wanted = "x".join(map(str, shape))
        if self.kind == "tokens":
            positions = dims.options["positions"]
            if len(shape) != 1 or not 1 <= shape[0] <= positions:
                raise ValueError(
                    f"--input {wanted}: {self.name} takes a sequence length from 1 to {positions} (default {default})"
                )
            return {}
        if len(shape) != 3 or min(shape) < 1:
            raise ValueError(f"--input {wanted}: {self.name} takes channels x height x width (default {default})")
        channels, height, width = shape
        if self.name == "unet":
            step = 2 ** dims.options["depth"]
            if height % step or width % step:
                raise ValueError(f"--input {wanted}: {self.name}'s height and width must be multiples of {step}")
            return {"channels": channels}
        if channels != 3:
            raise ValueError(f"--input {wanted}: {self.name} takes 3-channel (RGB) images")
        if self.name == "vit_b_16":
            patch = dims.options["patch"]
            if height != width or height % patch:
                raise ValueError(
                    f"--input {wanted}: {self.name} takes square images whose side is a multiple of {patch}"
                )
            return {"image": height}
        if min(height, width) < 32:
            raise ValueError(f"--input {wanted}: {self.name} needs images of at least 32x32 pixels")
        return {}

    def input_shape(self, size: str = "full") -> tuple[int, ...]:
        return self.dims(size).input_shape

    def make(self, size: str = "full", input_shape: tuple[int, ...] | None = None) -> nn.Module:
        return self.build(**self.dims(size, input_shape).options)

    def batch(
        self, batch: int, size: str, device: Any, input_shape: tuple[int, ...] | None = None
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """A synthetic batch on ``device``: inputs and the targets the loss compares them with."""
        import torch

        dims = self.dims(size, input_shape)
        shape = dims.input_shape
        classes = dims.options.get("vocab", dims.options.get("classes", 0))
        if self.kind == "tokens":
            tokens = torch.randint(0, classes, (batch, *shape), device=device)
            return tokens, torch.randint(0, classes, (batch, *shape), device=device)
        images = torch.randn(batch, *shape, device=device)
        if self.kind == "segmentation":
            return images, torch.randint(0, classes, (batch, *shape[1:]), device=device)
        return images, torch.randint(0, classes, (batch,), device=device)

    def loss(self, output: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
        """Cross-entropy over classes, pixels or tokens (language models predict every position)."""
        import torch.nn.functional as F

        if self.kind == "tokens":
            return F.cross_entropy(output.reshape(-1, output.shape[-1]).float(), target.reshape(-1))
        return F.cross_entropy(output.float(), target)


# ----------------------------------------------------------------------------- builders


def _resnet(classes: int, blocks: int) -> nn.Module:
    from torchvision.models import resnet50
    from torchvision.models.resnet import Bottleneck, ResNet

    if blocks == 0:
        return resnet50(weights=None, num_classes=classes)
    # The small variant keeps ResNet-50's bottleneck blocks, one per stage.
    return ResNet(Bottleneck, [blocks] * 4, num_classes=classes)


def _vit(image: int, patch: int, layers: int, heads: int, hidden: int, mlp: int, classes: int) -> nn.Module:
    from torchvision.models import VisionTransformer

    return VisionTransformer(
        image_size=image,
        patch_size=patch,
        num_layers=layers,
        num_heads=heads,
        hidden_dim=hidden,
        mlp_dim=mlp,
        num_classes=classes,
    )


def _encoder_layers(width: int, heads: int, ff: int, layers: int, pre_norm: bool) -> nn.Module:
    from torch import nn

    layer = nn.TransformerEncoderLayer(
        width,
        heads,
        ff,
        dropout=0.1,
        activation="gelu",
        batch_first=True,
        norm_first=pre_norm,
    )
    # Nested tensors only matter for padded inference batches; training never takes that path.
    return nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)


def _bert(vocab: int, positions: int, width: int, heads: int, ff: int, layers: int) -> nn.Module:
    import torch
    from torch import nn

    class BertLike(nn.Module):
        """A BERT-base-sized encoder with a masked-language-model head tied to the embeddings."""

        def __init__(self) -> None:
            super().__init__()
            self.tokens = nn.Embedding(vocab, width)
            self.positions = nn.Embedding(positions, width)
            self.embed_norm = nn.LayerNorm(width)
            self.dropout = nn.Dropout(0.1)
            self.encoder = _encoder_layers(width, heads, ff, layers, pre_norm=False)
            self.head = nn.Sequential(nn.Linear(width, width), nn.GELU(), nn.LayerNorm(width))
            self.bias = nn.Parameter(torch.zeros(vocab))

        def forward(self, ids: torch.Tensor) -> torch.Tensor:
            where = torch.arange(ids.shape[1], device=ids.device)
            x = self.dropout(self.embed_norm(self.tokens(ids) + self.positions(where)))
            x = self.head(self.encoder(x))
            return nn.functional.linear(x, self.tokens.weight, self.bias)

    return BertLike()


def _gpt2(vocab: int, positions: int, width: int, heads: int, ff: int, layers: int) -> nn.Module:
    import torch
    from torch import nn

    class GPT2Like(nn.Module):
        """A GPT-2-small-sized causal decoder: pre-norm blocks, LM head tied to the embeddings."""

        def __init__(self) -> None:
            super().__init__()
            self.tokens = nn.Embedding(vocab, width)
            self.positions = nn.Embedding(positions, width)
            self.dropout = nn.Dropout(0.1)
            self.blocks = _encoder_layers(width, heads, ff, layers, pre_norm=True)
            self.norm = nn.LayerNorm(width)

        def forward(self, ids: torch.Tensor) -> torch.Tensor:
            length = ids.shape[1]
            where = torch.arange(length, device=ids.device)
            x = self.dropout(self.tokens(ids) + self.positions(where))
            mask = nn.Transformer.generate_square_subsequent_mask(length, device=ids.device)
            x = self.norm(self.blocks(x, mask=mask, is_causal=True))
            return nn.functional.linear(x, self.tokens.weight)

    return GPT2Like()


def _unet(channels: int, classes: int, base: int, depth: int) -> nn.Module:
    import torch
    from torch import nn

    def double_conv(cin: int, cout: int) -> nn.Module:
        return nn.Sequential(
            nn.Conv2d(cin, cout, 3, padding=1, bias=False),
            nn.BatchNorm2d(cout),
            nn.ReLU(inplace=True),
            nn.Conv2d(cout, cout, 3, padding=1, bias=False),
            nn.BatchNorm2d(cout),
            nn.ReLU(inplace=True),
        )

    class UNet(nn.Module):
        """Ronneberger et al.'s U-Net with padded convolutions: the output has the input's size."""

        def __init__(self) -> None:
            super().__init__()
            widths = [base * 2**i for i in range(depth + 1)]
            self.stem = double_conv(channels, widths[0])
            self.down = nn.ModuleList(
                nn.Sequential(nn.MaxPool2d(2), double_conv(widths[i], widths[i + 1])) for i in range(depth)
            )
            self.up = nn.ModuleList(
                nn.ConvTranspose2d(widths[i + 1], widths[i], 2, stride=2) for i in reversed(range(depth))
            )
            self.merge = nn.ModuleList(double_conv(2 * widths[i], widths[i]) for i in reversed(range(depth)))
            self.head = nn.Conv2d(widths[0], classes, 1)

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            skips = [self.stem(x)]
            for down in self.down:
                skips.append(down(skips[-1]))
            x = skips.pop()
            for up, merge in zip(self.up, self.merge):
                x = merge(torch.cat([skips.pop(), up(x)], dim=1))
            return self.head(x)

    return UNet()


# ----------------------------------------------------------------------------- registry


def _base_sized(*, vocab: int, positions: int) -> Dimensions:
    """BERT-base's and GPT-2 small's transformer (12 layers, width 768, 12 heads), with this
    vocabulary and context length: what the two models differ in."""
    return Dimensions(
        (positions,), {"vocab": vocab, "positions": positions, "width": 768, "heads": 12, "ff": 3072, "layers": 12}
    )


# The text models' small size, the same for both.
SMALL_TEXT = Dimensions((32,), {"vocab": 1000, "positions": 32, "width": 64, "heads": 2, "ff": 128, "layers": 2})

MODELS: dict[str, ModelSpec] = {
    m.name: m
    for m in (
        ModelSpec(
            "resnet50",
            "ResNet-50",
            "ResNet-50",
            "torchvision ResNet-50, 1000 classes, 224×224 RGB images",
            "image",
            {
                "full": Dimensions((3, 224, 224), {"classes": 1000, "blocks": 0}),
                "small": Dimensions((3, 64, 64), {"classes": 10, "blocks": 1}),
            },
            _resnet,
        ),
        ModelSpec(
            "vit_b_16",
            "ViT-B/16",
            "ViT-B/16",
            "torchvision ViT-B/16, 1000 classes, 224×224 RGB images",
            "image",
            {
                "full": Dimensions(
                    (3, 224, 224),
                    {"image": 224, "patch": 16, "layers": 12, "heads": 12, "hidden": 768, "mlp": 3072, "classes": 1000},
                ),
                "small": Dimensions(
                    (3, 32, 32),
                    {"image": 32, "patch": 8, "layers": 2, "heads": 2, "hidden": 64, "mlp": 128, "classes": 10},
                ),
            },
            _vit,
        ),
        ModelSpec(
            "bert_base",
            "BERT-base-sized encoder",
            "BERT-base",
            "12 layers, width 768, 12 heads, vocabulary 30,522, 512 tokens, masked-LM head over every token",
            "tokens",
            {"full": _base_sized(vocab=30522, positions=512), "small": SMALL_TEXT},
            _bert,
        ),
        ModelSpec(
            "gpt2_small",
            "GPT-2-small-sized decoder",
            "GPT-2 small",
            "12 layers, width 768, 12 heads, vocabulary 50,257, 1,024-token context, next-token loss",
            "tokens",
            {"full": _base_sized(vocab=50257, positions=1024), "small": SMALL_TEXT},
            _gpt2,
        ),
        ModelSpec(
            "unet",
            "U-Net",
            "U-Net",
            "U-Net, 4 down/up levels, 64 to 1,024 channels, 256×256 RGB images, 2 classes per pixel",
            "segmentation",
            {
                "full": Dimensions((3, 256, 256), {"channels": 3, "classes": 2, "base": 64, "depth": 4}),
                "small": Dimensions((3, 32, 32), {"channels": 3, "classes": 2, "base": 8, "depth": 2}),
            },
            _unet,
        ),
    )
}


def get_model(name: str) -> ModelSpec:
    """The registered model called ``name``; UnknownModel names the choices (and a near miss)."""
    if name in MODELS:
        return MODELS[name]
    close = get_close_matches(name, list(MODELS), n=1)
    hint = f" (did you mean {close[0]!r}?)" if close else ""
    raise UnknownModel(f"unknown model {name!r}{hint}; choose one of {', '.join(MODELS)}")
