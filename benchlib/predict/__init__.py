"""Predictions without the device: memory (`memory`, `llm_memory`) and speed (`count`, `roofline`, `speed`).

A step is traced on fake tensors, its memory peak and FLOP/byte counts are read off the trace,
and a GPU's specs turn them into a largest batch or a throughput. What the pages show is
predicted by a command into ``benchlib/tables/`` (`benchlib.tables`), never while the site builds.
"""
