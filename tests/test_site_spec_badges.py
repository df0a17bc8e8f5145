"""Every spec figure the specs file flags unverified (or conflicting) shows that badge wherever a
page shows it: all of them cite through one function (`platform_pages.cited`), which takes the
badges from the fact itself."""

from __future__ import annotations

import re

from benchlib.catalog.gpus import load_accelerators
from benchlib.site import buying_guide, platform_pages

BADGE = re.compile(r'fg-badge--(unverified|conflict)"')
STATUS = {"unverified": "unverified", "conflict": "conflict"}


def _badges(cell: str) -> list[str]:
    return BADGE.findall(cell)


def _rows(html: str) -> dict[str, list[str]]:
    """Each body row's cells after the first, by the first cell's text (a name may hold a glossary term)."""
    rows = {}
    for tr in re.findall(r"<tr>(.*?)</tr>", html, re.S):
        cells = re.findall(r"<td>(.*?)</td>", tr, re.S)
        if cells:
            rows[re.sub(r"<[^>]+>", "", cells[0])] = cells[1:]
    return rows


def _expected(*facts) -> list[str]:
    return [STATUS[f.status] for f in facts if f is not None and f.status in STATUS]


def _gpus():
    return [s for s in load_accelerators() if s.kind == "gpu"]


def test_the_sixteen_bit_table_badges_every_unverified_peak():
    specs = [s for s in _gpus() if s.fp32_tflops is not None and s.fp16_tensor_tflops is not None]
    html = platform_pages.sixteen_bit_ceiling([s.name for s in specs])
    rows = _rows(html)
    flagged = 0
    for spec in specs:
        for cell, fact in zip(rows[spec.name][:2], (spec.fp32_tflops, spec.fp16_tensor_tflops)):
            assert _badges(cell) == _expected(fact), (spec.name, cell)
            flagged += bool(_expected(fact))
    assert flagged >= 2  # the RTX 4090's 165 and the RTX 5090's 210 among them
    assert "fg-badge--stale" not in html  # a chip's specification does not age


def test_the_rtx_4090_and_5090_tensor_peaks_carry_their_badge_on_the_mixed_precision_page():
    html = platform_pages.sixteen_bit_ceiling(["RTX 4090", "RTX 5090"])
    for name, value in (("GeForce RTX 4090", "165"), ("GeForce RTX 5090", "210")):
        cell = _rows(html)[name][1]
        assert f'<span class="fg-fact">{value}</span>' in cell and "fg-badge--unverified" in cell


def test_the_bf16_table_badges_what_the_specs_flag():
    specs = [s for s in _gpus() if s.bf16_supported is not None]
    rows = _rows(platform_pages.bf16_table([s.name for s in specs]))
    for spec in specs:
        assert _badges("".join(rows[spec.name])) == _expected(spec.bf16_supported), spec.name


def test_the_bandwidth_table_badges_every_flagged_peak():
    rows = _rows(buying_guide.bandwidth_vs_compute())
    for spec in _gpus():
        if spec.bandwidth_gbps is None:
            continue
        cells = rows[spec.name]
        fp16 = spec.fp16_tensor_tflops or spec.fp16_tflops
        assert _badges(cells[0]) == _expected(spec.bandwidth_gbps), spec.name
        assert _badges(cells[1]) == _expected(fp16), spec.name
