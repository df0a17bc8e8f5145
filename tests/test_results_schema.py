import json
from datetime import date, datetime, timezone

import pytest

from benchlib.results.contribution import validate_paths
from benchlib.results.load import COLUMNS, load_results, params_of
from benchlib.results.schema import (
    Machine,
    MeasurementRecord,
    Metric,
    Provenance,
    ResultsFile,
    Software,
    Stats,
)
from benchlib.results.store import ResultsError, json_schema, read_results, write_results

METRIC = Metric(name="throughput", unit="TFLOPS", higher_is_better=True)


def make_results(**overrides) -> ResultsFile:
    fields = dict(
        run_id="20261121T120000Z-abc123",
        created=datetime(2026, 11, 21, 12, 0, tzinfo=timezone.utc),
        benchlib_version="0.1.0",
        methodology_version="1",
        suite="quick",
        complete=True,
        machine=Machine(
            id="local-test-1234", label="local · Test CPU", software=Software(python="3.11.7", torch="2.5.0")
        ),
        measurements=[
            MeasurementRecord(
                workload="matmul",
                framework="torch",
                device="cpu",
                device_name="Test CPU",
                dtype="fp32",
                params={"n": 512},
                metric=METRIC,
                value=0.5,
                stats=Stats(median=1e-3, iqr=1e-5, mean=1e-3, min=9e-4, max=1.1e-3, n=5, noisy=False),
            ),
            MeasurementRecord(
                workload="conv2d",
                framework="torch",
                device="cpu",
                metric=METRIC,
                status="oom",
                message="conv2d: out of memory",
            ),
        ],
    )
    fields.update(overrides)
    return ResultsFile(**fields)


def test_round_trip_through_file(tmp_path):
    original = make_results()
    path = write_results(original, tmp_path / "m" / "run.json")
    assert read_results(path) == original
    assert not list(path.parent.glob(".*.tmp"))  # the temp file was renamed, not left behind


def test_load_results_is_tidy(tmp_path):
    write_results(make_results(), tmp_path / "a" / "1.json")
    write_results(make_results(run_id="other"), tmp_path / "b" / "2.json")
    df = load_results(tmp_path)
    assert list(df.columns) == [*COLUMNS, "param_n"]  # params become columns, once
    assert len(df) == 4
    row = df[(df.run_id == "other") & (df.workload == "matmul")].iloc[0]
    assert row.machine_label == "local · Test CPU"
    assert row.torch_version == "2.5.0"
    assert row.value == 0.5 and row.median_s == 1e-3
    assert row.param_n == 512 and params_of(row) == {"n": 512}
    assert set(df.status) == {"ok", "oom"}
    assert str(df.created.dt.tz) == "UTC"


def test_reported_results_need_source_and_date():
    with pytest.raises(ValueError, match="source_url and as_of"):
        Provenance(kind="reported", source_url="https://example.org/article")
    p = Provenance(kind="reported", source_url="https://example.org/a", as_of=date(2019, 3, 1), context="K80, TF 1.13")
    reported = make_results(provenance=p, machine=Machine(id="colab-k80-2019", label="Colab K80 (2019, reported)"))
    assert reported.provenance.kind == "reported"


def test_measured_results_need_software():
    with pytest.raises(ValueError, match="machine.software"):
        make_results(machine=Machine(id="x", label="x"))


def test_ok_needs_a_value():
    with pytest.raises(ValueError, match="needs a value"):
        MeasurementRecord(workload="w", framework="torch", device="cpu", metric=METRIC, status="ok")


@pytest.mark.parametrize(
    "content, expected",
    [
        ("{not json", "not valid JSON"),
        ("[1, 2]", "expected a JSON object"),
        (None, "field 'measurements.0.value'"),
        ("", "not valid JSON"),
    ],
)
def test_malformed_files_name_file_and_field(tmp_path, content, expected):
    path = tmp_path / "bad.json"
    if content is None:
        data = json.loads(make_results().model_dump_json())
        data["measurements"][0]["value"] = "fast"
        content = json.dumps(data)
    path.write_text(content)
    with pytest.raises(ResultsError) as info:
        read_results(path)
    assert str(path) in str(info.value)
    assert expected in str(info.value)


def test_unknown_field_is_named(tmp_path):
    data = json.loads(make_results().model_dump_json())
    data["machine"]["gpu"] = "T4"
    path = tmp_path / "extra.json"
    path.write_text(json.dumps(data))
    with pytest.raises(ResultsError, match=r"field 'machine.gpu': Extra inputs are not permitted"):
        read_results(path)


def test_validate_paths_reports_every_bad_file(tmp_path):
    write_results(make_results(), tmp_path / "good.json")
    (tmp_path / "bad1.json").write_text("{}")
    (tmp_path / "bad2.json").write_text("nope")
    good, bad = validate_paths([tmp_path])
    assert [p.name for p in good] == ["good.json"]
    assert sorted(e.path.split("/")[-1] for e in bad) == ["bad1.json", "bad2.json"]
    assert any(p.startswith("field 'run_id': ") and "required" in p.lower() for e in bad for p in e.problems)


def test_load_results_raises_on_a_bad_file(tmp_path):
    write_results(make_results(), tmp_path / "good.json")
    (tmp_path / "broken.json").write_text("{")
    with pytest.raises(ResultsError, match="broken.json"):
        load_results(tmp_path)


def test_published_json_schema_describes_the_format():
    schema = json_schema()
    assert schema["title"] == "ResultsFile"
    assert {"run_id", "created", "machine"} <= set(schema["required"])
    assert "measurements" in schema["properties"]
    assert "MeasurementRecord" in schema["$defs"]


def test_published_schema_file_is_current():
    """docs/reference/results-schema.json is what contributors read; regenerate with `benchlib schema`."""
    from pathlib import Path

    published = json.loads((Path(__file__).parents[1] / "docs" / "reference" / "results-schema.json").read_text())
    assert published == json_schema(), "run: benchlib schema > docs/reference/results-schema.json"


def test_package_level_load_results(tmp_path):
    import benchlib

    write_results(make_results(), tmp_path / "r.json")
    assert len(benchlib.load_results(tmp_path / "r.json")) == 2
