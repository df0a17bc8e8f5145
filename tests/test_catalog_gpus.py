"""The accelerator specs file and its lookups (benchlib/catalog/gpus.py, benchlib/data/gpus.yaml)."""

from __future__ import annotations

import json
import re
import textwrap
from datetime import date
from pathlib import Path

import pytest

from benchlib.catalog.gpus import (
    PEAK_DTYPES,
    AcceleratorSpec,
    SpecsError,
    UnknownGPU,
    find_accelerator,
    find_gpu,
    load_accelerators,
    peak_bandwidth_gbps,
    peak_tflops,
)

# One entry per row of TABLE 2 in shared/facts/platforms-and-gpus.md (form factors split out).
TABLE_2_ROWS = {
    "K80", "M60", "P4", "P100 PCIe 16GB", "V100 SXM2 16GB", "V100 PCIe 16GB", "T4", "A10G",
    "A100 40GB SXM", "A100 80GB SXM", "L4", "L40S", "H100 SXM", "H100 PCIe", "H200 SXM", "B200 SXM",
    "RTX PRO 6000 Blackwell", "GeForce RTX 2060", "GeForce RTX 2080 Ti", "TITAN RTX",
    "Quadro RTX 6000", "Quadro RTX 8000", "GeForce RTX 3090", "RTX A6000", "GeForce RTX 4090",
    "GeForce RTX 5090", "TPU v2", "TPU v3", "TPU v4", "TPU v5e", "TPU v5p", "TPU v6e", "TPU7x",
}  # fmt: skip
# The GPUs a 2026 buyer compares (issue 12), and the cards with reported results that had no entry.
BUYER_2026 = {
    "MI300X", "MI325X", "MI355X", "B300 SXM", "GB200", "GH200 96GB", "GH200 144GB HBM3e", "H100 NVL",
    "H200 NVL", "GeForce RTX 5080", "GeForce RTX 5070 Ti", "GeForce RTX 5070", "GeForce RTX 5060 Ti 16GB",
}  # fmt: skip
FORMERLY_MISSING = {"RTX 6000 Ada", "GeForce GTX 1080 Ti", "GeForce RTX 2070", "GeForce RTX 2080"}
# The desktop cards readers own (issue 39).
DESKTOP_2026 = {
    "GeForce RTX 3060 12GB", "GeForce RTX 3070", "GeForce RTX 3080 10GB", "GeForce RTX 3080 12GB",
    "GeForce RTX 4060 Ti 16GB", "GeForce RTX 4070", "GeForce RTX 4070 SUPER", "GeForce RTX 4070 Ti SUPER",
    "GeForce RTX 4080", "GeForce RTX 4080 SUPER",
}  # fmt: skip
REPORTED = Path(__file__).parents[1] / "results" / "reported"


def _is_iso_as_of(text: str) -> bool:
    parts = text.split("-")
    if not re.fullmatch(r"\d{4}(-\d{2}(-\d{2})?)?", text):
        return False
    padded = date(int(parts[0]), int(parts[1]) if len(parts) > 1 else 1, int(parts[2]) if len(parts) > 2 else 1)
    return padded <= date.today()


@pytest.fixture(scope="module")
def specs() -> list[AcceleratorSpec]:
    return load_accelerators()


# ----------------------------------------------------------------------------- the packaged file


def test_packaged_file_has_every_table_row_once(specs: list[AcceleratorSpec]) -> None:
    names = [spec.name for spec in specs]
    assert len(names) == len(set(names))
    assert TABLE_2_ROWS <= set(names)
    assert BUYER_2026 | FORMERLY_MISSING | DESKTOP_2026 <= set(names)
    assert {spec.kind for spec in specs} == {"gpu", "tpu"}


def test_default_file_is_cached(specs: list[AcceleratorSpec]) -> None:
    again = load_accelerators()
    assert again is not specs  # callers get their own list ...
    assert all(a is b for a, b in zip(again, specs, strict=True))  # ... of the same validated specs


def test_every_fact_and_price_has_a_source_url_and_iso_date(specs: list[AcceleratorSpec]) -> None:
    checked = 0
    for spec in specs:
        for field, fact in spec.facts():
            where = f"{spec.name}.{field}"
            assert fact.source.startswith(("http://", "https://")), where
            assert _is_iso_as_of(fact.as_of), where
            assert fact.status in {"verified", "unverified", "conflict"}, where
            if fact.status == "conflict":
                assert fact.note, where
            checked += 1
        for price in spec.cloud_prices:
            assert price.source.startswith(("http://", "https://")), spec.name
            assert _is_iso_as_of(price.as_of), spec.name
    assert checked > 300  # the file really is read fact by fact, not skipped


def test_table_facts_are_carried_faithfully(specs: list[AcceleratorSpec]) -> None:
    by_name = {spec.name: spec for spec in specs}
    p100 = by_name["P100 PCIe 16GB"].bandwidth_gbps
    assert p100 is not None and p100.status == "conflict" and "720" in (p100.note or "")
    t4 = by_name["T4"]
    assert t4.smi_memory_mib is not None and t4.smi_memory_mib.value == 15360
    assert t4.bf16_supported is not None and t4.bf16_supported.value is False
    assert t4.tf32_supported is not None and t4.tf32_supported.value is False
    assert t4.bf16_tensor_tflops is None  # "—" stays absent, never zero
    a100 = by_name["A100 80GB SXM"]
    assert a100.bf16_supported is not None and a100.bf16_supported.value is True
    assert {price.provider for price in a100.cloud_prices} >= {"Modal", "Google Colab (compute units)"}
    # Merge-key variants keep the shared figures and override the ones that differ.
    v100 = by_name["V100 PCIe 32GB"]
    assert v100.memory_gb is not None and v100.memory_gb.value == 32
    assert v100.fp16_tensor_tflops is not None and v100.fp16_tensor_tflops.value == 112
    assert v100.bandwidth_gbps is not None and v100.bandwidth_gbps.value == 900
    k80 = by_name["K80"]
    assert k80.devices_per_unit is not None and k80.devices_per_unit.value == 2


@pytest.mark.parametrize("name", sorted(BUYER_2026 | FORMERLY_MISSING | DESKTOP_2026 | {"RTX PRO 6000 Blackwell"}))
def test_buyer_cards_have_the_figures_a_buyer_compares(specs: list[AcceleratorSpec], name: str) -> None:
    spec = next(s for s in specs if s.name == name)
    for field in ("architecture", "year", "memory_gb", "bandwidth_gbps"):
        fact = getattr(spec, field)
        assert fact is not None and fact.source.startswith(("http://", "https://")), (name, field)
        assert _is_iso_as_of(fact.as_of), (name, field)
    if spec.vendor == "NVIDIA" and not name.startswith(("H100", "H200", "GH200", "GB200", "B300")):
        assert spec.launch_price_usd is not None, name  # desktop cards: the price a buyer pays
    # A compute figure is either a usable peak or says it is unverified, never silently absent.
    tensor = spec.bf16_tensor_tflops or spec.fp16_tensor_tflops
    if spec.vendor != "NVIDIA" or name.startswith(("GB200", "B300", "GH200")):
        assert tensor is not None and spec.peak_tflops("bf16") == tensor.value


def test_rtx_pro_6000_blackwell_is_complete(specs: list[AcceleratorSpec]) -> None:
    spec = next(s for s in specs if s.name == "RTX PRO 6000 Blackwell")
    assert spec.peak_bandwidth_gbps() == 1792  # was unverified
    assert spec.peak_tflops("fp32") and spec.peak_tflops("bf16") and spec.tdp_w and spec.launch_price_usd


def test_rtx_50_tensor_figures_are_derived_and_never_peaks(specs: list[AcceleratorSpec]) -> None:
    cards = [s for s in specs if s.name.startswith("GeForce RTX 50")]
    assert len(cards) == 5
    for spec in cards:
        assert spec.fp16_tensor_tflops is not None and spec.fp16_tensor_tflops.status == "unverified"
        assert "AI TOPS" in (spec.fp16_tensor_tflops.note or "") or "Derived" in (spec.fp16_tensor_tflops.note or "")
        assert spec.peak_tflops("fp16") is None and spec.peak_tflops("bf16") is None


def test_desktop_tensor_figures_are_derived_and_never_peaks(specs: list[AcceleratorSpec]) -> None:
    """GeForce tensor rates are published sparse or with FP16 accumulate; the dense FP32-accumulate
    figure is derived, so it is used by predictions but never as a peak."""
    for spec in (s for s in specs if s.name in DESKTOP_2026 and s.fp16_tensor_tflops is not None):
        assert spec.fp16_tensor_tflops.status == "unverified" and "Derived" in (spec.fp16_tensor_tflops.note or "")
        assert spec.peak_tflops("bf16") is None


@pytest.mark.parametrize(
    ("typed", "expected"),
    [
        ("RTX 3060", "GeForce RTX 3060 12GB"),
        ("RTX 4070", "GeForce RTX 4070"),
        ("RTX 4070 Super", "GeForce RTX 4070 SUPER"),
        ("RTX 4070 Ti Super", "GeForce RTX 4070 Ti SUPER"),
        ("RTX 3080 12GB", "GeForce RTX 3080 12GB"),
        ("NVIDIA GeForce RTX 4080 SUPER", "GeForce RTX 4080 SUPER"),
    ],
)
def test_desktop_cards_resolve_as_readers_type_them(typed: str, expected: str) -> None:
    assert find_gpu(typed).name == expected


def test_a_name_two_memory_variants_share_lists_both() -> None:
    with pytest.raises(UnknownGPU) as info:
        find_gpu("RTX 3080")
    message = str(info.value)
    assert "'GeForce RTX 3080 10GB', 'GeForce RTX 3080 12GB'" in message and "\n" not in message


def test_an_nvml_name_two_variants_share_resolves_to_neither() -> None:
    # The 8 GB RTX 3060 and RTX 4060 Ti, and both RTX 3080s, report these names.
    for reported in ("NVIDIA GeForce RTX 3060", "NVIDIA GeForce RTX 3080", "NVIDIA GeForce RTX 4060 Ti"):
        assert find_accelerator(reported) is None, reported


def test_quadro_rtx_6000_and_8000_share_one_board_power(specs: list[AcceleratorSpec]) -> None:
    by_name = {spec.name: spec for spec in specs}
    q6000, q8000 = (by_name[n].tdp_w for n in ("Quadro RTX 6000", "Quadro RTX 8000"))
    assert q6000 is not None and q8000 is not None
    assert q6000.value == q8000.value == 260
    assert q6000.status == "verified" and "developer.nvidia.com" in q6000.source  # NVIDIA's own table
    assert "295" in (q6000.note or "") and "295" in (q8000.note or "")  # the other figure is explained


def test_every_gpu_of_the_lambda_reported_files_has_a_spec() -> None:
    names = set()
    for path in REPORTED.glob("lambda-*.json"):
        names |= {m["device_name"] for m in json.loads(path.read_text(encoding="utf-8"))["measurements"]}
    assert {n for n in names if find_accelerator(n) is None} == set()
    assert FORMERLY_MISSING <= {find_accelerator(n).name for n in names}


# ----------------------------------------------------------------------------- name matching


@pytest.mark.parametrize(
    ("reported", "expected"),
    [
        ("Tesla T4", "T4"),
        ("Tesla K80", "K80"),
        ("Tesla P100-PCIE-16GB", "P100 PCIe 16GB"),
        ("Tesla V100-SXM2-16GB", "V100 SXM2 16GB"),
        ("NVIDIA A100-SXM4-40GB", "A100 40GB SXM"),
        ("NVIDIA A100-SXM4-80GB", "A100 80GB SXM"),
        ("NVIDIA A100 80GB PCIe", "A100 80GB PCIe"),
        ("NVIDIA H100 80GB HBM3", "H100 SXM"),
        ("NVIDIA H100 PCIe", "H100 PCIe"),
        ("NVIDIA H200", "H200 SXM"),
        ("NVIDIA L4", "L4"),
        ("NVIDIA GeForce RTX 4090", "GeForce RTX 4090"),
        ("NVIDIA RTX PRO 6000 Blackwell Server Edition", "RTX PRO 6000 Blackwell"),
        ("NVIDIA H100 NVL", "H100 NVL"),
        ("NVIDIA H200 NVL", "H200 NVL"),
        ("NVIDIA RTX 6000 Ada Generation", "RTX 6000 Ada"),
        ("AMD Instinct MI300X", "MI300X"),
        ("AMD MI355X", "MI355X"),
        ("NVIDIA GB200", "GB200"),
        ("NVIDIA B300 SXM6 AC", "B300 SXM"),
        ("NVIDIA GH200 480GB", "GH200 96GB"),
        ("NVIDIA GH200 144G HBM3e", "GH200 144GB HBM3e"),
        ("NVIDIA GeForce GTX 1080 Ti", "GeForce GTX 1080 Ti"),
        ("NVIDIA GeForce RTX 2080", "GeForce RTX 2080"),
        ("NVIDIA GeForce RTX 5070 Ti", "GeForce RTX 5070 Ti"),
        ("TPU v5 lite", "TPU v5e"),
        ("TPU v5", "TPU v5p"),
        ("TPU v6 lite", "TPU v6e"),
        # Normalised forms: vendor words, case, punctuation and word order do not matter.
        ("NVIDIA Tesla T4", "T4"),
        ("  t4 ", "T4"),
        ("GeForce RTX 2080 Ti", "GeForce RTX 2080 Ti"),
        ("nvidia a100 sxm4 40 GB", "A100 40GB SXM"),
        ("v5litepod-8", "TPU v5e"),
        ("v3-8", "TPU v3"),
    ],
)
def test_reported_names_resolve(reported: str, expected: str) -> None:
    spec = find_accelerator(reported)
    assert spec is not None and spec.name == expected


def test_a100_is_never_taken_for_a10g() -> None:
    a10g, a10, a100 = (find_accelerator(n) for n in ("NVIDIA A10G", "NVIDIA A10", "NVIDIA A100-SXM4-40GB"))
    assert a10g is not None and a10g.name == "A10G"
    assert a10 is not None and a10.name == "A10"
    assert a100 is not None and a100.name == "A100 40GB SXM"
    assert find_accelerator("NVIDIA A100") is None  # 40 or 80 GB? Refuse to guess.


@pytest.mark.parametrize(
    "reported",
    [
        "A100",
        "Tesla P100-PCIE-12GB",  # different memory, different bandwidth
        "Tesla V100S-PCIE-32GB",
        "NVIDIA A100-SXM4-40GB MIG 1g.5gb",  # a slice, not the whole GPU
        "NVIDIA RTX PRO 6000 Blackwell Max-Q Workstation Edition",
        "NVIDIA GeForce RTX 5060 Ti",  # 8 or 16 GB? NVML names both the same
        "NVIDIA GH200 SXM",  # 96 or 144 GB?
        "AMD Instinct MI250X",
        "",
    ],
)
def test_near_misses_are_not_matched(reported: str) -> None:
    assert find_accelerator(reported) is None


# ----------------------------------------------------------------------------- peaks


@pytest.mark.parametrize(
    ("reported", "dtype", "expected"),
    [
        ("NVIDIA A100-SXM4-40GB", "fp32", 19.5),
        ("NVIDIA A100-SXM4-40GB", "tf32", 156),
        ("NVIDIA A100-SXM4-40GB", "bf16", 312),
        ("NVIDIA H100 80GB HBM3", "bf16", 989),
        ("NVIDIA H100 NVL", "bf16", 835.5),  # dense: NVIDIA's 1,671 is with sparsity
        ("NVIDIA B200", "fp32", 75),  # HGX B200; 80 is the GB200's
        ("NVIDIA B300 SXM6 AC", "fp32", 75),
        ("Tesla T4", "fp16", 65),
        ("Tesla T4", "bf16", None),  # Turing: no bf16 tensor cores
        ("Tesla T4", "tf32", None),
        ("Tesla P100-PCIE-16GB", "fp16", 18.7),  # no tensor cores: the plain FP16 rate
        ("Tesla K80", "fp16", None),  # FP16 not accelerated at all
        ("Tesla K80", "fp32", 4.37),  # per GPU: half of the 8.74 dual-GPU board figure
        ("TPU v5 lite", "bf16", 197),
        ("TPU v3", "bf16", 61.5),  # JAX lists each of the chip's two TensorCores as a device
        ("TPU v5 lite", "fp16", None),
        ("Some Unknown GPU", "fp32", None),
    ],
)
def test_peak_tflops(reported: str, dtype: str, expected: float | None) -> None:
    assert peak_tflops(reported, dtype) == (pytest.approx(expected) if expected is not None else None)


def test_peak_bandwidth() -> None:
    assert peak_bandwidth_gbps("NVIDIA A100-SXM4-80GB") == 2039
    assert peak_bandwidth_gbps("NVIDIA A100 80GB PCIe") == 1935
    assert peak_bandwidth_gbps("Tesla P100-PCIE-16GB") == 732  # conflict: still a usable peak
    assert peak_bandwidth_gbps("Tesla K80") == 240  # per GPU of the dual board
    assert peak_bandwidth_gbps("Some Unknown GPU") is None


def test_unknown_dtype_is_refused() -> None:
    with pytest.raises(ValueError, match="fp8.*fp32, tf32, fp16, bf16"):
        peak_tflops("Tesla T4", "fp8")


def test_unverified_figures_are_never_peaks(specs: list[AcceleratorSpec]) -> None:
    a10g = find_accelerator("NVIDIA A10G")
    assert a10g is not None and a10g.fp16_tensor_tflops is not None
    assert a10g.fp16_tensor_tflops.status == "unverified"
    assert peak_tflops("NVIDIA A10G", "fp16") is None
    assert peak_tflops("NVIDIA GeForce RTX 4090", "fp16") is None
    assert peak_tflops("NVIDIA GeForce RTX 4090", "fp32") == 82.6
    assert peak_tflops("TPU7x", "bf16") is None  # the per-device split is unverified
    for spec in specs:
        figures = {"fp32": spec.fp32_tflops, "tf32": spec.tf32_tensor_tflops, "bf16": spec.bf16_tensor_tflops}
        for dtype, fact in figures.items():
            if fact is not None and fact.status == "unverified":
                assert spec.peak_tflops(dtype) is None, (spec.name, dtype)
        if spec.bandwidth_gbps is not None and spec.bandwidth_gbps.status == "unverified":
            assert spec.peak_bandwidth_gbps() is None, spec.name


# ----------------------------------------------------------------------------- malformed files

GOOD_ENTRY = """\
accelerators:
  - name: Test GPU
    aliases: [NVIDIA Test GPU]
    vendor: NVIDIA
    kind: gpu
    defaults: {source: "https://example.com/spec", as_of: "2024-01-02", status: verified}
    architecture: Testwell
    year: 2024
    memory_gb: 16
    bandwidth_gbps: {value: 500, status: verified}
"""
BANDWIDTH = "value: 500, status: verified"


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "gpus.yaml"
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("status", "expected"),
    [("verified", 500), ("conflict, note: two sources disagree", 500), ("unverified", None)],
)
def test_status_decides_whether_a_figure_is_a_peak(tmp_path: Path, status: str, expected: float | None) -> None:
    (spec,) = load_accelerators(_write(tmp_path, GOOD_ENTRY.replace(BANDWIDTH, f"value: 500, status: {status}")))
    assert spec.peak_bandwidth_gbps() == expected
    assert spec.memory_gb is not None and spec.memory_gb.source == "https://example.com/spec"


@pytest.mark.parametrize(
    ("old", "new", "field"),
    [
        (
            '    defaults: {source: "https://example.com/spec", as_of: "2024-01-02", status: verified}\n',
            "",
            "field architecture: expected a mapping {value, source, as_of, status}",
        ),
        (BANDWIDTH, "value: 500, status: probably", "field bandwidth_gbps.status"),
        (
            BANDWIDTH,
            "value: 500, status: conflict",
            "field bandwidth_gbps: Value error, a 'conflict' fact needs a note",
        ),
        (BANDWIDTH, BANDWIDTH + ", as_of: last spring", "field bandwidth_gbps.as_of"),
        (BANDWIDTH, BANDWIDTH + ', as_of: "2999-01"', "field bandwidth_gbps.as_of"),
        (BANDWIDTH, BANDWIDTH + ", source: example.com", "field bandwidth_gbps.source"),
        ("memory_gb: 16", "memory_gb: -16", "field memory_gb.value"),
        ("kind: gpu", "kind: fpga", "field kind"),
        (
            "memory_gb: 16",
            "memory_gb: 16\n    bf16_tensor_tflops: 10\n    bf16_supported: {value: false}",
            "bf16_tensor_tflops is given but bf16_supported is false",
        ),
        ("memory_gb: 16", "memory_gb: 16\n    memroy_gb: 16", "field memroy_gb"),
    ],
)
def test_malformed_entry_names_file_accelerator_and_field(tmp_path: Path, old: str, new: str, field: str) -> None:
    assert old in GOOD_ENTRY
    path = _write(tmp_path, GOOD_ENTRY.replace(old, new))
    with pytest.raises(SpecsError) as caught:
        load_accelerators(path)
    message = str(caught.value)
    assert message.startswith(f"{path}: accelerator 'Test GPU': ")
    assert field in message


def test_two_accelerators_answering_to_one_name_are_refused(tmp_path: Path) -> None:
    entry = GOOD_ENTRY.split("\n", 1)[1]
    second = entry.replace("name: Test GPU", "name: Other GPU").replace("[NVIDIA Test GPU]", "[Test-GPU]")
    path = _write(tmp_path, "accelerators:\n" + entry + second)
    with pytest.raises(SpecsError, match=r"'Other GPU'.*'Test-GPU'.*'Test GPU'") as caught:
        load_accelerators(path)
    assert str(path) in str(caught.value)


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("accelerators: [unclosed\n", "not valid YAML"),
        ("- just a list\n", "'accelerators' list"),
        ("accelerators: []\nextras: 1\n", "unknown top-level keys"),
    ],
)
def test_malformed_file_names_the_file(tmp_path: Path, text: str, problem: str) -> None:
    path = _write(tmp_path, text)
    with pytest.raises(SpecsError, match=problem) as caught:
        load_accelerators(path)
    assert str(path) in str(caught.value)


def test_missing_file_names_the_file(tmp_path: Path) -> None:
    with pytest.raises(SpecsError, match="no-such.yaml"):
        load_accelerators(tmp_path / "no-such.yaml")


def test_peak_dtypes_are_the_documented_four() -> None:
    assert PEAK_DTYPES == ("fp32", "tf32", "fp16", "bf16")
