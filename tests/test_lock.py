"""requirements.lock holds what pyproject.toml declares, and this environment was installed from it.

The README's commands and CI install from the lock, so a fresh clone gets the versions CI last
passed with; `bash .ci/lock` refreshes it after a change to pyproject.toml.
"""

from __future__ import annotations

import importlib.metadata
import re
from pathlib import Path

import tomllib
from packaging.markers import Marker, default_environment
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

ROOT = Path(__file__).resolve().parents[1]
LOCK = ROOT / "requirements.lock"
REFRESH = "refresh it with `bash .ci/lock`"
PINNED = re.compile(r"^(?P<name>[A-Za-z0-9][A-Za-z0-9._-]*)==(?P<version>\S+)(?:\s*;\s*(?P<marker>.+))?$")


def locked() -> list[tuple[str, Version, Marker | None]]:
    pins = []
    for line in LOCK.read_text().splitlines():
        if match := PINNED.match(line.strip()):
            marker = Marker(match["marker"]) if match["marker"] else None
            pins.append((canonicalize_name(match["name"]), Version(match["version"]), marker))
    return pins


def declared() -> list[Requirement]:
    """Every requirement of the core and of every extra; `benchlib[...]` self-references are expanded by the extras."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    requirements = [Requirement(r) for r in project["dependencies"]]
    for extra in project["optional-dependencies"].values():
        requirements += [Requirement(r) for r in extra]
    return [r for r in requirements if canonicalize_name(r.name) != canonicalize_name(project["name"])]


def test_the_lock_pins_every_declared_dependency_within_its_range() -> None:
    pins = locked()
    assert len(pins) > 50, f"{LOCK} holds only {len(pins)} pins; {REFRESH}"
    versions: dict[str, list[Version]] = {}
    for name, version, _ in pins:
        versions.setdefault(name, []).append(version)
    problems = []
    for requirement in declared():
        name = canonicalize_name(requirement.name)
        if name not in versions:
            problems.append(f"{requirement} is declared in pyproject.toml but not locked")
        elif not any(requirement.specifier.contains(v, prereleases=True) for v in versions[name]):
            found = ", ".join(map(str, versions[name]))
            problems.append(f"{requirement} is declared in pyproject.toml but the lock pins {name}=={found}")
    assert not problems, "requirements.lock is out of date; " + REFRESH + ":\n" + "\n".join(problems)


def test_this_environment_has_the_locked_versions() -> None:
    environment = default_environment()
    checked, wrong = 0, []
    for name, version, marker in locked():
        if marker is not None and not marker.evaluate(environment):
            continue  # a pin for another platform or Python
        try:
            installed = Version(importlib.metadata.version(name))
        except importlib.metadata.PackageNotFoundError:
            wrong.append(f"{name}=={version} is locked but not installed")
            continue
        checked += 1
        # A local build tag (torch's +cu130) is the same release as the one locked.
        if Version(installed.public) != version:
            wrong.append(f"{name}: installed {installed}, locked {version}")
    assert checked > 50
    assert not wrong, (
        "this environment was not installed from requirements.lock; reinstall with "
        "`.venv/bin/uv pip install -p .venv -r requirements.lock -e '.[all]'`:\n" + "\n".join(wrong)
    )
