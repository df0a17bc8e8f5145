from __future__ import annotations

import pytest

from benchlib.results.schema import CPUInfo, HostInfo, Machine, Software


@pytest.fixture
def machine() -> Machine:
    """A small machine record, so runner tests don't depend on probing this host."""
    return Machine(
        id="local-test-cpu-0000",
        label="local · Test CPU (CPU only)",
        host=HostInfo(cpu=CPUInfo(model="Test CPU", logical_cores=2)),
        software=Software(python="3.11", benchlib="0.1.0"),
    )
