"""A model the user gives `--model` (a config.json, or ``package.module:factory``) that benchlib can't
trace is one line naming the config's field or the factory and what was expected, with exit code 2;
a factory that returns ``(model, tokenizer)``, as loading helpers do, is traced from its model."""

from __future__ import annotations

import json
import textwrap

import pytest
from fit_cli import invoke
from tiny_configs import TINY_QWEN2

MIXTRAL = {"model_type": "mixtral", "architectures": ["MixtralForCausalLM"], "num_experts_per_tok": 2}
QWEN3_MOE = {"model_type": "qwen3_moe", "architectures": ["Qwen3MoeForCausalLM"], "num_experts_per_tok": 2}
BUDGET = ["--memory-limit", "256MiB", "--seq-len", "64"]


def error_line(result) -> str:
    """The one line the command printed, after checking that it is one line, an error, and exit code 2."""
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.output
    return lines[0]


@pytest.mark.parametrize(
    ("fields", "expected"),
    [
        (TINY_QWEN2 | {"num_key_value_heads": 3}, "num_key_value_heads 3 doesn't divide num_attention_heads 4"),
        (TINY_QWEN2 | MIXTRAL | {"num_local_experts": 0}, "num_local_experts is 0; it must be at least 1"),
        (TINY_QWEN2 | QWEN3_MOE | {"num_experts": 0}, "num_experts is 0; it must be at least 1"),
        (
            TINY_QWEN2 | MIXTRAL | {"num_local_experts": 2, "num_experts_per_tok": 4},
            "num_experts_per_tok 4 is more than",
        ),
        (TINY_QWEN2 | {"num_hidden_layers": -1}, "num_hidden_layers is -1; it must be at least 1"),
    ],
)
def test_a_config_that_cant_describe_a_model_names_the_field(tmp_path, fields, expected):
    config = tmp_path / "config.json"
    config.write_text(json.dumps(fields))
    line = error_line(invoke("--model", str(config), *BUDGET))
    assert line.startswith(f"error: --model {config}: ") and expected in line


@pytest.mark.slow  # a trace
def test_a_config_that_fails_while_traced_is_one_line_naming_the_file(tmp_path):
    # Its sizes are all in range, but transformers knows no such activation: whatever fails, and
    # wherever, the user reads one line naming the file.
    config = tmp_path / "config.json"
    config.write_text(json.dumps(TINY_QWEN2 | {"hidden_act": "no_such_activation"}))
    line = error_line(invoke("--model", str(config), *BUDGET))
    assert line.startswith(f"error: --model {config}: ")


@pytest.fixture
def factories(tmp_path, monkeypatch):
    (tmp_path / "user_factories.py").write_text(
        textwrap.dedent("""
        def with_tokenizer():
            from transformers import GPT2Config, GPT2LMHeadModel
            model = GPT2LMHeadModel(GPT2Config(n_embd=64, n_layer=6, n_head=4, vocab_size=300, n_positions=256))
            return model, "a tokenizer"

        def nothing():
            return None

        def two_models():
            from torch import nn
            return nn.Embedding(300, 8), nn.Embedding(300, 8)

        def broken():
            raise RuntimeError("the download failed")
        """)
    )
    monkeypatch.syspath_prepend(str(tmp_path))


@pytest.mark.slow  # a trace
def test_a_factory_returning_model_and_tokenizer_is_traced_from_the_model(factories):
    result = invoke("--model", "user_factories:with_tokenizer", *BUDGET, "--json")
    assert result.exit_code == 0, result.output
    answer = json.loads(result.stdout)
    assert answer["fits"] and "extrapolated per layer to 6" in answer["method"]


@pytest.mark.parametrize(
    ("factory", "expected"),
    [
        ("nothing", "nothing() returned None; return a torch model"),
        ("two_models", "two_models() returned a tuple holding 2 torch models; return the model alone"),
        ("broken", "broken() raised RuntimeError: the download failed"),
    ],
)
def test_a_factory_that_gives_no_model_is_named_with_what_to_return(factories, factory, expected):
    line = error_line(invoke("--model", f"user_factories:{factory}", *BUDGET))
    assert line.startswith(f"error: --model user_factories:{factory}: ") and expected in line
