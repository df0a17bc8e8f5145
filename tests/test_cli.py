import io
import json
import math

import pytest
from site_samples import MS, measurement, results_file
from typer.testing import CliRunner

from benchlib.cli import app
from benchlib.results.schema import Machine
from benchlib.results.store import read_results

runner = CliRunner()


def test_help_explains_every_command():
    result = runner.invoke(app, ["--help"])
    assert result.exit_code == 0
    for command in ("probe", "list", "run", "show", "validate", "import"):
        assert command in result.output


def test_probe_json_is_a_machine_record():
    result = runner.invoke(app, ["probe", "--json"])
    assert result.exit_code == 0, result.output
    machine = Machine.model_validate_json(result.stdout)
    assert machine.host is not None and machine.software is not None


def test_list_shows_core_workloads():
    result = runner.invoke(app, ["list"])
    assert result.exit_code == 0
    for name in ("matmul", "conv2d", "bandwidth"):
        assert name in result.output


def test_unknown_workload_is_a_usage_error():
    result = runner.invoke(app, ["run", "--only", "nope"])
    assert result.exit_code == 2
    assert "unknown workload 'nope'" in result.output
    assert "Traceback" not in result.output


def test_a_declared_workload_that_run_doesnt_measure_is_a_usage_error():
    result = runner.invoke(app, ["run", "--only", "max_batch"])
    assert result.exit_code == 2, result.output
    assert "'max_batch' is not something `benchlib run` measures" in result.output
    assert "Traceback" not in result.output
    assert "max_batch" not in runner.invoke(app, ["list"]).output


def test_a_workload_module_that_cant_be_imported_is_a_usage_error(monkeypatch):
    monkeypatch.setenv("BENCHLIB_WORKLOAD_MODULES", "no_such_workload_module")
    result = runner.invoke(app, ["run", "--only", "matmul"])
    assert result.exit_code == 2, result.output
    assert "BENCHLIB_WORKLOAD_MODULES names 'no_such_workload_module', which can't be imported" in result.output
    assert "PYTHONPATH" in result.output and "Traceback" not in result.output


def test_unknown_suite_and_device_are_usage_errors():
    assert runner.invoke(app, ["run", "--suite", "huge"]).exit_code == 2
    result = runner.invoke(app, ["run", "--device", "tpu"])
    assert result.exit_code == 2 and "unknown device 'tpu'" in result.output


def test_cuda_on_a_machine_without_it_is_a_usage_error(tmp_path, monkeypatch):
    import torch

    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    result = runner.invoke(app, ["run", "--device", "cuda", "--out", str(tmp_path)])
    assert result.exit_code == 2
    assert "no CUDA device" in result.output
    assert not list(tmp_path.rglob("*.json"))


@pytest.mark.slow
def test_run_only_writes_a_valid_file_then_show_and_validate(tmp_path):
    result = runner.invoke(app, ["run", "--only", "bandwidth", "--out", str(tmp_path)])
    assert result.exit_code == 0, result.output
    (path,) = tmp_path.rglob("*.json")
    saved = read_results(path)
    assert saved.complete and [m.workload for m in saved.measurements] == ["bandwidth"]
    assert saved.plan.isolated and saved.plan.workloads == ["bandwidth"] and saved.plan.wall_s["bandwidth"] > 0
    assert "process isolation:" in result.output
    shown = runner.invoke(app, ["show", str(path)])
    assert shown.exit_code == 0 and "measured by benchlib" in shown.output
    validated = runner.invoke(app, ["validate", str(tmp_path)])
    assert validated.exit_code == 0 and "1 valid, 0 invalid" in validated.output


def test_validate_names_bad_files_and_fails(tmp_path, monkeypatch):
    (tmp_path / "broken.json").write_text('{"run_id": 3}')
    monkeypatch.chdir(tmp_path)  # a short path, which an 80-column terminal doesn't break
    result = runner.invoke(app, ["validate", "."])
    assert result.exit_code == 1
    assert "broken.json" in result.output
    assert "field 'created': " in result.output and "required" in result.output.lower()


def test_validate_with_nothing_to_check_is_a_usage_error(tmp_path):
    result = runner.invoke(app, ["validate", str(tmp_path)])
    assert result.exit_code == 2


def test_schema_prints_json_schema():
    result = runner.invoke(app, ["schema"])
    assert json.loads(result.stdout)["title"] == "ResultsFile"


def test_run_without_isolation_in_process(tmp_path):
    result = runner.invoke(app, ["run", "--only", "bandwidth", "--no-isolate", "--out", str(tmp_path)])
    assert result.exit_code == 0, result.output
    (path,) = tmp_path.rglob("*.json")
    assert read_results(path).plan.isolated is False
    assert "process isolation" not in result.output


def test_resume_of_a_missing_path_is_a_usage_error(tmp_path):
    result = runner.invoke(app, ["run", "--resume", str(tmp_path / "nope")])
    assert result.exit_code == 2
    assert "no such results file or folder" in result.output and "Traceback" not in result.output


def test_resume_of_an_invalid_file_names_it(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text("{")
    result = runner.invoke(app, ["run", "--resume", str(bad)])
    assert result.exit_code == 2 and "bad.json" in result.output and "not valid JSON" in result.output


def test_negative_budget_is_a_usage_error():
    assert runner.invoke(app, ["run", "--budget", "-5"]).exit_code == 2


def test_validate_lists_implausible_values_without_failing(tmp_path):
    from datetime import datetime, timezone

    from benchlib.results.schema import Software
    from benchlib.results.store import write_results

    machine = Machine(id="m", label="m", software=Software())
    created = datetime(2026, 11, 21, tzinfo=timezone.utc)
    results = results_file(machine, [measurement("w", MS, -2.0, device="cpu")], run_id="r1", created=created)
    write_results(results, tmp_path / "r1.json")
    result = runner.invoke(app, ["validate", str(tmp_path)])
    assert result.exit_code == 0, result.output
    assert "implausible" in result.output and "measurements.0.value: -2 ms is not a possible time" in result.output


# Narrow terminals: what `list` and the run tables print at 80 columns and in a narrower notebook cell.


def rendered(renderable, width: int) -> list[str]:
    from rich.console import Console

    out = Console(width=width, file=io.StringIO(), color_system=None)
    out.print(renderable)
    return out.file.getvalue().splitlines()


def indented_under(line_start: str, lines: list[str]) -> list[str]:
    """The lines indented by 4 that follow the first line starting with ``line_start``."""
    start = next(i for i, line in enumerate(lines) if line.startswith(line_start))
    block = []
    for line in lines[start + 1 :]:
        if not line.startswith(" "):
            break
        if len(line) - len(line.lstrip()) == 4:  # deeper: that line's own continuation
            block.append(line)
    return block


def fits(text: str, block: list[str], width: int) -> bool:
    """``block`` holds ``text`` (and no more), wrapped at about the width, not a word or two a line."""
    return " ".join(block).split() == text.split() and len(block) <= math.ceil(len(text) / (width - 4 - 12))


@pytest.mark.parametrize("width", [80, 60])
def test_list_reads_well_in_a_narrow_terminal(monkeypatch, width):
    from rich.console import Console

    from benchlib.cli import list_workloads
    from benchlib.workloads import all_workloads

    out = Console(width=width, file=io.StringIO(), color_system=None)
    monkeypatch.setattr(list_workloads, "console", out)
    assert runner.invoke(app, ["list"]).exit_code == 0
    lines = out.file.getvalue().splitlines()
    assert all(len(line) <= width and line == line.rstrip() for line in lines)
    for w in all_workloads().values():
        if w.run is not None:  # `list` shows what `benchlib run` can run
            assert fits(w.description, indented_under(f"{w.name}  {w.framework}", lines), width), w.name


@pytest.mark.parametrize("width", [80, 60])
def test_run_table_reads_well_in_a_narrow_terminal(width):
    from benchlib.cli.output import records_table
    from benchlib.results.schema import Stats

    message = (
        "amp: fp16 mixed precision is not available on AMD EPYC: autocast here runs only bf16 "
        "(fp16 needs CUDA or MPS; bf16 needs a CPU or CUDA compute capability 8.0+)"
    )
    params = {"scale": 0.125, "batch": 16, "side": 32, "channels": 3, "filters": 256, "kernel": 5, "stride": 2}
    stats = Stats(median=0.035, iqr=0.008, mean=0.035, min=0.03, max=0.05, n=20, noisy=True)
    epyc = {"device": "cpu", "device_name": "AMD EPYC"}
    records = [
        measurement("conv2d", MS, 34.97, **epyc, dtype="fp32", stats=stats, params=params),
        measurement("training_throughput", MS, None, **epyc, dtype="fp16", status="skipped", message=message),
    ]
    lines = rendered(records_table(records, "local · AMD EPYC (CPU only): quick suite"), width)
    assert all(len(line) <= width and line == line.rstrip() for line in lines)
    assert lines[0] == "local · AMD EPYC (CPU only): quick suite · device: AMD EPYC"
    header, conv, *rest = lines[1:]
    assert header.split() == ["workload", "dtype", "value", "noise", "status"]
    assert conv.split() == ["conv2d", "fp32", "34.97", "ms", "±23%", "noisy", "ok"]
    skipped = next(line for line in rest if line.startswith("training_throughput "))
    assert skipped.index("skipped") == conv.index("ok") == header.index("status"), "the columns line up"
    assert fits(message, indented_under("training_throughput ", lines), width)
    assert fits(" ".join(f"{k}={v}" for k, v in params.items()), indented_under("conv2d ", lines), width)


def test_ctrl_c_in_any_command_exits_130_without_a_traceback(monkeypatch, capsys):
    import benchlib.cli
    from benchlib.cli import commands

    def interrupted() -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(commands, "app_for", lambda arguments: interrupted)
    with pytest.raises(SystemExit) as info:
        benchlib.cli.main()
    assert info.value.code == 130 and capsys.readouterr().err == "interrupted\n"


def test_ctrl_c_inside_a_command_says_so_in_one_line(monkeypatch):
    def interrupted(*args, **kwargs) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr("benchlib.results.store.read_results", interrupted)  # `show` reads the file with it
    result = runner.invoke(app, ["show", "results"])
    assert result.exit_code == 130 and result.output == "interrupted\n"


def test_a_command_runs_in_an_app_of_its_own_and_anything_else_gets_every_command():
    from benchlib.cli import commands

    def names(app) -> list[str]:
        return [c.name for c in app.registered_commands]

    assert names(commands.app_for(["predict", "--model", "x"])) == ["predict"]
    for arguments in ([], ["--help"], ["predct"]):
        assert names(commands.app_for(arguments)) == list(commands.COMMANDS)
    # Alone, a command still takes its name, as `benchlib --help` shows it.
    result = runner.invoke(commands.app_for(["schema"]), ["schema"])
    assert result.exit_code == 0 and '"title": "ResultsFile"' in result.output
