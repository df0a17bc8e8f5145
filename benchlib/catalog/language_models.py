"""The language models `benchlib fit` predicts: shipped configs, config.json files, hub ids and factories.

``--model`` is resolved in this order:

1. a shipped model (``benchlib/data/language_models.yaml``), by its short name or its Hugging Face id;
2. a path to a ``config.json`` (or a folder holding one);
3. ``package.module:factory``, a function returning a torch model, alone or in a tuple such as
   ``(model, tokenizer)`` (a transformers model is traced like a config; a plain ``nn.Module`` must
   take token ids and return logits);
4. any other Hugging Face model id, whose config is fetched from the hub (as in Colab).

Every model is built by transformers' own class for its config (``architectures[0]``), with no
weights: benchlib writes no model code of its own here.
"""

from __future__ import annotations

import copy
import importlib
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from benchlib.core.package_data import data_file, load_yaml

SHIPPED = data_file("language_models.yaml")
FACTORY = re.compile(r"^[A-Za-z_][\w.]*:[A-Za-z_]\w*$")
KINDS = {"ForCausalLM": "causal", "ForMaskedLM": "masked", "ForSequenceClassification": "classifier"}
PEFT_TASKS = {"causal": "CAUSAL_LM", "classifier": "SEQ_CLS"}
# A MoE config's fields (transformers' names, which differ by model: Mixtral and gpt-oss, Qwen-MoE,
# DeepSeek): experts per layer, and per token.
EXPERT_FIELDS = ("num_local_experts", "num_experts", "n_routed_experts")
PER_TOKEN_FIELDS = ("num_experts_per_tok", "experts_per_token")
# A decoder config's whole-number sizes, none of which a model can have fewer than one of.
SIZE_FIELDS = (
    "hidden_size",
    "intermediate_size",
    "num_hidden_layers",
    "num_attention_heads",
    "num_key_value_heads",
    "vocab_size",
    *EXPERT_FIELDS,
    *PER_TOKEN_FIELDS,
)
# The kind of every decoder layer of a model whose config doesn't list them: they are all alike.
ALIKE = "decoder"
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
    entries = load_yaml(SHIPPED.read_text(encoding="utf-8"))["models"]
    return {e["name"]: ShippedModel(**{**e, "aliases": tuple(e.get("aliases", ()))}) for e in entries}


@dataclass(frozen=True)
class TracePlan:
    """The models a prediction traces, and how their figures add up to the whole model's.

    Memory live at any point of a step, and the work of a call, are sums over the layers, so a
    figure of the whole model is ``sum(c * f for c, f in zip(coefficients, figures))``: the first
    traced model's, plus for each kind of layer its count beyond that model times what one more
    layer of that kind added. ``layers[i]`` are the kinds of the i-th model's decoder layers
    (None: the model as it is).
    """

    layers: tuple[tuple[str, ...] | None, ...]
    coefficients: tuple[int, ...]
    full: tuple[str, ...] = ()

    @property
    def reduced(self) -> bool:
        return self.layers != (None,)

    def combine(self, figures: Sequence[int]) -> int:
        return sum(c * f for c, f in zip(self.coefficients, figures, strict=True))

    def describe(self, depth: int | None) -> str:
        """How the traces stand for the model, for a prediction's ``method``."""
        if not self.reduced:
            return f"at full depth ({depth} layers)"
        base = self.layers[0]
        assert base is not None
        kinds = list(dict.fromkeys(self.full))
        if len(kinds) == 1:
            return f"at {len(base)} and {len(base) + 1} layers, extrapolated per layer to {depth}"
        counts = ", ".join(f"{self.full.count(k)} {k}" for k in kinds)
        return (
            f"at {len(base)} layers and with one more layer of each kind, "
            f"extrapolated per kind of layer to {depth} ({counts})"
        )


class LanguageModel:
    """A model to trace: a transformers config (reducible in depth) or a factory's plain torch model."""

    def __init__(
        self,
        name: str,
        title: str,
        *,
        config: Any = None,
        factory: Callable[[], Any] | None = None,
        shipped: bool = False,
    ) -> None:
        self.name, self.title, self.config, self.factory = name, title, config, factory
        self.shipped = shipped  # one of benchlib's configs, not the user's
        architecture = (getattr(config, "architectures", None) or ["AutoModelForCausalLM"])[0] if config else None
        self.architecture = architecture
        self.kind = next(
            (kind for suffix, kind in KINDS.items() if architecture and architecture.endswith(suffix)), "causal"
        )

    # --- what it is

    @property
    def text_config(self) -> Any:
        """The decoder's config: a multimodal model's ``text_config``, else the config itself."""
        return self.config.get_text_config() if self.config is not None else None

    @property
    def depth(self) -> int | None:
        return getattr(self.text_config, "num_hidden_layers", None) if self.config is not None else None

    @property
    def peft_task(self) -> str | None:
        return PEFT_TASKS.get(self.kind)

    @property
    def experts(self) -> int | None:
        """A MoE model's experts per layer (None: a dense model)."""
        text = self.text_config
        return next((int(getattr(text, f)) for f in EXPERT_FIELDS if getattr(text, f, None)), None)

    @property
    def experts_per_token(self) -> int:
        """How many experts each token is routed to (1 for a dense model)."""
        text = self.text_config
        return next((int(getattr(text, f)) for f in PER_TOKEN_FIELDS if getattr(text, f, None)), 1)

    @property
    def sliding_window(self) -> int | None:
        """The tokens a sliding-window layer attends to and keeps in its cache (None: no such layer,
        or none shorter than the model's context): past it, that cache stops growing."""
        text = self.text_config
        if text is None or getattr(text, "use_sliding_window", True) is False:
            return None
        window = getattr(text, "sliding_window", None)
        return int(window) if window and window < self.max_positions() else None

    @property
    def layer_kinds(self) -> tuple[str, ...] | None:
        """The kind of each decoder layer (``layer_types``, such as sliding and full attention), or
        None where the layers differ in ways a reduced trace can't follow (some dense among MoE)."""
        if self.depth is None:
            return None
        text = self.text_config
        if getattr(text, "mlp_only_layers", None) or (getattr(text, "decoder_sparse_step", 1) or 1) > 1:
            return None
        kinds = getattr(text, "layer_types", None)
        return tuple(kinds) if kinds else (ALIKE,) * self.depth

    def trace_plan(self, base: int) -> TracePlan:
        """The reduced models to trace: ``base`` layers (more if a kind shows up only later), and that
        with one more layer of each kind; the whole model when it is no deeper than that.

        Each reduced model ends with the model's own last layer, the added one goes before it: a
        step's peak comes at its last layers, so they must be of the kind the model has there.
        """
        kinds = self.layer_kinds
        if kinds is None:
            return TracePlan((None,), (1,))
        distinct = list(dict.fromkeys(kinds))
        length = max(base, max(kinds[:-1].index(k) if k in kinds[:-1] else 0 for k in distinct) + 2)
        if len(kinds) <= length + 1:
            return TracePlan((None,), (1,))
        head, last = kinds[: length - 1], kinds[-1:]
        added = [kinds.count(k) - (head + last).count(k) for k in distinct]
        return TracePlan((head + last, *(head + (k,) + last for k in distinct)), (1 - sum(added), *added), full=kinds)

    def max_positions(self) -> int:
        return int(getattr(self.text_config, "max_position_embeddings", None) or 1 << 20)

    def fingerprint(self) -> Any:
        if self.config is None:
            return self.name
        return {k: v for k, v in sorted(self.config.to_dict().items()) if k not in UNSHAPING}

    # --- building and running

    def build(self, layers: tuple[str, ...] | None, dtype: Any) -> Any:
        """The network with these decoder ``layers`` (kinds, as `trace_plan` gives them; None: its own),
        in ``dtype``; call it under FakeTensorMode."""
        if self.config is None:
            assert self.factory is not None
            return self.factory().to(dtype)
        import transformers

        config = copy.deepcopy(self.config)
        text = config.get_text_config()
        if layers is not None and len(layers) != self.depth:
            text.num_hidden_layers = len(layers)
            if getattr(text, "layer_types", None):
                text.layer_types = list(layers)
        cls = getattr(transformers, self.architecture or "", None)
        # sdpa: the attention transformers picks by default, and the one that fits GPUs' fused kernels;
        # a model without it (gpt-oss, whose attention has sinks) runs transformers' eager attention.
        config._attn_implementation = "eager" if cls is not None and not cls._supports_sdpa else "sdpa"
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

        size = getattr(self.text_config, "vocab_size", None)
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
    return LanguageModel(shipped.name, shipped.title, config=config, shipped=True)


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
    nested = isinstance(fields.get("text_config"), dict)
    # The sizes as the file gives them, named so, before transformers' own checks answer in its words.
    _check_sizes(fields["text_config"] if nested else fields, f"--model {file}", "text_config." if nested else "")
    try:
        config = AutoConfig.for_model(fields.pop("model_type"), **fields)
    except Exception as exc:  # transformers' validators raise classes of their own, not only ValueError
        raise ModelNotFound(f"--model {file}: transformers can't read this config ({_one_line(exc)})") from None
    _check_expert_fields(file, fields, config)
    check_config(config, f"--model {file}")
    return LanguageModel(str(file), file.parent.name or file.stem, config=config)


def _check_expert_fields(file: Path, fields: dict[str, Any], config: Any) -> None:
    """A MoE config must say how many experts it has, and per token: transformers would fill in its
    class's defaults (128 experts for Qwen3-MoE, say), which fit no other model."""
    text = config.get_text_config()
    given = fields.get("text_config", fields) if isinstance(fields.get("text_config"), dict) else fields
    for names, what in ((EXPERT_FIELDS, "experts per layer"), (PER_TOKEN_FIELDS, "experts per token")):
        expected = [n for n in names if hasattr(text, n)]
        if expected and not any(n in given for n in expected):
            raise ModelNotFound(
                f"--model {file}: a {config.model_type} config needs {' or '.join(map(repr, expected))} ({what}); "
                "copy it from the model's config.json"
            )


def check_config(config: Any, where: str) -> None:
    """ModelNotFound naming the field, and what it should be, where a config can't describe a model
    (`_check_sizes`). Checked before tracing, which would fail deep in transformers, or not at all."""
    text = config.get_text_config()
    _check_sizes(text.to_dict(), where, "" if text is config else "text_config.")


def _check_sizes(fields: Mapping[str, Any], where: str, prefix: str) -> None:
    """ModelNotFound naming the field where a decoder's ``fields`` can't describe a model: a size below
    one, key-value heads that don't split the query heads into equal groups, or more experts per
    token than there are."""
    sizes = {}
    for name in SIZE_FIELDS:
        value = fields.get(name)
        if value is None or isinstance(value, (list, tuple, dict)):  # not given, or given per layer
            continue
        if isinstance(value, bool) or not isinstance(value, int):
            raise ModelNotFound(f"{where}: {prefix}{name} is {value!r}; it must be a whole number")
        if value < 1:
            raise ModelNotFound(f"{where}: {prefix}{name} is {value}; it must be at least 1")
        sizes[name] = value
    heads, kv_heads = sizes.get("num_attention_heads"), sizes.get("num_key_value_heads")
    if heads and kv_heads and heads % kv_heads:
        raise ModelNotFound(
            f"{where}: {prefix}num_key_value_heads {kv_heads} doesn't divide num_attention_heads {heads}; each "
            f"key-value head serves an equal group of query heads, so give a divisor of {heads}"
        )
    experts = next((name for name in EXPERT_FIELDS if name in sizes), None)
    per_token = next((name for name in PER_TOKEN_FIELDS if name in sizes), None)
    if experts and per_token and sizes[per_token] > sizes[experts]:
        raise ModelNotFound(
            f"{where}: {prefix}{per_token} {sizes[per_token]} is more than the {sizes[experts]} experts "
            f"({prefix}{experts}); a token is routed to at most that many"
        )


def _one_line(exc: BaseException) -> str:
    """An exception as its type and the first line of its message."""
    lines = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {lines[0]}" if lines else type(exc).__name__


def _kind(value: Any) -> str:
    return "None" if value is None else f"a {type(value).__name__}"


def _checked_factory(spec: str, factory: Callable[[], Any]) -> Callable[[], Any]:
    """``factory`` as benchlib calls it: what it raises, or a return that is no torch model, is one
    ModelNotFound naming it; from a tuple such as ``(model, tokenizer)``, which loading helpers
    return, its one torch model."""
    name = f"{spec.partition(':')[2]}()"

    def call() -> Any:
        from torch import nn

        try:
            built = factory()
        except Exception as exc:
            raise ModelNotFound(f"--model {spec}: {name} raised {_one_line(exc)}") from None
        if isinstance(built, (tuple, list)):
            models = [item for item in built if isinstance(item, nn.Module)]
            if len(models) == 1:
                return models[0]
            raise ModelNotFound(
                f"--model {spec}: {name} returned a {type(built).__name__} holding {len(models)} torch models; "
                "return the model alone, or with its tokenizer"
            )
        if not isinstance(built, nn.Module):
            raise ModelNotFound(
                f"--model {spec}: {name} returned {_kind(built)}; return a torch model (an nn.Module, "
                "such as a transformers model), alone or with its tokenizer"
            )
        return built

    return call


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
    return LanguageModel(spec, spec, factory=_checked_factory(spec, factory))


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
    check_config(config, f"--model {model_id}")
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
    check_config(config, f"--model {model.name}: the model's config")
    return LanguageModel(model.name, model.name, config=config)


@contextmanager
def tracing(model: LanguageModel) -> Iterator[None]:
    """Around a prediction: an error raised while tracing a model the user gave (a config.json, a hub
    id, a factory) is one ModelNotFound naming it, since a user's config can fail inside transformers
    in more ways than `check_config` foresees. A shipped model's error is benchlib's bug: it stays as raised.
    """
    try:
        yield
    except ValueError:  # benchlib's own messages, which name the option or field already
        raise
    except Exception as exc:
        if model.shipped:
            raise
        what = (
            "a plain torch model must take a batch of token ids and return logits"
            if model.config is None
            else "check its fields against the model's own config.json"
        )
        raise ModelNotFound(f"--model {model.name}: tracing it failed ({_one_line(exc)}); {what}") from None
