"""A model and setup's formulas as the JSON values the table ``llm_formulas`` holds.

`benchlib.predict.formula` derives a setup's memory and time formulas from a few traces; `entry`
writes them down as nested lists of numbers, with what the evaluators need besides: the trace plan
that adds the traced depths up to the whole model, and the input embeddings' bytes, which put the
layers of a split model on their GPUs. `benchlib.predict.formula_file` (the CLI) and the picker's
script read them back.

A call's ops are written once each (``ops``) with the order they run in (``order``, indices into
``ops``): a training step runs about 1,500 ops of about 100 kinds, and an engine that reads packed
weights pairs each dequantize op with the matmul after it, so the order counts.

An entry's values come from this module's code and what it imports, the model's config, the setup
and the versions of torch, transformers and peft alone, so the table reuses an entry while none of
them changes.
"""

from __future__ import annotations

from typing import Any

from benchlib.catalog.language_models import resolve_model
from benchlib.predict.formula import FormulaError, memory_formula, time_formula
from benchlib.predict.llm_memory import Setup

# Seven significant digits: a coefficient's rounding moves a 100 GB peak by a few kB. What is left
# of a solve's rounding (below `NOISE`) is zero: a real coefficient counts whole bytes or FLOPs in
# some term, or a fraction of one no smaller than a 4-bit weight's share of its group's scale.
DIGITS = 7
NOISE = 1e-6


def _number(x: float) -> float | int:
    if abs(x) < NOISE:
        return 0
    rounded = float(f"{x:.{DIGITS}g}")
    return int(rounded) if rounded.is_integer() else rounded


def _rounded(values: Any) -> Any:
    """Nested lists of ``values`` (a numpy array), each number as `_number` writes it, and a list
    of zeros (an op's count that no term grows) as one 0."""
    if getattr(values, "ndim", 0) == 1:
        row = [_number(float(x)) for x in values]
        return row if any(row) else 0
    return [_rounded(v) for v in values]


def _memory(model: Any, setup: Setup) -> dict[str, Any]:
    formula = memory_formula(model, setup)
    predictor = formula.predictor
    plan = predictor.plan
    return {
        "kinds": list(formula.kinds),
        "plan": {
            "coefficients": list(plan.coefficients),
            "layers": [list(layers) if layers is not None else None for layers in plan.layers],
            "full": list(plan.full),
        },
        # A split puts the embeddings on the first GPU (`LLMPredictor._per_gpu`).
        "embedding_bytes": predictor._embedding_bytes() if plan.reduced else None,
        "tied": bool(getattr(model.text_config, "tie_word_embeddings", False)),
        "pieces": [
            {
                "upto": upto,
                **{
                    side: [{phase: _rounded(c) for phase, c in depth.items()} for depth in sides[one]]
                    for side, one in (("one", True), ("many", False))
                },
            }
            for upto, sides in formula.pieces
        ],
    }


def _ops(depth: Any) -> dict[str, Any]:
    """One traced depth's ops: each kind once, and the order they run in."""
    ops: list[list[Any]] = []
    index: dict[str, int] = {}
    order = []
    for fixed, coefficients in zip(depth.fixed, _rounded(depth.coefficients), strict=True):
        op = [*fixed, coefficients]
        key = repr(op)
        if key not in index:
            index[key] = len(ops)
            ops.append(op)
        order.append(index[key])
    return {"ops": ops, "order": order}


def _time(model: Any, setup: Setup) -> dict[str, Any]:
    formula = time_formula(model, setup)
    calls = {}
    for name in ("prefill", "decode", "train"):
        call = getattr(formula, name)
        if call is None:
            continue
        calls[name] = {
            "per_token": call.per_token,
            "plan_coefficients": list(call.plan.coefficients),
            "pieces": [
                {
                    "upto": upto,
                    **{side: [_ops(d) for d in sides[one]] for side, one in (("one", True), ("many", False))},
                }
                for upto, sides in call.pieces
            ],
        }
    return {"experts_per_token": model.experts_per_token, "calls": calls}


def entry(name: str, setup: Setup) -> dict[str, Any]:
    """The formulas of the model ``name`` (shipped, or a config's path) run as ``setup``, or why there are none."""
    model = resolve_model(name)
    try:
        return {"memory": _memory(model, setup), "time": _time(model, setup)}
    # A setup the model can't run (ValueError from make_setup or the predictor: MXFP4 on a model
    # without experts), one whose ops change with the size (FormulaError, named for the reader
    # though it is a ValueError), or an architecture the trace can't build: the entry says why.
    except (FormulaError, ValueError, NotImplementedError) as exc:
        return {"not_predicted": str(exc)}
