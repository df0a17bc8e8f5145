"""`benchlib fit` and `benchlib predict` answer for the same language-model setup on every GPU in the
specs (`benchlib.predict.llm_options`): the commands run up to the prediction, which is replaced by
one that hands back what it was asked, so no model is traced (nor a committed formula evaluated)."""

from __future__ import annotations

import pytest
import typer
from click.testing import CliRunner

from benchlib.catalog.gpus import find_gpu, load_accelerators
from benchlib.catalog.language_models import resolve_model
from benchlib.cli import app
from benchlib.predict import formula_file, llm_memory, llm_speed
from benchlib.predict.llm_memory import MODES
from benchlib.predict.llm_options import LLMOptions

GPUS = [spec.name for spec in load_accelerators() if spec.kind == "gpu"]
MODEL = "llama-3.2-1b"
# Each mode's defaults, and the weight formats whose dtype or format depends on the GPU: bf16 (refused
# without it), fp8 and mxfp4 (dequantized on GPUs without their kernels), nf4 (computes in the default).
FLAG_SETS = [("--mode", mode) for mode in MODES] + [("--weights", w) for w in ("bf16", "fp8", "mxfp4", "nf4")]


class Asked(Exception):
    """Raised in place of a prediction: the setup and engine the command asked it for."""


@pytest.fixture(scope="module")
def command():
    return typer.main.get_command(app)  # built once: building it takes longer than a command here


@pytest.fixture
def asked(monkeypatch, command):
    def predict_memory(model, setup, device, **options):
        raise Asked(setup, "transformers")  # the engine whose memory `fit` traces

    def predict_speed(model, gpu, setup, engine, **options):
        raise Asked(setup, engine.name)

    def from_formulas(formulas, device, gpus=1):
        raise Asked(formulas.setup, "transformers")

    monkeypatch.setattr(llm_memory, "predict_llm", predict_memory)
    monkeypatch.setattr(llm_speed, "predict_llm_speed", predict_speed)
    # A shipped model in a committed setup answers from the formulas (benchlib.cli.formulas), not a trace.
    monkeypatch.setattr(formula_file.ModelFormulas, "predict", from_formulas)

    def run(*flags: str) -> tuple:
        result = CliRunner().invoke(command, flags)
        if isinstance(result.exception, Asked):
            return result.exception.args
        assert result.exit_code == 2, result.output
        return ("refused", " ".join(result.output.split()))

    return run


@pytest.mark.parametrize("gpu", GPUS)
def test_fit_and_predict_resolve_the_same_setup_on_every_gpu(gpu, asked):
    for flags in FLAG_SETS:
        fit = asked("fit", "--model", MODEL, "--gpu", gpu, *flags)
        predict = asked("predict", "--model", MODEL, "--gpu", gpu, *flags)
        assert fit == predict, f"{' '.join(flags)}: fit {fit}, predict {predict}"


@pytest.mark.parametrize(
    ("gpu", "dtype"),
    [
        ("T4", "fp16"),
        ("V100 SXM2 16GB", "fp16"),
        ("A100 80GB SXM", "bf16"),
        # bf16 by the specs, which give no bf16 TFLOPS for them yet (a missing figure, not a missing feature).
        ("H200 NVL", "bf16"),
        ("RTX 6000 Ada", "bf16"),
    ],
)
def test_a_gpu_computes_in_bf16_unless_its_specs_say_it_has_none(gpu, dtype):
    model = resolve_model(MODEL)
    for mode in MODES:
        setup = LLMOptions(find_gpu(gpu), mode=mode).resolve(model).setup
        assert setup.dtype == dtype, mode
    assert LLMOptions(find_gpu(gpu), mode="train").resolve(model).setup.weights == "fp32"  # under autocast
    assert LLMOptions(find_gpu(gpu), weights="fp32").compute_dtype is None  # float weights compute as stored


def test_a_plain_memory_budget_keeps_the_weights_dtype():
    assert LLMOptions(None, mode="train").resolve(resolve_model(MODEL)).setup.dtype == "fp32"


def test_an_unknown_engine_is_refused_before_the_model_is_looked_up():
    with pytest.raises(ValueError, match="--engine 'vlm': choose one of transformers, vllm"):
        LLMOptions(find_gpu("T4"), engine="vlm")


@pytest.mark.parametrize(("given", "flag"), [({"batch": 0}, "--batch"), ({"seq_len": 0}, "--seq-len")])
def test_a_zero_given_is_refused_not_read_as_the_default(given, flag):
    with pytest.raises(ValueError, match=f"{flag}.* must be at least 1"):
        LLMOptions(find_gpu("T4"), **given).resolve(resolve_model(MODEL))
