"""`benchlib predict`: how fast a model trains or runs on a named GPU, predicted from its specs.

Language models take `benchlib fit`'s options and an ``--engine`` (:mod:`benchlib.predict.llm_speed`);
the built-in networks are timed by the roofline alone (:mod:`benchlib.predict.speed`). A shipped model's
calls come from the committed formulas where they hold its setup (:mod:`benchlib.cli.formulas`). Bad
input (a model, GPU, engine, mode or format that doesn't apply) ends with a one-line message naming it
and exit 2.
"""

from __future__ import annotations

import json
import textwrap
from dataclasses import asdict, replace
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.table import Table

from benchlib.cli.collector import collector_paused
from benchlib.cli.fit import ModelOpt
from benchlib.cli.fit_options import ENGINE_HELP, KV_CACHE_HELP, MAX_BATCH, MAX_LORA_RANK, WEIGHTS_HELP
from benchlib.cli.formulas import TRACE_HELP
from benchlib.cli.output import at_least, console, usage_error

if TYPE_CHECKING:
    from benchlib.catalog.gpus import AcceleratorSpec
    from benchlib.catalog.language_models import LanguageModel
    from benchlib.cli.formulas import Asked
    from benchlib.models.trainable import ModelSpec
    from benchlib.predict.formula_file import ModelFormulas
    from benchlib.predict.hosts import Host
    from benchlib.predict.llm_memory import Setup
    from benchlib.predict.llm_speed import LLMSpeed
    from benchlib.predict.speed import SpeedPrediction


@collector_paused()
def predict(
    model: ModelOpt,
    gpu: Annotated[str, typer.Option("--gpu", help="A GPU in benchlib's specs, e.g. T4, 'A100 80GB SXM', 'RTX 4090'.")],
    mode: Annotated[
        str | None,
        typer.Option(
            "--mode",
            help="inference (language models: prefill, then decode with a KV cache), train (full "
            "fine-tuning), lora or qlora. Default: inference for language models, train for the built-in networks.",
        ),
    ] = None,
    engine: Annotated[str | None, typer.Option("--engine", help=ENGINE_HELP)] = None,
    weights: Annotated[str | None, typer.Option("--weights", help="Language models. " + WEIGHTS_HELP)] = None,
    kv_cache: Annotated[str | None, typer.Option("--kv-cache", help=KV_CACHE_HELP)] = None,
    dtype: Annotated[
        str | None,
        typer.Option(
            "--dtype",
            help="fp32, fp16 or bf16. Default: fp32 for the built-in networks, bf16 for language models "
            "(fp16 where the GPU has no bf16).",
        ),
    ] = None,
    batch: Annotated[
        int | None,
        typer.Option(
            "--batch",
            callback=at_least(1, at_most=MAX_BATCH),
            help="Samples per step (default 64 images, or 1 sequence). Inference: sequences decoded at "
            "once, and the decode rate is their sum.",
        ),
    ] = None,
    seq_len: Annotated[
        int | None,
        typer.Option(
            "--seq-len",
            callback=at_least(1),
            help="Language models: tokens per sequence; for inference, the prompt "
            "and the KV cache a decode step reads (default 2048, or the model's limit).",
        ),
    ] = None,
    lora_rank: Annotated[
        int | None,
        typer.Option(
            "--lora-rank",
            callback=at_least(1, at_most=MAX_LORA_RANK),
            help="lora/qlora: the adapters' rank (default 16).",
        ),
    ] = None,
    lora_targets: Annotated[
        str, typer.Option("--lora-targets", help="lora/qlora: all-linear, or module names such as q_proj,v_proj.")
    ] = "all-linear",
    grad_checkpointing: Annotated[
        bool,
        typer.Option("--grad-checkpointing", help="Training modes: recompute activations (one more forward pass)."),
    ] = False,
    optimizer: Annotated[
        str | None, typer.Option("--optimizer", help="Training modes: adamw (default) or paged_adamw_8bit.")
    ] = None,
    host: Annotated[
        str | None,
        typer.Option(
            "--host",
            help="Language models: the machine that launches an eager engine's kernels: server, desktop, "
            "colab or kaggle. Default: where readers find the GPU (a T4 or L4 on Colab, a P100 on Kaggle, "
            "a GeForce card in a desktop, other cards in servers).",
        ),
    ] = None,
    sizes: Annotated[
        bool,
        typer.Option(
            "--sizes",
            help="Language models: also the speed at 1, 4, 16 and 64 sequences (inference), or at 512 to "
            "32,768 tokens a sample (training), from the step's counts as a formula in the batch and the "
            "length (a few more counts: seconds to a minute; within 2 % of a count). Whether they fit: "
            "benchlib fit --sizes.",
        ),
    ] = False,
    tokens: Annotated[
        float | None,
        typer.Option(
            "--tokens",
            callback=at_least(1, at_most=1e15),
            help="Language models: also the time to train on (or generate) this many tokens at the "
            "predicted rate, and how it fits the free platforms that offer this GPU: sessions, and "
            "shares of daily or weekly GPU quotas (dated limits from the platforms data). E.g. 1e7.",
        ),
    ] = None,
    trace: Annotated[bool, typer.Option("--trace", help=TRACE_HELP)] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the prediction as one JSON object.")] = False,
) -> None:
    """Predict throughput (images/s or tokens/s) on a GPU from its specs, without a GPU.

    For a language model: prefill and decode tokens/s per engine, the sequences a GPU can
    serve at once, or training tokens/s for train, lora and qlora; each with the error the same
    method reached on published measurements.
    """
    from benchlib.catalog.gpus import UnknownGPU, find_gpu
    from benchlib.catalog.language_models import ModelNotFound, tracing
    from benchlib.cli.formulas import resolve
    from benchlib.models.trainable import MODELS
    from benchlib.predict.hosts import find_host
    from benchlib.predict.llm_options import LLMOptions
    from benchlib.tables.llm_speed_check import error_summary

    try:
        # The names are looked up once, here, and the specs passed on.
        spec = find_gpu(gpu, "`predict` times GPUs only")
        host_class = find_host(host) if host is not None else None
        if model in MODELS:
            _language_model_only(
                engine,
                weights,
                lora_rank,
                lora_targets,
                grad_checkpointing,
                optimizer,
                kv_cache,
                host,
                sizes,
                tokens,
                trace,
            )
            builtin = _predict_builtin(MODELS[model], spec, mode or "train", dtype, batch, seq_len)
            answer, show = builtin.as_dict(), lambda: _print(builtin)
        else:
            options = LLMOptions(  # before the model: a typo in --engine answers at once
                spec,
                mode=mode,
                weights=weights,
                dtype=dtype,
                kv_cache=kv_cache,
                batch=batch,
                seq_len=seq_len,
                lora_rank=lora_rank,
                lora_targets=lora_targets,
                grad_checkpointing=grad_checkpointing,
                optimizer=optimizer,
                engine=engine,
            )
            asked = resolve(model, options, tuple(MODELS), trace=trace, parallel="layers")
            language_model = asked.model
            with tracing(language_model):
                speed, note = _predict_language_model(asked, spec, host_class)
                others = _other_speeds(asked, spec, speed) if sizes else []
            note = "; ".join(part for part in (note, _unchecked_vendor(spec)) if part) or None
            check = _published_check(speed)
            command = speed.engine.check_text(language_model.name, speed.setup.seq_len, speed.setup.batch)
            answer = speed.as_dict() | {
                "published_check": check,
                "published_check_prefill": None if speed.setup.trains else error_summary(speed.engine.name, "prefill"),
                "check_command": command,
                "note": note,
            }
            source = None
            if asked.formulas is not None:
                source, answer["method"] = asked.formulas.source(), asked.formulas.speed_method()
            if sizes:
                answer["other_sizes"] = [_speeds_at(other) for other in others]
            job = _job(speed, spec, tokens) if tokens else None
            if job:
                answer["job"] = job
            show = lambda: _print_llm(speed, check, note, command, others, job, source)  # noqa: E731
    except (ModelNotFound, UnknownGPU, ValueError) as exc:
        raise usage_error(str(exc))
    if as_json:
        typer.echo(json.dumps(answer, indent=2))
        return
    show()


def _language_model_only(
    engine: str | None,
    weights: str | None,
    lora_rank: int | None,
    lora_targets: str,
    grad_checkpointing: bool,
    optimizer: str | None,
    kv_cache: str | None = None,
    host: str | None = None,
    sizes: bool = False,
    tokens: float | None = None,
    trace: bool = False,
) -> None:
    given = [
        flag
        for flag, value in (
            ("--sizes", sizes),
            ("--trace", trace),
            ("--tokens", tokens is not None),
            ("--engine", engine is not None),
            ("--host", host is not None),
            ("--weights", weights is not None),
            ("--kv-cache", kv_cache is not None),
            ("--lora-rank", lora_rank is not None),
            ("--lora-targets", lora_targets != "all-linear"),
            ("--grad-checkpointing", grad_checkpointing),
            ("--optimizer", optimizer is not None),
        )
        if value
    ]
    if given:
        raise ValueError(
            f"{', '.join(given)} applies to language models; the built-in networks take --dtype and --batch"
        )


def _predict_builtin(
    model: ModelSpec, spec: AcceleratorSpec, mode: str, dtype: str | None, batch: int | None, seq_len: int | None
) -> SpeedPrediction:
    from benchlib.predict.speed import predict_speed

    if seq_len is not None:
        raise ValueError(f"--seq-len applies to language models; {model.name} has a fixed input")
    return predict_speed(model, spec, mode=mode, dtype=dtype, batch=batch)


def _predict_language_model(asked: Asked, spec: AcceleratorSpec, host: Host | None) -> tuple[LLMSpeed, str | None]:
    """The prediction, and a note on the weight format where it runs otherwise than asked (`runs_as`)."""
    from benchlib.core.cache import cache_folder
    from benchlib.predict.llm_speed import predict_llm_speed

    model, resolved, formulas = asked.model, asked.resolved, asked.formulas
    if formulas is not None:
        speed = predict_llm_speed(
            model, spec, resolved.setup, resolved.engine, concurrency=False, host=host, counted=formulas.calls()
        )
        # llama.cpp serves from its own buffers, not transformers' memory (as `predict_llm_speed`).
        if speed.decode is not None and resolved.engine.name != "llama.cpp":
            speed = replace(speed, concurrency=formulas.concurrency(spec))
    else:
        speed = predict_llm_speed(
            model, spec, resolved.setup, resolved.engine, cache_dir=cache_folder("fit-llm"), host=host
        )
    note = resolved.note
    if resolved.engine.name == "llama.cpp":
        split = _llama_cpp_split(model, spec, resolved.setup, formulas)
        note = "; ".join(part for part in (note, split) if part) or None
    return speed, note


def _other_speeds(asked: Asked, spec: AcceleratorSpec, speed: LLMSpeed) -> list[LLMSpeed]:
    """`--sizes`: the same setup at other batches or lengths, on the same GPU, engine and host."""
    from benchlib.predict.engines import ENGINES
    from benchlib.predict.formula import other_speeds
    from benchlib.predict.llm_speed import predict_llm_speed

    engine = ENGINES[speed.engine.name]
    if asked.formulas is None:
        return other_speeds(asked.model, spec, speed.setup, engine, speed.host)
    return [
        predict_llm_speed(asked.model, spec, setup, engine, concurrency=False, host=speed.host, counted=counted)
        for setup, counted in asked.formulas.other_calls()
    ]


def _job(p: LLMSpeed, spec: AcceleratorSpec, tokens: float) -> dict[str, Any]:
    """`--tokens`: the time for that many tokens at the predicted rate, and each free tier's budget for it."""
    from benchlib.catalog.platforms import session_budgets

    seconds = tokens / p.throughput
    budgets = session_budgets(spec.name, seconds / 3600)
    return {
        "tokens": tokens,
        "work": "training" if p.setup.trains else "generating",
        "seconds": seconds,
        "platforms": [asdict(b) | {"as_of": b.as_of.isoformat(), "text": b.describe()} for b in budgets],
    }


def _job_text(job: dict[str, Any]) -> str:
    lines = [f"{_duration(job['seconds'])} {job['work']} {job['tokens']:,.0f} tokens on one GPU"]
    lines += [platform["text"] for platform in job["platforms"]]
    if any((platform["sessions"] or 0) > 1 for platform in job["platforms"]):
        lines.append("More than one session: save checkpoints and resume (the guide's Staying connected page)")
    return "\n".join(lines)


def _speeds_at(p: LLMSpeed) -> dict[str, Any]:
    return {
        "batch": p.setup.batch,
        "seq_len": p.setup.seq_len,
        "prefill_tokens_per_s": p.prefill_tokens_per_s,
        "decode_tokens_per_s": p.decode_tokens_per_s,
        "training_tokens_per_s": p.training_tokens_per_s,
    }


def _other_sizes_text(others: list[LLMSpeed], fits_at_once: int | None) -> str:
    """`--sizes`, one size a line: decode and prefill, or training, tokens/s; past the sequences
    whose KV caches fit at once, said so."""
    lines = []
    for p in others:
        size = f"{p.setup.batch} x {p.setup.seq_len:,}"
        if p.training_tokens_per_s is not None:
            lines.append(f"{size}: {_rate(p.training_tokens_per_s)} training")
            continue
        decode = f"{_rate(p.decode_tokens_per_s)} decode, " if p.decode_tokens_per_s is not None else ""
        over = " (more than fit)" if fits_at_once is not None and p.setup.batch > fits_at_once else ""
        lines.append(f"{size}: {decode}{_rate(p.prefill_tokens_per_s or 0)} prefill{over}")
    return "\n".join(lines) + "\n(tokens/s; whether they fit: benchlib fit --sizes)"


def _llama_cpp_split(
    model: LanguageModel, spec: AcceleratorSpec, setup: Setup, formulas: ModelFormulas | None
) -> str | None:
    """Where the model doesn't fit whole in llama.cpp, the layers that do (``-ngl``) and what that means
    for the speed shown, which assumes every layer on the GPU."""
    from benchlib.cli.formulas import llama_cpp_fit
    from benchlib.predict.memory import gpu_memory

    fit = llama_cpp_fit(model, setup, gpu_memory(spec), formulas)
    if fit.fits:
        return None
    return (
        f"{model.title} does not fit the {spec.name} whole in llama.cpp at {setup.seq_len:,} tokens: -ngl "
        f"{fit.gpu_layers} puts {fit.gpu_layers} of {fit.layers} layers on the GPU and runs the rest on the "
        "CPU, far slower than these speeds, which assume every layer on the GPU (the CPU's share is not predicted)"
    )


def _unchecked_vendor(spec: AcceleratorSpec) -> str | None:
    """What the error band doesn't cover where no published row was measured on a GPU of ``spec``'s vendor."""
    from benchlib.catalog.gpus import find_gpu
    from benchlib.catalog.published_llm_speeds import published_rows

    checked = {find_gpu(row.gpu).vendor for row in published_rows() if row.gpu}
    if spec.vendor in checked:
        return None
    return (
        f"no published measurement on any {spec.vendor} GPU checks this: its error band comes from "
        f"{', '.join(sorted(checked))} cards, where the engines' constants and the packed-weight kernels' "
        "rates were fitted; `benchlib contribute` on the card measures it"
    )


def _published_check(p: LLMSpeed) -> dict[str, Any] | None:
    """The error this engine's predictions reached on published measurements (`benchlib tables`)."""
    from benchlib.tables.llm_speed_check import error_summary

    return error_summary(p.engine.name, "training" if p.setup.trains else "decode")


def _seconds(value: float) -> str:
    return f"{value * 1e3:,.1f} ms" if value < 1 else f"{value:,.2f} s"


def _flops(value: int) -> str:
    return f"{value / 1e12:,.2f} TFLOP" if value >= 1e11 else f"{value / 1e9:,.2f} GFLOP"


def _print(p: SpeedPrediction) -> None:
    from benchlib.predict.roofline import EAGER_LAUNCH_S

    r, step = p.rates, p.step
    table = Table(title=f"{p.model} on {p.gpu}: {p.mode}, {p.dtype}, batch {p.batch}; predicted", show_header=False)
    table.add_column("what")
    table.add_column("value", overflow="fold")
    table.add_row("throughput", f"[bold]{_rate(p.throughput)} {p.unit}[/]")
    table.add_row("one step", _seconds(step.seconds))
    total = step.seconds or 1.0
    shares = {"compute": step.compute_bound_s, "memory": step.memory_bound_s, "kernel launches": step.launch_bound_s}
    table.add_row("bound by", _bound_text({k: v / total for k, v in shares.items()}) + " of the time")
    table.add_row("work", f"{_flops(step.flops)}, {step.bytes / 1e9:,.2f} GB moved")
    peaks = ", ".join(f"{k} {v:g}" for k, v in r.peaks_tflops.items())
    table.add_row("GPU figures", f"{peaks} TFLOPS; {r.bandwidth_gbps:g} GB/s ({r.generation})")
    table.add_row(
        "efficiency",
        f"compute {r.compute_efficiency:.0%} of peak ({r.efficiency_basis}); "
        f"memory {r.memory_efficiency:.0%} of bandwidth (fitted); at least {EAGER_LAUNCH_S * 1e6:g} µs "
        "an op (one kernel launch, fitted)",
    )
    if r.unverified:
        table.add_row("unverified", ", ".join(r.unverified) + " (specs not re-checked)")
    console.print(table)
    typer.echo(
        "A prediction, not a measurement: benchmarks/speed_published.py compares\n"
        "predictions with published throughput."
    )


def _duration(seconds: float) -> str:
    """An hour and a half reads as "1 h 30 min", under an hour as "33 min"."""
    minutes = round(seconds / 60)
    return f"{minutes // 60} h {minutes % 60} min" if minutes >= 60 else f"{max(minutes, 1)} min"


def _rate(value: float) -> str:
    return f"{value:,.0f}" if value >= 10 else f"{value:,.2f}"


def _bound_text(shares: dict[str, float]) -> str:
    return ", ".join(f"{kind} {share:.0%}" for kind, share in shares.items() if share >= 0.005)


def _print_llm(
    p: LLMSpeed,
    check: dict[str, Any] | None,
    note: str | None,
    command: str,
    others: list[LLMSpeed],
    job: dict[str, Any] | None,
    source: str | None = None,
) -> None:
    s = p.setup
    shape = f"batch {s.batch} x {s.seq_len:,} tokens"
    table = Table(title=f"{p.model} on {p.gpu}, {p.engine.name}: {s.describe()}, {shape}; predicted", show_header=False)
    table.add_column("what")
    table.add_column("value", overflow="fold")
    if p.train is not None:
        table.add_row("training", f"[bold]{_rate(p.throughput)} tokens/s[/] ({_seconds(p.train.seconds)} a step)")
        table.add_row("a million tokens", _duration(1e6 / p.throughput))
        table.add_row("bound by", _bound_text(p.train.shares()) + " of the step")
    if p.decode is not None:
        per = f"{s.batch} sequences" if s.batch > 1 else "one sequence"
        table.add_row(
            "decode", f"[bold]{_rate(p.throughput)} tokens/s[/] for {per} ({_seconds(p.decode.seconds)} a step)"
        )
        table.add_row("decode bound by", _bound_text(p.decode.shares()) + f"; {p.decode.launches:,.0f} kernels a step")
    if p.prefill is not None:
        table.add_row("prefill", f"{_rate(p.prefill_tokens_per_s or 0)} tokens/s ({_seconds(p.prefill.seconds)})")
        table.add_row("prefill bound by", _bound_text(p.prefill.shares()))
    if p.concurrency is not None:
        c = p.concurrency
        table.add_row(
            "fits at once",
            f"{c.sequences:,} sequences of {c.context:,} tokens: their KV caches "
            f"({c.kv_bytes_per_sequence / 2**20:,.0f} MiB each) beside the weights",
        )
    if job:
        table.add_row("the job", _job_text(job))
    if others:
        fits_at_once = p.concurrency.sequences if p.concurrency is not None else None
        table.add_row("other sizes", _other_sizes_text(others, fits_at_once))
    e = p.engine
    if e.host_launched:
        launch = f"{e.launch_s * 1e6:.0f} µs a kernel launch on {p.host.title} ({p.host.status})"
    elif e.launch_s:
        launch = f"at least {e.launch_s * 1e6:.0f} µs of GPU time a kernel (CUDA graph)"
    else:
        launch = "no launch per kernel"
    step = f", {e.step_s * 1e3:.1f} ms a step" if e.step_s else ""
    table.add_row(
        "engine",
        f"{e.title}: {launch}{step}; memory at {e.stream_efficiency:.0%} of bandwidth, "
        f"attention at {e.attention_efficiency:.0%}, packed weights at {e.quantized_efficiency:.0%} (fitted on "
        f"{e.name} {e.version}, {e.as_of})",
    )
    r = p.rates
    peaks = ", ".join(f"{k} {v:g}" for k, v in r.peaks_tflops.items())
    table.add_row("GPU figures", f"{peaks} TFLOPS; {r.bandwidth_gbps:g} GB/s ({r.generation})")
    reached = p.as_dict()["reached"]
    table.add_row(
        "reached",
        f"matmuls at {reached['matmul_fraction']:.0%} of peak ({reached['matmul_basis']}); "
        + (
            f"copies at most {reached['bandwidth_gbps']:g} GB/s (reported: {reached['bandwidth_source']})"
            if reached["bandwidth_gbps"]
            else "no copy bandwidth reported for this card (estimated: the engine's share of peak)"
        ),
    )
    if r.unverified:
        table.add_row("unverified", ", ".join(r.unverified) + " (specs not re-checked)")
    if check:
        band = check.get("band")
        within = f"; predicted / measured {band['p10']:.2f}-{band['p90']:.2f} (p10-p90)" if band else ""
        table.add_row(
            "checked",
            f"median error {check['held_out_median_abs_error']:.0%} on {check['held_out_rows']} held-out "
            f"published rows{within} ({check['source']})",
        )
    else:
        table.add_row("checked", "no published measurement of this kind to check against yet")
    if source is not None:
        table.add_row("from", source)
    table.add_row("measure it", command)
    console.print(table)
    if note:
        typer.echo(textwrap.fill(f"Note: {note}.", width=80))
    typer.echo(
        "A prediction, not a measurement: benchmarks/llm_speed_published.py compares\n"
        "predictions with published throughput."
    )
