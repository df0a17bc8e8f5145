"""Fixtures for the snippet tests; the helpers live in ``snippet_runner``."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path

import pytest
from snippet_runner import FAKES, WARM_FAMILIES, RunSnippet, python_command, snippet_env, warm_family
from warm_python import WarmPython


@pytest.fixture(scope="session")
def warm_pythons() -> Iterator[dict[str, WarmPython]]:
    """The warm interpreters of this worker, one per framework family, started on first use."""
    servers: dict[str, WarmPython] = {}
    yield servers
    for server in servers.values():
        server.close()


@pytest.fixture
def run_snippet(tmp_path: Path, warm_pythons: dict[str, WarmPython]) -> RunSnippet:
    """Run ``snippets/<name>`` with ``tmp_path`` as working directory: in a fork of its framework's
    warm interpreter (tests/snippets/warm_python.py), else in a fresh one."""

    def run(
        name: str,
        *,
        fakes: Iterable[str] = (),
        env: Mapping[str, str] | None = None,
        timeout: float = 300,
    ) -> subprocess.CompletedProcess[str]:
        family = warm_family(name, fakes, env)
        if family is None:
            result = subprocess.run(
                python_command(name),
                cwd=tmp_path,
                env=snippet_env(fakes, env),
                capture_output=True,
                text=True,
                timeout=timeout,
            )
        else:
            if family not in warm_pythons:
                warm_pythons[family] = WarmPython(WARM_FAMILIES[family], snippet_env())
            code = python_command(name)[-1]
            result = warm_pythons[family].run(code, tmp_path, snippet_env(fakes, env), timeout)
        assert result.returncode == 0, f"{name} failed ({result.returncode}):\n{result.stdout}\n{result.stderr}"
        return result

    return run


@pytest.fixture
def fake_gpu_bin(tmp_path: Path) -> Path:
    """A folder whose ``nvidia-smi`` is the T4 stand-in (a wrapper, so no exec bit is needed in git)."""
    bin_dir = tmp_path / "fake-bin"
    bin_dir.mkdir()
    wrapper = bin_dir / "nvidia-smi"
    wrapper.write_text(f'#!/bin/sh\nexec "{sys.executable}" "{FAKES / "nvidia_smi.py"}" "$@"\n')
    wrapper.chmod(0o755)
    return bin_dir


@pytest.fixture
def no_gpu_path(tmp_path: Path) -> str:
    """A PATH with the usual tools but no ``nvidia-smi``, even on a machine that has one."""
    shadow = tmp_path / "no-gpu-bin"
    shadow.mkdir()
    keep = [
        p for p in os.environ.get("PATH", os.defpath).split(os.pathsep) if p and not (Path(p) / "nvidia-smi").exists()
    ]
    return os.pathsep.join([str(shadow), *keep])
