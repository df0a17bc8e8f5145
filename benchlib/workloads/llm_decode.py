"""Language-model inference: prefill tokens/s and decode tokens/s with a KV cache, at batch 1 and 8.

The model is `benchlib.models.llama`'s random-weight Llama-style decoder (nothing downloaded);
the full size has TinyLlama-1.1B's shape. Inference runs in fp32 on the CPU and, on a GPU, with
the weights in the first of ``accelerator_dtypes`` the device supports (bf16, else fp16), under
``torch.inference_mode()``. Prompts are random token ids.

The two phases are timed apart, as ``model.generate`` runs them:

- **prefill**: one forward pass over the ``prompt_len``-token prompt that fills a fresh
  ``DynamicCache`` and computes the logits of the last position only (``logits_to_keep=1``);
  prefill tokens/s = batch size x prompt length / median time.
- **decode**: ``new_tokens`` greedy steps, each a forward pass over one token per sequence
  that reads and extends the cache; decode tokens/s = batch size x new tokens / median time of
  the whole loop. Every timed loop starts from the same prefilled cache, cut back to the prompt
  (``DynamicCache.crop``), so each one does the same work: step i attends over
  ``prompt_len + i + 1`` positions. The tokens are those ``model.generate`` picks greedily.

Decode at batch 1 reads every weight for one token per step, so it measures memory bandwidth;
batch 8 shares each read among 8 sequences. Each phase has its own metric and chart, since a
prefill rate is often a hundred times a decode rate and one axis would hide the decode bars.

On a CPU the standard size keeps the standard model, whose 0.5 GB of fp32 weights a decode step
reads (all but the embedding table) are more than any CPU cache holds, so decoding still reads
them from memory; it prefills a 128-token prompt, decodes 16 tokens, and takes 3 timed calls
instead of 5 (`CPU_STANDARD`). At the GPU's standard size the
workload took 147 s of a 2-core CPU's standard run.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from benchlib.backends import torch_backend as tb
from benchlib.core.timing import Timer
from benchlib.models.llama import llama_shape, model_label, parameter_count, random_llama, require_transformers
from benchlib.results.schema import MeasurementRecord, Metric
from benchlib.workloads import TRANSFORMER_DECODE, Chart, Plot, PredictionCheck, RunContext, Workload, register
from benchlib.workloads._record import stats_of

NAME = "llm_decode"
PREFILL = Metric(name="prefill_tokens_per_s", unit="tokens/s", higher_is_better=True)
DECODE = Metric(name="decode_tokens_per_s", unit="tokens/s", higher_is_better=True)
# One call per sample: a sample is one whole prefill, or one whole decode loop.
PER_CALL = {"target_block_s": 0.0}
SETTING = "{param_model} · batch {param_batch_size} · {dtype}"
TIMER_QUICK = PER_CALL | {"warmup_s": 0.05, "min_time_s": 0.2, "max_time_s": 0.5, "min_samples": 3}
# Quick and full change the standard size's model, prompt, generation and timer.
STANDARD: dict[str, Any] = {
    "model": llama_shape(hidden=1024, intermediate=2816, layers=8, heads=16, kv_heads=4, vocab=32000),
    "batches": [1, 8],
    "prompt_len": 512,
    "new_tokens": 64,
    "accelerator_dtypes": ["bf16", "fp16"],
    "timer": PER_CALL | {"warmup_s": 0.5, "min_time_s": 1.0, "max_time_s": 4.0, "min_samples": 5},
}
SIZES: dict[str, dict[str, Any]] = {
    "quick": {
        **STANDARD,
        "model": llama_shape(hidden=256, intermediate=688, layers=2, heads=4, kv_heads=2, vocab=8192),
        "prompt_len": 64,
        "new_tokens": 16,
        "timer": TIMER_QUICK,
    },
    "standard": STANDARD,
    # TinyLlama-1.1B's shape: 22 layers, 2048 wide, 32 query and 4 key/value heads.
    "full": {
        **STANDARD,
        "model": llama_shape(hidden=2048, intermediate=5632, layers=22, heads=32, kv_heads=4, vocab=32000),
        "prompt_len": 1024,
        "new_tokens": 128,
        "timer": PER_CALL | {"warmup_s": 1.0, "min_time_s": 3.0, "max_time_s": 10.0, "min_samples": 5},
    },
}
# The standard model with a shorter prompt and generation and fewer samples (see the module note).
CPU_STANDARD = {
    "prompt_len": 128,
    "new_tokens": 16,
    "timer": PER_CALL | {"warmup_s": 0.1, "min_time_s": 0.5, "max_time_s": 2.0, "min_samples": 3},
}
SETTING_ORDER = tuple(
    f"{model_label(p['model'])} · batch {b} · {d}"
    for p in SIZES.values()
    for d in ("fp32", "bf16", "fp16")
    for b in p["batches"]
)
PREFILL_CHART = Chart(
    "llm_prefill",
    "LLM prefill: prompt tokens/s (random-weight Llama-style model)",
    "model · batch · dtype",
    axis_title="prompt tokens/s",
    setting_order=SETTING_ORDER,
)
DECODE_CHART = Chart(
    "llm_decode",
    "LLM decode with a KV cache: generated tokens/s (random-weight Llama-style model)",
    "model · batch · dtype",
    axis_title="generated tokens/s",
    setting_order=SETTING_ORDER,
)
PLOTS = (Plot(PREFILL_CHART, PREFILL.name, SETTING), Plot(DECODE_CHART, DECODE.name, SETTING))


def phases(llama: Any, prompt: Any, new_tokens: int) -> tuple[Callable[[], Any], Callable[[], Any]]:
    """The two timed calls for ``prompt`` (batch x prompt length): prefill, and the decode loop.

    ``prefill()`` fills a fresh cache and returns the first generated token of each sequence;
    ``decode()`` generates the next ``new_tokens`` greedily from one prefilled cache, cut back
    to the prompt first, and returns the last one. Call them under ``torch.inference_mode()``.
    """
    from transformers import DynamicCache

    prompt_len = prompt.shape[1]

    def fill() -> tuple[Any, Any]:
        cache = DynamicCache(config=llama.config)
        logits = llama(input_ids=prompt, past_key_values=cache, use_cache=True, logits_to_keep=1).logits
        return cache, logits[:, -1].argmax(-1, keepdim=True)

    cache, first = fill()

    def decode() -> Any:
        grown = cache.get_seq_length() - prompt_len
        if grown:
            cache.crop(-grown)  # back to the prompt: every loop decodes the same tokens
        token = first
        for _ in range(new_tokens):
            logits = llama(input_ids=token, past_key_values=cache, use_cache=True).logits
            token = logits[:, -1].argmax(-1, keepdim=True)
        return token

    return (lambda: fill()[1]), decode


def run(ctx: RunContext, params: dict[str, Any]) -> list[MeasurementRecord]:
    require_transformers()
    torch = tb.import_torch()
    sync, sync_name = tb.sync_function(ctx.device)
    name = tb.device_name(ctx.device, ctx.cpu_name)
    dtype = tb.accelerator_dtype(ctx.device, params["accelerator_dtypes"], NAME)
    prompt_len, new_tokens = params["prompt_len"], params["new_tokens"]
    llama = random_llama(params["model"], ctx.device, prompt_len + new_tokens).to(tb.torch_dtype(dtype)).eval()
    common = {
        "model": model_label(params["model"]),
        **params["model"],
        "parameters": parameter_count(llama),
        "prompt_len": prompt_len,
        "new_tokens": new_tokens,
        "cache": "DynamicCache",
        "data": "synthetic",
    }
    base = dict(workload=NAME, framework="torch", device=ctx.device, device_name=name, dtype=dtype)
    records = []
    torch.manual_seed(1)
    for batch in params["batches"]:
        prompt = torch.randint(0, params["model"]["vocab_size"], (batch, prompt_len), device=ctx.device)
        with torch.inference_mode():
            prefill, decode = phases(llama, prompt, new_tokens)
            for metric, fn, tokens in ((PREFILL, prefill, batch * prompt_len), (DECODE, decode, batch * new_tokens)):
                m = Timer(
                    fn, sync=sync, sync_name=sync_name, threads=tb.threads(), label=f"{NAME} {metric.name} b{batch}"
                ).measure(**params["timer"])
                records.append(
                    MeasurementRecord(
                        **base,
                        metric=metric,
                        value=tokens / m.median,
                        stats=stats_of(m),
                        params=common
                        | {"batch_size": batch, "phase": metric.name.split("_")[0], "ms_per_call": m.median * 1e3},
                    )
                )
            del prefill, decode
        tb.empty_cache(ctx.device)
    return records


register(
    Workload(
        name=NAME,
        framework="torch",
        description="Prefill and decode tokens/s with a KV cache of a random-weight Llama-style model at batch 1 and 8.",
        metric=DECODE,
        sizes=SIZES,
        run=run,
        suites=("quick", "standard", "full"),
        expected_s={"quick": 4.8, "standard": 22.5},
        device_sizes={"cpu": {"standard": CPU_STANDARD}},
        plots=PLOTS,
        checks=(PredictionCheck(TRANSFORMER_DECODE),),
    )
)
