"""AMD's consumer Radeon cards in the specs (issue 39): found as readers and ROCm name them, with
sourced figures, answered by `benchlib fit`, and listed under the buying guide's "Buy a card"."""

from __future__ import annotations

import re

import pytest
from fit_cli import invoke

from benchlib.catalog.gpus import find_accelerator, find_gpu
from benchlib.site import buying_guide

# name -> (memory GB, architecture family, launch price USD)
RADEON = {
    "Radeon RX 7900 XTX": (24, "RDNA 3", 999),
    "Radeon RX 7900 XT": (20, "RDNA 3", 899),
    "Radeon RX 9070 XT": (16, "RDNA 4", 599),
}


@pytest.mark.parametrize(
    ("typed", "expected"),
    [
        ("RX 7900 XTX", "Radeon RX 7900 XTX"),
        ("rx 7900 xtx", "Radeon RX 7900 XTX"),
        ("RX 7900 XT", "Radeon RX 7900 XT"),
        ("RX 9070 XT", "Radeon RX 9070 XT"),
        ("Radeon RX 9070 XT", "Radeon RX 9070 XT"),
    ],
)
def test_radeon_cards_resolve_as_readers_type_them(typed: str, expected: str) -> None:
    assert find_gpu(typed).name == expected


@pytest.mark.parametrize("name", sorted(RADEON))
def test_the_name_rocm_torch_reports_finds_the_card(name: str) -> None:
    # torch.cuda.get_device_name() on ROCm says "AMD Radeon RX 7900 XTX".
    spec = find_accelerator(f"AMD {name}")
    assert spec is not None and spec.name == name


@pytest.mark.parametrize("name", sorted(RADEON))
def test_radeon_cards_have_sourced_figures(name: str) -> None:
    memory, family, price = RADEON[name]
    spec = find_gpu(name)
    assert spec.vendor == "AMD" and spec.architecture.value.startswith(family)
    assert spec.memory_gb is not None and spec.memory_gb.value == memory
    assert spec.launch_price_usd is not None and spec.launch_price_usd.value == price
    assert spec.bf16_supported is not None and spec.bf16_supported.value
    for field, fact in spec.facts():
        assert fact.source.startswith("https://"), (name, field)
    assert spec.peak_bandwidth_gbps() is not None and spec.peak_tflops("fp32") is not None


@pytest.mark.parametrize("name", sorted(RADEON))
def test_radeon_matrix_rates_are_derived_and_never_peaks(name: str) -> None:
    """AMD publishes no dense matrix (WMMA) rate for these cards: the figure is derived, says how,
    and is never used as a peak an efficiency check could hold a measurement against."""
    spec = find_gpu(name)
    assert spec.bf16_tensor_tflops is not None and spec.bf16_tensor_tflops.status == "unverified"
    assert "Derived" in (spec.bf16_tensor_tflops.note or "")
    assert spec.peak_tflops("bf16") is None and spec.peak_tflops("fp16") is None


@pytest.mark.slow  # traces a model: over 5 s on the 2-core build machine
def test_fit_answers_for_a_radeon_card_typed_as_readers_type_it() -> None:
    result = invoke("--model", "qwen2.5-0.5b", "--gpu", "RX 7900 XTX", "--seq-len", "256")
    assert result.exit_code == 0, result.output
    assert "Radeon RX 7900 XTX" in result.output and "24.0 GiB" in result.output and "fits" in result.output


def test_buy_a_card_lists_the_radeon_cards_with_their_launch_prices(monkeypatch) -> None:
    from benchlib.core import freshness

    monkeypatch.setenv(freshness.BUILD_DATE_ENV, "2026-11-29")
    rows = re.findall(r"<tr><td>([^<]+)</td>(.*?)</tr>", buying_guide.buy_table(), flags=re.S)
    shown = {gpu: cells for gpu, cells in rows}
    for name, (_, _, price) in RADEON.items():
        assert name in shown, name
        assert f"${price:,}" in shown[name], name
