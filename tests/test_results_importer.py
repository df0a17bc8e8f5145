"""`benchlib import`: contributed files are validated, deduplicated and filed atomically."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from click.testing import Result
from site_samples import TFLOPS, measurement, results
from test_results_contribution import machine, ready_file
from typer.testing import CliRunner

from benchlib.cli import app
from benchlib.results.importer import import_files
from benchlib.results.schema import Machine, Software
from benchlib.results.store import read_results, write_results

MACHINE = Machine(
    id="colab-tesla-t4-1234abcd", label="Colab · Tesla T4", software=Software(python="3.11", torch="2.5.0")
)
WHEN = datetime(2026, 11, 21, 12, 0, tzinfo=timezone.utc)
MACHINE_ID = machine().id  # ready_file's contributions


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
    assert outcome.destinations == [dest]
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
    filed = read_results(outcome.destinations[0], mark_implausible=False)
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


# --- every field of a contributed file is a stranger's input ------------------------------------------


def edited(path: Path, edit: Callable[[dict], object]) -> Path:
    """``path`` with its JSON changed by ``edit``, as a sender could change it by hand."""
    data = json.loads(path.read_text())
    edit(data)
    path.write_text(json.dumps(data))
    return path


def every_run(edit: Callable[[dict], object]) -> Callable[[dict], None]:
    return lambda data: [edit(run) for run in data["runs"]]


def written(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file()) if folder.exists() else []


def imported(args: list[str]) -> Result:
    """`benchlib import ARGS` at 80 columns; it must end as a command does, never in an exception."""
    result = CliRunner().invoke(app, ["import", *args], env={"COLUMNS": "80"})
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    assert "Traceback" not in result.output
    return result


def validated(args: list[str]) -> Result:
    result = CliRunner().invoke(app, ["validate", *args], env={"COLUMNS": "80"})
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    assert "Traceback" not in result.output
    return result


def lines_naming(output: str, *words: str) -> list[str]:
    return [line for line in output.splitlines() if all(w in line for w in words)]


@pytest.mark.parametrize("name", ["reference", "reported", "contributed", "Reference"])
def test_a_machine_id_naming_a_reserved_folder_is_refused_naming_the_field(tmp_path, name):
    inbox, results = tmp_path / "inbox", tmp_path / "results"
    path = edited(ready_file(inbox), every_run(lambda run: run["machine"].update(id=name)))
    plain = contributed(tmp_path, "plain.json", machine=MACHINE.model_copy(update={"id": name}))
    outcomes = import_files([path, plain], results)
    assert written(results) == []
    [contribution, alone] = outcomes
    assert contribution.outcome == alone.outcome == "invalid"
    assert any(r.startswith(f"field 'runs.0.machine.id': '{name}'") and "reserved" in r for r in contribution.reasons)
    assert any(r.startswith(f"field 'machine.id': '{name}'") and "reserved" in r for r in alone.reasons)
    result = validated([str(path)])
    assert result.exit_code == 1 and "field 'runs.0.machine.id'" in result.output


def test_a_run_id_shaped_like_a_contribution_file_name_is_refused_naming_the_field(tmp_path):
    results = tmp_path / "results"
    path = edited(ready_file(tmp_path / "inbox"), lambda data: data["runs"][0].update(run_id="contribution-x-1"))
    plain = contributed(tmp_path, "plain.json", run_id="Contribution-y")
    for _ in range(2):  # again: the same reason, not "is not a valid results file"
        outcomes = import_files([path, plain], results)
        assert written(results) == []
        [contribution, alone] = outcomes
        assert contribution.outcome == alone.outcome == "invalid"
        assert contribution.reasons[0].startswith("field 'runs.0.run_id': 'contribution-x-1'")
        assert "reserved" in contribution.reasons[0]
        assert alone.reasons[0].startswith("field 'run_id': 'Contribution-y'") and "reserved" in alone.reasons[0]


def _passed(data: dict) -> None:
    data["check"] = {"passed": True, "problems": [], "sent_anyway": False}


@pytest.mark.parametrize(
    ("kwargs", "edit", "reason"),
    [
        ({"disturbed": True}, _passed, "disturbed by other work"),
        # The run's own flag cleared too: its conditions still say why it was disturbed.
        ({"disturbed": True}, lambda d: [_passed(d), every_run(lambda r: r.update(disturbed=False))(d)], "disturbed"),
        ({}, every_run(lambda r: r.update(complete=False)), "did not finish"),
        ({}, every_run(lambda r: r["plan"].update(wall_s={})), "did not finish"),
        ({}, every_run(lambda r: r["measurements"][0].update(value=500.0)), "implausible measurements.0.value"),
    ],
)
def test_import_judges_a_contribution_by_its_runs_not_by_its_own_check(tmp_path, kwargs, edit, reason):
    path = edited(ready_file(tmp_path / "inbox", **kwargs), edit)
    for anyway in (False, True):  # sending it anyway doesn't make a false "passed" true
        edited(path, lambda data, anyway=anyway: data["check"].update(sent_anyway=anyway))
        outcomes = import_files([path], tmp_path / "results")
        assert written(tmp_path / "results") == []
        [outcome] = outcomes
        assert outcome.outcome == "invalid", outcome
        assert any("its check says it passed" in r and reason in r for r in outcome.reasons), outcome.reasons


def test_a_contribution_whose_check_fails_runs_that_are_fine_is_refused_as_edited(tmp_path):
    path = ready_file(tmp_path / "inbox")
    check = {"passed": False, "problems": ["run x was disturbed"], "sent_anyway": True}
    outcomes = import_files([edited(path, lambda data: data.update(check=check))], tmp_path / "results")
    assert written(tmp_path / "results") == []
    [outcome] = outcomes
    assert outcome.outcome == "invalid" and any("its check says it failed" in r for r in outcome.reasons)


def test_a_quick_suite_run_is_a_tiny_contribution_whatever_the_file_says(tmp_path):
    path = edited(ready_file(tmp_path / "inbox"), every_run(lambda r: r.update(suite="quick")))
    outcomes = import_files([path], tmp_path / "results")
    assert written(tmp_path / "results") == []
    [outcome] = outcomes
    assert outcome.outcome == "invalid" and any("--tiny" in r for r in outcome.reasons), outcome.reasons


def test_text_that_is_not_unicode_is_refused_by_validate_and_import_and_the_other_file_imported(tmp_path):
    inbox, results = tmp_path / "inbox", tmp_path / "results"
    good = ready_file(inbox)
    bad = edited(ready_file(tmp_path / "other"), every_run(lambda r: r["machine"].update(label="\ud800")))
    bad = bad.rename(inbox / "contribution-a.json")  # before the good one
    result = validated([str(inbox)])
    assert result.exit_code == 1
    assert lines_naming(result.output, "contribution-a.json", "field 'runs.0.machine.label'")
    result = imported([str(inbox), "--into", str(results)])
    assert result.exit_code == 1
    assert lines_naming(result.output, "contribution-a.json", "field 'runs.0.machine.label'")
    assert [Path(p).parent.name for p in written(results)] == [MACHINE_ID, MACHINE_ID]
    assert good.exists()


@pytest.mark.parametrize("levels", [500, 100_000])
def test_a_field_nested_too_deeply_is_refused_before_it_is_parsed(tmp_path, levels):
    path = ready_file(tmp_path / "inbox")
    text = path.read_text().replace('"params": {}', '"params": {"x": ' + "[" * levels + "]" * levels + "}", 1)
    path.write_text(text)
    [outcome] = import_files([path], tmp_path / "results")
    assert outcome.outcome == "invalid" and "nested deeper than" in outcome.reasons[0], outcome.reasons
    assert written(tmp_path / "results") == []
    result = imported([str(path), "--into", str(tmp_path / "results")])
    assert result.exit_code == 1 and lines_naming(result.output, path.name, "nested deeper than")


def test_only_regular_files_are_read_never_through_a_symlink(tmp_path):
    inbox, results = tmp_path / "inbox", tmp_path / "results"
    good = ready_file(tmp_path / "elsewhere")
    inbox.mkdir()
    (inbox / "contribution-link.json").symlink_to(good)
    (inbox / "contribution-zero.json").symlink_to("/dev/zero")
    os.mkfifo(inbox / "contribution-fifo.json")
    outcomes = import_files([inbox], results)
    assert [(o.source.name, o.outcome) for o in outcomes] == [
        ("contribution-fifo.json", "invalid"),
        ("contribution-link.json", "invalid"),
        ("contribution-zero.json", "invalid"),
    ]
    assert "not a regular file" in outcomes[0].reasons[0]
    assert all("symbolic link" in o.reasons[0] for o in outcomes[1:])
    assert written(results) == []
    result = validated([str(inbox)])
    assert result.exit_code == 1 and "0 valid, 3 invalid" in result.output


def test_the_size_limit_is_kept_while_reading_not_taken_from_stat(tmp_path, monkeypatch):
    from benchlib.results import store

    monkeypatch.setattr(store, "MAX_BYTES", 100)
    big = contributed(tmp_path, "big.json")
    status = Path("/proc/self/status")  # stat says 0 bytes; it holds more than 100
    outcomes = import_files([big, status], tmp_path / "results")
    assert [o.outcome for o in outcomes] == ["invalid", "invalid"]
    assert all("larger than a results file can be" in o.reasons[0] for o in outcomes), outcomes


def test_import_into_a_file_is_one_line_not_a_traceback(tmp_path):
    into = tmp_path / "results.txt"
    into.write_text("mine")
    result = imported([str(contributed(tmp_path, "good.json")), "--into", str(into)])
    assert result.exit_code == 2
    assert lines_naming(result.output, "--into", "not a folder")
    assert into.read_text() == "mine"


def test_a_file_is_checked_whole_before_any_of_its_runs_is_written(tmp_path):
    results = tmp_path / "results"
    path = edited(ready_file(tmp_path / "inbox"), lambda data: data["runs"][1].update(run_id="../x"))
    outcomes = import_files([path], results)
    assert written(results) == []
    [outcome] = outcomes
    assert outcome.outcome == "invalid" and "field 'runs.1.run_id'" in outcome.reasons[0]
    # A run that can't be filed (an invalid file already where it goes) keeps the other one out too.
    fine = ready_file(tmp_path / "inbox2")
    blocker = results / MACHINE_ID / "20261120T090500Z-abc005.json"
    blocker.parent.mkdir(parents=True)
    blocker.write_text("{")
    outcomes = import_files([fine], results)
    assert written(results) == [f"{MACHINE_ID}/20261120T090500Z-abc005.json"]
    [outcome] = outcomes
    assert outcome.outcome == "invalid" and "exists and is not a valid results file" in outcome.reasons[0]


def test_the_output_gives_one_line_per_file(tmp_path):
    path = ready_file(tmp_path / "inbox")
    result = imported([str(path), "--into", str(tmp_path / "results")])
    assert result.exit_code == 0, result.output
    assert len(lines_naming(result.output, path.name)) == 1
    assert "1 imported, 0 duplicate, 0 invalid" in result.output
    again = imported([str(path), "--into", str(tmp_path / "results")])
    assert len(lines_naming(again.output, path.name)) == 1 and "0 imported, 1 duplicate" in again.output


def test_import_help_shows_where_each_run_is_filed():
    result = CliRunner().invoke(app, ["import", "--help"], env={"COLUMNS": "80"})
    assert result.exit_code == 0
    assert "<machine id>/<run id>.json" in result.output
    assert all(len(line) <= 80 for line in result.output.splitlines())
