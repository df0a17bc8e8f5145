"""CI gate: every committed results file (the score's reference, shipped in the package, too) validates,
and none holds a value no real run can produce."""

from __future__ import annotations

from pathlib import Path

from benchlib.derive.score import reference_folder
from benchlib.results.contribution import validate_paths
from benchlib.results.plausibility import findings
from benchlib.results.store import read_results

RESULTS = Path(__file__).parents[1] / "results"
COMMITTED = [RESULTS, reference_folder()]


def test_every_committed_results_file_is_valid():
    good, bad = validate_paths(COMMITTED)
    report = "\n".join(f"{exc.path}:\n  " + "\n  ".join(exc.problems) for exc in bad)
    assert not bad, f"{len(bad)} invalid results file(s):\n{report}"
    assert reference_folder() in {p.parent for p in good}, "the score's reference run was not checked"
    assert any(RESULTS in p.parents for p in good), f"no results files found in {RESULTS}"


def test_no_committed_value_is_implausible_unless_marked():
    # `benchlib import` marks such values 'invalid' in the file it writes; a hand-edited 'ok' one fails here.
    problems = {
        str(path): found
        for path in validate_paths(COMMITTED)[0]
        if (found := findings(read_results(path, mark_implausible=False)))
    }
    report = "\n".join(f"{path}:\n  " + "\n  ".join(found) for path, found in problems.items())
    assert not problems, f"implausible values in committed results:\n{report}"
