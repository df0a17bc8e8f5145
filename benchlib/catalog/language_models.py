"""The language models `benchlib fit` predicts: shipped configs, config.json files, hub ids and factories.

``--model`` is resolved in this order:

1. a shipped model (``benchlib/data/language_models.yaml``), by its short name or its Hugging Face id;
2. a path to a ``config.json`` (or a folder holding one);
3. ``package.module:factory``, a function returning a torch model (a transformers model is
   traced like a config; a plain ``nn.Module`` must take token ids and return logits);
4. any other Hugging Face model id, whose config is fetched from the hub (as in Colab).

Every model is built by transformers' own class for its config (``architectures[0]``), with no
weights: benchlib writes no model code of its own here.
"""

from __future__ import annotations

import copy
import importlib
import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import yaml

from benchlib.core.package_data import data_file

SHIPPED = data_file("language_models.yaml")
FACTORY = re.compile(r"^[A-Za-z_][\w.]*:[A-Za-z_]\w*$")
KINDS = {"ForCausalLM": "causal", "ForMaskedLM": "masked", "ForSequenceClassification": "classifier"}
PEFT_TASKS = {"causal": "CAUSAL_LM", "classifier": "SEQ_CLS"}
# Fields a config's fingerprint leaves out: they don't change the network.
UNSHAPING = ("transformers_version", "_name_or_path", "architectures_source")


class ModelNotFound(ValueError):
    """A --model that names nothing benchlib can build; the message says what would work."""


@dataclass(frozen=True)
class ShippedModel:
    """A config shipped with benchlib, and where it comes from."""

    name: str
    hf_id: str
    title: str
    release: str
    config: dict[str, Any]
    checked: str
    note: str | None = None
    on_page: bool = True
    aliases: tuple[str, ...] = ()

    @property
    def source(self) -> str:
        return f"https://huggingface.co/{self.hf_id}/blob/main/config.json"


@cache
def shipped_models() -> dict[str, ShippedModel]:
    """The shipped configs by short name, smallest first (the order of the file)."""
    entries = yaml.safe_load(SHIPPED.read_text(encoding="utf-8"))["models"]
    return {e["name"]: ShippedModel(**{**e, "aliases": tuple(e.get("aliases", ()))}) for e in entries}


class LanguageModel:
    """A model to trace: a transformers config (reducible in depth) or a factory's plain torch model."""

    def __init__(self, name: str, title: str, *, config: Any = None, factory: Callable[[], Any] | None = None) -> None:
        self.name, self.title, self.config, self.factory = name, title, config, factory
        architecture = (getattr(config, "architectures", None) or ["AutoModelForCausalLM"])[0] if config else None
        self.architecture = architecture
        self.kind = next(
            (kind for suffix, kind in KINDS.items() if architecture and architecture.endswith(suffix)), "causal"
        )

    # --- what it is

    @property
    def depth(self) -> int | None:
        return getattr(self.config, "num_hidden_layers", None) if self.config is not None else None

    @property
    def peft_task(self) -> str | None:
        return PEFT_TASKS.get(self.kind)

    def trace_depths(self, reduced: tuple[int, ...]) -> tuple[int | None, ...]:
        """``reduced`` where every decoder layer is the same and there are more than that; else full depth."""
        layer_types = getattr(self.config, "layer_types", None) or []
        if self.depth is None or self.depth <= max(reduced) or len(set(layer_types)) > 1:
            return (self.depth,)
        return reduced

    def max_positions(self) -> int:
        return int(getattr(self.config, "max_position_embeddings", None) or 1 << 20)

    def fingerprint(self) -> Any:
        if self.config is None:
            return self.name
        return {k: v for k, v in sorted(self.config.to_dict().items()) if k not in UNSHAPING}

    # --- building and running

    def build(self, depth: int | None, dtype: Any) -> Any:
        """The network with ``depth`` layers (None: all), in ``dtype``; call it under FakeTensorMode."""
        if self.config is None:
            assert self.factory is not None
            return self.factory().to(dtype)
        import transformers

        config = copy.deepcopy(self.config)
        if depth is not None and depth != self.depth:
            config.num_hidden_layers = depth
            if getattr(config, "layer_types", None):
                config.layer_types = list(config.layer_types)[:depth]
        # sdpa: the attention transformers picks by default, and the one that fits GPUs' fused kernels.
        config._attn_implementation = "sdpa"
        cls = getattr(transformers, self.architecture or "", None)
        if cls is None:
            raise ModelNotFound(
                f"{self.name}: transformers {transformers.__version__} has no class "
                f"{self.architecture!r} (the config's architectures field); upgrade transformers"
            )
        if self.architecture.startswith("Auto"):
            return cls.from_config(config, dtype=dtype)
        return cls._from_config(config, dtype=dtype)

    def vocab_size(self, model: Any) -> int:
        from torch import nn

        size = getattr(self.config, "vocab_size", None)
        if size:
            return int(size)
        embedding = next((m for m in model.modules() if isinstance(m, nn.Embedding)), None)
        if embedding is None:
            raise ModelNotFound(f"{self.name}: a plain torch model needs an nn.Embedding, to know its vocabulary")
        return embedding.num_embeddings

    def inputs(self, model: Any, batch: int, seq_len: int, vocab: int, trains: bool) -> dict[str, Any]:
        """Random token ids (and the labels a training step's loss reads)."""
        import torch

        ids = torch.randint(0, vocab, (batch, seq_len))
        if not trains:
            return {"input_ids": ids}
        if self.kind == "classifier":
            return {"input_ids": ids, "labels": torch.randint(0, getattr(self.config, "num_labels", 2), (batch,))}
        return {"input_ids": ids, "labels": ids}

    def loss(self, model: Any, inputs: dict[str, Any]) -> Any:
        import torch.nn.functional as F

        if self.config is not None:
            return model(**inputs).loss
        output = model(inputs["input_ids"])
        logits = getattr(output, "logits", output)
        return F.cross_entropy(logits.reshape(-1, logits.shape[-1]).float(), inputs["labels"].reshape(-1))

    def prefill(self, model: Any, inputs: dict[str, Any]) -> Any:
        """The forward pass that reads a prompt: with a KV cache and the last position's logits
        for a causal LM, as ``generate()`` runs it."""
        if self.config is None:
            return model(inputs["input_ids"])
        if self.kind == "causal":
            return model(**inputs, use_cache=True, logits_to_keep=1)
        return model(**inputs)


# ----------------------------------------------------------------------------- resolving --model


def _from_shipped(shipped: ShippedModel) -> LanguageModel:
    from transformers import AutoConfig

    fields = dict(shipped.config)
    config = AutoConfig.for_model(fields.pop("model_type"), **fields)
    return LanguageModel(shipped.name, shipped.title, config=config)


def _from_file(path: Path) -> LanguageModel:
    import json

    from transformers import AutoConfig

    file = path / "config.json" if path.is_dir() else path
    if not file.is_file():
        raise ModelNotFound(f"--model {path}: no config.json there")
    try:
        fields = json.loads(file.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise ModelNotFound(
            f"--model {file}: not a readable JSON config ({exc}); give a Hugging Face config.json"
        ) from None
    if not isinstance(fields, dict) or "model_type" not in fields:
        raise ModelNotFound(f"--model {file}: a Hugging Face config.json needs a 'model_type' field (e.g. \"llama\")")
    try:
        config = AutoConfig.for_model(fields.pop("model_type"), **fields)
    except (ValueError, KeyError, TypeError) as exc:
        raise ModelNotFound(f"--model {file}: transformers can't read this config ({exc})") from None
    return LanguageModel(str(file), file.parent.name or file.stem, config=config)


def _from_factory(spec: str) -> LanguageModel:
    module_name, _, attribute = spec.partition(":")
    try:
        factory = getattr(importlib.import_module(module_name), attribute)
    except ImportError as exc:
        raise ModelNotFound(f"--model {spec}: can't import {module_name} ({exc}); is it on PYTHONPATH?") from None
    except AttributeError:
        raise ModelNotFound(f"--model {spec}: {module_name} has no {attribute}") from None
    if not callable(factory):
        raise ModelNotFound(f"--model {spec}: {attribute} is not a function that returns a model")
    return LanguageModel(spec, spec, factory=factory)


def _from_hub(model_id: str, also_known: tuple[str, ...]) -> LanguageModel:
    from transformers import AutoConfig

    try:
        config = AutoConfig.from_pretrained(model_id)
    except (OSError, ValueError) as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        from difflib import get_close_matches

        known = [*shipped_models(), *also_known]
        close = get_close_matches(model_id, known, n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        raise ModelNotFound(
            f"unknown model {model_id!r}{hint}: not a shipped model, a config.json path or module:factory, and "
            f"the Hugging Face hub gave no config for it ({first}). Known here: {', '.join(known)}"
        ) from None
    return LanguageModel(model_id, model_id, config=config)


def resolve_model(spec: str, also_known: tuple[str, ...] = ()) -> LanguageModel:
    """The model ``--model spec`` names (see the module's docstring for the order).

    ``also_known``: other names the command accepts for ``--model`` (the built-in networks), which
    an unknown name's message suggests too.
    """
    shipped = shipped_models()
    by_id = {hf_id.lower(): m for m in shipped.values() for hf_id in (m.hf_id, *m.aliases)}
    if spec in shipped or spec.lower() in by_id:
        return _from_shipped(shipped.get(spec) or by_id[spec.lower()])
    path = Path(spec)
    if path.suffix == ".json" or path.is_dir():
        return _from_file(path)
    if FACTORY.match(spec):
        model = _from_factory(spec)
        return _with_transformers_config(model)
    return _from_hub(spec, also_known)


def _with_transformers_config(model: LanguageModel) -> LanguageModel:
    """A factory that returns a transformers model is traced from its config, at reduced depth."""
    from torch._subclasses.fake_tensor import FakeTensorMode

    assert model.factory is not None
    with FakeTensorMode(allow_non_fake_inputs=True):
        built = model.factory()
    config = getattr(built, "config", None)
    if config is None or not hasattr(config, "to_dict"):
        return model
    if not getattr(config, "architectures", None):
        config.architectures = [type(built).__name__]
    return LanguageModel(model.name, model.name, config=config)
