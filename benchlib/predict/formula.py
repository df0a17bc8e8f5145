"""A memory prediction as a formula in the batch and the sequence length: traced once, evaluated anywhere.

A step runs the same operations whatever its size. After each one that makes tensors (a moment),
the live tensors of each kind are weights or states of fixed size, or grow with the sequences (a
cache slot, a row of logits), with the tokens (activations, keys and values), or, where a kernel
materialises attention's scores, with the square of the length. So each moment's bytes are
``c0 + c1·b + c2·b·L + c3·b·L²`` for ``b`` sequences of ``L`` tokens, and four traces fix each
moment's coefficients. One sequence runs a few operations of its own (transformers skips a mask),
so it has its own formula, ``c0 + c2·L + c3·L²``, from three traces (`DERIVED_AT`).

A phase's peak at any size is its largest moment there. Only the moments that are the largest
somewhere in the range readers ask about are kept (`ENVELOPE_BATCHES`, `ENVELOPE_LENGTHS`). Each
traced depth is evaluated so, and `LLMPredictor.combined` makes the whole model's peak of them, as
it does from full traces. `tests/test_predict_formula.py` compares formulas with full traces at
random sizes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from benchlib.catalog.language_models import LanguageModel
from benchlib.predict.llm_memory import LARGEST_BATCH, LLMPredictor, Setup

# Where each formula's moments are traced, by whether it is for one sequence: the fewest points
# that tell its terms apart (for several sequences, two batches at one length, three lengths at
# one batch).
DERIVED_AT = {
    True: ((1, 256), (1, 512), (1, 1024)),
    False: ((2, 256), (8, 256), (2, 512), (2, 1024)),
}
# Where a moment must be a phase's peak somewhere to be kept: powers of two and their midpoints,
# from one token or sequence up to the largest batch searched and the model's longest context.
ENVELOPE_BATCHES = tuple(sorted({int(2 ** (i / 2)) for i in range(33)}))
ENVELOPE_LENGTHS = tuple(sorted({int(2 ** (i / 2)) for i in range(41)}))


class FormulaError(ValueError):
    """A step whose operations change with its size, so that its moments can't be followed."""


def basis(batch: int, length: int) -> tuple[int, ...]:
    """The terms the coefficients multiply at ``batch`` sequences of ``length`` tokens: a constant,
    per sequence, per token and per token squared; for one sequence, the per-sequence term is
    part of the constant."""
    if batch == 1:
        return 1, length, length * length
    return 1, batch, batch * length, batch * length * length


@dataclass(frozen=True)
class MemoryFormula:
    """Per traced depth and phase, the kept moments' coefficients (moments × kinds × terms of
    `basis`), for one sequence (``one``) and for several (``several``)."""

    kinds: tuple[str, ...]
    one: tuple[dict[str, Any], ...]
    several: tuple[dict[str, Any], ...]
    predictor: LLMPredictor

    def traced_at(self, batch: int, length: int) -> list[dict[str, dict[str, int]]]:
        """Each traced depth's peak by phase and kind, as a trace at this size would give it."""
        import numpy as np

        terms = np.array(basis(batch, length), dtype=float)
        total = self.kinds.index("total")
        traced = []
        for phases in self.one if batch == 1 else self.several:
            peaks = {}
            for phase, coefficients in phases.items():
                values = coefficients @ terms
                peaks[phase] = dict(
                    zip(self.kinds, np.rint(values[int(np.argmax(values[:, total]))]).astype(int).tolist())
                )
            traced.append(peaks)
        return traced

    def at(self, batch: int, length: int) -> dict[str, int]:
        """The whole model's peak by kind (and per GPU when split) at ``batch`` sequences of ``length`` tokens."""
        return self.predictor.combined(self.traced_at(batch, length))

    def peak(self, batch: int, length: int) -> int:
        """The fullest GPU's tensor peak at ``batch`` sequences of ``length`` tokens."""
        return self.predictor.fullest(self.at(batch, length))

    def largest(self, budget: int, *, batch: int | None = None, length: int | None = None) -> int:
        """The largest length at ``batch`` sequences, or the largest batch of ``length`` tokens, whose
        peak is within ``budget`` (0: not even 1); the peak grows with both, so a bisection finds it."""
        if (batch is None) == (length is None):
            raise ValueError("give the batch (for the largest length) or the length (for the largest batch)")
        limit = self.predictor.model.max_positions() if length is None else LARGEST_BATCH

        def fits(n: int) -> bool:
            return self.peak(batch, n) <= budget if batch is not None else self.peak(n, length) <= budget

        low, high = 0, limit
        while low < high:
            middle = (low + high + 1) // 2
            low, high = (middle, high) if fits(middle) else (low, middle - 1)
        return low

    @property
    def moments(self) -> int:
        """How many moments were kept, over all depths and phases."""
        return sum(len(c) for depths in (self.one, self.several) for phases in depths for c in phases.values())


def _moment_coefficients(
    traces: list[dict[str, list[dict[str, int]]]], points: tuple[tuple[int, int], ...], kinds: tuple[str, ...]
) -> dict[str, Any]:
    """Per phase, each moment's coefficients (moments × kinds × terms) through the traces at ``points``."""
    import numpy as np

    terms = np.array([basis(b, n) for b, n in points], dtype=float)
    solved = {}
    for phase in traces[0]:
        counts = {len(t[phase]) for t in traces}
        if len(counts) != 1:
            raise FormulaError(
                f"--sizes: this model's {phase} runs {' or '.join(map(str, sorted(counts)))} operations "
                "depending on the size, so its memory is no one formula; ask fit at each --batch or --seq-len"
            )
        values = np.array([[[m[k] for k in kinds] for m in t[phase]] for t in traces], dtype=float)
        # values: points × moments × kinds; one solve for every moment and kind at once.
        flat = np.linalg.solve(terms, values.reshape(len(points), -1))
        solved[phase] = flat.reshape(len(points), *values.shape[1:]).transpose(1, 2, 0)
    return solved


def _envelope(coefficients: Any, total: int, one: bool, max_positions: int) -> Any:
    """The moments that are the largest somewhere in the range readers ask about."""
    import numpy as np

    lengths = [n for n in ENVELOPE_LENGTHS if n <= max_positions] + [max_positions]
    batches = (1,) if one else [b for b in ENVELOPE_BATCHES if b > 1]
    grid = np.array([basis(b, n) for b in batches for n in lengths], dtype=float)
    kept = np.unique(np.argmax(coefficients[:, total, :] @ grid.T, axis=0))
    return coefficients[kept]


def memory_formula(model: LanguageModel, setup: Setup, gpus: int = 1, parallel: str = "layers") -> MemoryFormula:
    """The peak memory of ``model`` run as ``setup`` (on ``gpus`` GPUs, sharing the work as
    ``parallel`` says), as a formula in the batch and the length."""
    predictor = LLMPredictor(model, setup, gpus=gpus, parallel=parallel)
    kinds: tuple[str, ...] = ()
    formulas: dict[bool, list[dict[str, Any]]] = {True: [], False: []}
    for layers in predictor.plan.layers:
        tracer = predictor.tracer(layers)
        # A model's first step runs a few operations once (caches it builds on first use): left out.
        tracer.moments(*DERIVED_AT[True][0])
        for one, points in DERIVED_AT.items():
            traces = [tracer.moments(b, n) for b, n in points]
            kinds = kinds or tuple(next(iter(traces[0].values()))[0])
            solved = _moment_coefficients(traces, points, kinds)
            total = kinds.index("total")
            formulas[one].append({p: _envelope(c, total, one, model.max_positions()) for p, c in solved.items()})
    return MemoryFormula(kinds, tuple(formulas[True]), tuple(formulas[False]), predictor)


# The sizes `benchlib fit --sizes` answers at besides the one asked: the longest context at these
# batches (inference), or the largest batch at these lengths (training).
OTHER_BATCHES = (1, 4, 16, 64)
OTHER_LENGTHS = (512, 2048, 8192, 32_768)


def other_sizes(formula: MemoryFormula, budget: int) -> dict[int, int]:
    """Inference: the longest context per batch of `OTHER_BATCHES`; training: the largest batch per
    length of `OTHER_LENGTHS` the model reads; each within ``budget`` (0: none fits)."""
    predictor = formula.predictor
    if not predictor.setup.trains:
        return {b: formula.largest(budget, batch=b) for b in OTHER_BATCHES}
    lengths = [n for n in OTHER_LENGTHS if n <= predictor.model.max_positions()]
    return {n: formula.largest(budget, length=n) for n in lengths}
