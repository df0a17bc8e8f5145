"""The platform data file, the blocks that render it, and the seeds' reported figures."""

from __future__ import annotations

import re
from datetime import date
from pathlib import Path
from typing import Any

import pytest
import yaml
from glossary_text import without_tooltips

from benchlib.catalog.platforms import DATA_FILE, TIER_FIELDS, Fact, PlatformsData, PlatformsFileError, load_platforms
from benchlib.core.paths import REPORTED_ENV, RESULTS_ENV
from benchlib.probe.platform import detect_platform
from benchlib.results.schema import Machine, MeasurementRecord, Metric, Provenance, ResultsFile
from benchlib.results.store import write_results
from benchlib.site import platform_pages as site
from benchlib.workloads.conv2d import flops

REPORTED = Path(__file__).resolve().parents[1] / "results" / "reported"
TODAY = date(2026, 11, 21)


@pytest.fixture(scope="module")
def data() -> PlatformsData:
    return load_platforms()


@pytest.fixture(scope="module")
def raw() -> dict[str, Any]:
    loaded = yaml.safe_load(DATA_FILE.read_text(encoding="utf-8"))
    assert isinstance(loaded, dict)
    return loaded


def _all_facts(data: PlatformsData) -> list[tuple[str, Fact]]:
    found = []
    for pid, platform in data.platforms.items():
        found += [(f"{pid} history", fact) for fact in platform.history]
        for tid, tier in platform.tiers.items():
            for field in TIER_FIELDS:
                found += [(f"{pid}/{tid}.{field}", fact) for fact in tier.field(field)]
    return found


# --- The file itself ---------------------------------------------------------------------------


def test_every_tier_has_every_field_with_a_source_and_a_date(raw: dict[str, Any]) -> None:
    # Checked on the raw YAML too, so a default in the models could never fill a gap silently.
    for pid, platform in raw["platforms"].items():
        assert platform["tiers"], pid
        for tid, tier in platform["tiers"].items():
            assert set(tier) - {"name", "budget"} == set(TIER_FIELDS), f"{pid}/{tid}"
            for field in TIER_FIELDS:
                facts = tier[field] if isinstance(tier[field], list) else [tier[field]]
                for fact in facts:
                    assert str(fact["source"]).startswith(("http://", "https://")), f"{pid}/{tid}.{field}"
                    assert isinstance(fact["as_of"], date), f"{pid}/{tid}.{field}: as_of is not a date"


def test_facts_are_dated_in_the_past_and_doubts_are_explained(data: PlatformsData) -> None:
    facts = _all_facts(data)
    assert len(facts) > 80
    for where, fact in facts:
        assert fact.as_of <= date.today(), where
        assert fact.source.scheme in ("http", "https"), where
        if fact.status != "verified":
            assert fact.note, f"{where} is {fact.status} without a note"


def test_the_data_carries_the_research_flags(data: PlatformsData) -> None:
    statuses = {fact.status for _, fact in _all_facts(data)}
    assert statuses == {"verified", "unverified", "conflict"}
    kaggle = data.platforms["kaggle"].tiers["free"]
    assert any(f.status == "conflict" and "TPU" in f.value for f in kaggle.quotas)  # 20 h vs 30 h
    assert data.platforms["paperspace"].tiers["free"].max_session[0].status == "conflict"  # 12 h vs 6 h
    assert data.platforms["ai-studio"].tiers["free"].quotas[0].status == "conflict"


def test_platform_ids_match_the_results_schema(data: PlatformsData) -> None:
    from typing import get_args

    from benchlib.results.schema import PlatformInfo

    names = set(get_args(PlatformInfo.model_fields["name"].annotation))
    assert set(data.platforms) - {"modal"} <= names  # benchlib has no name for Modal yet


def test_detection_signals_are_the_ones_the_probe_uses(data: PlatformsData) -> None:
    checked = 0
    for pid, platform in data.platforms.items():
        for signal in platform.detection.signals:
            environ: dict[str, str] = {}
            paths: set[str] = set()
            modules: set[str] = set()
            if signal.kind == "env":
                environ[signal.name] = signal.value or "1"
            elif signal.kind == "env_prefix":
                environ[signal.name + "TEST"] = "1"
            elif signal.kind == "path":
                paths.add(signal.name)
            else:
                modules.add(signal.name)
            found = detect_platform(environ, paths.__contains__, modules.__contains__)
            assert found.name == pid, f"{pid}: {signal.kind} {signal.name} alone gives {found.name!r}"
            checked += 1
    assert checked >= 15


def test_needs_point_at_existing_tiers_and_render(data: PlatformsData) -> None:
    assert {need.need for need in data.needs} >= {
        "The most free GPU hours",
        "A free TPU",
        "Lots of RAM",
        "Files that survive a restart",
        "PyTorch or TensorFlow on a free GPU",
        "More than one GPU for free",
        "Offline code competitions",
    }
    html = site.decision_table(today=TODAY, data=data)
    assert html.count("<tr>") == len(data.needs) + 1
    assert 'href="kaggle/"' in html  # the platform's page, relative to platforms/index.md's URL


# --- Bad input names the file, platform, tier and field -------------------------------------------


def _broken(tmp_path: Path, edit: Any) -> Path:
    loaded = yaml.safe_load(DATA_FILE.read_text(encoding="utf-8"))
    edit(loaded)
    path = tmp_path / "platforms.yaml"
    path.write_text(yaml.safe_dump(loaded, sort_keys=False), encoding="utf-8")
    return path


def test_a_bad_date_names_file_platform_tier_and_field(tmp_path: Path) -> None:
    def edit(d: dict[str, Any]) -> None:
        d["platforms"]["kaggle"]["tiers"]["free"]["ram"]["as_of"] = "last spring"

    path = _broken(tmp_path, edit)
    with pytest.raises(PlatformsFileError) as err:
        load_platforms(path)
    message = str(err.value)
    assert str(path) in message and "platform 'kaggle'" in message and "tier 'free'" in message
    assert "field 'ram.0.as_of'" in message


def test_a_missing_source_and_a_non_http_url_are_rejected(tmp_path: Path) -> None:
    def drop(d: dict[str, Any]) -> None:
        del d["platforms"]["colab"]["tiers"]["pro"]["price"]["source"]

    with pytest.raises(PlatformsFileError, match=r"platform 'colab', tier 'pro', field 'price.0.source'"):
        load_platforms(_broken(tmp_path, drop))

    def ftp(d: dict[str, Any]) -> None:
        d["platforms"]["modal"]["tiers"]["starter"]["disk"]["source"] = "ftp://modal.com/pricing"

    with pytest.raises(PlatformsFileError, match=r"platform 'modal', tier 'starter', field 'disk.0.source'"):
        load_platforms(_broken(tmp_path, ftp))


def test_a_missing_field_and_an_unexplained_conflict_are_rejected(tmp_path: Path) -> None:
    def drop(d: dict[str, Any]) -> None:
        del d["platforms"]["studio-lab"]["tiers"]["free"]["idle_timeout"]

    with pytest.raises(PlatformsFileError, match=r"platform 'studio-lab', tier 'free', field 'idle_timeout'"):
        load_platforms(_broken(tmp_path, drop))

    def conflict(d: dict[str, Any]) -> None:
        d["platforms"]["kaggle"]["tiers"]["free"]["max_session"]["status"] = "conflict"

    with pytest.raises(PlatformsFileError, match=r"needs a note"):
        load_platforms(_broken(tmp_path, conflict))


def test_invalid_yaml_and_unknown_need_tiers_are_reported(tmp_path: Path) -> None:
    path = tmp_path / "platforms.yaml"
    path.write_text("platforms: [unclosed\n", encoding="utf-8")
    with pytest.raises(PlatformsFileError, match=r"not valid YAML"):
        load_platforms(path)

    def need(d: dict[str, Any]) -> None:
        d["needs"][0]["tiers"].append("kaggle/pro")

    with pytest.raises(PlatformsFileError, match=r"unknown tier 'kaggle/pro'"):
        load_platforms(_broken(tmp_path, need))


# --- Flags and rendering ---------------------------------------------------------------------


def _fact(**kw: Any) -> Fact:
    return Fact(**{"value": "x", "source": "https://example.org/", "as_of": date(2026, 1, 1), **kw})


@pytest.mark.parametrize(
    ("as_of", "stale"),
    [
        (date(2025, 11, 21), False),  # exactly twelve months: still fresh
        (date(2025, 11, 20), True),
        (date(2026, 6, 1), False),
        (date(2019, 3, 15), True),
    ],
)
def test_facts_older_than_twelve_months_are_flagged(as_of: date, stale: bool) -> None:
    flags = [flag for flag in site.fact_flags(_fact(as_of=as_of), TODAY) if flag.kind == "stale"]
    assert flags == ([site.Flag("stale", f"as of {as_of:%Y-%m}, may be out of date")] if stale else [])


def test_unverified_and_conflicting_facts_show_badges_and_notes() -> None:
    unverified = site.render_fact(_fact(status="unverified", note="one user"), TODAY)
    assert ">unverified</span>" in unverified and "one user" in unverified
    conflict = site.render_fact(
        _fact(status="conflict", note="6 h elsewhere", see_also=["https://other.example/"]), TODAY
    )
    assert ">conflicting sources</span>" in conflict and "6 h elsewhere" in conflict
    assert 'href="https://other.example/"' in conflict
    fresh = site.render_fact(_fact(), TODAY)
    assert "fg-badge" not in fresh and 'href="https://example.org/"' in fresh and "2026-01-01" in fresh


def test_data_strings_are_html_escaped(tmp_path: Path) -> None:
    def inject(d: dict[str, Any]) -> None:
        tier = d["platforms"]["kaggle"]["tiers"]["free"]
        tier["name"] = "<b>Free</b>"
        tier["ram"] = {
            "value": "<script>alert(1)</script>",
            "source": 'https://x.example/?a="b"&c=<d>',
            "as_of": "2026-01-01",
            "status": "unverified",
            "note": "it's <i>odd</i>",
        }

    data = load_platforms(_broken(tmp_path, inject))
    html = site.tier_table("kaggle", today=TODAY, data=data)
    assert "<script>" not in html and "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "&lt;b&gt;Free&lt;/b&gt;" in html and "&lt;i&gt;odd&lt;/i&gt;" in html
    assert 'href="https://x.example/?a=%22b%22&amp;c=%3Cd%3E"' in html  # normalised by pydantic, then escaped


def test_facts_from_any_block_are_escaped() -> None:
    hostile = _fact(value="<script>alert(1)</script>", note="it's <i>odd</i>", status="unverified")
    for html in (site.render_fact(hostile, TODAY), _fact_list_of(hostile)):
        assert "<script>" not in html and "&lt;script&gt;alert(1)&lt;/script&gt;" in html
        assert "<i>" not in html and "&lt;i&gt;odd&lt;/i&gt;" in html


def _fact_list_of(fact: Fact) -> str:
    data = load_platforms()
    tier = data.platforms["kaggle"].tiers["free"].model_copy(update={"ram": [fact]})
    kaggle = data.platforms["kaggle"].model_copy(update={"tiers": {"free": tier}})
    hacked = data.model_copy(update={"platforms": {**data.platforms, "kaggle": kaggle}})
    return site.fact_list([("kaggle/free", "ram")], today=TODAY, data=hacked)


def test_the_real_pages_blocks_render_with_badges(data: PlatformsData) -> None:
    colab = site.tier_table("colab", today=TODAY, data=data)
    assert colab.count("<tr>") == len(TIER_FIELDS) + 1  # plus the header row
    assert ">unverified</span>" in colab and "may be out of date" in colab
    assert "colspan" not in site.tier_table("colab", ["free"], today=TODAY, data=data)
    assert 'colspan="3"' in colab  # Pay As You Go, Pro and Pro+ share their accelerator facts
    limits = site.limits_table(["colab/free", "kaggle/free"], today=TODAY, data=data)
    assert limits.count("<tr>") == 3
    assert "P100" in site.fact_list([("kaggle/free", "accelerators")], match="P100", today=TODAY, data=data)
    with pytest.raises(ValueError, match="no facts matched"):
        site.fact_list([("kaggle/free", "accelerators")], match="H100", today=TODAY, data=data)
    assert "benchlib has no signal for Modal" in site.detection_table("modal", today=TODAY, data=data)
    assert "KAGGLE_KERNEL_RUN_TYPE" in site.detection_table("kaggle", today=TODAY, data=data)
    assert "https://github.com/Kaggle/kaggle-cli/pull/1198" in site.sources("kaggle", data=data)
    assert "K80" in site.history_list("colab", today=TODAY, data=data)


# --- The seeds' reported figures ----------------------------------------------------------------

WORKLOADS = {"conv2d", "cnn_fashion_mnist", "fastai_transfer", "ai_benchmark_score"}
SEED_RUNS = ("aibench-", "tpu2018-", "kagglevscolab2019-")  # seeds 001, 002 and 003


@pytest.fixture(scope="module")
def reported() -> dict[str, ResultsFile]:
    files = sorted(REPORTED.glob("*.json"))
    assert files, REPORTED
    return {f.stem: ResultsFile.model_validate_json(f.read_text(encoding="utf-8")) for f in files}


def test_every_reported_file_is_valid_and_attributed(reported: dict[str, ResultsFile]) -> None:
    for name, results in reported.items():
        assert results.run_id == name
        p = results.provenance
        assert p.kind == "reported" and p.source_url and p.source_url.startswith(("http://", "https://")), name
        assert p.as_of and p.as_of <= date.today(), name
        assert "reported" in results.machine.label, name


def test_seed_files_carry_context_and_reported_hardware(reported: dict[str, ResultsFile]) -> None:
    seeds = {name: r for name, r in reported.items() if name.startswith(SEED_RUNS)}
    assert len(seeds) == 10
    for name, results in seeds.items():
        assert results.provenance.context and len(results.provenance.context) > 200, name
        assert results.machine.platform.name in ("colab", "kaggle"), name
        for gpu in results.machine.accelerators.nvidia if results.machine.accelerators else []:
            assert gpu.source == "reported", name
        for record in results.measurements:
            assert record.workload in WORKLOADS, f"{name}: {record.workload}"


def test_reported_files_cover_seeds_001_002_003(reported: dict[str, ResultsFile]) -> None:
    urls = {r.provenance.source_url for r in reported.values()}
    assert "https://towardsdatascience.com/colab-pro-vs-free-ai-computing-performance-4e983d578fb2" in urls  # 001
    assert "https://colab.research.google.com/drive/1DpUCBm58fruGNRtQL_DiSVbT90spdZgm" in urls  # 002
    assert (
        "https://towardsdatascience.com/kaggle-vs-colab-faceoff-which-free-gpu-provider-is-tops-d4f0cd625029" in urls
    )  # 003
    scores = {
        r.machine.label: r.measurements[0].value
        for r in reported.values()
        if r.measurements[0].workload == "ai_benchmark_score"
    }
    assert scores["Colab Pro V100 (2022, reported)"] == 16289 and scores["Colab Free T4 (2022, reported)"] == 7155


def test_seed_003_gives_the_machines_cuda_and_cudnn_not_pytorchs(reported: dict[str, ResultsFile]) -> None:
    # The article reports the system CUDA toolkit and cuDNN; it never says which CUDA PyTorch was built with.
    expected = {
        "kagglevscolab2019-kaggle-p100": ("9.2.148", "7.4.1"),
        "kagglevscolab2019-colab-k80": ("10.0.130", "7.5.0"),
    }
    for name, (toolkit, cudnn) in expected.items():
        software = reported[name].machine.software
        assert software is not None, name
        assert (software.cuda_toolkit, software.system_cudnn) == (toolkit, cudnn), name
        assert software.torch_cuda is None and software.cudnn is None, name


def test_the_tpu_convolution_figure_is_kept_but_marked_invalid(reported: dict[str, ResultsFile]) -> None:
    from benchlib.catalog.gpus import find_accelerator

    tpu = reported["tpu2018-colab-tpu-v2"]
    conv = [m for m in tpu.measurements if m.workload == "conv2d"]
    on_cpu, on_tpu = sorted(conv, key=lambda m: m.device)
    assert on_cpu.device == "cpu" and on_cpu.status == "ok"  # TPU runtime, code on the CPU
    assert on_tpu.device == "tpu" and on_tpu.value == 1.22 and on_tpu.status == "invalid"
    assert flops({**on_tpu.params, "shards": 1}) == pytest.approx(80.53e9, rel=1e-3)
    implied = flops(on_tpu.params) / (on_tpu.value / 1e3)
    spec = find_accelerator("TPU v2")
    assert spec is not None and spec.bf16_tensor_tflops is not None
    board_peak = spec.bf16_tensor_tflops.value * 4e12  # a v2-8 board has four chips
    assert implied > 2 * board_peak


def test_the_implied_throughput_is_derived_beside_its_record_and_never_plotted() -> None:
    from benchlib.site.data import site_data

    data = site_data()
    frame = data.frame
    implied = frame[(frame["metric"] == "implied throughput") & (frame["run_id"] == "tpu2018-colab-tpu-v2")]
    on_tpu = implied[implied["device"] == "tpu"]
    assert len(on_tpu) == 1 and on_tpu["value"].iloc[0] == pytest.approx(528, rel=1e-2)
    assert on_tpu["status"].iloc[0] == "invalid"  # derived from an invalid time, and marked so
    record = frame.loc[on_tpu["record"].iloc[0]]
    assert record["metric"] == "time" and record["value"] == 1.22
    assert "implied throughput" not in set(data.charts["conv2d"]["metric"])


def test_reported_tables_show_value_setting_source_and_context() -> None:
    html = site.reported_table("fastai_transfer", runs="kagglevscolab2019-", today=TODAY)
    assert "1,194 s" in html and "batch_size=256" in html and ">error</span>" in html
    assert "as of 2019-03, may be out of date" in html and "Original setting of these figures" in html
    conv = site.reported_table("conv2d", runs="tpu2018-", today=TODAY)
    assert "Every row: batch=128, channels=3, filters=256, kernel=5, padding=SAME, side=256, stride=2." in conv
    assert ">invalid</span>" in conv and "<th>Implied throughput (TFLOP/s)</th>" in conv and ">528</td>" in conv
    with pytest.raises(ValueError, match="no reported figures"):
        site.reported_table("conv2d", runs="aibench-", today=TODAY)


def test_memory_units_spell_out_gib_and_gb() -> None:
    html = site.memory_units("kagglevscolab2019-colab-k80")
    assert re.search(r"11\.17 GiB</strong> = 11,438 MiB = <strong>11\.99 GB", html)


def test_reported_tables_escape_the_source_and_link_only_http(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    hostile = "<script>window.__xss=1</script>"
    record = MeasurementRecord(
        workload="conv2d",
        framework="tensorflow",
        device="cpu",
        device_name=f"CPU {hostile}",
        dtype="fp32",
        params={"batch": 2, "side": 8, "channels": 3, "filters": 4, "kernel": 3, "stride": 1, "note": hostile},
        metric=Metric(name="time", unit="ms", higher_is_better=False),
        value=5.0,
        message=f"said {hostile}",
    )
    other = record.model_copy(update={"params": {**record.params, "batch": 4}, "value": 9.0})
    results = ResultsFile(
        run_id="hostile-1",
        created="2026-01-01T00:00:00Z",
        benchlib_version="0.1.0",
        methodology_version="reported",
        machine=Machine(id="reported-hostile", label=f"Old box {hostile} (reported)"),
        provenance=Provenance(
            kind="reported", source_url="javascript:alert(1)", as_of=date(2020, 2, 1), context=f"context {hostile}"
        ),
        measurements=[record, other],
    )
    write_results(results, tmp_path / "reported" / "hostile-1.json")
    monkeypatch.setenv(REPORTED_ENV, str(tmp_path / "reported"))
    monkeypatch.setenv(RESULTS_ENV, str(tmp_path / "results"))
    html = site.reported_table("conv2d", runs="hostile-", today=TODAY)
    # Machine, device and note in both rows, the shared parameter under the table, the context.
    assert "<script" not in html and html.count("&lt;script&gt;window.__xss=1&lt;/script&gt;") == 8
    assert 'href="javascript:' not in html and "javascript:" not in html  # not a link, and not shown as one
    assert "Implied throughput" in html  # the workload's derived figure, for any reported record of it


def test_the_sixteen_bit_table_gives_each_gpus_sourced_peaks_and_their_ratio() -> None:
    import re

    from benchlib.catalog.gpus import find_gpu
    from benchlib.site.platform_pages import sixteen_bit_ceiling

    html = without_tooltips(sixteen_bit_ceiling(["T4", "H100 SXM"]))
    for name in ("T4", "H100 SXM"):
        spec = find_gpu(name)
        row = re.search(rf"<tr><td>{name}</td>(.*?)</tr>", html).group(1)
        assert str(spec.fp32_tflops.source) in row and str(spec.fp16_tensor_tflops.source) in row
        assert f"{spec.fp16_tensor_tflops.value / spec.fp32_tflops.value:.0f}×" in row
    assert "Reported" in html
