"""A contribution: one file holding a machine's runs, with only what the site shows, ready to send.

`benchlib contribute` writes it, `benchlib import` files its runs under the machine's folder, and
`benchlib validate` checks it. What a contribution keeps is `KEPT`, field by field: the site's
Contributing page prints this very table. Everything else a results file can hold (the GPU's
serial UUID, free memory and disk, the kernel, the environment variable that named the
platform, a crashed workload's stderr) is left out. Every string that is kept is scrubbed of
file paths and of this machine's host and user names.

A contribution also carries its own check (complete, undisturbed, plausible). One that failed
is kept, but import refuses it unless its sender marked it to send anyway. Every reader judges the
runs afresh (`problems_found`) and refuses a file whose own check says otherwise: the check is
what the file says of itself, which anyone can edit.
"""

from __future__ import annotations

import getpass
import json
import re
import socket
from collections.abc import Iterable, Iterator
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from benchlib.core.version import __version__
from benchlib.results.plausibility import disturbed_workloads, findings
from benchlib.results.schema import ResultsFile
from benchlib.results.store import (
    CONTRIBUTION_PREFIX,
    INBOX_FOLDER,
    ResultsError,
    describe,
    iter_result_paths,
    load_json,
    name_problems,
    read_results,
    write_json_text,
)

CONTRIBUTION_VERSION = 1
# Where contributions are sent in the repository, and what a contribution's file name starts with.
INBOX = f"results/{INBOX_FOLDER}"
PREFIX = CONTRIBUTION_PREFIX
# The suite `benchlib contribute --tiny` runs; without --tiny it runs the standard suite.
TINY_SUITE = "quick"
STEP_FAILED = "a step failed: "

# Fields a contribution keeps: True keeps the whole value, a dict keeps only its keys, and
# "__all__" applies to every item of a list (or every value of a mapping).
KEPT_GPU = {
    name: True
    for name in (
        "index",
        "name",
        "memory_total_bytes",
        "driver",
        "cuda_driver",
        "compute_capability",
        "power_limit_w",
        "sm_clock_max_mhz",
        "mem_clock_max_mhz",
        "source",
    )
}
KEPT_MACHINE: dict[str, Any] = {
    "id": True,
    "label": True,
    "platform": {"name": True, "variant": True},
    "host": {"cpu": True, "memory_total_bytes": True, "shm_total_bytes": True, "os": True, "container": True},
    "accelerators": {"nvidia": {"__all__": KEPT_GPU}, "torch": True, "tpu": True},
    "software": True,
    "probed_at": True,
}
KEPT_MEASUREMENT: dict[str, Any] = {
    **{
        name: True
        for name in (
            "workload",
            "framework",
            "device",
            "device_name",
            "dtype",
            "params",
            "metric",
            "value",
            "stats",
            "status",
            "message",
            "peak",
            "efficiency",
            "telemetry",
            "duration_s",
            "skip_reason",
        )
    },
    "crash": {"exit_code": True, "signal": True},
}
KEPT: dict[str, Any] = {
    **{
        name: True
        for name in (
            "schema_version",
            "run_id",
            "created",
            "benchlib_version",
            "methodology_version",
            "suite",
            "complete",
            "disturbed",
            "plan",
        )
    },
    "machine": KEPT_MACHINE,
    "provenance": {"kind": True},
    "measurements": {"__all__": KEPT_MEASUREMENT},
}

# Two or more path segments (/home/ana/x, C:\Users\ana): a single "/content" or "I/O" is not a path.
_PATH = re.compile(r"(?<![\w.:/\\-])(?:[A-Za-z]:\\|~?/)(?:[^\s/\\'\"<>|:]+[/\\])+[^\s'\"<>|,;)]*")
PATH_MARK = "<path>"
NAME_MARK = "<name>"


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Check(_Model):
    """The contribution's own check, made when it was written."""

    passed: bool
    problems: list[str] = Field(default_factory=list, description="Why it did not pass, one reason each.")
    sent_anyway: bool = Field(False, description="Its sender chose to send it despite the problems.")

    @model_validator(mode="after")
    def _passed_without_problems(self) -> Check:
        if self.passed == bool(self.problems):
            raise ValueError("a check passes exactly when it lists no problems")
        return self


class Contribution(_Model):
    contribution: Literal[1] = CONTRIBUTION_VERSION
    created: datetime
    benchlib_version: str
    tiny: bool = Field(description="Made with --tiny: for trying the command, not for the charts.")
    check: Check
    runs: list[ResultsFile] = Field(min_length=1)

    @model_validator(mode="after")
    def _one_measured_machine(self) -> Contribution:
        machines = sorted({run.machine.id for run in self.runs})
        if len(machines) > 1:
            raise ValueError(f"a contribution holds one machine's runs; this one holds {', '.join(machines)}")
        if any(run.provenance.kind != "measured" for run in self.runs):
            raise ValueError("a contribution holds measured runs only")
        return self

    @property
    def machine_id(self) -> str:
        return self.runs[0].machine.id


def is_contribution(data: object) -> bool:
    return isinstance(data, dict) and "contribution" in data


def not_kept(data: object, spec: Any = KEPT, where: str = "") -> list[str]:
    """Fields in ``data`` (a run, as JSON) that a contribution doesn't keep, as dotted paths."""
    if spec is True:
        return []
    if "__all__" in spec:
        items = data.items() if isinstance(data, dict) else enumerate(data) if isinstance(data, list) else []
        return [p for key, value in items for p in not_kept(value, spec["__all__"], f"{where}.{key}")]
    if not isinstance(data, dict):
        return []
    out = []
    for key, value in data.items():
        path = f"{where}.{key}".lstrip(".")
        out += [path] if key not in spec else not_kept(value, spec[key], path)
    return out


def this_machines_names() -> list[str]:
    """The user and host names of the machine running this, which a contribution must not carry."""
    names = []
    try:
        names.append(getpass.getuser())
    except (OSError, KeyError):  # no user name in a bare container
        pass
    names += [socket.gethostname(), socket.getfqdn()]
    return sorted({n for n in names if len(n) >= 2}, key=len, reverse=True)


def _scrub(text: str, names: list[str]) -> str:
    text = _PATH.sub(PATH_MARK, text)
    for name in names:
        text = re.sub(rf"(?<![\w-]){re.escape(name)}(?![\w-])", NAME_MARK, text)
    return text


def _scrubbed(value: Any, names: list[str]) -> Any:
    if isinstance(value, str):
        return _scrub(value, names)
    if isinstance(value, list):
        return [_scrubbed(v, names) for v in value]
    if isinstance(value, dict):
        return {k: _scrubbed(v, names) for k, v in value.items()}
    return value


def _strings(value: Any, where: str = "") -> Iterator[tuple[str, str]]:
    if isinstance(value, str):
        yield where, value
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _strings(v, f"{where}.{i}")
    elif isinstance(value, dict):
        for k, v in value.items():
            yield from _strings(v, f"{where}.{k}".lstrip("."))


def private_values(data: object, names: Iterable[str] = ()) -> list[str]:
    """Fields of ``data`` whose text holds a file path or one of ``names``, as 'field: what'."""
    out = []
    for where, text in _strings(data):
        if _PATH.search(text):
            out.append(f"{where}: holds a file path")
        out += [f"{where}: holds this machine's name {name!r}" for name in names if _scrub(text, [name]) != text]
    return out


def run_problems(run: ResultsFile) -> list[str]:
    """Why ``run`` is not ready to send: unfinished, disturbed, or holding values no real run can produce.

    Judged from what was measured as well as from the run's own flags: a workload planned but not
    timed is unfinished, and one whose conditions say it was disturbed is disturbed, whatever the
    run's ``complete`` and ``disturbed`` say.
    """
    what = f"run {run.run_id} ({run.suite or 'no'} suite)"
    out = []
    left = len(set(run.plan.workloads) - set(run.plan.wall_s)) if run.plan else 0
    if not run.complete or left:
        out.append(f"{what} did not finish" + (f": {left} workload(s) never ran" if left else ""))
    disturbed = disturbed_workloads(run)
    if run.disturbed or disturbed:
        reasons = sorted({f"{name}: {why}" for name, whys in disturbed.items() for why in whys})
        out.append(f"{what} was disturbed by other work on the machine ({'; '.join(reasons) or 'no reason recorded'})")
    out += [f"{what}: implausible {p}" for p in findings(run)]
    return out


def problems_found(contribution: Contribution) -> list[str]:
    """Why ``contribution`` is not ready to send, judged from its runs, never from its own check,
    but for the steps its check says failed (a failed step leaves no run to judge)."""
    steps = [p for p in contribution.check.problems if p.startswith(STEP_FAILED)]
    return steps + [p for run in contribution.runs for p in run_problems(run)]


def _check_disagrees(contribution: Contribution) -> list[str]:
    """How what the contribution says of itself (its check, --tiny) differs from what its runs show."""
    again = "it was edited, or made by another benchlib: make the file again with benchlib contribute"
    found = problems_found(contribution)
    if contribution.check.passed and found:
        return [f"its check says it passed, but {p}; {again}" for p in found]
    if not contribution.check.passed and not found:
        said = "; ".join(contribution.check.problems)
        return [f"its check says it failed ({said[:300]}), but its runs show no problem; {again}"]
    quick = [run.run_id for run in contribution.runs if run.suite == TINY_SUITE]
    if quick and not contribution.tiny:
        return [
            f"it says it wasn't made with --tiny, but run {quick[0]} is of the {TINY_SUITE} suite --tiny runs; {again}"
        ]
    return []


def package(runs: list[ResultsFile], *, tiny: bool, failed_steps: Iterable[str] = ()) -> Contribution:
    """One contribution from ``runs``: the kept fields only, every string scrubbed, and its check."""
    names = this_machines_names()
    kept = [_scrubbed(run.model_dump(mode="json", include=KEPT, exclude_none=True), names) for run in runs]
    problems = [f"{STEP_FAILED}{step}" for step in failed_steps]
    problems += [p for run in runs for p in run_problems(run)]
    return Contribution(
        created=datetime.now(timezone.utc),
        benchlib_version=__version__,
        tiny=tiny,
        check=Check(passed=not problems, problems=_scrubbed(problems, names)),
        runs=[ResultsFile.model_validate(run) for run in kept],
    )


def file_name(contribution: Contribution) -> str:
    """``contribution-<machine id>-<first run id>.json``: unique per run, and says whose it is."""
    return f"{PREFIX}{contribution.machine_id}-{contribution.runs[0].run_id}.json"


def write_contribution(contribution: Contribution, path: Path | str) -> Path:
    """Write it atomically, after checking that what it holds reads back and carries nothing private."""
    # The kept fields again: validating the runs filled in defaults of fields left out (a crash's stderr).
    include = {name: True for name in Contribution.model_fields if name != "runs"} | {"runs": {"__all__": KEPT}}
    payload = contribution.model_dump_json(indent=1, exclude_none=True, include=include)
    data = json.loads(payload)
    problems = [f"field 'runs.{p}'" for p in private_values(data["runs"], this_machines_names())]
    if problems:  # _scrub should have caught these: refuse rather than leak
        raise ResultsError(path, [f"{p}; not written" for p in problems])
    return write_json_text(Contribution, path, payload)


def read_contribution(path: Path | str, data: dict[str, Any] | None = None) -> Contribution:
    """Read and check a contribution; ResultsError names the file and each field it must not carry,
    each id that can't name a file, and where its own check disagrees with its runs."""
    data = load_json(path) if data is None else data
    runs = data.get("runs")
    extra = []
    for i, run in enumerate(runs if isinstance(runs, list) else []):
        extra += [
            f"field 'runs.{i}.{p}': not kept in a contribution; remove it, or make the file again with "
            "benchlib contribute"
            for p in not_kept(run)
        ]
        extra += [
            f"field 'runs.{i}.{p}'; remove it, or make the file again with benchlib contribute"
            for p in private_values(run)
        ]
    if extra:
        raise ResultsError(path, extra)
    try:
        contribution = Contribution.model_validate(data)
    except ValidationError as exc:
        raise ResultsError(path, describe(exc)) from exc
    wrong = [p for i, run in enumerate(contribution.runs) for p in name_problems(run, f"runs.{i}.")]
    wrong = wrong or _check_disagrees(contribution)
    if wrong:
        raise ResultsError(path, wrong)
    return contribution


def read_runs(path: Path | str, *, mark_implausible: bool = True) -> list[ResultsFile]:
    """The runs in a results file or a contribution, validated as each is."""
    from benchlib.results.plausibility import mark

    data = load_json(path)
    if not is_contribution(data):
        return [read_results(path, mark_implausible=mark_implausible, data=data)]
    runs = read_contribution(path, data).runs
    return [mark(run) for run in runs] if mark_implausible else runs


def validate_paths(paths: Iterable[Path | str]) -> tuple[list[Path], list[ResultsError]]:
    """Check every file; returns (valid files, errors) instead of stopping at the first."""
    good, bad = [], []
    for path in iter_result_paths(paths, contributions=True):
        try:
            read_runs(path)
            good.append(path)
        except ResultsError as exc:
            bad.append(exc)
    return good, bad
