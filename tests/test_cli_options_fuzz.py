"""`benchlib fit` and `benchlib predict` with random values for their numeric and named options: each
answers (exit 0) or refuses in words (exit 1 or 2), and never ends in a traceback.

The model is a tiny config.json, traced whole, so an answered example takes about a second: 100
examples take 45-65 s on 2 cores, about half of them answered (--hypothesis-show-statistics). The
trace cache is shared with the other tests, so one setup is traced once. Against the code before
issue 38's fixes it found `predict --batch 9223372036854775808`, a torch overflow traceback, with
one seed in three; the overflows it found are kept as explicit examples, which fail there always.
"""

from __future__ import annotations

import json

import pytest
import typer
from click.testing import CliRunner
from hypothesis import HealthCheck, event, example, given, settings
from hypothesis import strategies as st

from benchlib.cli import app
from benchlib.predict.engines import ENGINES
from benchlib.predict.hosts import HOSTS
from benchlib.predict.llm_memory import COMPUTE_DTYPES, MODES, PARALLEL, WEIGHTS
from benchlib.predict.weight_formats import KV_CACHE_FORMATS

# Four layers: traced whole, once, rather than at two depths; 32 wide, 256 tokens at most.
TINY = {
    "model_type": "qwen2",
    "architectures": ["Qwen2ForCausalLM"],
    "hidden_size": 32,
    "intermediate_size": 64,
    "num_hidden_layers": 4,
    "num_attention_heads": 2,
    "num_key_value_heads": 1,
    "vocab_size": 128,
    "max_position_embeddings": 256,
}
GPUS = ("T4", "RTX 4090", "A100 80GB SXM")
# What a user might type for a number: junk, signs, floats, spaces; and the sizes that overflow a C int.
NOT_A_COUNT = st.sampled_from(["", " ", "abc", "1.5", "1e3", "nan", "inf", "-0", "+3", "0x10", "٣"])
BOUNDARIES = st.sampled_from([2**31, 2**32, 2**63, 2**64, 10**30])


def sometimes(odd: st.SearchStrategy[str], usual: st.SearchStrategy[str], odds: int) -> st.SearchStrategy[str]:
    """``odd`` once in ``odds``, else ``usual``: with ten options, an odd value in each would leave none answered."""
    return st.integers(1, odds).flatmap(lambda i: odd if i == odds else usual)


def count(typical: int) -> st.SearchStrategy[str]:
    """A count option's text: mostly one a user gives; else zero or negative, large, at a boundary, or not a number."""
    odd = st.one_of(BOUNDARIES, st.integers(-(10**6), 0), st.integers(typical, 10**7)).map(str) | NOT_A_COUNT
    return sometimes(odd, st.integers(1, typical).map(str), 3)


def name(known: tuple[str, ...] | list[str]) -> st.SearchStrategy[str]:
    """A named option's text: mostly one it knows; else another word, or a known one in capitals."""
    return sometimes(st.text(max_size=12) | st.sampled_from(known).map(str.upper), st.sampled_from(list(known)), 8)


def optional(flag: str, values: st.SearchStrategy[str], odds: int) -> st.SearchStrategy[list[str]]:
    """The option given once in ``odds`` times: given more, options that don't go together would refuse most."""
    return sometimes(values.map(lambda value: [flag, value]), st.just([]), odds)


SHARED = {
    "--batch": count(8),
    "--seq-len": count(256),
    "--weights": name(WEIGHTS),
    "--kv-cache": name(KV_CACHE_FORMATS),
    "--engine": name(list(ENGINES)),
    "--dtype": name(COMPUTE_DTYPES),
}
COUNTS = ("--batch", "--seq-len", "--gpus")
ONLY = {"fit": {"--gpus": count(8), "--parallel": name(PARALLEL)}, "predict": {"--host": name(list(HOSTS))}}


@st.composite
def command_lines(draw: st.DrawFn) -> list[str]:
    """A `fit` or `predict` command line; --lora-rank mostly with a mode that takes it, or most would refuse it."""
    command = draw(st.sampled_from(sorted(ONLY)))
    args = [command, "--gpu", draw(st.sampled_from(GPUS))]
    mode = draw(optional("--mode", name(MODES), 2))
    rank_odds = 2 if mode[1:] in (["lora"], ["qlora"]) else 8
    args += mode + draw(optional("--lora-rank", count(64), rank_odds))
    for flag, values in {**SHARED, **ONLY[command]}.items():
        args += draw(optional(flag, values, 2 if flag in COUNTS else 4))
    return args


@pytest.fixture(scope="module")
def command():
    return typer.main.get_command(app)  # built once: building it takes longer than a refused command


@pytest.fixture(scope="module")
def config(tmp_path_factory) -> str:
    path = tmp_path_factory.mktemp("tiny") / "config.json"
    path.write_text(json.dumps(TINY))
    return str(path)


@pytest.mark.slow
@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(args=command_lines())
# What it found: sizes past a C long overflowed torch in the trace, a traceback.
@example(args=["predict", "--gpu", "T4", "--batch", str(2**63)])
@example(args=["fit", "--gpu", "T4", "--mode", "lora", "--lora-rank", str(2**63)])
def test_fit_and_predict_answer_or_refuse_any_option_values_without_a_traceback(command, config, args):
    args = [*args[:1], "--model", config, *args[1:]]
    result = CliRunner().invoke(command, args)
    shown = f"benchlib {' '.join(args)}\n{result.output}"
    event(f"exit {result.exit_code}")  # --hypothesis-show-statistics: how many were answered
    assert result.exception is None or isinstance(result.exception, SystemExit), shown
    assert result.exit_code in (0, 1, 2) and "Traceback" not in result.output, shown
    if result.exit_code:
        assert "error: " in result.output or "Error" in result.output, shown
