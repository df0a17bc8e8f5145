"""Published language-model speeds: the figures benchlib's speed predictions are checked against.

Reported data, each row with its source and the setup the source states:
``benchlib/data/published_llm_speed.yaml`` (Qwen's speed benchmarks: transformers and vLLM, batch
1, 2,048 generated tokens after prompts of several lengths, BF16, GPTQ and AWQ weights, on an A100
80GB) and ``published_llm_training_speed.yaml`` (fine-tuning tokens/s). The comparison
(`benchlib.derive.published_llm_speed`) predicts each row; the methodology page cites the sources.
"""

from __future__ import annotations

from functools import cache

from benchlib.core.package_data import SourcedRow, data_file, sourced_rows

INFERENCE_FILE = data_file("published_llm_speed.yaml")
# llama-bench rows, and transformers with bitsandbytes and vLLM rows beyond Qwen's A100 tables.
MORE_INFERENCE_FILES = (data_file("published_llm_speed_llama_cpp.yaml"), data_file("published_llm_speed_stacks.yaml"))
TRAINING_FILE = data_file("published_llm_training_speed.yaml")
SPEED_FILES = (INFERENCE_FILE, *MORE_INFERENCE_FILES, TRAINING_FILE)


class PublishedSpeed(SourcedRow):
    """One published speed with its source, as the data file states them."""

    @property
    def metric(self) -> str:
        return str(self.row["metric"])

    @property
    def engine(self) -> str:
        return str(self.row.get("engine") or self.source.get("engine") or "transformers")

    @property
    def weights(self) -> str:
        """The format as benchlib names it: an F16 GGUF file is fp16 weights to llama.cpp."""
        weights = str(self.row["weights"])
        return {"gguf-f16": "fp16", "gguf-bf16": "bf16"}.get(weights, weights)

    @property
    def input_tokens(self) -> int | None:
        """The prompt's tokens, or what the source's code uses where the text doesn't state it."""
        stated = self.row.get("input_tokens")
        return int(stated) if stated is not None else self.source.get("input_tokens_assumed")

    @property
    def gpu(self) -> str | None:
        """The GPU the row is predicted on: the one stated, else the one the data file says it assumes."""
        return self.row.get("gpu") or self.row.get("gpu_assumed") or self.source.get("gpu")

    @property
    def host(self) -> str | None:
        """The host class the source states or implies (server, desktop ...); None where it says nothing."""
        assumed = self.source.get("host_assumed") or {}
        return self.row.get("host") or self.source.get("host") or assumed.get(self.gpu)

    @property
    def seq_len(self) -> int | None:
        """Tokens per sample: as run, or (samples of varying length) their mean; padding is not modelled."""
        r = self.row
        if r.get("seq_len"):
            return int(r["seq_len"])
        return round(r["mean_tokens_per_sample"]) if r.get("mean_tokens_per_sample") else None

    @property
    def kind(self) -> str:
        """decode, prefill or training: which prediction the figure checks."""
        return "training" if self.row["mode"] != "inference" else "prefill" if "prefill" in self.metric else "decode"

    def describe(self) -> str:
        r = self.row
        if self.kind == "training":
            length = f"{self.seq_len}" + (" (mean)" if not r.get("seq_len") else "")
            return f"{r['model']} {r['mode']} {r['weights']}, batch {r['batch']} x {length} tokens"
        if self.kind == "prefill":
            return f"{r['model']} {r['weights']}, {self.input_tokens or 0:,}-token prompt (prefill)"
        if not r.get("output_tokens"):
            return f"{r['model']} {r['weights']}, one decode step after {self.input_tokens or 0:,} tokens"
        return f"{r['model']} {r['weights']}, {self.input_tokens or 0:,}-token prompt"


@cache
def published_rows() -> tuple[PublishedSpeed, ...]:
    files = [path for path in SPEED_FILES if path.is_file()]
    return tuple(PublishedSpeed(source, row) for path in files for source, row in sourced_rows(path))
