"""What llama.cpp (and Ollama and LM Studio, which run it) holds on a GPU, and how many layers fit.

llama.cpp allocates everything up front, with no caching allocator between it and the driver, so
its memory is a sum of buffers it logs when it loads a model:

* **model buffer**: the GGUF tensors of the offloaded layers, at the types the file stores
  (`benchlib.predict.weight_formats.gguf_tensor_type`), and the output layer. The token
  embeddings stay in host memory: llama.cpp looks tokens up on the CPU.
* **KV cache**: ``n_ctx`` cells for every full-attention layer, and for a sliding-window layer
  only the window plus one micro-batch (``llama_kv_cache_iswa``), padded to 256 cells; keys and
  values in f16 unless ``--cache-type-k/v`` says otherwise.
* **compute buffer**: the largest set of intermediate tensors of the worst-case graph it
  reserves, one micro-batch (``-ub``, 512 tokens) in f32. With flash attention the output layer's
  logits (vocabulary x micro-batch) and the hidden state feeding it are the largest; a wide MLP
  can be larger. For Llama 3 8B that is 512 x (128,256 + 4,096) x 4 bytes = 258.5 MiB, the
  figure llama.cpp prints for it.
* **CUDA context**: the driver's, as for any CUDA program (`CUDA_CONTEXT_BYTES`).

When the whole model doesn't fit, ``-ngl N`` puts N layers (with their KV cache) on the GPU and
runs the rest on the CPU, reading their weights from host memory at each token.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, replace
from typing import TYPE_CHECKING, Any

from benchlib.predict.memory import CUDA_CONTEXT_BYTES, DeviceMemory
from benchlib.predict.weight_formats import GGUF_FORMATS, ggml_type_bytes, gguf_tensor_type, kv_bytes_per_value

if TYPE_CHECKING:
    from benchlib.catalog.language_models import LanguageModel
    from benchlib.predict.llm_memory import Setup

# llama.cpp's default micro-batch (``-ub``/``n_ubatch``): the compute buffers are sized for it.
MICRO_BATCH = 512
# llama.cpp pads the KV cache's cells to a multiple of this (``llama_kv_cache::get_padding`` with flash attention).
KV_PAD = 256
# The cache types a reader picks with ``--cache-type-k/v`` (f16 by default; q8_0 halves it, and
# needs ``--flash-attn`` for the values), by their name in `KV_CACHE_FORMATS`.
CACHE_TYPES = ("fp16", "q8_0")
METHOD = (
    "llama.cpp's buffers: the offloaded layers' GGUF tensors and the output layer, the KV cache "
    f"(full context for full-attention layers, the window for sliding ones), a compute buffer for a {MICRO_BATCH}-token "
    "micro-batch in f32, and the CUDA context; no caching allocator"
)


@dataclass(frozen=True)
class LlamaCppShape:
    """The sizes llama.cpp's buffers follow, from a model's config and weight format."""

    layers: int
    layer_bytes: int  # one repeating layer's weights (the mean over layers)
    output_bytes: int  # the output layer, on the GPU with the last layer
    embedding_bytes: int  # the token embeddings, in host memory
    vocab: int
    hidden: int
    ffn_width: int  # the MLP's widest activation per token: intermediate size (x experts run per token)
    kv_bytes_per_cell: int  # one token's keys and values over the full-attention layers
    swa_layers_bytes_per_cell: int  # ... over the sliding-window layers
    window: int | None


def _config(model: LanguageModel) -> Any:
    return model.text_config


def shape_of(model: LanguageModel, setup: Setup, weights_bytes: int) -> LlamaCppShape:
    """``weights_bytes``: the whole file's tensors, as `benchlib fit` counts them for ``setup.weights``."""
    config = _config(model)
    hidden = int(config.hidden_size)
    vocab = int(config.vocab_size)
    layers = int(config.num_hidden_layers)
    heads = int(config.num_attention_heads)
    kv_heads = int(getattr(config, "num_key_value_heads", None) or heads)
    head_dim = int(getattr(config, "head_dim", None) or hidden // heads)
    tied = bool(getattr(config, "tie_word_embeddings", False))
    if setup.weights in GGUF_FORMATS:
        embedding = ggml_type_bytes(gguf_tensor_type(setup.weights, "token_embd", hidden, tied=tied), vocab, hidden)
        output = ggml_type_bytes(gguf_tensor_type(setup.weights, "output", hidden, tied=tied), vocab, hidden)
    else:
        embedding = output = vocab * hidden * 2
    # A tied output layer is a second copy of the embeddings on the GPU (llama.cpp duplicates the tensor).
    in_file_output = 0 if tied else output
    layer_bytes = max(0, weights_bytes - embedding - in_file_output) // layers
    experts_per_token = model.experts_per_token if model.experts else 1
    intermediate = int(getattr(config, "moe_intermediate_size", None) or config.intermediate_size)
    kinds = list(getattr(config, "layer_types", None) or ["full_attention"] * layers)
    per_layer = 2 * kv_heads * head_dim * kv_bytes_per_value(_kv_type(setup))
    sliding = sum(1 for kind in kinds if kind == "sliding_attention")
    window = getattr(config, "sliding_window", None) if sliding else None
    return LlamaCppShape(
        layers=layers,
        layer_bytes=layer_bytes,
        output_bytes=output,
        embedding_bytes=embedding,
        vocab=vocab,
        hidden=hidden,
        ffn_width=intermediate * experts_per_token,
        kv_bytes_per_cell=int((layers - sliding) * per_layer),
        swa_layers_bytes_per_cell=int(sliding * per_layer),
        window=int(window) if window else None,
    )


def _kv_type(setup: Setup) -> str:
    # llama.cpp's cache is f16 unless asked otherwise: a bf16 or fp32 compute dtype doesn't change it.
    return setup.kv_cache if setup.kv_cache in ("q8_0", "fp8") else "fp16"


def with_cache_of(shape: LlamaCppShape, setup: Setup) -> LlamaCppShape:
    """A shape `shape_of` gave for llama.cpp's default f16 cache, with ``setup``'s cache type
    instead: the same cells, each value in its bytes (q8_0: 34 per 32). The same figures as
    `shape_of` for that setup (``tests/test_predict_llama_cpp.py``)."""
    scale = kv_bytes_per_value(_kv_type(setup)) / kv_bytes_per_value("fp16")
    return replace(
        shape,
        kv_bytes_per_cell=int(shape.kv_bytes_per_cell * scale),
        swa_layers_bytes_per_cell=int(shape.swa_layers_bytes_per_cell * scale),
    )


def _cells(context: int) -> int:
    return KV_PAD * math.ceil(context / KV_PAD)


def kv_cache_bytes(shape: LlamaCppShape, context: int) -> int:
    full = shape.kv_bytes_per_cell * _cells(context)
    if not shape.window:
        return full
    window_cells = min(_cells(context), _cells(shape.window + MICRO_BATCH))
    return full + shape.swa_layers_bytes_per_cell * window_cells


def compute_buffer_bytes(shape: LlamaCppShape, context: int) -> int:
    tokens = min(MICRO_BATCH, context)
    return 4 * tokens * max(shape.vocab + shape.hidden, 2 * shape.ffn_width + 2 * shape.hidden)


@dataclass(frozen=True)
class LlamaCppFit:
    """llama.cpp's buffers for one model, context and GPU, and how many layers it offloads."""

    model: str
    setup: Setup
    device: DeviceMemory
    context: int
    gpu_layers: int  # -ngl: repeating layers on the GPU
    layers: int
    output_on_gpu: bool
    model_buffer: int
    host_model_buffer: int
    kv_cache: int
    compute_buffer: int
    cuda_context: int
    largest_context: int  # at full offload; 0 where even a 1-token context doesn't fit
    limit: int
    gpus: int = 1  # the layers spread over this many GPUs (--split-mode layer)
    weights_source: str = ""  # where the file's tensors' bytes come from: a trace, or the committed formulas

    @property
    def gpu_bytes(self) -> int:
        return self.model_buffer + self.kv_cache + self.compute_buffer + self.cuda_context

    @property
    def fits(self) -> bool:
        """The whole model and its context on the GPU (llama.cpp's ``-ngl 99``)."""
        return self.gpu_layers == self.layers and self.output_on_gpu

    def as_dict(self) -> dict[str, Any]:
        return {
            "model": self.model,
            "engine": "llama.cpp",
            "setup": asdict(self.setup),
            "describe": self.setup.describe(),
            "device": asdict(self.device),
            "context": self.context,
            "fits": self.fits,
            "gpu_layers": self.gpu_layers,
            "layers": self.layers,
            "output_on_gpu": self.output_on_gpu,
            "breakdown": {
                "model_buffer": self.model_buffer,
                "kv_cache": self.kv_cache,
                "compute_buffer": self.compute_buffer,
                "cuda_context": self.cuda_context,
            },
            "host_model_buffer": self.host_model_buffer,
            "peak_bytes": self.gpu_bytes,
            "usable_bytes": self.device.usable_bytes,
            "largest_context": self.largest_context,
            "limit": self.limit,
            "gpus": self.gpus,
            "method": f"{METHOD}; the file's tensors from {self.weights_source}" if self.weights_source else METHOD,
            "kind": "predicted",
        }


def fit_llama_cpp(
    model: LanguageModel, setup: Setup, device: DeviceMemory, weights_bytes: int, gpus: int = 1
) -> LlamaCppFit:
    """llama.cpp's GPU memory for ``model`` at ``setup.seq_len`` tokens of context, the layers that
    fit (``-ngl``) when not all do, and the longest context at full offload.

    ``gpus`` > 1: llama.cpp's default ``--split-mode layer`` spreads the layers over the GPUs, each
    with its own CUDA context and compute buffer; the answer treats them as one pool less those."""
    return fit_shape(model.title, shape_of(model, setup, weights_bytes), setup, device, model.max_positions(), gpus)


def fit_shape(
    title: str, shape: LlamaCppShape, setup: Setup, device: DeviceMemory, limit: int, gpus: int = 1
) -> LlamaCppFit:
    """`fit_llama_cpp` for a model of ``shape`` (as the formulas table holds it) reading at most ``limit`` tokens."""
    context = min(setup.seq_len, limit)
    per_gpu_extra = CUDA_CONTEXT_BYTES + compute_buffer_bytes(shape, MICRO_BATCH)
    usable = gpus * device.usable_bytes - (gpus - 1) * per_gpu_extra
    fixed = CUDA_CONTEXT_BYTES + compute_buffer_bytes(shape, context)

    def kv_layer(ctx: int) -> int:
        return kv_cache_bytes(shape, ctx) // shape.layers

    everything = fixed + shape.layers * shape.layer_bytes + shape.output_bytes + kv_cache_bytes(shape, context)
    if everything <= usable:
        gpu_layers, output_on_gpu = shape.layers, True
    else:
        room = usable - fixed
        per_layer = shape.layer_bytes + kv_layer(context)
        gpu_layers = max(0, min(shape.layers, room // max(1, per_layer)))
        output_on_gpu = False
    kv_on_gpu = kv_layer(context) * gpu_layers if gpu_layers < shape.layers else kv_cache_bytes(shape, context)
    model_buffer = gpu_layers * shape.layer_bytes + (shape.output_bytes if output_on_gpu else 0)
    host = shape.embedding_bytes + (shape.layers - gpu_layers) * shape.layer_bytes
    host += 0 if output_on_gpu else shape.output_bytes
    return LlamaCppFit(
        model=title,
        setup=setup,
        device=device,
        context=context,
        gpu_layers=gpu_layers,
        layers=shape.layers,
        output_on_gpu=output_on_gpu,
        model_buffer=model_buffer,
        host_model_buffer=host,
        kv_cache=kv_on_gpu,
        compute_buffer=compute_buffer_bytes(shape, context),
        cuda_context=CUDA_CONTEXT_BYTES,
        largest_context=_largest_context(shape, usable, limit),
        limit=limit,
        gpus=gpus,
    )


def _largest_context(shape: LlamaCppShape, usable: int, limit: int) -> int:
    """The longest context with every layer on the GPU: the KV cache grows by whole padded cells."""

    def needs(context: int) -> int:
        weights = shape.layers * shape.layer_bytes + shape.output_bytes
        return CUDA_CONTEXT_BYTES + compute_buffer_bytes(shape, context) + weights + kv_cache_bytes(shape, context)

    if needs(1) > usable:
        return 0
    low, high = 1, limit
    while low < high:  # the memory grows with the context: the last one that fits
        middle = (low + high + 1) // 2
        low, high = (middle, high) if needs(middle) <= usable else (low, middle - 1)
    return low
