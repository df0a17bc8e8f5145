"""The README's commands: CI runs command 2 exactly, and the fast command installs nothing more and leaves out slow and browser tests."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import tomllib

ROOT = Path(__file__).resolve().parents[1]


def readme_commands() -> dict[int, str]:
    """Numbered commands of the README's first code block: ``# N. what it does`` then the command line."""
    block = re.search(r"```bash\n(.*?)```", (ROOT / "README.md").read_text(encoding="utf-8"), re.S).group(1)
    return {int(n): line for n, line in re.findall(r"^# (\d+)\. .*\n(.+)$", block, re.M)}


def test_ci_runs_exactly_readme_command_2():
    lines = [line for line in (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines() if line.strip()]
    assert lines[-1] == readme_commands()[2]


def test_the_fast_command_installs_what_command_2_does_and_leaves_out_slow_and_browser_tests():
    commands = readme_commands()
    install = commands[2].split(" && (command -v chromium")[0]
    fast = commands[3]
    assert fast.startswith(install + " && .venv/bin/pytest "), "installs nothing command 2 doesn't"
    args = shlex.split(fast.split(" && ")[-1])
    assert args[args.index("-m") + 1] == "not slow and not browser"
    pytest_options = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["pytest"]
    registered = {marker.split(":")[0] for marker in pytest_options["ini_options"]["markers"]}
    assert {"slow", "browser"} <= registered and "--strict-markers" in pytest_options["ini_options"]["addopts"]
