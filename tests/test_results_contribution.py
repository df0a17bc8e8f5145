"""`benchlib contribute` and contributions: only what the site shows, checked, and filed by `benchlib import`."""

from __future__ import annotations

import getpass
import json
import os
import re
import socket
import subprocess
import sys
from datetime import datetime, timedelta, timezone
from pathlib import Path
from urllib.parse import parse_qs, urlparse

import pytest
from site_samples import TFLOPS, measurement, results
from typer.testing import CliRunner

from benchlib.cli import app
from benchlib.cli import contribute as contribute_cli
from benchlib.measure import campaign as plan
from benchlib.results.contribution import (
    KEPT,
    file_name,
    package,
    read_contribution,
    validate_paths,
    write_contribution,
)
from benchlib.results.importer import import_files
from benchlib.results.schema import (
    Accelerators,
    Conditions,
    CPUInfo,
    Crash,
    GPUInfo,
    HostInfo,
    Machine,
    Metric,
    PlatformInfo,
    ResultsFile,
    RunPlan,
    Software,
)
from benchlib.results.store import ResultsError, iter_result_paths, read_results, write_results

ROOT = Path(__file__).resolve().parents[1]
HOST = socket.gethostname()
HOME = str(Path.home())


def machine(machine_id: str = "colab-tesla-t4-0a1b2c3d") -> Machine:
    return Machine(
        id=machine_id,
        label="Colab · Tesla T4",
        platform=PlatformInfo(name="colab", signal="env COLAB_RELEASE_TAG"),
        host=HostInfo(
            cpu=CPUInfo(model="Intel Xeon", logical_cores=2, flags=["avx2"]),
            memory_total_bytes=13 * 2**30,
            disk_path=f"{HOME}/runs",
            disk_free_bytes=10**10,
            kernel="6.1.85+",
        ),
        accelerators=Accelerators(
            nvidia=[GPUInfo(index=0, name="Tesla T4", uuid="GPU-5c1e-serial", memory_total_bytes=15 * 2**30)]
        ),
        software=Software(python="3.12.11", benchlib="0.1.0", torch="2.8.0"),
        probed_at=datetime(2026, 11, 20, 9, tzinfo=timezone.utc),
    )


def run(*, minutes: int = 0, disturbed: bool = False, complete: bool = True, m: Machine | None = None) -> ResultsFile:
    created = datetime(2026, 11, 20, 9, minutes, tzinfo=timezone.utc)
    conditions = Conditions(seconds=3.0, disturbed=["other processes took 40% of the CPU"] if disturbed else [])
    samples = Metric(name="throughput", unit="samples/s", higher_is_better=True)
    measurements = [
        measurement("matmul", TFLOPS, 20.0, device_name="Tesla T4", dtype="fp16"),
        measurement(
            "cnn",
            samples,
            None,
            status="error",
            message=f"FileNotFoundError: {HOME}/data/x.npz on {HOST}",
            crash=Crash(exit_code=1, stderr_tail=[f'File "{HOME}/venv/lib/x.py", line 3']),
        ),
    ]
    return results(
        m or machine(),
        measurements,
        run_id=f"{created:%Y%m%dT%H%M%SZ}-abc{minutes:03d}",
        created=created,
        suite="standard",
        complete=complete,
        disturbed=disturbed,
        plan=RunPlan(
            workloads=["matmul", "cnn"],
            size="standard",
            device="cuda",
            wall_s={"matmul": 2.0, "cnn": 3.0} if complete else {"matmul": 2.0},  # as the runner times them
            conditions={"matmul": conditions},
        ),
    )


def ready_file(folder: Path, **kwargs) -> Path:
    contribution = package([run(**kwargs), run(minutes=5, **kwargs)], tiny=False)
    return write_contribution(contribution, folder / file_name(contribution))


def test_a_contribution_keeps_only_what_the_site_shows_and_scrubs_paths_and_names(tmp_path):
    path = ready_file(tmp_path)
    text = path.read_text()
    for private in ("GPU-5c1e-serial", "COLAB_RELEASE_TAG", "6.1.85+", HOME, "disk_free_bytes", "stderr_tail"):
        assert private not in text
    assert not re.search(rf"(?<![\w-]){re.escape(HOST)}(?![\w-])", text)
    message = json.loads(text)["runs"][0]["measurements"][1]["message"]
    assert message == "FileNotFoundError: <path> on <name>"
    assert "Tesla T4" in text and '"exit_code": 1' in text  # what the site shows stays
    good, bad = validate_paths([path])
    assert good == [path] and not bad


def test_the_pages_field_table_says_what_is_kept_and_leaves_the_serial_out():
    from benchlib.site.contribute_page import field_rows

    kept = {r["field"]: r["kept"] for r in field_rows()}
    assert kept["machine.accelerators.nvidia[].name"] and kept["measurements[].crash.exit_code"]
    assert not kept["machine.accelerators.nvidia[].uuid"] and not kept["machine.platform.signal"]
    assert not kept["measurements[].crash.stderr_tail"]
    assert "machine.host.disk_path" not in kept  # never written to any results file
    assert "provenance.source_url" not in kept and "provenance.kind" in kept  # only reported files have a source
    assert set(KEPT) <= {f.split(".")[0].removesuffix("[]") for f in kept}


@pytest.mark.parametrize(
    ("edit", "field"),
    [
        (lambda r: r["machine"]["host"].update(disk_path="/home/ana/runs"), "runs.0.machine.host.disk_path"),
        (lambda r: r["machine"]["host"].update(hostname="ana-laptop"), "runs.0.machine.host.hostname"),
        (lambda r: r["machine"]["accelerators"]["nvidia"][0].update(uuid="GPU-1"), "runs.0.machine.accelerators"),
        (lambda r: r["measurements"][0].update(message="see /home/ana/x.log"), "runs.0.measurements.0.message"),
    ],
)
def test_import_refuses_a_contribution_with_a_private_field_and_names_it(tmp_path, edit, field):
    path = ready_file(tmp_path)
    data = json.loads(path.read_text())
    edit(data["runs"][0])
    path.write_text(json.dumps(data))
    [outcome] = import_files([path], tmp_path / "results")
    assert outcome.outcome == "invalid"
    assert any(field in reason for reason in outcome.reasons), outcome.reasons
    assert not (tmp_path / "results").exists()
    with pytest.raises(ResultsError, match=re.escape(field)):
        read_contribution(path)


def test_import_files_each_run_under_the_machines_folder_and_merges_a_known_machine(tmp_path):
    results = tmp_path / "results"
    earlier = run(minutes=30)
    write_results(earlier, results / earlier.machine.id / f"{earlier.run_id}.json")
    path = ready_file(tmp_path / "inbox")
    [outcome] = import_files([path], results)
    assert outcome.outcome == "imported" and len(outcome.destinations) == 2
    assert [p.name for p in results.iterdir()] == [earlier.machine.id]  # one folder: merged, not duplicated
    assert len(list((results / earlier.machine.id).glob("*.json"))) == 3
    [again] = import_files([tmp_path / "inbox"], results)
    assert again.outcome == "duplicate" and len(again.reasons) == 2
    filed = read_results(next(results.glob("*/*-abc000.json")))
    assert filed.machine.accelerators.nvidia[0].uuid is None


def test_a_run_that_failed_its_check_is_refused_until_sent_anyway(tmp_path):
    path = ready_file(tmp_path, disturbed=True)
    contribution = read_contribution(path)
    assert not contribution.check.passed
    assert any("disturbed" in p and "40% of the CPU" in p for p in contribution.check.problems)
    [refused] = import_files([path], tmp_path / "results")
    assert refused.outcome == "invalid" and any("--send-anyway" in r for r in refused.reasons)

    result = CliRunner().invoke(app, ["contribute", "--send-anyway", str(path)], env={"COLUMNS": "80"})
    assert result.exit_code == 0, result.output
    assert "Ready to send" in result.output and "marked" in result.output
    assert read_contribution(path).check.sent_anyway
    [outcome] = import_files([path], tmp_path / "results")
    assert outcome.outcome == "imported" and len(outcome.destinations) == 2


def test_an_unfinished_run_or_a_failed_step_fails_the_check():
    contribution = package([run(complete=False)], tiny=False, failed_steps=["max-batch unet fp16: boom"])
    assert not contribution.check.passed
    assert any("did not finish" in p for p in contribution.check.problems)
    assert any("max-batch unet fp16" in p for p in contribution.check.problems)


def test_a_tiny_contribution_is_neither_imported_nor_sent_anyway(tmp_path):
    contribution = package([run()], tiny=True)
    path = write_contribution(contribution, tmp_path / file_name(contribution))
    [outcome] = import_files([path], tmp_path / "results")
    assert outcome.outcome == "invalid" and "--tiny" in outcome.reasons[0]
    result = CliRunner().invoke(app, ["contribute", "--send-anyway", str(path)], env={"COLUMNS": "200"})
    assert result.exit_code == 2 and "--tiny" in result.output and "Traceback" not in result.output


def test_contributions_are_an_inbox_the_site_does_not_read_until_imported(tmp_path):
    ready_file(tmp_path / "contributed")
    ready_file(tmp_path)
    plain = run(minutes=40)
    write_results(plain, tmp_path / plain.machine.id / f"{plain.run_id}.json")
    assert [p.parent.name for p in iter_result_paths(tmp_path)] == [plain.machine.id]
    assert len(list(iter_result_paths(tmp_path, contributions=True))) == 3
    with pytest.raises(ResultsError, match="a contribution"):
        read_results(next((tmp_path / "contributed").glob("*.json")))


def test_the_sending_instructions_link_the_inbox_and_a_filled_in_issue(tmp_path):
    path = ready_file(tmp_path)
    result = CliRunner().invoke(app, ["contribute", "--send-anyway", str(path)], env={"COLUMNS": "80"})
    assert result.exit_code == 0
    assert f"{contribute_cli.REPOSITORY}/upload/main/results/contributed" in result.output
    issue = next(line.strip() for line in result.output.splitlines() if "/issues/new?" in line)
    query = parse_qs(urlparse(issue).query)
    assert query["title"] == ["Contribution: Colab · Tesla T4"]
    assert path.name in query["body"][0]
    # 80 columns, but for the file's path and the links, each on a line of its own to copy whole.
    assert all(len(line) <= 80 for line in result.output.splitlines() if len(line.split()) > 1)


def test_a_disturbed_run_is_refused_with_its_reasons_and_the_file_kept(tmp_path, monkeypatch):
    disturbed = run(disturbed=True)
    written = write_results(disturbed, tmp_path / disturbed.machine.id / f"{disturbed.run_id}.json")
    state = plan.Campaign(device="cuda", tiny=False, out=tmp_path, machine=disturbed.machine, budget_s=60)
    state.written.append(written)
    monkeypatch.setattr(contribute_cli, "measure", lambda *args: state)
    monkeypatch.setattr(contribute_cli, "report", lambda state: 0)
    result = CliRunner().invoke(app, ["contribute", "--out", str(tmp_path)], env={"COLUMNS": "80"})
    assert result.exit_code == 1
    assert "not ready to send" in result.output and "40% of the CPU" in result.output
    assert "--send-anyway" in result.output
    [kept] = tmp_path.glob("contribution-*.json")
    assert not read_contribution(kept).check.passed


def two_gpus() -> Machine:
    base = machine("kaggle-tesla-t4-x2-0a1b2c3d")
    t4 = base.accelerators.nvidia[0]
    accelerators = Accelerators(nvidia=[t4, t4.model_copy(update={"index": 1, "uuid": "GPU-9f2e-serial"})])
    return base.model_copy(update={"label": "Kaggle · 2x Tesla T4", "accelerators": accelerators})


def scaling_run(m: Machine, plan_: object, out_dir: Path) -> ResultsFile:
    """What `benchlib launch` writes on two GPUs, the way run_scaling builds it, with a worker's
    error that names a file and this host (as a failed torchrun's message can)."""
    from benchlib.measure.distributed.launch import THROUGHPUT as SAMPLES
    from benchlib.measure.distributed.launch import TRAIN, scaling_record

    common = {
        "engine": "torch",
        "size": plan_.size,
        "launcher": "torchrun",
        "backend": "nccl",
        "interconnect": "pcie",
        "interconnect_detail": "PCIe between the GPUs, no NVLink",
        "model": "fashion-mnist-cnn",
        "per_device_batch": 128,
        "threads_per_process": 2,
        "framework_version": "2.8.0",
    }
    one, two = (
        measurement(TRAIN, SAMPLES, value, device_name="Tesla T4", params=common | {"world_size": n})
        for n, value in ((1, 4000.0), (2, 7200.0))
    )
    failed = measurement(
        TRAIN,
        SAMPLES,
        None,
        status="error",
        message=f"tf engine, 2 devices: exited with code 1: {HOME}/venv/lib/x.py on {HOST}",
        params={"engine": "tf", "size": plan_.size, "world_size": 2},
    )
    return results(m, [one, two, scaling_record(one, two), failed], suite=plan_.size, run_id="20261120T091500Z-dp0001")


def contribute_on_two_gpus(tmp_path, monkeypatch, *args: str):
    """`benchlib contribute ARGS` on a machine NVML sees two GPUs in, its campaign stubbed to one run;
    returns the result, the budgets the campaign was given and the data-parallel launches asked for."""
    from benchlib.measure.distributed import launch
    from benchlib.measure.runner import RunOutcome
    from benchlib.probe import nvidia

    m = two_gpus()
    campaign_run = run(m=m)
    written = write_results(campaign_run, tmp_path / m.id / f"{campaign_run.run_id}.json")
    budgets: list[float] = []
    launched: list[object] = []

    def measure(device, tiny, minutes, out):
        budgets.append(minutes)
        state = plan.Campaign(device="cuda", tiny=tiny, out=out, machine=m, budget_s=minutes * 60)
        state.written.append(written)
        return state

    def run_scaling(plan_, *, machine, out_dir, on_start=None, on_done=None):
        launched.append(plan_)
        dp = scaling_run(machine, plan_, out_dir)
        path = write_results(dp, out_dir / machine.id / f"{dp.run_id}.json")
        return RunOutcome(path=path, results=dp, wall_s=90.0)

    monkeypatch.setattr(nvidia, "probe_nvidia", lambda: list(m.accelerators.nvidia))
    monkeypatch.setattr(contribute_cli, "measure", measure)
    monkeypatch.setattr(launch, "run_scaling", run_scaling)
    result = CliRunner().invoke(app, ["contribute", "--out", str(tmp_path), *args], env={"COLUMNS": "80"})
    return result, budgets, launched


def test_on_several_gpus_contribute_sends_the_data_parallel_scaling_scrubbed_like_the_rest(tmp_path, monkeypatch):
    result, budgets, launched = contribute_on_two_gpus(tmp_path, monkeypatch)
    assert result.exit_code == 0, result.output
    assert "data-parallel training on 2 GPUs" in result.output and "Ready to send" in result.output
    # Its time comes out of the budget, so the whole still ends within --minutes.
    assert budgets == [contribute_cli.DEFAULT_MINUTES - contribute_cli.DATA_PARALLEL_S[0] / 60]
    [asked] = launched
    assert (asked.devices, asked.size, asked.device, tuple(asked.engines)) == (2, "standard", "cuda", ("torch",))
    assert "skipped for the budget" not in result.output
    [path] = tmp_path.glob("contribution-*.json")
    contribution = read_contribution(path)
    [dp] = [r for r in contribution.runs if any(m.workload == "dp-train" for m in r.measurements)]
    scaling = next(m for m in dp.measurements if m.workload == "dp-scaling")
    assert scaling.params["world_size"] == 2 and scaling.value == pytest.approx(7200 / (2 * 4000))
    text = path.read_text()
    assert "GPU-9f2e-serial" not in text and HOME not in text
    assert not re.search(rf"(?<![\w-]){re.escape(HOST)}(?![\w-])", text)
    assert "exited with code 1: <path> on <name>" in text


def test_a_budget_too_short_for_the_data_parallel_step_skips_it_and_says_so(tmp_path, monkeypatch):
    result, budgets, launched = contribute_on_two_gpus(tmp_path, monkeypatch, "--minutes", "2")
    assert result.exit_code == 0, result.output
    assert budgets == [2.0] and launched == []  # the campaign keeps the whole budget
    assert "skipped for the budget: data-parallel training on 2 GPUs" in result.output
    contribution = read_contribution(next(tmp_path.glob("contribution-*.json")))
    assert not any(m.workload == "dp-train" for r in contribution.runs for m in r.measurements)


def test_a_contribution_that_is_not_one_gives_one_line_not_a_traceback(tmp_path):
    bad = tmp_path / "contribution-x.json"
    bad.write_text("{not json")
    result = CliRunner().invoke(app, ["contribute", "--send-anyway", str(bad)])
    assert result.exit_code == 2
    assert "not valid JSON" in result.output and "Traceback" not in result.output


@pytest.mark.slow
def test_a_tiny_contribution_on_this_cpu_validates_and_holds_nothing_of_this_machine(tiny_contribution):
    """The page's try-on-CPU snippet, run for real (once per session: tests/conftest.py)."""
    result = tiny_contribution.run
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "COLUMNS": "80"}
    assert result.returncode == 0, result.stderr[-3000:]
    out = tiny_contribution.out
    [path] = out.glob("contribution-*.json")
    check = subprocess.run(
        [sys.executable, "-m", "benchlib.cli", "validate", str(path)], capture_output=True, text=True, env=env
    )
    assert check.returncode == 0, check.stdout + check.stderr
    text = path.read_text()
    for private in (str(tiny_contribution.folder), HOME, str(Path.cwd()), str(ROOT)):
        assert private not in text
    for name in {getpass.getuser(), HOST, socket.getfqdn()}:
        assert not re.search(rf"(?<![\w-]){re.escape(name)}(?![\w-])", text), name
    contribution = read_contribution(path)
    assert contribution.tiny and {"matmul", "max_batch"} <= {
        r.workload for run in contribution.runs for r in run.measurements
    }
    assert contribution.created - contribution.runs[0].created < timedelta(hours=1)


# --- the GPU lottery, fed by contributions ---------------------------------------------------------


NOTEBOOK_ARTICLES = ("aibench-", "kagglevscolab2019-", "tpu2018-")


def lottery_data(folder: Path):
    from benchlib.results.load import load_results
    from benchlib.site.data import SiteData, chart_frames, derive

    # The reported notebook sessions only: the articles' Colab and Kaggle runs.
    reported = [p for p in (ROOT / "results" / "reported").glob("*.json") if p.name.startswith(NOTEBOOK_ARTICLES)]
    frame = derive(load_results([*iter_result_paths(folder), *reported]))
    return SiteData(frame=frame, charts=chart_frames(frame), results_dir=folder, build_files=frozenset())


@pytest.mark.slow  # loads and derives the site's frame: over 5 s here
def test_the_gpu_lottery_shows_the_articles_figures_as_reported_until_contributions_arrive(tmp_path):
    from benchlib.site.gpu_lottery import lottery

    html = lottery("guides/what-did-i-get.md", lottery_data(tmp_path))
    assert 'id="chart-gpu-lottery"' in html and "<svg" in html
    assert "every bar is <strong>reported</strong>" in html
    assert "Google Colab · Pro · 2022-01 (2 reported)" in html  # the P100 and the V100 the article names
    assert "contributed runs</td>" not in html


@pytest.mark.slow  # loads and derives the site's frame: over 5 s here
def test_the_gpu_lottery_builds_from_a_contributed_file_and_says_what_each_bar_rests_on(tmp_path):
    from benchlib.site.gpu_lottery import lottery

    free = machine().model_copy(update={"platform": PlatformInfo(name="colab", variant="free")})
    pro = machine("colab-tesla-a100-77aa").model_copy(
        update={
            "platform": PlatformInfo(name="colab", variant="pro"),
            "accelerators": Accelerators(nvidia=[GPUInfo(index=0, name="NVIDIA A100-SXM4-40GB")]),
        }
    )
    inbox = tmp_path / "inbox"
    for m, minutes in ((free, 0), (pro, 10)):
        contribution = package([run(m=m, minutes=minutes)], tiny=False)
        write_contribution(contribution, inbox / file_name(contribution))
    assert all(o.outcome == "imported" for o in import_files([inbox], tmp_path / "results"))
    html = lottery("guides/what-did-i-get.md", lottery_data(tmp_path / "results"))
    assert "Google Colab · Free · 2026-11 (1 contributed)" in html
    assert "Google Colab · Pro · 2026-11 (1 contributed)" in html
    # A contribution replaces what articles reported for its platform and tier, and only that.
    assert "Google Colab · Free · 2022-01" not in html and "Google Colab · Pro · 2022-01" not in html
    # Kaggle has one tier: its probe's variant is the kind of session, not a tier.
    assert "Kaggle Notebooks · Free · 2019-03 (1 reported)" in html
    assert "<td>NVIDIA A100-SXM4-40GB</td><td>1</td><td>100 %</td><td>contributed runs</td>" in html
