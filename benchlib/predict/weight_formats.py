"""Weight and KV-cache formats beyond bitsandbytes, GPTQ and AWQ: their bytes, and where a GPU runs them.

No torch here: `benchlib fit` checks a format against a GPU before it builds anything.

* **FP8** (transformers' fine-grained FP8, ``FineGrainedFP8Config``): one byte per weight
  (float8_e4m3fn) and one fp32 ``weight_scale_inv`` per 128 x 128 block, for every linear layer
  but the output layer, and for MoE experts (``FP8Experts``: the same per expert).
  ``FineGrainedFP8HfQuantizer.validate_environment`` (transformers 5.23) dequantizes the
  checkpoint while loading it on a GPU of compute capability below 8.9 (a T4, an A100): the
  model then holds dense weights in the dtype it loads in.
* **MXFP4** (gpt-oss's checkpoints): MoE expert weights only, two 4-bit values per byte and one
  e8m0 (one-byte) scale per 32 values; attention, embeddings and the router stay bf16.
  ``Mxfp4HfQuantizer.validate_environment`` dequantizes the experts to bf16 on a GPU below
  compute capability 7.5 (a V100, a P100), and also where triton >= 3.4 or the ``kernels``
  package is missing, which a prediction can't see.
* **GGUF** (llama.cpp's files): every weight matrix, experts included, in a ggml block type
  whose block size and bytes come from the ``gguf`` package (``gguf.GGML_QUANT_SIZES``); a
  ``_K_M`` file mixes types per tensor by llama.cpp's recipe (:func:`gguf_tensor_type`).
  transformers' ``from_pretrained(gguf_file=...)`` dequantizes a GGUF file while loading it, so
  these formats are predicted as llama.cpp holds them.
"""

from __future__ import annotations

import math
import re

FP8 = "fp8"
MXFP4 = "mxfp4"
# FineGrainedFP8Config's default weight_block_size.
FP8_BLOCK = 128
# The OCP MX formats' block: 32 values share one e8m0 scale.
MX_BLOCK = 32
# llama.cpp's file types (llama_ftype) -> the ggml type most tensors get (llama_ftype_get_default_type).
# gguf-mxfp4 is MXFP4_MOE: the experts MXFP4, every other matrix Q8_0 (ggml-org's gpt-oss files).
GGUF_FORMATS = {
    "gguf-q4_0": "Q4_0",
    "gguf-q4_k_m": "Q4_K",
    "gguf-q5_k_m": "Q5_K",
    "gguf-q8_0": "Q8_0",
    "gguf-mxfp4": "Q8_0",
}
# The formats llama.cpp loads: GGUF files, and F16/BF16 GGUF files (``--weights fp16``/``bf16``).
LLAMA_CPP_WEIGHTS = ("fp16", "bf16", *GGUF_FORMATS)
# Models whose checkpoints ship their experts in MXFP4 (every gpt-oss checkpoint OpenAI released).
# Their GGUF files keep the experts MXFP4 whatever the file type: "while the f16 gguf of the 20b
# model is around 12.5 GB all other smaller quantizations are around 11 GB"
# (https://github.com/ggml-org/llama.cpp/issues/15117, 2025-08-06).
NATIVE_MXFP4_MODEL_TYPES = ("gpt_oss",)
NATIVE_MXFP4_SOURCE = "https://github.com/ggml-org/llama.cpp/issues/15117"
# The GPUs' compute capability, from the architecture the specs name (``Ampere GA100`` -> 8.0), as
# NVIDIA lists them at https://developer.nvidia.com/cuda-gpus; the chips that
# differ from their architecture's usual figure follow.
_CAPABILITY = {
    "Kepler": (3, 7),
    "Maxwell": (5, 2),
    "Pascal": (6, 1),
    "Volta": (7, 0),
    "Turing": (7, 5),
    "Ampere": (8, 6),
    "Ada": (8, 9),
    "Hopper": (9, 0),
    "Blackwell": (10, 0),
}
_CHIP_CAPABILITY = {
    "GP100": (6, 0),
    "GA100": (8, 0),
    "GB202": (12, 0),
    "GB203": (12, 0),
    "GB205": (12, 0),
    "GB206": (12, 0),
}
FP8_CAPABILITY = (8, 9)
MXFP4_CAPABILITY = (7, 5)
# KV-cache formats: bytes per stored value (q8_0's comes from the gguf package, see kv_bytes_per_value).
KV_CACHE_FORMATS = ("fp32", "fp16", "bf16", "fp8", "q8_0")


def ggml_type_bytes(type_name: str, rows: int, cols: int) -> int:
    """Bytes of a ``rows`` x ``cols`` tensor in ggml type ``type_name`` (Q4_K, Q6_K, Q8_0, F16 ...),
    from the gguf package's table: each row is ``cols / block size`` blocks of ``type size`` bytes."""
    from gguf import GGML_QUANT_SIZES, GGMLQuantizationType

    block, type_size = GGML_QUANT_SIZES[GGMLQuantizationType[type_name]]
    if cols % block:
        raise ValueError(f"a row of {cols} values is not a whole number of {type_name} blocks of {block}")
    return rows * (cols // block) * type_size


def kv_bytes_per_value(kv_cache: str) -> float:
    """Bytes one cached key or value element takes in ``kv_cache`` (q8_0: 34 bytes per 32, from gguf)."""
    if kv_cache == "q8_0":
        from gguf import GGML_QUANT_SIZES, GGMLQuantizationType

        block, type_size = GGML_QUANT_SIZES[GGMLQuantizationType.Q8_0]
        return type_size / block
    return {"fp32": 4.0, "fp16": 2.0, "bf16": 2.0, "fp8": 1.0}[kv_cache]


def fp8_bytes(out_features: int, in_features: int) -> dict[str, int]:
    """FP8Linear's tensors: the float8 weight and the fp32 inverse scale per 128 x 128 block."""
    blocks = math.ceil(out_features / FP8_BLOCK) * math.ceil(in_features / FP8_BLOCK)
    return {"weight_fp8": out_features * in_features, "weight_scale_inv": 4 * blocks}


def mxfp4_bytes(out_features: int, in_features: int) -> dict[str, int]:
    """Mxfp4GptOssExperts' tensors for one expert matrix: packed 4-bit values and one e8m0 scale per 32."""
    n = out_features * in_features
    return {"blocks": math.ceil(n / 2), "scales": math.ceil(n / MX_BLOCK)}


# ----------------------------------------------------------------------------- llama.cpp's recipe

# What llama.cpp calls a tensor, from transformers' module names (convert_hf_to_gguf's mapping,
# reduced to the categories llama_tensor_get_type distinguishes).
_ROLES = (
    # A MoE router (Mixtral's block_sparse_moe.gate): llama.cpp never quantizes it (ffn_gate_inp).
    ("ffn_gate_inp", re.compile(r"(mlp|block_sparse_moe|moe)\.(gate|router)$")),
    ("attn_qkv", re.compile(r"(qkv_proj|query_key_value|c_attn|Wqkv)$")),
    ("attn_q", re.compile(r"q_proj$")),
    ("attn_k", re.compile(r"k_proj$")),
    ("attn_v", re.compile(r"v_proj$")),
    ("attn_output", re.compile(r"(o_proj|out_proj|attn\.c_proj|attention\.dense|attention\.output\.dense)$")),
    ("ffn_down", re.compile(r"(down_proj|fc2|mlp\.c_proj|w2|dense_4h_to_h|output\.dense)$")),
    ("ffn_up", re.compile(r"(up_proj|gate_up_proj|fc1|c_fc|w3|dense_h_to_4h|intermediate\.dense)$")),
    ("ffn_gate", re.compile(r"(gate_proj|w1)$")),
)


def gguf_role(name: str) -> str:
    """llama.cpp's category for the transformers tensor (module or expert parameter) ``name``."""
    for role, pattern in _ROLES:
        if pattern.search(name):
            return role
    return "other"


def _use_more_bits(layer: int, layers: int) -> bool:
    # llama-quant.cpp's use_more_bits: the first and last eighth of the layers, and every third between.
    return layer < layers // 8 or layer >= 7 * layers // 8 or (layer - layers // 8) % 3 == 2


def gguf_tensor_type(
    weights: str,
    role: str,
    cols: int,
    *,
    layer: int = 0,
    layers: int = 1,
    experts: int = 0,
    tied: bool = False,
    expert_tensor: bool = False,
    native_mxfp4: bool = False,
) -> str:
    """The ggml type llama.cpp's ``llama-quantize`` gives one tensor of a ``weights`` file.

    A faithful simplification of ``llama_tensor_get_type`` in llama.cpp's src/llama-quant.cpp
    (ggml-org/llama.cpp at commit 007dbbf3fd17eefe9b47fee45f48f7ba5e62b714), for Q4_K_M, Q5_K_M
    and Q8_0 without an importance matrix or overrides, and for any architecture but Falcon:

    * ``output`` (and the token embeddings where they are tied to it): Q6_K, or Q8_0 when the row
      is not a whole number of 256-value blocks or the file is Q8_0.
    * ``attn_v`` (and a fused ``attn_qkv``): Q6_K in the layers ``use_more_bits`` picks (Q4_K_M,
      Q5_K_M); Q8_0 in a model of exactly 8 experts. ``attn_qkv``: Q5_K in Q4_K_M, Q6_K in Q5_K_M.
    * ``attn_k``: Q8_0 in a model of exactly 8 experts.
    * ``ffn_down`` (experts' too): Q6_K in the layers ``use_more_bits`` picks (Q4_K_M, Q5_K_M).
    * ``attn_output``: Q5_K in Q4_K_M with exactly 8 experts.
    * everything else (token embeddings when untied, q, gate, up): the file's type.

    Then ``tensor_type_fallback``: a row that is not a whole number of the type's blocks takes
    Q5_0 for Q4_K, Q5_1 for Q5_K, Q8_0 for Q6_K, and F16 if even that doesn't divide it.

    Q4_0 has none of the ``_K_M`` rules: only the output layer differs (Q6_K). MXFP4_MOE
    (``gguf-mxfp4``) gives the experts (``ne[2] > 1``) MXFP4 and every other matrix Q8_0. An
    expert tensor of a model that ships MXFP4 experts (``native_mxfp4``) stays MXFP4 in any file.
    """
    default = GGUF_FORMATS[weights]
    chosen = default
    if expert_tensor and (native_mxfp4 or weights == "gguf-mxfp4"):
        return "MXFP4"
    if weights in ("gguf-mxfp4", "gguf-q4_0"):
        if weights == "gguf-q4_0" and (role == "output" or (role == "token_embd" and tied)):
            chosen = "Q6_K"
        return _fallback(chosen, cols)
    if role == "output" or (role == "token_embd" and tied):
        if cols % 256 or default == "Q8_0":
            chosen = "Q8_0"
        else:
            chosen = "Q6_K"
    elif role in ("attn_v", "attn_qkv"):
        if role == "attn_qkv" and weights != "gguf-q8_0":
            chosen = "Q5_K" if weights == "gguf-q4_k_m" else "Q6_K"
        elif role == "attn_v" and weights != "gguf-q8_0" and _use_more_bits(layer, layers):
            chosen = "Q6_K"
        if role == "attn_v" and experts == 8:
            chosen = "Q8_0"
    elif role == "attn_k" and experts == 8:
        chosen = "Q8_0"
    elif role == "ffn_down" and weights != "gguf-q8_0" and _use_more_bits(layer, layers):
        chosen = "Q6_K"
    elif role == "attn_output" and experts == 8 and weights == "gguf-q4_k_m":
        chosen = "Q5_K"
    return _fallback(chosen, cols)


def _fallback(type_name: str, cols: int) -> str:
    from gguf import GGML_QUANT_SIZES, GGMLQuantizationType

    def fits(name: str) -> bool:
        return cols % GGML_QUANT_SIZES[GGMLQuantizationType[name]][0] == 0

    if fits(type_name):
        return type_name
    # llama.cpp has no fallback for Q8_0 itself (it stops); F16 is what a file could hold there.
    instead = {"Q4_K": "Q5_0", "Q5_K": "Q5_1", "Q6_K": "Q8_0"}.get(type_name, "F16")
    return instead if fits(instead) else "F16"


def gguf_bytes(
    weights: str,
    role: str,
    rows: int,
    cols: int,
    *,
    layer_of: int | None,
    layers: int,
    experts: int = 0,
    tied: bool = False,
    expert_tensor: bool = False,
    native_mxfp4: bool = False,
) -> int:
    """Bytes of one ``rows`` x ``cols`` tensor of a ``weights`` GGUF file.

    ``layer_of`` None: a tensor outside the decoder layers. Inside them, the mean over the
    model's ``layers`` of what the recipe gives that tensor in each layer, rounded down: a trace at
    reduced depth extrapolates one layer's increment, so every traced layer holds the mean and the
    extrapolated total is the file's, to within a byte per layer and tensor.
    """
    if layer_of is None:
        return ggml_type_bytes(gguf_tensor_type(weights, role, cols, tied=tied), rows, cols)
    kinds = {"expert_tensor": expert_tensor, "native_mxfp4": native_mxfp4}
    total = sum(
        ggml_type_bytes(
            gguf_tensor_type(weights, role, cols, layer=i, layers=layers, experts=experts, **kinds), rows, cols
        )
        for i in range(layers)
    )
    return total // layers


# ----------------------------------------------------------------------------- GPUs


def compute_capability(architecture: str) -> tuple[int, int] | None:
    """A GPU's CUDA compute capability from the architecture its specs name; None where unknown (a TPU)."""
    words = architecture.replace("(", " ").split()
    for word in words:
        if word in _CHIP_CAPABILITY:
            return _CHIP_CAPABILITY[word]
    if architecture.startswith("Blackwell Ultra"):
        return (10, 3)
    return _CAPABILITY.get(words[0]) if words else None


def dequantized_on(weights: str, gpu_name: str, architecture: str, dtype: str) -> str | None:
    """Where transformers dequantizes ``weights`` on this GPU while loading it: the reason in plain
    words (the prediction then holds dense weights); None where the GPU runs the format."""
    capability = compute_capability(architecture)
    if capability is None:
        return None
    sm = f"{capability[0]}.{capability[1]}"
    if weights == FP8 and capability < FP8_CAPABILITY:
        return (
            f"the {gpu_name} has no FP8 (compute capability {sm}; transformers' FP8 kernels need 8.9, "
            f"an RTX 4090, L4 or H100): transformers would dequantize the FP8 checkpoint while loading it, "
            f"to the dtype it loads in ({dtype} here), so this predicts {dtype} weights, as --weights {dtype} would"
        )
    if weights == MXFP4 and capability < MXFP4_CAPABILITY:
        return (
            f"the {gpu_name} can't run MXFP4 (compute capability {sm}; transformers' MXFP4 kernels need 7.5, "
            f"a T4 or newer): transformers would dequantize the MoE experts to bf16 while loading them, so "
            f"this predicts {dtype} experts, as --weights {dtype} would"
        )
    return None


MXFP4_SOFTWARE_NOTE = (
    "MXFP4 experts stay 4-bit only where triton >= 3.4 and the kernels package are installed; "
    "without them transformers dequantizes the experts to bf16 (predict that with --weights bf16)"
)
