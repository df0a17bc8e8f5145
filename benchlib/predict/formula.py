"""A memory prediction as a formula in the batch and the sequence length: traced once, evaluated anywhere.

A step runs the same operations whatever its size. After each one that makes tensors (a moment),
the live tensors of each kind are weights or states of fixed size, or grow with the sequences (a
cache slot, a row of logits), with the tokens (activations, keys and values), or, where a kernel
materialises attention's scores, with the square of the length. So each moment's bytes are
``c0 + c1·b + c2·b·L + c3·b·L²`` for ``b`` sequences of ``L`` tokens, and four traces fix each
moment's coefficients. One sequence runs a few operations of its own (transformers skips a mask),
so it has its own formula, ``c0 + c2·L + c3·L²``, from three traces (`derived_at`). A model with
sliding-window layers stops growing their caches past the window, so each side of the window has
formulas of its own (`length_pieces`).

A phase's peak at any size is its largest moment there. Only the moments that are the largest
somewhere in the range readers ask about are kept (`ENVELOPE_BATCHES`, `ENVELOPE_LENGTHS`). Each
traced depth is evaluated so, and `LLMPredictor.combined` makes the whole model's peak of them, as
it does from full traces. `tests/test_predict_formula.py` compares formulas with full traces at
random sizes.

A step's time is a formula the same way (`time_formula`): each op's FLOPs, bytes and launches are
the same terms of the batch and the length (a decode step's length is the cache it reads), so the
same traces fix them, and the engine's rule (each op takes the longest of its arithmetic, its
traffic and its launch) is applied to the ops at any size, on any GPU. What a MoE layer reads of
its experts' weights is not such a term (`experts_touched`): it is worked out at each size from
the op's rows, which are.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from benchlib.catalog.language_models import LanguageModel, TracePlan
from benchlib.predict.count import OpCost, experts_touched
from benchlib.predict.llm_memory import LARGEST_BATCH, LLMPredictor, Setup
from benchlib.predict.llm_speed import CountedCall, InferenceCalls, LLMSpeed

if TYPE_CHECKING:
    from benchlib.catalog.gpus import AcceleratorSpec
    from benchlib.predict.engines import Engine
    from benchlib.predict.hosts import Host

# The lengths each formula is traced at, where nothing changes its shape in between: short enough
# to trace in a moment, long enough that no op special-cases them.
LENGTHS = (256, 512, 1024)


def derived_at(one: bool, lengths: tuple[int, int, int]) -> tuple[tuple[int, int], ...]:
    """Where a formula's traces are made: the fewest sizes that tell its terms apart (for several
    sequences, two batches at the first length and the others at the smaller batch)."""
    if one:
        return tuple((1, n) for n in lengths)
    return ((2, lengths[0]), (8, lengths[0]), (2, lengths[1]), (2, lengths[2]))


def length_pieces(model: LanguageModel, decode: bool = False) -> tuple[tuple[int, tuple[int, int, int]], ...]:
    """Each range of lengths one formula holds for, as (its longest length, the lengths it is traced
    at): the whole context, or, with sliding-window layers, short of the window and from it on.
    ``decode``: for a decode step, whose length is the cache it reads before adding its token."""
    window, longest = model.sliding_window, model.max_positions()
    if window is None:
        return ((longest, LENGTHS),)
    # transformers masks and rolls the window once a step holds the window's length of tokens.
    short = window - 1 - int(decode)
    past = tuple(min(longest, window * k) for k in (2, 4, 8))
    return ((short, (window // 4, window // 2, short)), (longest, past))  # type: ignore[return-value]


def _piece(pieces: tuple[tuple[int, Any], ...], length: int) -> Any:
    """The formula of the piece holding ``length``."""
    return next((formula for upto, formula in pieces if length <= upto), pieces[-1][1])


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
    """Per range of lengths (`length_pieces`: up to its longest length), for one sequence and for
    several, per traced depth and phase: the kept moments' coefficients (moments × kinds × terms of
    `basis`)."""

    kinds: tuple[str, ...]
    pieces: tuple[tuple[int, dict[bool, tuple[dict[str, Any], ...]]], ...]
    predictor: LLMPredictor

    def traced_at(self, batch: int, length: int) -> list[dict[str, dict[str, int]]]:
        """Each traced depth's peak by phase and kind, as a trace at this size would give it."""
        import numpy as np

        terms = np.array(basis(batch, length), dtype=float)
        total = self.kinds.index("total")
        traced = []
        for phases in _piece(self.pieces, length)[batch == 1]:
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
        return sum(
            len(c)
            for _, sides in self.pieces
            for depths in sides.values()
            for phases in depths
            for c in phases.values()
        )


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


def _envelope(coefficients: Any, total: int, one: bool, shortest: int, longest: int) -> Any:
    """The moments that are the largest somewhere in the range readers ask about, at lengths from
    ``shortest`` to ``longest``."""
    import numpy as np

    lengths = [n for n in ENVELOPE_LENGTHS if shortest <= n <= longest] + [shortest, longest]
    batches = (1,) if one else [b for b in ENVELOPE_BATCHES if b > 1]
    grid = np.array([basis(b, n) for b in batches for n in lengths], dtype=float)
    kept = np.unique(np.argmax(coefficients[:, total, :] @ grid.T, axis=0))
    return coefficients[kept]


def memory_formula(model: LanguageModel, setup: Setup, gpus: int = 1, parallel: str = "layers") -> MemoryFormula:
    """The peak memory of ``model`` run as ``setup`` (on ``gpus`` GPUs, sharing the work as
    ``parallel`` says), as a formula in the batch and the length."""
    predictor = LLMPredictor(model, setup, gpus=gpus, parallel=parallel)
    kinds: tuple[str, ...] = ()
    pieces = []
    shortest = 1
    for upto, lengths in length_pieces(model):
        sides: dict[bool, list[dict[str, Any]]] = {True: [], False: []}
        for layers in predictor.plan.layers:
            tracer = predictor.tracer(layers)
            # A model's first step runs a few operations once (caches it builds on first use): left out.
            tracer.moments(1, lengths[0])
            for one in (True, False):
                points = derived_at(one, lengths)
                traces = [tracer.moments(b, n) for b, n in points]
                kinds = kinds or tuple(next(iter(traces[0].values()))[0])
                solved = _moment_coefficients(traces, points, kinds)
                total = kinds.index("total")
                sides[one].append({p: _envelope(c, total, one, shortest, upto) for p, c in solved.items()})
        pieces.append((upto, {one: tuple(depths) for one, depths in sides.items()}))
        shortest = upto + 1
    return MemoryFormula(kinds, tuple(pieces), predictor)


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


# ----------------------------------------------------------------------------- time

# An op's counts that grow with the size (coefficients of `basis`), and what it is (the same at every size).
GROWING = ("flops", "bytes", "largest_input_bytes", "weight_elements", "rows")
FIXED = ("op", "kind", "dtype", "expert_bytes", "experts")


@dataclass(frozen=True)
class OpsFormula:
    """One call's ops on one traced depth: what each op is (`FIXED`), and its `GROWING` counts as
    coefficients of `basis` (ops × counts × terms); a MoE op's ``bytes`` leave out its experts'
    weights, which `at` adds in the share its rows touch."""

    fixed: tuple[tuple[Any, ...], ...]
    coefficients: Any

    def at(self, batch: int, length: int, experts_per_token: int) -> tuple[OpCost, ...]:
        import numpy as np

        values = np.rint(self.coefficients @ np.array(basis(batch, length), dtype=float)).tolist()
        ops = []
        for fixed, counts in zip(self.fixed, values, strict=True):
            # Python's ints: a 70B model's FLOPs at the largest batch and context pass int64's range.
            op = OpCost(**dict(zip(FIXED, fixed)), **dict(zip(GROWING, map(int, counts))))
            if op.expert_bytes:
                share = experts_touched(op.experts, min(experts_per_token, op.experts), op.rows / experts_per_token)
                op = replace(op, bytes=op.bytes + int(share * op.expert_bytes), weight_share=share)
            ops.append(op)
        return tuple(ops)


@dataclass(frozen=True)
class CallFormula:
    """One call (a prefill, a decode step, a training step) as formulas per range of lengths
    (`length_pieces`), for one sequence (True) and for several, per traced depth; ``per_token``: a
    call takes ``length`` tokens of each sequence (a prefill, a training step) rather than one (a
    decode step)."""

    plan: TracePlan
    pieces: tuple[tuple[int, dict[bool, tuple[OpsFormula, ...]]], ...]
    experts_per_token: int
    per_token: bool

    def at(self, batch: int, length: int) -> CountedCall:
        """The call's ops at ``batch`` sequences of ``length`` tokens, as a count there would give them."""
        depths = _piece(self.pieces, length)[batch == 1]
        ops = tuple(d.at(batch, length, self.experts_per_token) for d in depths)
        return CountedCall(self.plan, ops, batch * length if self.per_token else batch)


@dataclass(frozen=True)
class TimeFormula:
    """A setup's calls as formulas: prefill and decode (inference), or one training step."""

    setup: Setup
    prefill: CallFormula | None = None
    decode: CallFormula | None = None
    train: CallFormula | None = None

    def inference(self, batch: int, length: int) -> InferenceCalls:
        """A prefill of ``length`` tokens and a decode step reading a cache of ``length``, for ``batch`` sequences."""
        assert self.prefill is not None
        return InferenceCalls(self.prefill.at(batch, length), self.decode.at(batch, length) if self.decode else None)

    def training(self, batch: int, length: int) -> CountedCall:
        assert self.train is not None
        return self.train.at(batch, length)


def _ops_formula(traces: list[tuple[OpCost, ...]], points: tuple[tuple[int, int], ...], call: str) -> OpsFormula:
    import numpy as np

    fixed = [tuple(tuple(getattr(op, f) for f in FIXED) for op in ops) for ops in traces]
    if any(f != fixed[0] for f in fixed):
        raise FormulaError(
            f"--sizes: this model's {call} runs other operations at other sizes, so its time is no one "
            "formula; ask predict at each --batch and --seq-len"
        )
    values = np.array(
        [
            [
                [op.flops, op.bytes - int(op.weight_share * op.expert_bytes), op.largest_input_bytes]
                + [op.weight_elements, op.rows]
                for op in ops
            ]
            for ops in traces
        ],
        dtype=float,
    )
    terms = np.array([basis(b, n) for b, n in points], dtype=float)
    flat = np.linalg.solve(terms, values.reshape(len(points), -1))
    return OpsFormula(fixed[0], flat.reshape(len(points), *values.shape[1:]).transpose(1, 2, 0))


def time_formula(model: LanguageModel, setup: Setup) -> TimeFormula:
    """The calls of ``model`` run as ``setup`` (at any batch and length) as formulas, from counts at
    the sizes `derived_at` gives for each of `length_pieces`."""
    from benchlib.predict import llm_speed

    plan = llm_speed.plan_of(model)
    tracers = [llm_speed.tracer_of(model, setup, layers) for layers in plan.layers]
    calls = ("train",) if setup.trains else ("prefill", "decode")
    # One count of a prefill and the decode step after it serves both calls' formulas.
    counts: dict[tuple[int, int, int], Any] = {}
    formulas = {call: _call_formula(model, setup, plan, tracers, call, counts) for call in calls}
    return TimeFormula(setup, **formulas)


def _call_formula(
    model: LanguageModel,
    setup: Setup,
    plan: TracePlan,
    tracers: list[Any],
    call: str,
    counts: dict[tuple[int, int, int], Any],
) -> CallFormula | None:
    """``call``'s formula over every piece of lengths; None where the model makes no such call (an
    encoder has no decode step)."""
    pieces = []
    for upto, lengths in length_pieces(model, decode=call == "decode"):
        sides: dict[bool, tuple[OpsFormula, ...]] = {}
        for one in (True, False):
            points = derived_at(one, lengths)
            formulas = []
            for depth, tracer in enumerate(tracers):
                traces = [_count_call(tracer, setup, call, b, n, counts, depth) for b, n in points]
                if any(ops is None for ops in traces):
                    return None
                formulas.append(_ops_formula(traces, points, call))  # type: ignore[arg-type]
            sides[one] = tuple(formulas)
        pieces.append((upto, sides))
    return CallFormula(plan, tuple(pieces), model.experts_per_token, call != "decode")


def _count_call(
    tracer: Any, setup: Setup, call: str, batch: int, length: int, counts: dict[tuple[int, int, int], Any], depth: int
) -> tuple[OpCost, ...] | None:
    """The ops of ``call`` at ``batch`` sequences of ``length`` tokens (None: the model makes no such
    call); an inference count is kept in ``counts`` by traced depth and size for the other call."""
    from benchlib.predict import llm_speed

    at = replace(setup, batch=batch, seq_len=length)
    if call == "train":
        return llm_speed.count_training_step(tracer, at)
    if (depth, batch, length) not in counts:
        counts[depth, batch, length] = llm_speed.count_inference_at(tracer, at, length)
    prefill, decode = counts[depth, batch, length]
    return prefill if call == "prefill" else decode


def other_speeds(
    model: LanguageModel, gpu: AcceleratorSpec, setup: Setup, engine: Engine, host: Host | None
) -> list[LLMSpeed]:
    """`benchlib predict --sizes`: inference at `OTHER_BATCHES` sequences of ``setup``'s length, or
    training at `OTHER_LENGTHS` tokens (those the model reads) in ``setup``'s batch, from the time formula."""
    from benchlib.predict.llm_speed import predict_llm_speed

    formula = time_formula(model, setup)
    if setup.trains:
        sizes = [(setup.batch, n) for n in OTHER_LENGTHS if n <= model.max_positions()]
    else:
        sizes = [(b, setup.seq_len) for b in OTHER_BATCHES]
    return [
        predict_llm_speed(
            model,
            gpu,
            replace(setup, batch=b, seq_len=n),
            engine,
            concurrency=False,
            host=host,
            counted=formula.training(b, n) if setup.trains else formula.inference(b, n),
        )
        for b, n in sizes
    ]
