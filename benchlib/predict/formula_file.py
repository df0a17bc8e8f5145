"""A shipped model's memory and step time from the committed formulas, without building the model.

`benchlib.tables.llm_formulas` writes down, for each shipped model and each setup the picker offers,
the formulas `benchlib.predict.formula` derives from a few traces (``llm_formulas.json``). This
module evaluates them with numpy alone, so `benchlib fit` and `benchlib predict` answer for a
shipped model without torch or transformers: each model's peak memory is `MemoryFormula.at` and
`LLMPredictor.combined` (with `_per_gpu` and `fullest` on several GPUs) over the written
coefficients, and its calls are `OpsFormula.at`'s ops, timed by `predict_llm_speed` with the engines'
rules as they are now. ``tests/test_predict_formula_file.py`` holds the written formulas to those.

It reads the table it is given: whether the file is current (`benchlib.tables.stale_reasons`) is
for the reader to ask first, as the command line does (`benchlib.cli.formulas`).
"""

from __future__ import annotations

import json
import re
import time
from dataclasses import dataclass, field, fields, replace
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from benchlib.catalog.language_models import LanguageModel, ShippedModel, TracePlan, shipped_models
from benchlib.predict.count import OpCost, experts_touched
from benchlib.predict.formula import (
    FIXED,
    GROWING,
    OTHER_BATCHES,
    OTHER_LENGTHS,
    _piece,
    basis,
    derived_at,
    length_pieces,
)
from benchlib.predict.llm_memory import LARGEST_BATCH, LLMPrediction, Setup, per_gpu_peaks
from benchlib.predict.llm_speed import Concurrency, CountedCall, InferenceCalls
from benchlib.predict.weight_formats import GGUF_FORMATS

if TYPE_CHECKING:
    from benchlib.catalog.gpus import AcceleratorSpec
    from benchlib.predict.llama_cpp import LlamaCppShape
    from benchlib.predict.memory import DeviceMemory

NAME = "llm_formulas"
# The fields of a setup that the committed ones fix; the batch and the length are the formulas' variables.
_SIZES = ("batch", "seq_len")
# Where the models begin in the file: every field before them is the table's header.
_MODELS = re.compile(r',\s*"models"\s*:\s*\[')
# Where fp16 can stand for bf16: the same bytes and the same ops, at fp16's peak.
_HALF = ("weights", "dtype", "kv_cache")


def shipped_name(spec: str) -> str | None:
    """The shipped model ``--model spec`` names (its short name, Hugging Face id or an alias, as
    `resolve_model` reads them); None for any other model."""
    shipped = shipped_models()
    if spec in shipped:
        return spec
    by_id = {hf_id.lower(): m.name for m in shipped.values() for hf_id in (m.hf_id, *m.aliases)}
    return by_id.get(spec.lower())


class FormulaModel(LanguageModel):
    """A shipped model as the table knows it: its name, title, depth and longest context. It has no
    config, so nothing can build it; what a prediction reads of it is here."""

    def __init__(self, shipped: ShippedModel, max_positions: int, depth: int | None, window: int | None) -> None:
        super().__init__(shipped.name, shipped.title, shipped=True)
        self._max_positions, self._depth, self._window = max_positions, depth, window

    def max_positions(self) -> int:
        return self._max_positions

    @property
    def depth(self) -> int | None:
        return self._depth

    @property
    def sliding_window(self) -> int | None:
        return self._window


def setup_key(setups: dict[str, Setup], setup: Setup) -> str | None:
    """The key of the committed setup ``setup`` is, but for its batch and length, for fp16 in
    place of bf16 (the same bytes and ops), and for a GGUF file's cache type (llama.cpp's cache
    changes the bytes of its shape, `ModelFormulas.llama_cpp_shape`, not an op's count); None
    where it differs from each in anything else."""
    if setup.weights in GGUF_FORMATS:
        setup = replace(setup, kv_cache=setup.dtype)
    if setup.dtype == "fp16":
        if "bf16" in (setup.weights, setup.kv_cache):
            return None  # bf16 beside fp16 compute: not a committed setup relabelled
        setup = replace(setup, **{f: "bf16" for f in _HALF if getattr(setup, f) == "fp16"})

    def fixed(s: Setup) -> dict[str, Any]:
        return {f.name: getattr(s, f.name) for f in fields(s) if f.name not in _SIZES}

    return next((key for key, committed in setups.items() if fixed(committed) == fixed(setup)), None)


@dataclass(frozen=True)
class Formulas:
    """The committed table: its fields but the models (``header``: the versions its traces were made
    with, the digests of its inputs, the setups, the index of models), and each model's row, read
    from ``text`` (the file from its models on, past the index, whose entries begin as rows do)
    when first asked for: the file holds every model (20 MB), a question one."""

    path: Path
    header: dict[str, Any]
    text: str = ""
    models: dict[str, dict[str, Any] | None] = field(default_factory=dict)

    @classmethod
    def of(cls, contents: dict[str, Any], path: Path) -> Formulas:
        """The table as `benchlib.tables.read` gives it, read from ``path``."""
        header = {k: v for k, v in contents.items() if k != "models"}
        return cls(path, header, models={m["model"]: m for m in contents["models"]})

    @classmethod
    def read(cls, path: Path) -> Formulas:
        """The table in the file ``path``, its models left unread; OSError or ValueError where it
        can't be read."""
        text = path.read_text(encoding="utf-8")
        models = _MODELS.search(text)
        if models is not None:
            try:
                # The models come last, as `benchlib.tables.compute` writes a table: all before them is the header.
                return cls(path, json.loads(text[: models.start()] + "}"), text[models.start() :])
            except ValueError:
                pass
        return cls.of(json.loads(text), path)

    @cached_property
    def setups(self) -> dict[str, Setup]:
        names = {f.name for f in fields(Setup)}
        return {k: Setup(**{f: v for f, v in s.items() if f in names}) for k, s in self.header["setups"].items()}

    @property
    def versions(self) -> dict[str, str]:
        return dict(self.header.get("versions", {}))

    def row(self, name: str) -> dict[str, Any] | None:
        """The model ``name``'s row (None: not in the table)."""
        if name not in self.models:
            self.models[name] = self._decode(name)
        return self.models[name]

    def _decode(self, name: str) -> dict[str, Any] | None:
        found = re.search(r'\{\s*"model"\s*:\s*' + re.escape(json.dumps(name)) + r"\s*,", self.text)
        if found is None:
            return None
        try:
            row, _ = json.JSONDecoder().raw_decode(self.text, found.start())
        except ValueError:
            return None  # a damaged row: the model is answered by tracing
        return row if isinstance(row, dict) and row.get("model") == name else None

    def find(self, name: str, setup: Setup) -> ModelFormulas | None:
        """The formulas of the shipped model ``name`` run as ``setup``; None where the table holds
        none (another model or setup, or one it could not predict: ``not_predicted``)."""
        row, key = self.row(name), setup_key(self.setups, setup)
        model = self.model(name)
        if row is None or key is None or model is None or "memory" not in row["setups"].get(key, {}):
            return None
        entry = row["setups"][key]
        return ModelFormulas(model, key, setup, entry["memory"], entry["time"], self)

    def model(self, name: str) -> FormulaModel | None:
        """The shipped model ``name`` as the table knows it (None: not in the table)."""
        row = self.row(name)
        shipped = shipped_models().get(name)
        if row is None or shipped is None:
            return None
        memory = next((e["memory"] for e in row["setups"].values() if "memory" in e), None)
        full = memory["plan"]["full"] if memory else []
        config = shipped.config.get("text_config") or shipped.config
        depth = len(full) or config.get("num_hidden_layers")
        # A sliding window splits the lengths in two: the first piece ends one token short of it.
        window = memory["pieces"][0]["upto"] + 1 if memory and len(memory["pieces"]) > 1 else None
        return FormulaModel(shipped, int(row["max_positions"]), depth, window)

    @property
    def shown_path(self) -> str:
        """The file as a reader finds it: from the package's folder where it lies there."""
        root = Path(__file__).resolve().parents[2]
        try:
            return self.path.resolve().relative_to(root).as_posix()
        except ValueError:
            return str(self.path)


def _piece_index(pieces: list[dict[str, Any]], length: int) -> int:
    """The index of the written piece of lengths that holds ``length`` (`benchlib.predict.formula._piece`)."""
    return int(_piece(tuple((p["upto"], i) for i, p in enumerate(pieces)), length))


def _rows(values: Any, terms: int) -> list[Any]:
    """A written coefficient row, or 0 for a row of zeros, as ``terms`` numbers."""
    return values if isinstance(values, list) else [0] * terms


def _array(moments: list[list[Any]], terms: int) -> Any:
    """Written moments (kinds × terms each) as one array: moments × kinds × terms."""
    import numpy as np

    return np.array([[_rows(kind, terms) for kind in moment] for moment in moments], dtype=float).reshape(
        len(moments), -1, terms
    )


@dataclass(frozen=True)
class _Ops:
    """One call's ops on one traced depth: each kind once (`FIXED`, and `GROWING` counts' coefficients) and their order."""

    fixed: tuple[tuple[Any, ...], ...]
    coefficients: Any  # kinds of op × counts × terms
    order: tuple[int, ...]

    def at(self, batch: int, length: int, experts_per_token: int, dtype: str) -> tuple[OpCost, ...]:
        """`OpsFormula.at`, each kind of op made once; bf16 ops relabelled as ``dtype`` (fp16 runs
        the same ops at its own peak)."""
        import numpy as np

        values = np.rint(self.coefficients @ np.array(basis(batch, length), dtype=float)).tolist()
        kinds = []
        for fixed, counts in zip(self.fixed, values, strict=True):
            # Python's ints: a 70B model's FLOPs at the largest batch and context pass int64's range.
            grown = (int(c) for c in counts)
            op = OpCost(**dict(zip(FIXED, fixed, strict=True)), **dict(zip(GROWING, grown, strict=True)))
            if op.dtype == "bf16" and dtype != "bf16":
                op = replace(op, dtype=dtype)
            if op.expert_bytes:
                share = experts_touched(op.experts, min(experts_per_token, op.experts), op.rows / experts_per_token)
                op = replace(op, bytes=op.bytes + int(share * op.expert_bytes), weight_share=share)
            kinds.append(op)
        return tuple(kinds[i] for i in self.order)


def _ops(written: dict[str, Any], terms: int) -> _Ops:
    """A traced depth's ops as `benchlib.tables.llm_formulas` writes them: ``[*FIXED, counts]`` each, and ``order``."""
    import numpy as np

    fixed = tuple(tuple(op[:-1]) for op in written["ops"])
    rows = [[_rows(row, terms) for row in op[-1]] for op in written["ops"]]
    coefficients = np.array(rows, dtype=float).reshape(len(fixed), len(GROWING), terms)
    return _Ops(fixed, coefficients, tuple(written["order"]))


class ModelFormulas:
    """One model's formulas for one committed setup, asked about as ``setup`` (its batch, its length
    and its dtype): the whole model's memory on one or more GPUs, and its calls."""

    def __init__(
        self,
        model: FormulaModel,
        key: str,
        setup: Setup,
        memory: dict[str, Any],
        time: dict[str, Any],
        table: Formulas,
    ) -> None:
        self.model, self.key, self.setup, self.table = model, key, setup, table
        self._memory, self._time = memory, time
        plan = memory["plan"]
        self.plan = TracePlan(
            tuple(tuple(layers) if layers is not None else None for layers in plan["layers"]),
            tuple(plan["coefficients"]),
            tuple(plan["full"]),
        )
        self.kinds: tuple[str, ...] = tuple(memory["kinds"])
        self._pieces: dict[tuple[int, bool], list[dict[str, Any]]] = {}
        self._calls: dict[tuple[str, int, bool], list[_Ops]] = {}

    # --- memory

    def _memory_piece(self, length: int, one: bool) -> list[dict[str, Any]]:
        pieces = self._memory["pieces"]
        index = _piece_index(pieces, length)
        if (index, one) not in self._pieces:
            side, terms = ("one", 3) if one else ("many", 4)
            self._pieces[index, one] = [
                {phase: _array(moments, terms) for phase, moments in depth.items()} for depth in pieces[index][side]
            ]
        return self._pieces[index, one]

    def traced_at(self, batch: int, length: int) -> list[dict[str, dict[str, int]]]:
        """Each traced depth's peak by phase and kind (`MemoryFormula.traced_at`, the total the kinds' sum)."""
        import numpy as np

        terms = np.array(basis(batch, length), dtype=float)
        total = self.kinds.index("total")
        traced = []
        for phases in self._memory_piece(length, batch == 1):
            peaks = {}
            for phase, coefficients in phases.items():
                values = coefficients @ terms
                peak = np.rint(values[int(np.argmax(values[:, total]))]).tolist()
                kinds = dict(zip(self.kinds, map(int, peak), strict=True))
                # The written total picks the moment; the kinds' sum is its figure, as in a trace, so
                # the breakdown adds up to it (each kind's coefficients are rounded on their own).
                kinds["total"] = sum(v for k, v in kinds.items() if k != "total")
                peaks[phase] = kinds
            traced.append(peaks)
        return traced

    def check_split(self, gpus: int) -> None:
        """ValueError, as `LLMPredictor` says it, where the layers of a model traced whole can't be split."""
        if gpus < 1:
            raise ValueError(f"--gpus {gpus}: give 1 or more GPUs")
        if gpus > 1 and not self.plan.reduced:
            raise ValueError(
                f"--gpus {gpus}: splitting {self.model.title} needs what each layer adds, which its traces at full "
                f"depth don't give ({self.model.depth or 'unknown'} layers); predict it on one GPU"
            )

    def at(self, batch: int, length: int, gpus: int = 1) -> dict[str, int]:
        """The whole model's peak by kind at ``batch`` sequences of ``length`` tokens, and with its
        layers split over ``gpus`` in order, each GPU's (``gpu0`` ...): `LLMPredictor.combined`."""
        traced = self.traced_at(batch, length)
        phases = {
            phase: {kind: self.plan.combine([t[phase][kind] for t in traced]) for kind in traced[0][phase]}
            for phase in traced[0]
        }
        figures = dict(max(phases.values(), key=lambda kinds: kinds["total"]))
        if gpus > 1:
            self.check_split(gpus)
            figures |= {f"gpu{i}": peak for i, peak in enumerate(self._per_gpu(traced, gpus))}
        return figures

    def _per_gpu(self, traced: list[dict[str, dict[str, int]]], gpus: int) -> list[int]:
        """`LLMPredictor._per_gpu`, with the embeddings' bytes and tying as the table wrote them."""
        return per_gpu_peaks(traced, self.plan, gpus, int(self._memory["embedding_bytes"]), self._memory["tied"])

    def peak(self, batch: int, length: int, gpus: int = 1) -> int:
        """The fullest GPU's tensor peak (`LLMPredictor.fullest`, layers split)."""
        figures = self.at(batch, length, gpus)
        return figures["total"] if gpus == 1 else max(figures[f"gpu{i}"] for i in range(gpus))

    def largest(self, budget: int, *, batch: int | None = None, length: int | None = None, gpus: int = 1) -> int:
        """The largest length at ``batch`` sequences, or the largest batch of ``length`` tokens, whose
        peak is within ``budget`` (0: not even 1): `MemoryFormula.largest`'s bisection."""
        if (batch is None) == (length is None):
            raise ValueError("give the batch (for the largest length) or the length (for the largest batch)")
        limit = self.model.max_positions() if length is None else LARGEST_BATCH

        def fits(n: int) -> bool:
            size = (batch, n) if batch is not None else (n, length)
            return self.peak(*size, gpus) <= budget  # type: ignore[arg-type]

        low, high = 0, limit
        while low < high:
            middle = (low + high + 1) // 2
            low, high = (middle, high) if fits(middle) else (low, middle - 1)
        return low

    def other_sizes(self, budget: int, gpus: int = 1) -> dict[int, int]:
        """`benchlib.predict.formula.other_sizes`: the longest context per batch of `OTHER_BATCHES`
        (inference), or the largest batch per length of `OTHER_LENGTHS` the model reads (training)."""
        if not self.setup.trains:
            return {b: self.largest(budget, batch=b, gpus=gpus) for b in OTHER_BATCHES}
        lengths = [n for n in OTHER_LENGTHS if n <= self.model.max_positions()]
        return {n: self.largest(budget, length=n, gpus=gpus) for n in lengths}

    def predict(self, device: DeviceMemory, gpus: int = 1) -> LLMPrediction:
        """What `LLMPredictor.predict` answers (layers split over ``gpus``), from the formulas."""
        started = time.perf_counter()
        s = self.setup
        self.check_split(gpus)
        if s.seq_len > self.model.max_positions():
            raise ValueError(
                f"--seq-len {s.seq_len}: {self.model.title} reads at most {self.model.max_positions()} tokens"
            )
        at = self.at(s.batch, s.seq_len, gpus)
        budget = device.tensor_budget
        if s.trains:
            largest, limit = self.largest(budget, length=s.seq_len, gpus=gpus), LARGEST_BATCH
        else:
            largest, limit = self.largest(budget, batch=s.batch, gpus=gpus), self.model.max_positions()
        tensor_peak = at["total"] if gpus == 1 else max(at[f"gpu{i}"] for i in range(gpus))
        per_gpu = [at.pop(f"gpu{i}") for i in range(gpus)] if gpus > 1 else []
        at.pop("total")
        split = f"; layers split over {gpus} GPUs in order" if gpus > 1 else ""
        return LLMPrediction(
            model=self.model.name,
            setup=s,
            device=device,
            breakdown=at,
            tensor_peak_bytes=tensor_peak,
            peak_bytes=device.on_device(tensor_peak),
            fits=tensor_peak <= budget,
            searched="batch" if s.trains else "context",
            largest=largest,
            limit=limit,
            method=self.memory_method() + split,
            seconds=time.perf_counter() - started,
            versions=self.table.versions,
            gpus=gpus,
            per_gpu=[device.on_device(p) for p in per_gpu],
        )

    def concurrency(self, gpu: AcceleratorSpec) -> Concurrency:
        """`benchlib.predict.llm_speed.max_concurrency` from the formula at batch 1: the tensor budget
        less the weights and one prefill's activations, over one sequence's KV cache."""
        from benchlib.predict.memory import gpu_memory

        breakdown = self.at(1, self.setup.seq_len)
        free = gpu_memory(gpu).tensor_budget - breakdown["weights"] - breakdown["activations"]
        per_sequence = max(1, breakdown["kv_cache"])
        return Concurrency(
            sequences=max(0, free // per_sequence),
            context=self.setup.seq_len,
            kv_bytes_per_sequence=per_sequence,
            free_bytes=max(0, free),
            basis="benchlib fit at batch 1: tensor budget less weights and one prefill's activations, over one KV cache",
        )

    def llama_cpp_shape(self) -> LlamaCppShape | None:
        """The sizes llama.cpp's buffers follow for this setup's GGUF file, as the table wrote them
        for an f16 cache (`benchlib.predict.llama_cpp.shape_of`), in this setup's cache type; None
        for a setup that is no GGUF file."""
        from benchlib.predict.llama_cpp import LlamaCppShape, with_cache_of

        row = self.table.row(self.model.name) or {}
        written = row.get("llama_cpp", {}).get(self.key)
        return with_cache_of(LlamaCppShape(**written), self.setup) if written is not None else None

    # --- time

    def _call_piece(self, call: str, length: int, one: bool) -> list[_Ops]:
        pieces = self._time["calls"][call]["pieces"]
        index = _piece_index(pieces, length)
        if (call, index, one) not in self._calls:
            side, terms = ("one", 3) if one else ("many", 4)
            self._calls[call, index, one] = [_ops(depth, terms) for depth in pieces[index][side]]
        return self._calls[call, index, one]

    def _call(self, call: str, batch: int, length: int) -> CountedCall:
        """`CallFormula.at`: the call's ops at ``batch`` sequences of ``length`` tokens, in the setup's dtype."""
        written = self._time["calls"][call]
        experts_per_token = int(self._time["experts_per_token"])
        depths = self._call_piece(call, length, batch == 1)
        ops = tuple(d.at(batch, length, experts_per_token, self.setup.dtype) for d in depths)
        plan = TracePlan(self.plan.layers, tuple(written["plan_coefficients"]), self.plan.full)
        return CountedCall(plan, ops, batch * length if written["per_token"] else batch)

    def calls(self, batch: int | None = None, length: int | None = None) -> InferenceCalls | CountedCall:
        """The setup's calls at ``batch`` sequences of ``length`` tokens (default: the setup's): a
        training step, or a prefill and a decode step reading a cache of ``length``, as
        `predict_llm_speed` takes them (``counted``)."""
        batch = self.setup.batch if batch is None else batch
        length = self.setup.seq_len if length is None else length
        if self.setup.trains:
            return self._call("train", batch, length)
        decode = self._call("decode", batch, length) if "decode" in self._time["calls"] else None
        return InferenceCalls(self._call("prefill", batch, length), decode)

    def other_calls(self) -> list[tuple[Setup, InferenceCalls | CountedCall]]:
        """`benchlib predict --sizes` (`benchlib.predict.formula.other_speeds`): the setup at
        `OTHER_BATCHES` sequences of its length (inference), or at `OTHER_LENGTHS` tokens the model
        reads in its batch (training), each with its calls."""
        s = self.setup
        if s.trains:
            sizes = [(s.batch, n) for n in OTHER_LENGTHS if n <= self.model.max_positions()]
        else:
            sizes = [(b, s.seq_len) for b in OTHER_BATCHES]
        return [(replace(s, batch=b, seq_len=n), self.calls(b, n)) for b, n in sizes]

    # --- where the answer comes from

    def traced_sizes(self) -> str:
        """The sizes the formulas were traced at, in words: "1, 2 and 8 sequences of 256 to 1,024 tokens"."""
        lengths = [n for _, traced in length_pieces(self.model) for n in traced]
        batches = sorted({b for one in (True, False) for b, _ in derived_at(one, (lengths[0],) * 3)})
        listed = ", ".join(map(str, batches[:-1])) + f" and {batches[-1]}"
        return f"{listed} sequences of {min(lengths):,} to {max(lengths):,} tokens"

    def source(self) -> str:
        """Where a speed comes from, in a line: the committed file, the sizes its ops were counted at and the versions."""
        versions = ", ".join(f"{k} {v}" for k, v in self.table.versions.items() if k != "benchlib")
        return (
            f"the formulas committed in {self.table.shown_path} (calls counted {self._depths()}, at "
            f"{self.traced_sizes()}; {versions})"
        )

    def _depths(self) -> str:
        return self.plan.describe(self.model.depth)

    def memory_method(self) -> str:
        """`LLMPredictor.method` for an answer from the formulas (the versions are the prediction's own field)."""
        return (
            f"the formulas committed in {self.table.shown_path}: steps traced with FakeTensorMode + MemTracker "
            f"{self._depths()}, at {self.traced_sizes()}, give the peak as a formula in the batch and the length"
        )

    def speed_method(self) -> str:
        """`benchlib.predict.llm_speed.METHOD` for an answer from the formulas."""
        from benchlib.predict.llm_speed import METHOD

        return f"{METHOD}; the ops from {self.source()}, as formulas in the batch and the length"
