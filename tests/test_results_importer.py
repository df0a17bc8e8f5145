"""`benchlib import`: contributed files are validated, deduplicated and filed atomically."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone
from pathlib import Path

from site_samples import TFLOPS, measurement, results
from typer.testing import CliRunner

from benchlib.cli import app
from benchlib.results.importer import import_files
from benchlib.results.schema import Machine, Software
from benchlib.results.store import read_results, write_results

MACHINE = Machine(
    id="colab-tesla-t4-1234abcd", label="Colab · Tesla T4", software=Software(python="3.11", torch="2.5.0")
)
WHEN = datetime(2026, 11, 21, 12, 0, tzinfo=timezone.utc)


def contributed(tmp_path: Path, name: str, **overrides) -> Path:
    matmul = measurement("matmul", TFLOPS, 20.0, device_name="Tesla T4", dtype="fp16", peak=65.0)
    fields = dict(run_id="20261121T120000Z-aaaaaa", created=WHEN) | overrides
    machine, measurements = fields.pop("machine", MACHINE), fields.pop("measurements", [matmul])
    return write_results(results(machine, measurements, **fields), tmp_path / "inbox" / name)


def raw(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / "inbox" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_import_files_a_valid_run_by_machine_and_run_id(tmp_path):
    source = contributed(tmp_path, "mine.json")
    (outcome,) = import_files([source], tmp_path / "results")
    assert outcome.outcome == "imported" and outcome.reasons == []
    dest = tmp_path / "results" / MACHINE.id / "20261121T120000Z-aaaaaa.json"
    assert outcome.destination == dest
    assert read_results(dest) == read_results(source)
    assert not list(dest.parent.glob(".*.tmp"))


def test_duplicates_by_run_id_and_by_machine_and_time(tmp_path):
    results = tmp_path / "results"
    first = contributed(tmp_path, "a.json")
    same_id = contributed(tmp_path, "b.json", created=WHEN + timedelta(hours=1))
    same_time = contributed(tmp_path, "c.json", run_id="20261121T120000Z-cccccc")
    other = contributed(tmp_path, "d.json", run_id="20261121T130000Z-dddddd", created=WHEN + timedelta(hours=1))
    outcomes = import_files([first, same_id, same_time, other], results)
    assert [o.outcome for o in outcomes] == ["imported", "duplicate", "duplicate", "imported"]
    assert "same run id '20261121T120000Z-aaaaaa'" in outcomes[1].reasons[0]
    assert f"same machine '{MACHINE.id}' and time 2026-11-21T12:00:00+00:00" in outcomes[2].reasons[0]
    # Importing again finds them in the results folder this time.
    again = import_files([first, other], results)
    assert [o.outcome for o in again] == ["duplicate", "duplicate"]
    assert len(list(results.rglob("*.json"))) == 2


def test_invalid_files_are_refused_naming_file_and_field(tmp_path):
    data = json.loads(contributed(tmp_path, "ok.json").read_text())
    data["measurements"][0]["value"] = "fast"
    bad_value = raw(tmp_path, "bad-value.json", json.dumps(data))
    not_json = raw(tmp_path, "not-json.json", "{")
    evil_id = contributed(tmp_path, "evil.json", run_id="../../etc/passwd")
    evil_machine = contributed(tmp_path, "evil2.json", run_id="x1", machine=MACHINE.model_copy(update={"id": ".."}))
    missing = tmp_path / "inbox" / "missing.json"
    outcomes = import_files([bad_value, not_json, evil_id, evil_machine, missing], tmp_path / "results")
    assert [o.outcome for o in outcomes] == ["invalid"] * 5
    (reason,) = outcomes[0].reasons
    assert reason.startswith("field 'measurements.0.value': ") and "number" in reason
    assert "not valid JSON" in outcomes[1].reasons[0]
    assert "field 'run_id': '../../etc/passwd' can't be used as a file or folder name" in outcomes[2].reasons[0]
    assert "field 'machine.id': '..' can't be used" in outcomes[3].reasons[0]
    assert "cannot read" in outcomes[4].reasons[0]
    assert not (tmp_path / "results").exists() or not list((tmp_path / "results").rglob("*"))
    assert not (tmp_path / "etc").exists()


def test_implausible_values_are_imported_marked_invalid(tmp_path):
    source = contributed(
        tmp_path,
        "fast.json",
        measurements=[measurement("matmul", TFLOPS, 500.0, device_name="Tesla T4", dtype="fp16")],
    )
    (outcome,) = import_files([source], tmp_path / "results")
    assert outcome.outcome == "imported"
    assert outcome.reasons[0].startswith("marked invalid: measurements.0.value: 500 TFLOPS is")
    filed = read_results(outcome.destination, mark_implausible=False)
    assert filed.measurements[0].status == "invalid" and filed.measurements[0].value == 500.0


def test_cli_import_reports_a_table_and_exits_1_when_any_is_refused(tmp_path, monkeypatch):
    good = contributed(tmp_path, "good.json").relative_to(tmp_path)
    bad = raw(tmp_path, "[red]bad[/].json", '{"run_id": 3}').relative_to(tmp_path)
    monkeypatch.chdir(tmp_path)  # short paths, which the table's 80 columns don't fold
    result = CliRunner().invoke(app, ["import", str(good), str(bad), str(good), "--into", "results"])
    assert result.exit_code == 1
    out = result.output
    assert "imported" in out and "duplicate" in out and "invalid" in out
    assert "[red]bad[/].json" in out, "a file name is printed as text, not markup"
    assert "field 'created': " in out and "required" in out.lower()
    assert "1 imported, 1 duplicate, 1 invalid" in out


def test_cli_import_with_only_good_files_exits_0(tmp_path):
    result = CliRunner().invoke(app, ["import", str(contributed(tmp_path, "good.json")), "--into", str(tmp_path / "r")])
    assert result.exit_code == 0, result.output
    assert "1 imported, 0 duplicate, 0 invalid" in result.output


def test_cli_import_of_an_empty_folder_is_a_usage_error(tmp_path):
    (tmp_path / "empty").mkdir()
    result = CliRunner().invoke(app, ["import", str(tmp_path / "empty")])
    assert result.exit_code == 2 and "no results files found" in result.output


def test_hostile_strings_print_as_text_in_show_and_validate(tmp_path):
    hostile = "[/] [bold red]<script>alert(1)</script>"
    source = contributed(
        tmp_path,
        "hostile.json",
        machine=MACHINE.model_copy(update={"label": hostile}),
        measurements=[
            measurement("matmul", TFLOPS, None, device_name=hostile, dtype="fp16", status="error", message=hostile)
        ],
    )
    shown = CliRunner().invoke(app, ["show", str(source)])
    assert shown.exit_code == 0, shown.output
    assert "[/] [bold red]<script>" in shown.output
    data = json.loads(source.read_text())
    data["machine"]["[/]"] = 1
    weird = raw(tmp_path, "weird.json", json.dumps(data))
    validated = CliRunner().invoke(app, ["validate", str(weird)])
    assert validated.exit_code == 1 and "field 'machine.[/]': Extra inputs are not permitted" in validated.output
