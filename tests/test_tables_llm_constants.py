"""The figures the picker evaluates the formulas with (``llm_constants``): what `benchlib.predict` uses."""

from __future__ import annotations

import pytest

from benchlib.catalog.gpus import find_gpu, load_accelerators
from benchlib.predict.engines import ENGINES, EngineMismatch, matmul_fraction
from benchlib.predict.hosts import default_host
from benchlib.predict.memory import gpu_memory
from benchlib.predict.roofline import gpu_rates
from benchlib.tables import llm_constants
from benchlib.tables.can_i_run_it import COLUMNS, NO_SERVED_ENGINE
from benchlib.tables.llm_formulas import SETUPS


@pytest.fixture(scope="module")
def table():
    return llm_constants.compute_table()


def test_every_gpu_with_memory_and_bandwidth_figures_is_there_the_notebooks_and_the_tables_first(table):
    names = [g["name"] for g in table["gpus"]]
    assert names[:3] == ["T4", "P100 PCIe 16GB", "L4"]
    columns = list(dict.fromkeys(c.gpu for c in COLUMNS))
    assert names[: len(columns)] == columns
    gpus = [s for s in load_accelerators() if s.kind == "gpu"]
    left_out = {s.name for s in gpus} - set(names)
    assert all(s.bandwidth_gbps is None or s.memory_gb is None for s in gpus if s.name in left_out)
    assert not any(s.kind == "tpu" for s in load_accelerators() if s.name in names)
    assert len({g["key"] for g in table["gpus"]}) == len(names)


@pytest.mark.parametrize("name", ["T4", "A100 80GB SXM", "GeForce RTX 4090", "H100 NVL"])
def test_a_gpus_figures_are_the_predictors(table, name):
    gpu = next(g for g in table["gpus"] if g["name"] == name)
    spec = find_gpu(name)
    memory, rates = gpu_memory(spec), gpu_rates(spec)
    assert gpu["memory"]["tensor_budget"] == memory.tensor_budget
    assert gpu["memory"]["context_bytes"] == memory.context_bytes and gpu["memory"]["overhead"] == memory.overhead
    assert gpu["rates"]["peaks_tflops"] == rates.peaks_tflops
    assert gpu["rates"]["matmul_fraction"] == matmul_fraction(rates)[0]
    assert gpu["host"]["launch_s"] == default_host(spec).launch_s


def test_a_gpu_without_bf16_computes_in_fp16_and_fp8_is_dequantized_where_it_has_no_kernels(table):
    gpus = {g["name"]: g for g in table["gpus"]}
    assert (gpus["T4"]["dtype"], gpus["H100 SXM"]["dtype"]) == ("fp16", "bf16")
    assert "no FP8" in gpus["T4"]["dequantized"]["inference-fp8"] and not gpus["H100 SXM"]["dequantized"]
    # The RTX 6000 Ada has bf16 but the specs give it no bf16 TFLOPS: its speed says why not.
    assert "no bf16 peak" in gpus["RTX 6000 Ada"]["no_speed"]


def test_the_served_engines_rule_gives_the_tables_p100_reason_and_refusals_are_enginecheck(table):
    p100 = next(g for g in table["gpus"] if g["name"] == "P100 PCIe 16GB")
    assert p100["no_served"] == NO_SERVED_ENGINE["p100"].replace("the P100", "the P100 PCIe 16GB")
    assert next(g for g in table["gpus"] if g["name"] == "T4")["no_served"] is None
    for engine in table["engines"]:
        for key, setup in SETUPS.items():
            try:
                ENGINES[engine["key"]].check(setup.mode, setup.weights)
                assert key not in engine["refuses"]
            except EngineMismatch as exc:
                assert engine["refuses"][key] == str(exc)
