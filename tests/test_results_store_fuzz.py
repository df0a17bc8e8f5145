"""Malformed results files are rejected with a message naming the file; nothing crashes on them.

Hypothesis feeds the loaders raw bytes, arbitrary JSON, truncated files (a write killed without
atomic rename) and valid files with one random mutation (a key dropped, a value of the wrong
type, NaN, a huge number, an unknown key, odd unicode). Each file is either rejected with a
`ResultsError` that names it, or it is valid, and then the loader, the plausibility checks, the
charts and the site's chart blocks must all handle it. The count of inputs tried is printed at
the end (run with ``-s``).
"""

from __future__ import annotations

import copy
import json
import math
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from benchlib.results.contribution import validate_paths
from benchlib.results.load import load_results
from benchlib.results.store import ResultsError, read_results

TRIED: Counter[str] = Counter()
FUZZ = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
# Each build example renders SVGs (about a second): no shrinking, which would take minutes. The
# failing example is printed as it was found.
BUILD = settings(
    max_examples=30,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
    phases=[Phase.explicit, Phase.reuse, Phase.generate],
)


@pytest.fixture(scope="module", autouse=True)
def report_count() -> Iterator[None]:
    yield
    inputs = sum(n for kind, n in TRIED.items() if "still valid" not in kind)
    print(f"\nmalformed or odd results files tried: {inputs} ({dict(TRIED)})")


def base() -> dict[str, Any]:
    """A valid measured file with every chart kind, an invalid record, a failure and a reported twin."""
    stats = {
        "median": 1e-3,
        "iqr": 1e-5,
        "mean": 1e-3,
        "min": 9e-4,
        "max": 1.1e-3,
        "n": 5,
        "noisy": False,
        "times": [1e-3, 1e-3],
    }
    tflops = {"name": "throughput", "unit": "TFLOPS", "higher_is_better": True}
    return {
        "schema_version": 1,
        "run_id": "20261121T120000Z-abc123",
        "created": "2026-11-21T12:00:00Z",
        "benchlib_version": "0.1.0",
        "methodology_version": "1",
        "suite": "quick",
        "complete": True,
        "machine": {
            "id": "colab-tesla-t4-1234abcd",
            "label": "Colab · Tesla T4",
            "platform": {"name": "colab"},
            "accelerators": {"nvidia": [{"index": 0, "name": "Tesla T4"}]},
            "software": {"python": "3.11.7", "torch": "2.5.0"},
        },
        "plan": {
            "workloads": ["matmul", "conv2d", "bandwidth"],
            "size": "quick",
            "device": "auto",
            "wall_s": {"matmul": 2.0},
        },
        "measurements": [
            {
                "workload": "matmul",
                "framework": "torch",
                "device": "cuda",
                "device_name": "Tesla T4",
                "dtype": "fp16",
                "params": {"n": 1024},
                "metric": tflops,
                "value": 20.0,
                "peak": 65.0,
                "efficiency": 0.31,
                "stats": stats,
            },
            {
                "workload": "matmul",
                "framework": "torch",
                "device": "cuda",
                "device_name": "Tesla T4",
                "dtype": "fp32",
                "params": {"n": 1024},
                "metric": tflops,
                "value": 90.0,
                "status": "invalid",
                "message": "too fast",
            },
            {
                "workload": "conv2d",
                "framework": "torch",
                "device": "cuda",
                "device_name": "Tesla T4",
                "dtype": "fp32",
                "params": {"batch": 16, "side": 32, "scale": 0.125},
                "metric": {"name": "time", "unit": "ms", "higher_is_better": False},
                "value": 3.0,
                "stats": stats,
                "duration_s": 1.5,
            },
            {
                "workload": "bandwidth",
                "framework": "torch",
                "device": "cuda",
                "device_name": "Tesla T4",
                "dtype": "uint8",
                "params": {"direction": "device_copy", "mib": 64},
                "metric": {"name": "bandwidth", "unit": "GB/s", "higher_is_better": True},
                "value": 250.0,
                "stats": stats,
            },
            {
                "workload": "bandwidth",
                "framework": "torch",
                "device": "cuda",
                "metric": {"name": "bandwidth", "unit": "GB/s", "higher_is_better": True},
                "status": "skipped",
                "skip_reason": "budget",
                "message": "not started",
            },
            {
                "workload": "conv2d",
                "framework": "torch",
                "device": "cuda",
                "metric": {"name": "time", "unit": "ms", "higher_is_better": False},
                "status": "error",
                "message": "conv2d: its process was killed by SIGSEGV",
                "crash": {"exit_code": -11, "signal": "SIGSEGV", "stderr_tail": ["Fatal Python error"]},
            },
            {
                "workload": "dp-scaling",
                "framework": "torch",
                "device": "cuda",
                "device_name": "Tesla T4",
                "dtype": "fp32",
                "params": {
                    "engine": "torch",
                    "backend": "nccl",
                    "world_size": 2,
                    "interconnect": "pcie",
                    "size": "quick",
                    "baseline_samples_per_s": 100.0,
                    "samples_per_s": 180.0,
                    "speedup": 1.8,
                },
                "metric": {"name": "scaling_efficiency", "unit": "fraction of linear", "higher_is_better": True},
                "value": 0.9,
            },
        ],
    }


def paths_in(node: Any, prefix: tuple = ()) -> list[tuple]:
    """Every key path in a JSON tree, the root included."""
    out = [prefix]
    if isinstance(node, dict):
        for k, v in node.items():
            out += paths_in(v, prefix + (k,))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            out += paths_in(v, prefix + (i,))
    return out


def at(node: Any, path: tuple) -> Any:
    for part in path:
        node = node[part]
    return node


ODD_STRINGS = st.sampled_from(
    [
        "",
        " ",
        "\x00",
        "\ud800",
        "\U0001f600",
        "名前",
        "a" * 5000,
        "[/]",
        "[bold]x",
        "<script>alert(1)</script>",
        "javascript:alert(1)",
        "../../etc/passwd",
        "NaN",
        "1e999",
        "null",
        "\u202e",
        "{{7*7}}",
        "%s%n",
    ]
)
ODD_NUMBERS = st.sampled_from(
    [
        0,
        -1,
        -0.0,
        1e-320,
        1e308,
        -1e308,
        2**63,
        -(2**63) - 1,
        10**400,
        math.nan,
        math.inf,
        -math.inf,
        0.1,
        True,
        False,
    ]
)
LEAVES = st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20) | ODD_STRINGS | ODD_NUMBERS
JSON_VALUES = st.recursive(
    LEAVES,
    lambda kids: st.lists(kids, max_size=4) | st.dictionaries(st.text(max_size=8), kids, max_size=4),
    max_leaves=12,
)


@st.composite
def mutated(draw: st.DrawFn) -> dict[str, Any]:
    """The base file with one random change somewhere in it."""
    data = base()
    path = draw(st.sampled_from(paths_in(data)))
    op = draw(st.sampled_from(["delete", "replace", "odd_number", "odd_string", "extra_key", "wrap", "empty"]))
    if not path:
        return draw(JSON_VALUES) if op == "replace" else data | {draw(st.text(max_size=8)): draw(JSON_VALUES)}
    parent, key = at(data, path[:-1]), path[-1]
    if op == "delete":
        del parent[key]
    elif op == "replace":
        parent[key] = draw(JSON_VALUES)
    elif op == "odd_number":
        parent[key] = draw(ODD_NUMBERS)
    elif op == "odd_string":
        parent[key] = draw(ODD_STRINGS)
    elif op == "extra_key" and isinstance(parent[key], dict):
        parent[key][draw(st.text(max_size=8) | ODD_STRINGS)] = draw(JSON_VALUES)
    elif op == "wrap":
        parent[key] = [parent[key]]
    elif op == "empty":
        parent[key] = type(parent[key])() if isinstance(parent[key], (dict, list, str)) else None
    return data


def write(folder: Path, text: str | bytes, name: str = "contributed.json") -> Path:
    path = folder / name
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8", errors="surrogatepass")
    return path


def to_json(data: Any) -> str:
    # allow_nan: contributors' tools (Python's json included) do write NaN and Infinity.
    return json.dumps(data, allow_nan=True, ensure_ascii=False)


def loads_or_rejects(path: Path) -> bool:
    """True if the file is valid; if not, the ResultsError must name the file and say what is wrong."""
    try:
        read_results(path)
    except ResultsError as exc:
        assert exc.path == str(path) and str(path) in str(exc)
        assert exc.problems and all(isinstance(p, str) and p for p in exc.problems)
        return False
    return True


def build_everything(folder: Path) -> None:
    """What the site does with a results folder: load, chart each kind, render each chart block."""
    from benchlib.site.charts import chart_spec, plotted_rows
    from benchlib.site.data import SiteData, chart_frames, derive
    from benchlib.site.figures import chart
    from benchlib.site.scaling import scaling_html
    from benchlib.workloads import charts

    frame = derive(load_results(folder))
    data = SiteData(frame=frame, charts=chart_frames(frame), results_dir=folder, build_files=frozenset())
    for chart_id, declared in charts().items():
        rows = plotted_rows(data.charts[chart_id], declared)
        if not rows.empty:
            chart_spec(rows, declared)
        html = chart(chart_id, data)
        assert "<script>alert(1)</script>" not in html, "a string from a results file became markup"
    assert "<script>alert(1)</script>" not in scaling_html(data)


@FUZZ
@given(blob=st.binary(max_size=300))
def test_random_bytes_never_crash_the_loader(tmp_path, blob):
    TRIED["bytes"] += 1
    assert not loads_or_rejects(write(tmp_path, blob))


@pytest.mark.slow
@FUZZ
@given(value=JSON_VALUES)
def test_arbitrary_json_is_rejected_by_name(tmp_path, value):
    TRIED["json"] += 1
    assert not loads_or_rejects(write(tmp_path, to_json(value)))


@FUZZ
@given(cut=st.integers(min_value=0, max_value=len(json.dumps(base(), indent=2)) - 1))
def test_a_truncated_file_is_rejected(tmp_path, cut):
    TRIED["truncated"] += 1
    path = write(tmp_path, json.dumps(base(), indent=2)[:cut])
    with pytest.raises(ResultsError, match="not valid JSON"):
        read_results(path)


@FUZZ
@given(data=mutated())
def test_one_mutation_is_rejected_by_name_or_loads_cleanly(tmp_path, data):
    TRIED["mutated"] += 1
    path = write(tmp_path, to_json(data))
    if loads_or_rejects(path):
        TRIED["mutated, still valid"] += 1
        frame = load_results(path)
        assert len(frame) == len(read_results(path).measurements)
        # Plausibility marked what it had to; a value it let through as 'ok' is a real number.
        assert all(math.isfinite(v) and v > 0 for v in frame[frame.status == "ok"].value if v is not None)
    good, bad = validate_paths([tmp_path])
    assert len(good) + len(bad) == 1


@st.composite
def odd_but_valid(draw: st.DrawFn) -> dict[str, Any]:
    """The base file with a few leaves swapped for odd values of the same kind: what a build must survive."""
    data = base()
    leaves = [p for p in paths_in(data) if p and not isinstance(at(data, p), (dict, list))]
    for path in draw(st.lists(st.sampled_from(leaves), min_size=1, max_size=5, unique=True)):
        parent, key, old = at(data, path[:-1]), path[-1], at(data, path)
        if isinstance(old, str):
            parent[key] = draw(ODD_STRINGS | st.text(max_size=30))
        elif isinstance(old, bool):
            parent[key] = not old
        elif isinstance(old, (int, float)):
            parent[key] = draw(st.sampled_from([1e-300, 1e-9, 1e300, 3, 10**30, 0.5]) | st.floats(1e-12, 1e12))
    if draw(st.booleans()):
        # Params are free-form: a contributor's tool may put anything there.
        record = draw(st.sampled_from(data["measurements"]))
        record["params"] = draw(
            st.dictionaries(
                st.text(max_size=12) | st.sampled_from(["batch", "side", "direction", "speedup", "world_size"]),
                JSON_VALUES,
                max_size=4,
            )
        )
    return data


@pytest.mark.slow
@BUILD
@given(data=odd_but_valid())
def test_the_build_handles_whatever_validates(tmp_path, data):
    TRIED["built"] += 1
    folder = tmp_path / "results"
    folder.mkdir(exist_ok=True)
    path = write(folder, to_json(data))
    good_twin = write(folder, json.dumps(base() | {"run_id": "twin", "created": "2026-11-22T00:00:00Z"}), "twin.json")
    if loads_or_rejects(path):
        TRIED["built, still valid"] += 1
    else:
        path.unlink()
    build_everything(folder)
    good_twin.unlink()
    path.unlink(missing_ok=True)


@pytest.mark.parametrize(
    "workload, key, value",
    [
        ("bandwidth", "direction", ["device_copy"]),
        ("bandwidth", "direction", {"a": 1}),
        ("bandwidth", "direction", 1e-37),
        ("bandwidth", "direction", True),
        ("bandwidth", "direction", None),
        ("dp-scaling", "speedup", [1.8]),
        ("dp-scaling", "speedup", "fast"),
        ("dp-scaling", "baseline_samples_per_s", {"n": 1}),
        ("dp-scaling", "world_size", None),
    ],
)
def test_the_build_handles_odd_params_found_by_fuzzing(tmp_path, workload, key, value):
    """Regressions hypothesis found: params are free-form, so a value the chart expects may be anything."""
    data = base()
    record = next(m for m in data["measurements"] if m["workload"] == workload and m.get("status", "ok") == "ok")
    record["params"][key] = value
    folder = tmp_path / "results"
    folder.mkdir()
    assert loads_or_rejects(write(folder, json.dumps(data)))
    write(folder, json.dumps(base() | {"run_id": "twin", "created": "2026-11-22T00:00:00Z"}), "twin.json")
    build_everything(folder)


def test_validate_paths_reports_every_bad_file_in_a_mixed_folder(tmp_path):
    samples = [b"", b"\xff\xfe", b"[]", b"{" * 100_000, b'{"run_id": 1}', json.dumps(base()).encode()]
    for i, blob in enumerate(samples):
        write(tmp_path, blob, f"{i}.json")
    TRIED["named"] += len(samples)
    good, bad = validate_paths([tmp_path])
    assert [p.name for p in good] == ["5.json"]
    assert sorted(Path(e.path).name for e in bad) == [f"{i}.json" for i in range(5)]
    deep = next(e for e in bad if e.path.endswith("3.json"))
    assert "not valid JSON" in deep.problems[0]


def test_nan_and_infinity_are_refused_with_their_field(tmp_path):
    data = base()
    data["measurements"][0]["value"] = math.nan
    data["measurements"][2]["stats"]["median"] = math.inf
    path = write(tmp_path, to_json(data))
    with pytest.raises(ResultsError) as info:
        read_results(path)
    assert "field 'measurements.0.value': NaN is not a number JSON can carry" in str(info.value)
    assert "field 'measurements.2.stats.median': Infinity is not a number JSON can carry" in str(info.value)


def test_dates_pandas_cannot_hold_are_refused(tmp_path):
    for created in ("0001-01-01T00:00:00Z", "9999-12-31T00:00:00Z"):
        path = write(tmp_path, json.dumps(base() | {"created": created}))
        with pytest.raises(ResultsError, match="field 'created'"):
            read_results(path)


def test_a_lone_surrogate_is_refused(tmp_path):
    data = copy.deepcopy(base())
    data["machine"]["label"] = "\ud800"
    path = write(tmp_path, json.dumps(data))  # ensure_ascii: written as the escape \ud800
    assert not loads_or_rejects(path)
