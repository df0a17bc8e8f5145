"""The largest batch a language model fine-tunes with: written by ``benchlib campaign``.

Like ``max_batch`` (one ``peak_memory`` record per trial, then the ``max_batch`` answer), but
the model is one `benchlib fit` reads from a transformers config (a shipped name or a
config.json), trained in full on random sequences of ``seq_len`` tokens
(`benchlib.models.llm_step`). Not part of any suite.
"""

from __future__ import annotations

from dataclasses import replace

from benchlib.workloads import max_batch, register

NAME = "llm_max_batch"

WORKLOAD = register(
    replace(
        max_batch.WORKLOAD,
        name=NAME,
        description="Largest batch of sequences a language model fine-tunes with (written by benchlib campaign).",
    )
)
