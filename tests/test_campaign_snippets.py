"""The Check a GPU page's snippets, run as a reader runs them, on this CPU machine.

Stand-ins only for what needs Colab, a GPU or GitHub: Colab's Drive (tests/snippets/fakes), a
``pip`` that records its arguments and writes empty wheel files instead of reaching GitHub, and a
``benchlib`` that records its command line. The slow test downloads the wheelhouse from PyPI.
The tiny campaign itself runs for real once per session, inside `benchlib contribute --tiny`
(tests/conftest.py's ``tiny_contribution``, which tests/test_measure_campaign.py reads).
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import zipfile
from importlib import metadata
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parents[1]
FOLDER = ROOT / "snippets" / "campaign"
PAGE = ROOT / "docs" / "benchmarks" / "check-a-gpu.md"
COLAB_FAKE = ROOT / "tests" / "snippets" / "fakes" / "colab"
INSTALL_FROM_GITHUB = ["install", "-q", "benchlib[campaign] @ git+https://github.com/gpu-field-guide/gpu-field-guide"]

# Records each call as a JSON line; `download -d DIR NAME...` and `wheel -w DIR` leave empty wheels.
RECORDER = r"""
import json, os, re, sys
name, args = sys.argv[1], sys.argv[2:]
with open(os.environ["CALLS_LOG"], "a", encoding="utf-8") as log:
    log.write(json.dumps([name, *args]) + "\n")
if name == "pip" and args[:1] in (["download"], ["wheel"]):
    folder = args[args.index("-d" if args[0] == "download" else "-w") + 1]
    os.makedirs(folder, exist_ok=True)
    values = {args[i + 1] for i, a in enumerate(args) if a in ("-d", "-w", "--python-version", "--platform", "--index-url")}
    for requirement in (a for a in args[1:] if not a.startswith("-") and a not in values):
        project = "benchlib" if requirement == "." else re.split(r"[=<>]", requirement)[0]
        open(os.path.join(folder, project.replace("-", "_") + "-0-py3-none-any.whl"), "w").close()
"""


def stubs(tmp_path: Path) -> Path:
    """A bin folder whose pip and benchlib record their calls, and a pip package for ``python -m pip``."""
    recorder = tmp_path / "recorder.py"
    recorder.write_text(RECORDER, encoding="utf-8")
    bin_dir = tmp_path / "stub-bin"
    bin_dir.mkdir()
    for name in ("pip", "benchlib"):
        (bin_dir / name).write_text(f'#!/bin/sh\nexec "{sys.executable}" "{recorder}" {name} "$@"\n')
        (bin_dir / name).chmod(0o755)
    package = tmp_path / "stub-modules" / "pip"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "__main__.py").write_text(
        f"import subprocess, sys\nsys.exit(subprocess.call([{str(bin_dir / 'pip')!r}, *sys.argv[1:]]))\n"
    )
    return bin_dir


def run(command: list[str], tmp_path: Path, **env: str) -> tuple[subprocess.CompletedProcess[str], list[list[str]]]:
    """Run with the stubs first on PATH; returns the result and the recorded calls."""
    bin_dir = stubs(tmp_path)
    log = tmp_path / "calls.jsonl"
    full = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    full |= {"PATH": f"{bin_dir}{os.pathsep}{full['PATH']}", "CALLS_LOG": str(log)} | env
    result = subprocess.run(command, cwd=tmp_path, env=full, capture_output=True, text=True, timeout=300)
    calls = [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []
    return result, calls


def campaign_lines() -> list[list[str]]:
    """Every ``benchlib campaign`` command line in the snippets, as words."""
    lines = []
    for snippet in FOLDER.iterdir():
        for line in snippet.read_text(encoding="utf-8").splitlines():
            if "benchlib campaign" in line and not line.lstrip().startswith("#"):
                words = shlex.split(line.lstrip("!"))
                lines.append(words[words.index("campaign") + 1 :])
    return lines


def test_every_campaign_snippet_is_on_the_page_and_tested():
    page = PAGE.read_text(encoding="utf-8")
    tested = {"colab.ipy", "kaggle.ipy", "target_versions.sh", "wheelhouse.sh", "install_offline.sh", "try_on_cpu.sh"}
    assert {p.name for p in FOLDER.iterdir()} == tested
    for name in tested:
        assert f'--8<-- "snippets/campaign/{name}"' in page, f"{name} is not on the page"


def test_the_snippets_use_only_the_commands_flags():
    from typer.testing import CliRunner

    from benchlib.cli import app

    help_text = CliRunner().invoke(app, ["campaign", "--help"], env={"COLUMNS": "200"}).output
    lines = campaign_lines()
    assert len(lines) == 4
    for words in lines:
        for flag in (w for w in words if w.startswith("--")):
            assert re.search(rf"{flag}\b", help_text), (flag, words)
        if "--device" in words:
            assert words[words.index("--device") + 1] in {"auto", "cuda", "cpu"}


def test_page_types_no_numbers_that_look_like_measurements():
    prose = re.sub(r"```.*?```", "", PAGE.read_text(encoding="utf-8"), flags=re.S)
    prose = re.sub(r"`[^`]*`|\]\([^)]*\)|^\d+\. ", "", prose, flags=re.M)  # code, link targets, step numbers
    prose = re.sub(r"ResNet-50|GPT-2|ViT-B/16|fp16|fp32|T4", "", prose, flags=re.IGNORECASE)  # names, not figures
    assert not re.search(r"\d", prose), re.findall(r".{20}\d.{20}", prose)


def ipython(name: str) -> list[str]:
    """IPython running a notebook cell, its %pip and ! lines included."""
    return [sys.executable, "-m", "IPython", "--quick", "--no-banner", "--colors=nocolor", str(FOLDER / name)]


def test_colab_cell_mounts_drive_installs_and_writes_results_to_drive(tmp_path):
    pytest.importorskip("IPython")
    drive = tmp_path / "drive"
    modules = f"{COLAB_FAKE}{os.pathsep}{tmp_path / 'stub-modules'}"
    result, calls = run(ipython("colab.ipy"), tmp_path, PYTHONPATH=modules, DRIVE_MOUNTPOINT=str(drive))
    assert result.returncode == 0, result.stdout + result.stderr
    assert f"Mounted at {drive}" in result.stdout
    assert calls == [
        ["pip", *INSTALL_FROM_GITHUB],
        ["benchlib", "campaign", "--out", f"{drive}/MyDrive/benchlib-results"],
    ]


def test_kaggle_cell_installs_and_writes_results_to_the_notebooks_output(tmp_path):
    pytest.importorskip("IPython")
    result, calls = run(ipython("kaggle.ipy"), tmp_path, PYTHONPATH=str(tmp_path / "stub-modules"))
    assert result.returncode == 0, result.stdout + result.stderr
    assert calls == [
        ["pip", *INSTALL_FROM_GITHUB],
        ["benchlib", "campaign", "--out", "/kaggle/working/benchlib-results"],
    ]


@pytest.mark.slow
def test_target_versions_prints_the_two_arguments_wheelhouse_takes(tmp_path):
    torch = pytest.importorskip("torch")
    bin_dir = Path(sys.executable).parent  # python3 here is this environment's, as on a GPU machine
    result = subprocess.run(
        ["bash", "-e", str(FOLDER / "target_versions.sh")],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env=os.environ | {"PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"},
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == [f"{sys.version_info[0]}.{sys.version_info[1]}", torch.__version__]


@pytest.mark.parametrize(
    ("args", "says"),
    [
        ([], "usage: bash wheelhouse.sh PYTHON_VERSION TORCH_VERSION"),
        (["3.11"], "usage: bash wheelhouse.sh PYTHON_VERSION TORCH_VERSION"),
        (["3", "2.5.1"], "PYTHON_VERSION '3' is not a Python version such as 3.11"),
        (["3.11", "2.5"], "TORCH_VERSION '2.5' is not torch 2.2 or later"),
        (["3.11", "2.1.2"], "TORCH_VERSION '2.1.2' is not torch 2.2 or later"),
    ],
)
def test_wheelhouse_says_what_it_needs_and_downloads_nothing(tmp_path, args, says):
    result, calls = run(["bash", str(FOLDER / "wheelhouse.sh"), *args], tmp_path)
    assert result.returncode == 2
    assert says in result.stderr and len(result.stderr.splitlines()) == 1
    assert not calls and not (tmp_path / "wheels").exists()


def page_package_list() -> set[str]:
    page = PAGE.read_text(encoding="utf-8")
    listed = re.search(r"the packages a torch install lacks: (.*?)\. Copy", " ".join(page.split()))
    return {canonicalize_name(n) for n in re.findall(r"`([^`]+)`", listed[1])}


@pytest.mark.parametrize(
    ("torch", "torchvision", "index"),
    [
        ("2.5.1", "0.20.1", "https://pypi.org/simple"),
        ("2.8.0+cu126", "0.23.0+cu126", "https://download.pytorch.org/whl/cu126"),
        ("2.10.0+cpu", "0.25.0+cpu", "https://download.pytorch.org/whl/cpu"),
    ],
)
def test_wheelhouse_builds_benchlib_and_downloads_for_the_target(tmp_path, torch, torchvision, index):
    result, calls = run(["bash", str(FOLDER / "wheelhouse.sh"), "3.12", torch], tmp_path)
    assert result.returncode == 0, result.stderr
    assert calls[0] == ["pip", "wheel", "--no-deps", "-w", "wheels", "."]
    downloads = [call[2:] for call in calls[1:]]
    assert [call[:2] for call in calls[1:]] == [["pip", "download"]] * 2
    for args in downloads:
        assert {"--no-deps", "--only-binary=:all:"} <= set(args)
        assert args[args.index("--python-version") + 1] == "3.12" and args[args.index("-d") + 1] == "wheels"
    assert f"torchvision=={torchvision}" in downloads[0] and args_value(downloads[0], "--index-url") == index
    names = {canonicalize_name(a) for a in downloads[1] if not a.startswith("-") and a not in values(downloads[1])}
    assert names == page_package_list()  # the page names what the script downloads
    assert len(list((tmp_path / "wheels").iterdir())) == len(names) + 2  # plus benchlib and torchvision


def args_value(args: list[str], flag: str) -> str:
    return args[args.index(flag) + 1]


def values(args: list[str]) -> set[str]:
    return {args[i + 1] for i, a in enumerate(args) if a in ("-d", "--python-version", "--platform", "--index-url")}


def test_install_offline_installs_from_the_wheels_only_then_runs_the_campaign(tmp_path):
    result, calls = run(["bash", "-e", str(FOLDER / "install_offline.sh")], tmp_path)
    assert result.returncode == 0, result.stderr
    assert calls == [
        ["pip", "install", "--no-index", "--find-links", "wheels", "benchlib[campaign]"],
        ["benchlib", "campaign"],
    ]


def test_try_on_cpu_runs_the_tiny_campaign_into_a_folder_of_its_own(tmp_path):
    result, calls = run(["bash", "-e", str(FOLDER / "try_on_cpu.sh")], tmp_path)
    assert result.returncode == 0, result.stderr
    assert calls == [["benchlib", "campaign", "--device", "cpu", "--tiny", "--out", "campaign-try"]]


def requirements_of(wheel: Path, python: str, extras: set[str]) -> set[str]:
    """The projects a wheel's METADATA requires on that Python, with those extras."""
    environments = [{"python_version": python, "python_full_version": f"{python}.0", "extra": e} for e in extras | {""}]
    needed = set()
    for requirement in map(Requirement, metadata_lines(wheel)):
        if requirement.marker is None or any(requirement.marker.evaluate(env) for env in environments):
            needed.add(canonicalize_name(requirement.name))
    return needed


@pytest.mark.slow
def test_wheelhouse_from_pypi_holds_everything_torch_does_not_bring(tmp_path):
    """Really downloads (for this Python and torch, from PyPI) and checks the set is closed."""
    torch_version = metadata.version("torch").split("+")[0]  # the PyPI build: only PyPI is reachable here
    python = f"{sys.version_info[0]}.{sys.version_info[1]}"
    clone = tmp_path / "clone"
    clone.mkdir()
    for part in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / part, clone / part)
    shutil.copytree(ROOT / "benchlib", clone / "benchlib", ignore=shutil.ignore_patterns("__pycache__"))
    bin_dir = Path(sys.executable).parent
    result = subprocess.run(
        ["bash", str(FOLDER / "wheelhouse.sh"), python, torch_version],
        cwd=clone,
        env=os.environ | {"PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"},
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert result.returncode == 0, result.stderr[-4000:]
    wheels = {canonicalize_name(w.name.split("-")[0]): w for w in (clone / "wheels").glob("*.whl")}
    assert set(wheels) == page_package_list() | {"benchlib", "torchvision"}
    (torch_pin,) = [r for r in map(Requirement, metadata_lines(wheels["torchvision"])) if r.name == "torch"]
    assert torch_pin.specifier.contains(torch_version), f"torchvision wants {torch_pin}, the target has {torch_version}"
    provided = (
        set(wheels) | {"torch"} | {canonicalize_name(Requirement(r).name) for r in metadata.requires("torch") or []}
    )
    for name, wheel in wheels.items():
        missing = requirements_of(wheel, python, {"campaign"}) - provided
        assert not missing, f"{name} needs {sorted(missing)}, which neither wheels/ nor torch has"


def metadata_lines(wheel: Path) -> list[str]:
    with zipfile.ZipFile(wheel) as archive:
        (name,) = [n for n in archive.namelist() if n.endswith(".dist-info/METADATA")]
        return re.findall(r"^Requires-Dist: (.+)$", archive.read(name).decode("utf-8"), re.M)
