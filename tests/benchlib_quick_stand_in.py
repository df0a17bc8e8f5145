"""A quick suite of tiny workloads, for the tests of what runs a suite (snippets, files), not of what it measures.

Named in ``$BENCHLIB_WORKLOAD_MODULES`` (with ``tests/`` on ``PYTHONPATH``), it takes the real
workloads out of the quick suite and puts three of the tiny test workloads in, so `benchlib run
--suite quick` writes a real results file in seconds instead of measuring this machine for
minutes. Isolated children import it too, through the same variable. A test whose assertions
name a real workload runs the real suite instead.
"""

from __future__ import annotations

from dataclasses import replace

import benchlib_test_workloads as tiny

from benchlib import workloads

STAND_INS = tiny.TINY[:3]

# The package's own workloads are registered by now: this module is imported after them.
for _name, _workload in list(workloads._REGISTRY.items()):
    if "quick" in _workload.suites:
        workloads._REGISTRY[_name] = replace(_workload, suites=tuple(s for s in _workload.suites if s != "quick"))
for _name in STAND_INS:
    workloads._REGISTRY[_name] = replace(workloads._REGISTRY[_name], suites=("quick",))
