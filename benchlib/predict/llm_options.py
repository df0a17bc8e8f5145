"""What `benchlib fit` and `benchlib predict` are asked about a language model, and the rules that turn
it into the setup both predict: the default dtype, the bf16 check, the format a GPU runs weights in,
and whether the engine runs them.

Both commands build one `LLMOptions` from their flags and resolve it, so on every GPU they answer
for the same setup (``tests/test_predict_llm_options.py`` holds them to it).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from benchlib.predict.engines import Engine, default_engine, find_engine
from benchlib.predict.llm_memory import COMPUTE_DTYPES, DEFAULT_LORA_TARGETS, DEFAULT_SEQ_LEN, Setup, make_setup
from benchlib.predict.weight_formats import (
    GGUF_FORMATS,
    MXFP4_SOFTWARE_NOTE,
    NATIVE_MXFP4_MODEL_TYPES,
    dequantized_on,
)

if TYPE_CHECKING:
    from benchlib.catalog.gpus import AcceleratorSpec
    from benchlib.catalog.language_models import LanguageModel


def has_bf16(spec: AcceleratorSpec) -> bool:
    """False only where the specs say the GPU has no bf16; an unstated support is not ruled out."""
    return not (spec.bf16_supported is not None and not spec.bf16_supported.value)


def check_bf16(spec: AcceleratorSpec, option: str) -> None:
    """ValueError naming ``option`` (e.g. ``--dtype bf16``) where the GPU has no bf16."""
    if not has_bf16(spec):
        raise ValueError(f"{option}: the {spec.name} has no hardware bf16 (see its specs); use fp16")


def llama_cpp_weights(model: LanguageModel, weights: str | None) -> str:
    """The GGUF file llama.cpp runs: the one asked for (``mxfp4``: the MXFP4_MOE file), else what
    readers download, the model's own MXFP4 experts where it ships them (gpt-oss), else Q4_K_M."""
    if weights == "mxfp4":
        return "gguf-mxfp4"
    if weights is not None:
        return weights
    return "gguf-mxfp4" if _model_type(model) in NATIVE_MXFP4_MODEL_TYPES else "gguf-q4_k_m"


def _model_type(model: LanguageModel) -> str | None:
    """The decoder config's ``model_type``; for a shipped model the formulas answer for, which builds
    no config, its shipped config's."""
    if model.config is None and model.shipped:
        from benchlib.catalog.language_models import shipped_models

        config = shipped_models()[model.name].config
        return (config.get("text_config") or config).get("model_type")
    return getattr(model.text_config, "model_type", None)


def runs_as(setup: Setup, spec: AcceleratorSpec | None) -> tuple[Setup, str | None]:
    """The setup transformers would run on this GPU, and a note where that differs from the one asked
    for (FP8 or MXFP4 dequantized on a GPU without the kernels) or where the format has a caveat."""
    if spec is not None:
        why = dequantized_on(setup.weights, spec.name, spec.architecture.value, setup.dtype)
        if why is not None:
            return replace(setup, weights=setup.dtype), why
    if setup.weights == "mxfp4":
        return setup, MXFP4_SOFTWARE_NOTE
    return setup, None


@dataclass(frozen=True)
class ResolvedSetup:
    """What a command predicts: the setup as it runs on the GPU, the engine, and a note where it runs
    otherwise than asked (`runs_as`)."""

    setup: Setup
    engine: Engine
    note: str | None


@dataclass(frozen=True)
class LLMOptions:
    """A language model's options as `benchlib fit` and `benchlib predict` take them (None: not given),
    and the GPU they are for (None: fit's ``--memory-limit``, a plain budget).

    Building one refuses at once what needs no model (an unknown engine, bf16 on a GPU without it):
    the model, which may come from the hub, is looked up after.
    """

    gpu: AcceleratorSpec | None
    mode: str | None = None
    weights: str | None = None
    dtype: str | None = None
    kv_cache: str | None = None
    batch: int | None = None
    seq_len: int | None = None
    lora_rank: int | None = None
    lora_targets: str = DEFAULT_LORA_TARGETS
    grad_checkpointing: bool = False
    optimizer: str | None = None
    engine: str | None = None  # None: llama.cpp for a GGUF file, else transformers

    @property
    def engine_name(self) -> str:
        return self.engine or default_engine(self.weights)

    def __post_init__(self) -> None:
        find_engine(self.engine_name)
        if self.gpu is not None:
            for flag, value in (("--dtype", self.dtype), ("--weights", self.weights)):
                if value == "bf16":
                    check_bf16(self.gpu, f"{flag} bf16")

    @property
    def compute_dtype(self) -> str | None:
        """``--dtype``, else the GPU's default; None leaves `make_setup`'s (the weights' dtype, else bf16).

        Float ``--weights`` compute in their own dtype. Otherwise a GPU computes in bf16, or in fp16
        where it has none (T4, V100), as readers run them; a full fine-tune too (fp32 weights under
        16-bit autocast, as Trainer's bf16 and fp16 recipes). Whether a GPU has bf16 is the specs'
        ``bf16_supported``, a sourced fact per card, not whether they give a bf16 TFLOPS figure: the
        H200 NVL (no peaks yet) and the RTX 6000 Ada (fp32 only) have bf16 and lack the figure.
        Without a GPU (a plain budget: the CPU case) the weights' dtype is kept, fp32 to train.
        """
        if self.dtype is not None or self.weights in COMPUTE_DTYPES or self.gpu is None:
            return self.dtype
        return "bf16" if has_bf16(self.gpu) else "fp16"

    def resolve(self, model: LanguageModel) -> ResolvedSetup:
        """The setup to predict ``model`` in, with the commands' defaults (inference, batch 1, the
        sequence length capped at the model's, AdamW); ValueError (EngineMismatch too) names a flag that
        doesn't apply."""
        engine = find_engine(self.engine_name)
        weights, dtype, kv_cache = self.weights, self.compute_dtype, self.kv_cache
        if engine.name == "llama.cpp" and (self.mode or "inference") == "inference":
            # llama.cpp computes in f16 (f32 accumulation) and caches keys and values in f16 by default.
            weights = llama_cpp_weights(model, weights)
            dtype = self.dtype or ("fp16" if weights in GGUF_FORMATS else None)
            kv_cache = kv_cache or "fp16"
        asked = make_setup(
            self.mode or "inference",
            weights=weights,
            dtype=dtype,
            # Only an option not given takes the default: a 0 given is refused by make_setup, not read as 1.
            batch=1 if self.batch is None else self.batch,
            seq_len=min(DEFAULT_SEQ_LEN, model.max_positions()) if self.seq_len is None else self.seq_len,
            lora_rank=self.lora_rank,
            lora_targets=self.lora_targets,
            grad_checkpointing=self.grad_checkpointing,
            optimizer=self.optimizer or "adamw",
            kv_cache=kv_cache,
        )
        setup, note = runs_as(asked, self.gpu)  # e.g. FP8 dequantized on a GPU before compute capability 8.9
        engine.check(setup.mode, setup.weights)
        return ResolvedSetup(setup, engine, note)
