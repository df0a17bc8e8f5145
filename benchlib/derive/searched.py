"""What `benchlib fit` predicts for a largest-batch search, read back from the search's record.

`benchlib campaign`'s table and the buying guide's *Prediction against measurement* both put a
search's answer next to fit's prediction for the same model, dtype, device and memory cap; this
module asks fit about the search a record's params describe (`benchlib.results.searches.request_of`),
so both show the same number.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from benchlib.results.schema import GPUInfo
from benchlib.results.searches import TrialRequest


@dataclass(frozen=True)
class FitPrediction:
    """`benchlib fit`'s answer for one search: the largest batch and the tensor peak at any batch."""

    max_batch: int
    peak: Callable[[int], int]


def model_label(request: TrialRequest) -> str:
    """The searched model as a reader knows it, with its input: "U-Net (3×128×128)", "Qwen2.5 0.5B (1,024 tokens)"."""
    if not request.language_model:
        from benchlib.models.trainable import get_model

        shape = request.input_shape or get_model(request.model).input_shape(request.size)
        return f"{get_model(request.model).title} ({'×'.join(map(str, shape))})"
    from benchlib.catalog.language_models import ModelNotFound, resolve_model

    try:
        title = resolve_model(request.model).title
    except ModelNotFound:  # a config file or hub id this machine can't read: its name still says what it was
        title = request.model
    return f"{title.rpartition(':')[2]} ({request.seq_len:,} tokens)"


def fit_prediction(request: TrialRequest, device_name: str | None) -> FitPrediction | None:
    """fit's prediction for the search ``request`` describes, on the device called ``device_name``;
    None where fit can't predict it: an uncapped device that isn't a GPU the specs know, or a
    language model whose config this machine can't read (a local file, a hub id offline)."""
    from benchlib.core.cache import cache_folder
    from benchlib.predict.memory import Predictor, searched_device

    searched = searched_device(request.device, device_name, request.memory_limit)
    if searched is None:
        return None
    target, foreach = searched
    if request.language_model:
        from benchlib.catalog.language_models import ModelNotFound, resolve_model
        from benchlib.predict.llm_memory import LLMPredictor, make_setup

        try:
            model = resolve_model(request.model)
        except ModelNotFound:
            return None
        setup = make_setup("train", dtype=request.dtype, seq_len=request.seq_len)
        llm = LLMPredictor(model, setup, cache_folder("fit"))
        return FitPrediction(llm.predict(target, verify=False).largest, llm.peak)
    predictor = Predictor(
        request.model,
        dtype=request.dtype,
        optimizer=request.optimizer,
        size=request.size,
        foreach=foreach,
        input_shape=request.input_shape,
        cache_dir=cache_folder("fit"),
    )
    return FitPrediction(predictor.predict(target, verify=False).max_batch, predictor.peak)


def fit_guess(request: TrialRequest, gpu: GPUInfo | None) -> int | None:
    """Where a search starts: fit's predicted largest batch, if it has one. For a GPU the specs
    don't know, fit's prediction for the memory the probe saw on it, less the allowances fit sets
    aside on a GPU it knows (the CUDA context, the allocator's overhead)."""
    from dataclasses import replace

    from benchlib.predict.memory import ALLOCATOR_OVERHEAD, CUDA_CONTEXT_BYTES, DeviceMemory

    prediction = fit_prediction(request, gpu.name if gpu else None)
    if prediction is None and gpu is not None and gpu.memory_total_bytes and request.memory_limit is None:
        probed = DeviceMemory(
            name=gpu.name,
            usable_bytes=gpu.memory_total_bytes,
            basis="probe",
            status="measured",
            context_bytes=CUDA_CONTEXT_BYTES,
            overhead=ALLOCATOR_OVERHEAD,
        )
        budget = probed.tensor_budget
        prediction = fit_prediction(replace(request, memory_limit=budget), None) if budget > 0 else None
    return prediction.max_batch if prediction and prediction.max_batch else None
