"""`benchlib fit` and `benchlib predict` answer for a shipped model from the committed formulas where they can.

A shipped model in a setup the "Can I run it?" picker offers has its memory and its calls written
down as formulas in the batch and the length (`benchlib.tables.llm_formulas`), which numpy
evaluates in a moment (`benchlib.predict.formula_file`), where a trace builds the model with torch
and transformers first. Every other question traces as before: another model or setup, data
parallel, ``--trace``, or a table that is missing or no longer matches the code and data
it was computed from (`benchlib.tables.stale_reasons`).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from benchlib.catalog.language_models import LanguageModel
    from benchlib.predict.formula_file import Formulas, ModelFormulas
    from benchlib.predict.llama_cpp import LlamaCppFit
    from benchlib.predict.llm_memory import Setup
    from benchlib.predict.llm_options import LLMOptions, ResolvedSetup
    from benchlib.predict.memory import DeviceMemory

TRACE_HELP = (
    "Language models: trace the model even where benchlib's committed formulas answer for a shipped "
    "model (benchlib/tables/llm_formulas.json: the setups the 'Can I run it?' page offers); slower, "
    "and the same answer within 1 % of memory and 2 % of time."
)


def formulas_path() -> Path:
    """The committed formulas' file."""
    from benchlib.tables.llm_formulas import TABLE

    return TABLE.path


def committed_formulas() -> Formulas | None:
    """The formulas table, or None where it is missing, unreadable or stale: then every answer traces."""
    path = formulas_path()
    try:
        stat = path.stat()
    except OSError:
        return None
    return _read(path, stat.st_mtime_ns, stat.st_size)


@cache  # a test session asks many times; a changed file has another time or size
def _read(path: Path, mtime_ns: int, size: int) -> Formulas | None:
    from benchlib.predict.formula_file import Formulas
    from benchlib.tables.llm_formulas import TABLE

    try:
        formulas = Formulas.read(path)
        if formulas.header.get("table") != TABLE.name or stale(formulas.header) or not formulas.setups:
            return None
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None  # not a table `benchlib tables` wrote
    return formulas


def stale(header: dict[str, Any]) -> bool:
    """Whether a table with these fields no longer answers for its inputs now: what
    `benchlib.tables.stale_reasons` finds, from the fields alone (it reads the whole file, most of a
    second for this one; ``tests/test_cli_formulas.py`` holds the two to the same verdict)."""
    from benchlib.tables import installed_versions, locked_versions
    from benchlib.tables.llm_formulas import TABLE

    used = header.get("versions")
    if not isinstance(used, dict) or header.get("inputs") != TABLE.inputs():
        return True
    expected = locked_versions(TABLE.packages) or installed_versions(TABLE.packages)
    return any(_release(str(used.get(p, "none"))) != _release(v) for p, v in expected.items())


def _release(version: str) -> str:
    """``2.14.1+cu130`` -> ``2.14.1``: a local build of the same release computes the same (as `stale_reasons`)."""
    return version.split("+", 1)[0]


@dataclass(frozen=True)
class Asked:
    """A language model as a command predicts it: the model, the setup it runs as, and the committed
    formulas that answer for it (None: trace)."""

    model: LanguageModel
    resolved: ResolvedSetup
    formulas: ModelFormulas | None


def resolve(spec: str, options: LLMOptions, also_known: tuple[str, ...], *, trace: bool, parallel: str) -> Asked:
    """The model ``--model spec`` names and the setup ``options`` make of it, from the committed
    formulas where they hold it (a shipped model is then never built), else as `resolve_model` gives it."""
    from benchlib.catalog.language_models import resolve_model
    from benchlib.predict.formula_file import shipped_name

    usable = not trace and parallel == "layers"
    name = shipped_name(spec) if usable else None
    formulas = committed_formulas() if name is not None else None
    model = formulas.model(name) if formulas is not None and name is not None else None
    if formulas is not None and name is not None and model is not None:
        resolved = options.resolve(model)
        found = formulas.find(name, resolved.setup)
        if found is not None:
            return Asked(model, resolved, found)
    model = resolve_model(spec, also_known=also_known)
    return Asked(model, options.resolve(model), None)


def llama_cpp_fit(
    model: LanguageModel, setup: Setup, device: DeviceMemory, formulas: ModelFormulas | None, gpus: int = 1
) -> LlamaCppFit:
    """`benchlib.predict.llama_cpp.fit_llama_cpp`, with the GGUF file's shape as the committed
    formulas hold it (``formulas``: the model's in this setup), else with its tensors traced."""
    from dataclasses import replace

    from benchlib.predict.llama_cpp import fit_llama_cpp, fit_shape

    shape = formulas.llama_cpp_shape() if formulas is not None else None
    if formulas is not None and shape is not None:
        fit = fit_shape(model.title, shape, setup, device, model.max_positions(), gpus)
        return replace(fit, weights_source=formulas.memory_method())
    from benchlib.core.cache import cache_folder
    from benchlib.predict.llm_memory import LLMPredictor

    predictor = LLMPredictor(model, setup, cache_folder("fit-llm"))
    fit = fit_llama_cpp(model, setup, device, predictor.breakdown(1)["weights"], gpus)
    return replace(fit, weights_source=predictor.method())
