/* The "Can I run it?" picker (docs/gpus/can-i-run-it.md).
 *
 * Its data is in the page: benchlib.site.can_i_run_it.picker_data(), the committed tables reshaped
 * at build time, in the data-picker attribute: the models and their setups (the llm_formulas
 * table), every GPU benchlib can predict for with its memory budget, rates and host, the engines'
 * constants (the llm_constants table), the published comparisons' errors (the can_i_run_it table),
 * and the free tiers' limits with their dates. A GGUF file's memory is llama.cpp's buffers, from the
 * shape its model's formulas hold for it.
 *
 * When a model is chosen, its formulas are fetched from assets/formulas/<model>.json (written from
 * the llm_formulas table by `benchlib tables`) and evaluated here for the reader's GPU, count of
 * GPUs, batch and length, exactly as benchlib.predict evaluates them: the functions under
 * "evaluation" are a port, each naming the Python it mirrors. Without JavaScript, or where the
 * formulas can't be fetched (a page opened from disk), the tables below the picker answer.
 */
(function () {
  "use strict";

  // The formulas sit beside this script's folder, wherever the site is served from.
  var FORMULAS = typeof document !== "undefined" && document.currentScript
    ? new URL("../formulas/", document.currentScript.src).href
    : null;
  // ------------------------------------------------------------------ evaluation
  //
  // A line-by-line port of benchlib.predict: each function names the Python it mirrors, and
  // tests/browser/test_picker_formulas.py holds its answers to Python's at random settings.
  // Every constant comes from the page's data (the llm_constants table), none is typed here.

  // numpy.rint: to the nearest integer, halves to the even one.
  function rint(x) {
    var r = Math.round(x);
    return Math.abs(x % 1) === 0.5 ? 2 * Math.round(x / 2) : r;
  }

  // Python's int() of a float: towards zero.
  function int(x) {
    return Math.trunc(x);
  }

  // A coefficient row (or 0, an all-zero row as llm_formulas writes it) times the terms.
  function dot(row, terms) {
    if (row === 0) return 0;
    var sum = 0;
    for (var i = 0; i < terms.length; i++) sum += row[i] * terms[i];
    return sum;
  }

  function sum(values) {
    var total = 0;
    for (var i = 0; i < values.length; i++) total += values[i];
    return total;
  }

  // benchlib.predict.formula.basis
  function basis(batch, length) {
    if (batch === 1) return [1, length, length * length];
    return [1, batch, batch * length, batch * length * length];
  }

  // benchlib.predict.formula._piece, with the side: one sequence or several.
  function piece(pieces, batch, length) {
    var chosen = pieces[pieces.length - 1];
    for (var i = 0; i < pieces.length; i++) {
      if (length <= pieces[i].upto) { chosen = pieces[i]; break; }
    }
    return batch === 1 ? chosen.one : chosen.many;
  }

  // benchlib.predict.formula_file.ModelFormulas.traced_at
  function tracedAt(memory, batch, length) {
    var terms = basis(batch, length);
    var total = memory.kinds.indexOf("total");
    return piece(memory.pieces, batch, length).map(function (phases) {
      var peaks = {};
      Object.keys(phases).forEach(function (phase) {
        var best = null, bestTotal = -Infinity;
        phases[phase].forEach(function (moment) {
          var values = moment.map(function (row) { return dot(row, terms); });
          if (values[total] > bestTotal) { best = values; bestTotal = values[total]; }  // np.argmax: the first
        });
        // The written total picks the moment; the kinds' sum is its figure, so the breakdown adds up.
        var kinds = {}, sum = 0;
        memory.kinds.forEach(function (kind, i) {
          kinds[kind] = rint(best[i]);
          if (kind !== "total") sum += kinds[kind];
        });
        kinds.total = sum;
        peaks[phase] = kinds;
      });
      return peaks;
    });
  }

  // benchlib.catalog.language_models.TracePlan.combine
  function planCombine(coefficients, figures) {
    var total = 0;
    for (var i = 0; i < coefficients.length; i++) total += coefficients[i] * figures[i];
    return total;
  }

  // benchlib.predict.llm_memory.LLMPredictor.combined (layers split over `gpus` in order)
  function combined(memory, traced, gpus) {
    var phases = Object.keys(traced[0]);
    var best = null;
    phases.forEach(function (phase) {
      var kinds = {};
      Object.keys(traced[0][phase]).forEach(function (kind) {
        kinds[kind] = planCombine(memory.plan.coefficients, traced.map(function (t) { return t[phase][kind]; }));
      });
      if (best === null || kinds.total > best.total) best = kinds;  // max(): the first of equals
    });
    var figures = Object.assign({}, best);
    if (gpus > 1) perGpu(memory, traced, gpus).forEach(function (peak, i) { figures["gpu" + i] = peak; });
    return figures;
  }

  // benchlib.predict.llm_memory.LLMPredictor._per_gpu
  function perGpu(memory, traced, gpus) {
    var plan = memory.plan;
    var kinds = plan.full.filter(function (k, i) { return plan.full.indexOf(k) === i; });
    var base = plan.layers[0];
    var depth = plan.full.length;
    var sizes = [], starts = [];
    for (var i = 0; i < gpus; i++) sizes.push(Math.floor(depth / gpus) + (i < depth % gpus ? 1 : 0));
    for (i = 0; i < gpus; i++) starts.push(sum(sizes.slice(0, i)));
    var embedding = memory.embedding_bytes;
    var peaks = sizes.map(function () { return 0; });
    Object.keys(traced[0]).forEach(function (phase) {
      var first = traced[0][phase].total;
      var perLayer = {};
      kinds.forEach(function (k, j) { perLayer[k] = traced[1 + j][phase].total - first; });
      var rest = first - sum(base.map(function (k) { return perLayer[k]; }));
      var front = memory.tied ? rest : Math.min(embedding, rest);
      for (var g = 0; g < gpus; g++) {
        var own = sum(plan.full.slice(starts[g], starts[g] + sizes[g]).map(function (k) { return perLayer[k]; }));
        own += g === 0 ? front : 0;
        own += g === gpus - 1 ? rest - front : 0;
        peaks[g] = Math.max(peaks[g], own);
      }
    });
    return peaks;
  }

  // benchlib.predict.llm_memory.LLMPredictor.fullest (layers split, or one GPU)
  function fullest(figures, gpus) {
    if (gpus === 1) return figures.total;
    var most = -Infinity;
    for (var i = 0; i < gpus; i++) most = Math.max(most, figures["gpu" + i]);
    return most;
  }

  // benchlib.predict.formula.MemoryFormula.at
  function memoryAt(memory, batch, length, gpus) {
    return combined(memory, tracedAt(memory, batch, length), gpus);
  }

  // benchlib.predict.formula.MemoryFormula.peak
  function peakAt(memory, batch, length, gpus) {
    return fullest(memoryAt(memory, batch, length, gpus), gpus);
  }

  // benchlib.predict.formula.MemoryFormula.largest: the largest length at `batch` (given a batch),
  // or the largest batch of `length` tokens (given a length), within `budget`; `limit` is the model's
  // longest context, or LARGEST_BATCH.
  function largest(memory, budget, gpus, given, limit) {
    function fits(n) {
      return given.batch !== undefined
        ? peakAt(memory, given.batch, n, gpus) <= budget
        : peakAt(memory, n, given.length, gpus) <= budget;
    }
    var low = 0, high = limit;
    while (low < high) {
      var middle = Math.floor((low + high + 1) / 2);
      if (fits(middle)) low = middle; else high = middle - 1;
    }
    return low;
  }

  // benchlib.predict.memory.DeviceMemory.on_device
  function onDevice(device, tensorBytes) {
    return int(tensorBytes * (1 + device.overhead)) + device.context_bytes;
  }

  // benchlib.predict.count.experts_touched
  function expertsTouched(experts, perToken, tokens) {
    return 1.0 - Math.pow(1.0 - perToken / experts, tokens);
  }

  // benchlib.predict.formula.OpsFormula.at, on the op kinds once each; `order` then lays them out.
  function opsAt(depth, batch, length, expertsPerToken, evaluation) {
    var terms = basis(batch, length);
    var fixed = evaluation.fixed, growing = evaluation.growing;
    var kinds = depth.ops.map(function (row) {
      var op = { weight_elements: 0, largest_input_bytes: 0, weight_share: 1.0 };
      fixed.forEach(function (name, i) { op[name] = row[i]; });
      var counts = row[fixed.length];
      growing.forEach(function (name, i) { op[name] = counts === 0 ? 0 : rint(dot(counts[i], terms)); });
      if (op.expert_bytes) {
        var share = expertsTouched(op.experts, Math.min(expertsPerToken, op.experts), op.rows / expertsPerToken);
        op.bytes = op.bytes + int(share * op.expert_bytes);
        op.weight_share = share;
      }
      return op;
    });
    return depth.order.map(function (i) { return kinds[i]; });
  }

  // benchlib.predict.formula.CallFormula.at: the call's ops on each traced depth.
  function callAt(call, batch, length, expertsPerToken, evaluation) {
    return {
      ops: piece(call.pieces, batch, length).map(function (depth) {
        return opsAt(depth, batch, length, expertsPerToken, evaluation);
      }),
      coefficients: call.plan_coefficients,
      tokensPerCall: call.per_token ? batch * length : batch
    };
  }

  // benchlib.tables.can_i_run_it._as_dtype: ops counted in bf16 as they run in `dtype` (fp16 on a T4).
  function asDtype(ops, dtype) {
    if (dtype === "bf16") return ops;
    return ops.map(function (op) { return op.dtype === "bf16" ? Object.assign({}, op, { dtype: dtype }) : op; });
  }

  // benchlib.predict.engines.with_fused_weights
  function withFusedWeights(ops, engine, tokensPerCall, evaluation) {
    var fused = engine.fused_quantized_tokens === null || tokensPerCall <= engine.fused_quantized_tokens;
    var merged = fused ? [evaluation.packed, evaluation.dequantize] : [evaluation.packed];
    if (!ops.some(function (op) { return merged.indexOf(op.op) >= 0; })) return ops;
    var out = [], pending = [];
    ops.forEach(function (op) {
      if (merged.indexOf(op.op) >= 0) { pending.push(op); return; }
      if (pending.length && op.kind === "matmul") {
        var weight = pending.shift();
        var bytes = evaluation.dtype_bytes[op.dtype];
        var full = weight.weight_elements * (bytes === undefined ? 2 : bytes);
        var dense = full * op.weight_share, packed = (weight.bytes - full) * op.weight_share;
        op = Object.assign({}, op, { kind: evaluation.fused_quantized, bytes: int(Math.max(0, op.bytes - dense) + packed) });
      }
      out.push(op);
    });
    return out;
  }

  // benchlib.predict.roofline.GpuRates.compute_tflops
  function rateCompute(op, gpu) {
    var rates = gpu.rates, dtype;
    if (op.dtype === "fp16" || op.dtype === "bf16") dtype = op.dtype;
    else if (op.kind === "conv" && rates.tf32_convolutions && "tf32" in rates.peaks_tflops) dtype = "tf32";
    else dtype = "fp32";
    if (!(dtype in rates.peaks_tflops)) throw new NotPredicted(gpu.missing_peaks[dtype]);
    return rates.peaks_tflops[dtype] * rates.compute_efficiency;
  }

  // benchlib.predict.engines._compute_tflops (`matmul_fraction` comes with the GPU's rates)
  function computeTflops(op, gpu) {
    var peaks = gpu.rates.peaks_tflops;
    if ((op.dtype === "fp16" || op.dtype === "bf16") && op.dtype in peaks) return peaks[op.dtype] * gpu.rates.matmul_fraction;
    return rateCompute(op, gpu);
  }

  // benchlib.predict.engines._traffic
  function traffic(op, engine) {
    if (engine.appends_in_place && op.largest_input_bytes) return op.bytes - 2 * op.largest_input_bytes;
    return op.bytes;
  }

  // benchlib.predict.engines.op_times
  function opTimes(ops, gpu, engine, evaluation) {
    var reached = gpu.rates.reached_bandwidth_gbps;
    return {
      arithmetic_s: ops.map(function (op) { return op.flops ? op.flops / (computeTflops(op, gpu) * 1e12) : 0.0; }),
      op_flops: ops.map(function (op) { return op.flops; }),
      bytes: ops.map(function (op) { return traffic(op, engine); }),
      kinds: ops.map(function (op) {
        var i = evaluation.traffic_kinds.indexOf(op.kind);
        return i >= 0 ? i : 0;
      }),
      bandwidth: gpu.rates.bandwidth_gbps * 1e9,
      flops: sum(ops.map(function (op) { return op.flops; })),
      reached_bandwidth: reached === null ? null : reached * 1e9
    };
  }

  // benchlib.predict.engines.time_ops
  function timeOps(t, engine) {
    var fractions = [engine.stream_efficiency, engine.attention_efficiency, engine.quantized_efficiency];
    var compute = 0, memoryS = 0, launchBound = 0;
    for (var i = 0; i < t.bytes.length; i++) {
      var rate = t.bandwidth * fractions[t.kinds[i]];
      if (t.reached_bandwidth !== null) rate = Math.min(rate, t.reached_bandwidth);
      var trafficS = t.bytes[i] / rate;
      var arithmetic = t.arithmetic_s[i];
      if (engine.matmul_ceiling_tflops !== null) arithmetic = Math.max(arithmetic, t.op_flops[i] / (engine.matmul_ceiling_tflops * 1e12));
      if (engine.launch_s > Math.max(arithmetic, trafficS)) launchBound += 1;
      else if (arithmetic > trafficS) compute += arithmetic;
      else memoryS += trafficS;
    }
    return {
      compute_s: compute,
      memory_s: memoryS,
      overhead_s: launchBound * engine.launch_s + engine.step_s,
      launches: t.bytes.length,
      flops: t.flops,
      bytes: sum(t.bytes)
    };
  }

  var TIME_FIELDS = ["compute_s", "memory_s", "overhead_s", "launches", "flops", "bytes"];

  // benchlib.predict.engines.EngineTime.combine (and .seconds)
  function combineTimes(times, coefficients) {
    var out = {};
    TIME_FIELDS.forEach(function (f) {
      out[f] = 0;
      for (var i = 0; i < times.length; i++) out[f] += coefficients[i] * times[i][f];
    });
    out.seconds = out.compute_s + out.memory_s + out.overhead_s;
    return out;
  }

  // benchlib.predict.engines.Engine.on_host
  function onHost(engine, launchS) {
    return engine.host_launched ? Object.assign({}, engine, { launch_s: launchS }) : engine;
  }

  // benchlib.predict.llm_speed.CountedCall.time, on ops in the GPU's compute dtype.
  function callTime(counted, gpu, engine, evaluation) {
    var times = counted.ops.map(function (ops) {
      var fused = withFusedWeights(asDtype(ops, gpu.dtype), engine, counted.tokensPerCall, evaluation);
      return timeOps(opTimes(fused, gpu, engine, evaluation), engine);
    });
    return combineTimes(times, counted.coefficients);
  }

  // A prediction the formulas can't make here: the message says why (Python's own, from the data).
  function NotPredicted(message) {
    this.message = message;
  }

  // benchlib.predict.llm_speed.predict_llm_speed and LLMSpeed's tokens/s, from the time formula
  // (`TimeFormula.inference` / `.training`) at `batch` sequences of `length` tokens.
  function speedOf(time, gpu, engine, batch, length, evaluation) {
    if (gpu.no_speed) throw new NotPredicted(gpu.no_speed);
    engine = onHost(engine, gpu.host.launch_s);
    var ept = time.experts_per_token, calls = time.calls;
    if (calls.train) {
      var step = callTime(callAt(calls.train, batch, length, ept, evaluation), gpu, engine, evaluation);
      return { train: step, training_tokens_per_s: batch * length / step.seconds };
    }
    var prefill = callTime(callAt(calls.prefill, batch, length, ept, evaluation), gpu, engine, evaluation);
    var decode = calls.decode ? callTime(callAt(calls.decode, batch, length, ept, evaluation), gpu, engine, evaluation) : null;
    return {
      prefill: prefill,
      decode: decode,
      prefill_tokens_per_s: batch * length / prefill.seconds,
      decode_tokens_per_s: decode ? batch / decode.seconds : null
    };
  }

  // benchlib.predict.llm_speed.max_concurrency: at batch 1 on one GPU, the tensor budget less the
  // weights and one prefill's activations, over one sequence's KV cache.
  function maxConcurrency(memory, length, budget) {
    var breakdown = memoryAt(memory, 1, length, 1);
    var free = budget - breakdown.weights - breakdown.activations;
    var perSequence = Math.max(1, breakdown.kv_cache);
    return { sequences: Math.max(0, Math.floor(free / perSequence)), kv_bytes_per_sequence: perSequence, free_bytes: Math.max(0, free) };
  }

  // benchlib.predict.llama_cpp._cells: the KV cache's cells, padded.
  function cells(context, c) {
    return c.kv_pad * Math.ceil(context / c.kv_pad);
  }

  // benchlib.predict.llama_cpp.kv_cache_bytes
  function kvCacheBytes(shape, context, c) {
    var full = shape.kv_bytes_per_cell * cells(context, c);
    if (!shape.window) return full;
    var windowCells = Math.min(cells(context, c), cells(shape.window + c.micro_batch, c));
    return full + shape.swa_layers_bytes_per_cell * windowCells;
  }

  // benchlib.predict.llama_cpp.compute_buffer_bytes
  function computeBufferBytes(shape, context, c) {
    var tokens = Math.min(c.micro_batch, context);
    return 4 * tokens * Math.max(shape.vocab + shape.hidden, 2 * shape.ffn_width + 2 * shape.hidden);
  }

  // benchlib.predict.llama_cpp._largest_context: the longest context with every layer on the GPU.
  function llamaCppLargest(shape, usable, limit, c) {
    function needs(context) {
      var weights = shape.layers * shape.layer_bytes + shape.output_bytes;
      return c.cuda_context_bytes + computeBufferBytes(shape, context, c) + weights + kvCacheBytes(shape, context, c);
    }
    if (needs(1) > usable) return 0;
    var low = 1, high = limit;
    while (low < high) {
      var middle = Math.floor((low + high + 1) / 2);
      if (needs(middle) <= usable) low = middle; else high = middle - 1;
    }
    return low;
  }

  // benchlib.predict.llama_cpp.with_cache_of: a shape written for an f16 cache, in `cache`'s type.
  function withCacheOf(shape, cache, c) {
    var scale = c.cache_types[cache] / c.cache_types.fp16;
    return Object.assign({}, shape, {
      kv_bytes_per_cell: Math.floor(shape.kv_bytes_per_cell * scale),
      swa_layers_bytes_per_cell: Math.floor(shape.swa_layers_bytes_per_cell * scale)
    });
  }

  // llama.cpp's name for a cache type: f16 for fp16.
  function cacheName(cache) {
    return cache === "fp16" ? "f16" : cache;
  }

  // benchlib.predict.llama_cpp.fit_shape: llama.cpp's buffers for a GGUF file of `shape` (the
  // formulas' llama_cpp entry) at a context of `context` tokens, its layers split over `gpus`
  // GPUs of `usableBytes` each, and the layers that fit (-ngl) when not all do.
  function llamaCppFit(shape, context, usableBytes, limit, gpus, c) {
    context = Math.min(context, limit);
    var perGpuExtra = c.cuda_context_bytes + computeBufferBytes(shape, c.micro_batch, c);
    var usable = gpus * usableBytes - (gpus - 1) * perGpuExtra;
    var compute = computeBufferBytes(shape, context, c);
    var fixed = c.cuda_context_bytes + compute;
    var kvLayer = Math.floor(kvCacheBytes(shape, context, c) / shape.layers);
    var everything = fixed + shape.layers * shape.layer_bytes + shape.output_bytes + kvCacheBytes(shape, context, c);
    var gpuLayers = shape.layers, outputOnGpu = true;
    if (everything > usable) {
      var perLayer = shape.layer_bytes + kvLayer;
      gpuLayers = Math.max(0, Math.min(shape.layers, Math.floor((usable - fixed) / Math.max(1, perLayer))));
      outputOnGpu = false;
    }
    var fit = {
      context: context,
      gpu_layers: gpuLayers,
      layers: shape.layers,
      output_on_gpu: outputOnGpu,
      model_buffer: gpuLayers * shape.layer_bytes + (outputOnGpu ? shape.output_bytes : 0),
      host_model_buffer: shape.embedding_bytes + (shape.layers - gpuLayers) * shape.layer_bytes + (outputOnGpu ? 0 : shape.output_bytes),
      kv_cache: gpuLayers < shape.layers ? kvLayer * gpuLayers : kvCacheBytes(shape, context, c),
      compute_buffer: compute,
      cuda_context: c.cuda_context_bytes,
      largest_context: llamaCppLargest(shape, usable, limit, c)
    };
    fit.peak_bytes = fit.model_buffer + fit.kv_cache + fit.compute_buffer + fit.cuda_context;
    fit.fits = gpuLayers === shape.layers && outputOnGpu;
    return fit;
  }

  // ------------------------------------------------------------------ answers

  var number = new Intl.NumberFormat("en-US");
  var tenths = new Intl.NumberFormat("en-US", { minimumFractionDigits: 1, maximumFractionDigits: 1 });
  var BYTE_UNITS = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];

  // benchlib.core.units.format_bytes: "15.0 GiB".
  function bytesText(n) {
    var value = n, unit = BYTE_UNITS[0];
    for (var i = 0; i < BYTE_UNITS.length; i++) {
      unit = BYTE_UNITS[i];
      if (value < 1024 || i === BYTE_UNITS.length - 1) break;
      value /= 1024;
    }
    return unit === "B" ? n + " B" : value.toFixed(1) + " " + unit;
  }

  // benchlib.site.llm_speed.rate_text: two significant digits ("1,500", "52", "9.3").
  function rateText(rate) {
    var rounded = Number(rate.toPrecision(2));
    return rounded >= 10 ? number.format(Math.round(rounded)) : String(rounded);
  }

  function tokensText(n) {
    return number.format(n) + " token" + (n === 1 ? "" : "s");
  }

  function find(list, key) {
    for (var i = 0; i < list.length; i++) if (list[i].key === key) return list[i];
    return null;
  }

  // An engine's short name: "vLLM" from "vLLM (CUDA graphs; ...)".
  function engineName(engine) {
    return engine.title.split(" (")[0];
  }

  function hoursText(hours) {
    return hours < 1 ? Math.max(1, Math.round(hours * 60)) + " min" : number.format(Math.round(hours * 10) / 10) + " h";
  }

  // A job of `hours` in one tier's limits: "Kaggle Notebooks Free: 2 sessions of at most 12 h; 47% of
  // its 30 GPU hours a week (limits as of 2026-08-10)", as `benchlib predict --tokens` says it.
  function budgetText(b, hours) {
    var parts = [];
    if (b.session_hours) {
      var sessions = Math.max(1, Math.ceil(hours / b.session_hours));
      parts.push(number.format(sessions) + " session" + (sessions === 1 ? "" : "s") + " of at most " + b.session_hours + " h");
    }
    [[b.weekly_hours, "week"], [b.daily_hours, "day"]].forEach(function (q) {
      if (!q[0]) return;
      var share = hours / q[0], of = "its " + q[0] + " GPU hours a " + q[1];
      parts.push(share < 1 ? Math.round(share * 100) + "% of " + of : tenths.format(share) + " " + q[1] + "s of " + of);
    });
    return b.tier + ": " + parts.join("; ") + " (limits as of " + b.as_of + ")";
  }

  // The setup the GPU runs: where transformers dequantizes the format while loading (FP8 before
  // compute capability 8.9), the same mode with weights in the compute dtype (`llm_options.runs_as`).
  function setupOn(data, setup, gpu) {
    var why = gpu.dequantized[setup.key];
    if (!why) return { setup: setup, note: null };
    var dense = data.setups.filter(function (s) {
      return s.mode === setup.mode && s.weights === setup.dtype && s.checkpointing === setup.checkpointing && !s.adapter_of;
    })[0];
    return { setup: dense || setup, note: why };
  }

  // The engines that run a setup: llama.cpp alone for a GGUF file, and never for another format
  // (whose memory the formulas give as PyTorch holds it, not as llama.cpp's buffers).
  function enginesOf(data, setup) {
    return data.engines.filter(function (e) { return (e.key === data.llama_cpp) === Boolean(setup.llama_cpp); });
  }

  // A GGUF file's answer: llama.cpp's buffers and its speed from the formulas, for one sequence.
  function evaluateLlamaCpp(data, model, formulas, choice) {
    var gpu = find(data.gpus, choice.gpu), setup = find(data.setups, choice.setup);
    var entry = formulas.setups[setup.key], shape = (formulas.llama_cpp || {})[setup.key];
    var out = { gpu: gpu, setup: setup, count: choice.count };
    if (!entry || entry.not_predicted || !shape) {
      out.notPredicted = entry && entry.not_predicted ? entry.not_predicted : "the formulas table holds no " + setup.key + " entry for " + model.title;
      return out;
    }
    if (choice.length > model.max_positions) {
      out.tooLong = true;
      return out;
    }
    if (choice.batch !== 1) {
      out.notPredicted = "llama.cpp's memory is predicted for one sequence (benchlib fit --engine llama.cpp takes --batch 1); set the sequences to 1";
      return out;
    }
    var c = data.evaluation.llama_cpp;
    out.fit = llamaCppFit(withCacheOf(shape, choice.cache, c), choice.length, gpu.memory.usable_bytes, model.max_positions, choice.count, c);
    var engine = find(data.engines, data.llama_cpp);
    out.speed = { engine: engine };
    try {
      // llama.cpp computes in f16 on every GPU (`LLMOptions.resolve`).
      out.speed.speed = speedOf(entry.time, Object.assign({}, gpu, { dtype: "fp16" }), engine, 1, choice.length, data.evaluation);
    } catch (error) {
      if (!(error instanceof NotPredicted)) throw error;
      out.speed.refused = error.message;
    }
    return out;
  }

  // The numbers an answer is made of, from the model's formulas: what fits, the memory by kind,
  // the largest batch or context, each engine's speed, and the engine (and speed) a job is timed
  // with. `choice`: gpu, count, setup and engine (keys), batch and length.
  function evaluate(data, model, formulas, choice) {
    var gpu = find(data.gpus, choice.gpu), count = choice.count, evaluation = data.evaluation;
    var runs = setupOn(data, find(data.setups, choice.setup), gpu);
    var setup = runs.setup;
    var entry = formulas.setups[setup.key];
    var out = { gpu: gpu, setup: setup, note: runs.note, count: count };
    if (!entry || entry.not_predicted) {
      out.notPredicted = entry ? entry.not_predicted : "the formulas table holds no " + setup.key + " entry for " + model.title;
      return out;
    }
    var trains = setup.mode !== "inference";
    if (choice.length > model.max_positions) {
      out.tooLong = true;
      return out;
    }
    var memory = entry.memory;
    if (count > 1 && memory.embedding_bytes === null) {
      out.notPredicted = "splitting " + model.title + " needs what each layer adds, which its traces at full depth don't give";
      return out;
    }
    var device = gpu.memory, budget = device.tensor_budget;
    var figures = memoryAt(memory, choice.batch, choice.length, count);
    var peak = fullest(figures, count);
    var kinds = {};
    memory.kinds.forEach(function (k) { if (k !== "total") kinds[k] = figures[k]; });
    var contexts = device.context_bytes * count;
    var perGpu = [];
    for (var i = 0; i < count && count > 1; i++) perGpu.push(onDevice(device, figures["gpu" + i]));
    // LLMPrediction.as_dict: the CUDA contexts and what the allocator adds beyond the tensors.
    var allocator = count > 1 ? sum(perGpu) - contexts - sum(Object.keys(kinds).map(function (k) { return kinds[k]; }))
      : onDevice(device, peak) - peak - contexts;
    out.memory = {
      tensorPeak: peak,
      peak: onDevice(device, peak),
      fits: peak <= budget,
      kinds: kinds,
      cudaContext: contexts,
      allocator: allocator,
      perGpu: perGpu
    };
    out.largest = trains
      ? largest(memory, budget, count, { length: choice.length }, evaluation.largest_batch)
      : largest(memory, budget, count, { batch: choice.batch }, model.max_positions);
    out.speeds = enginesOf(data, setup).map(function (engine) {
      var result = { engine: engine };
      if (engine.refuses[setup.key]) result.refused = engine.refuses[setup.key];
      else if (trains && count > 1) result.refused = data.several_gpus.training;
      else if (engine.key === data.served && count > 1) result.refused = data.several_gpus.served;
      else if (engine.key === data.served && gpu.no_served) result.refused = gpu.no_served;
      else {
        try {
          result.speed = speedOf(entry.time, gpu, engine, choice.batch, choice.length, evaluation);
        } catch (error) {
          if (!(error instanceof NotPredicted)) throw error;
          result.refused = error.message;
        }
      }
      return result;
    });
    if (!trains && count === 1) out.concurrency = maxConcurrency(memory, choice.length, budget);
    // The job is timed with the chosen engine, or the first that has a speed here; a training
    // batch that doesn't fit, at the largest batch that does.
    var timed = out.speeds.filter(function (s) { return s.speed; });
    out.jobEngine = timed.filter(function (s) { return s.engine.key === choice.engine; })[0] || timed[0] || null;
    if (out.jobEngine && trains && !out.memory.fits && out.largest > 0) {
      out.atLargest = speedOf(entry.time, gpu, out.jobEngine.engine, out.largest, choice.length, evaluation);
    }
    return out;
  }

  // ------------------------------------------------------------------ the form

  function el(tag, attrs, children) {
    var node = document.createElement(tag);
    Object.keys(attrs || {}).forEach(function (name) { node.setAttribute(name, attrs[name]); });
    (children || []).forEach(function (child) {
      if (child === null || child === undefined) return;
      node.appendChild(typeof child === "string" ? document.createTextNode(child) : child);
    });
    return node;
  }

  function field(id, label, control) {
    return el("div", { class: "fg-picker__field" }, [el("label", { for: id }, [label]), control]);
  }

  function select(id, options) {
    var node = el("select", { id: id, name: id, "data-control": id.split("-").pop() });
    options.forEach(function (o) { node.appendChild(el("option", { value: o.value }, [o.label])); });
    return node;
  }

  function numberInput(id, values, list) {
    var input = el("input", { id: id, name: id, "data-control": id.split("-").pop(), type: "number", min: "1", step: "1", inputmode: "numeric", list: list });
    var datalist = el("datalist", { id: list });
    values.forEach(function (v) { datalist.appendChild(el("option", { value: String(v) })); });
    return el("span", {}, [input, datalist]);
  }

  var GPU_GROUPS = [
    ["notebook", "In Colab and Kaggle notebooks"],
    ["table", "In the tables below"],
    ["other", "Every other GPU with specs"]
  ];

  function gpuSelect(id, gpus) {
    var node = el("select", { id: id, name: id, "data-control": "gpu" });
    GPU_GROUPS.forEach(function (group) {
      var members = gpus.filter(function (g) { return g.group === group[0]; });
      if (!members.length) return;
      node.appendChild(el("optgroup", { label: group[1] }, members.map(function (g) {
        return el("option", { value: g.key }, [g.name]);
      })));
    });
    return node;
  }

  function setUp(root) {
    var data = JSON.parse(root.getAttribute("data-picker"));
    var uid = "fg-picker-" + Math.random().toString(36).slice(2, 8);
    var ids = {};
    ["model", "gpu", "count", "mode", "checkpointing", "weights", "layers", "adapters", "cache", "engine", "batch", "tokens", "job"].forEach(function (k) { ids[k] = uid + "-" + k; });
    var counts = [];
    for (var n = 1; n <= data.most_gpus; n++) counts.push({ value: String(n), label: String(n) });

    var form = el("form", { class: "fg-picker__form", "aria-label": "Can I run it?" }, [
      field(ids.model, "Model", select(ids.model, data.models.map(function (m) { return { value: m.key, label: m.title }; }))),
      field(ids.gpu, "GPU", gpuSelect(ids.gpu, data.gpus)),
      field(ids.count, "How many", select(ids.count, counts)),
      field(ids.mode, "Mode", select(ids.mode, data.modes.map(function (m) { return { value: m.key, label: m.label }; }))),
      field(ids.checkpointing, "Gradient checkpointing", select(ids.checkpointing, [
        { value: "on", label: "on (recomputes activations)" }, { value: "off", label: "off" }])),
      field(ids.weights, "Weights", select(ids.weights, [])),
      field(ids.layers, "LoRA layers", select(ids.layers, [])),
      field(ids.adapters, "LoRA rank", select(ids.adapters, [])),
      field(ids.cache, "KV cache", select(ids.cache, Object.keys(data.evaluation.llama_cpp.cache_types).map(function (k) {
        return { value: k, label: cacheName(k) + (k === "fp16" ? " (default)" : "") };
      }))),
      field(ids.engine, "Engine", select(ids.engine, [])),
      field(ids.batch, "Batch", numberInput(ids.batch, data.batches, uid + "-batch-list")),
      field(ids.tokens, "Tokens", numberInput(ids.tokens, data.tokens, uid + "-tokens-list")),
      field(ids.job, "Tokens to process", numberInput(ids.job, [1e6, 1e7, 1e8, 1e9], uid + "-job-list"))
    ]);
    var answer = el("div", { class: "fg-picker__answer", "aria-live": "polite" });
    root.insertBefore(answer, root.firstChild);
    root.insertBefore(form, answer);
    var controls = {};
    Object.keys(ids).forEach(function (k) { controls[k] = form.querySelector("#" + ids[k]); });
    controls.job.value = String(data.job_tokens);
    var loaded = {};  // model -> its formulas, or a promise of them, or an error

    function label(name, text) {
      form.querySelector("label[for='" + ids[name] + "']").textContent = text;
    }

    // Whether the chosen model has formulas for a setup.
    function predicted(s) {
      var model = find(data.models, controls.model.value);
      return !(model && model.not_predicted[s.key]);
    }

    // Each mode's weight formats: the formulas' setups the chosen model has (no MXFP4 for a model
    // without experts, which GGUF files in llama.cpp follow), and training with gradient
    // checkpointing or without as chosen; other adapters are the adapters menu's.
    function formatsFor(mode) {
      var checkpointing = controls.checkpointing.value === "on";
      return data.setups.filter(function (s) {
        return s.mode === mode && !s.adapter_of && predicted(s) && (mode === "inference" || s.checkpointing === checkpointing);
      })
        .map(function (s) { return { value: s.key, label: s.label }; });
    }

    // LoRA's adapters for the chosen weights: theirs, and each other rank and set of layers the
    // model has formulas for.
    function adaptersFor(setupKey) {
      return data.setups.filter(function (s) { return (s.key === setupKey || s.adapter_of === setupKey) && s.adapters && predicted(s); });
    }

    // The layers menu: each set of layers once, in the formulas' order.
    function layersOf(adapters) {
      var seen = {};
      return adapters.filter(function (s) { return !seen[s.targets] && (seen[s.targets] = true); })
        .map(function (s) { return { value: s.targets, label: s.layers }; });
    }

    // The setup asked about: the weights menu's, or the adapters menu's where it shows.
    function chosenSetup() {
      return controls.adapters.parentNode.hidden ? controls.weights.value : controls.adapters.value;
    }

    function fill(node, options) {
      var old = node.value;
      node.replaceChildren.apply(node, options.map(function (o) {
        var option = el("option", { value: o.value }, [o.label]);
        if (o.title) option.setAttribute("title", o.title);
        return option;
      }));
      if (options.some(function (o) { return o.value === old; })) node.value = old;
    }

    // The engines that run this setup; one that refuses it shows why in its answer, not here.
    function enginesFor(setupKey) {
      return enginesOf(data, find(data.setups, setupKey)).filter(function (e) { return !e.refuses[setupKey]; })
        .map(function (e) { return { value: e.key, label: engineName(e) }; });
    }

    // A new mode starts at its setups' own sizes: one sequence of the default length, or one sample.
    function resetForMode() {
      var mode = controls.mode.value;
      fill(controls.weights, formatsFor(mode));
      controls.weights.selectedIndex = 0;
      var setup = find(data.setups, controls.weights.value);
      controls.batch.value = String(setup.batch || 1);
      controls.tokens.value = String(setup.seq_len || 2048);
    }

    function labelControls() {
      var mode = controls.mode.value, inference = mode === "inference";
      controls.checkpointing.parentNode.hidden = inference;
      fill(controls.weights, formatsFor(mode));
      // The adapters' layers, then the ranks the formulas hold on those layers.
      var adapters = adaptersFor(controls.weights.value);
      fill(controls.layers, layersOf(adapters));
      fill(controls.adapters, adapters.filter(function (s) { return s.targets === controls.layers.value; })
        .map(function (s) { return { value: s.key, label: String(s.rank) }; }));
      controls.layers.parentNode.hidden = controls.adapters.parentNode.hidden = !adapters.length;
      // llama.cpp's cache type, for a GGUF file; another format's KV cache is the weights menu's.
      controls.cache.parentNode.hidden = !find(data.setups, controls.weights.value).llama_cpp;
      fill(controls.engine, enginesFor(chosenSetup()));
      label("batch", inference ? "Sequences at once" : "Batch");
      label("tokens", inference ? "Prompt length (tokens)" : "Sample length (tokens)");
      label("job", inference ? "Tokens to generate" : "Tokens to train on");
    }

    // facts: [name, text or nodes, what kind of figure it is, attributes with its numbers in full].
    function show(verdict, headline, why, facts, numbers) {
      answer.setAttribute("data-verdict", verdict);
      ["data-tensor-peak", "data-peak", "data-largest", "data-concurrency", "data-gpu-layers"].forEach(function (name) { answer.removeAttribute(name); });
      Object.keys(numbers || {}).forEach(function (name) { answer.setAttribute(name, String(numbers[name])); });
      answer.replaceChildren(
        el("p", { class: "fg-picker__verdict" }, [el("strong", {}, [headline]), " "].concat(why)),
        el("ul", { class: "fg-picker__facts" }, facts.map(function (f) {
          var attrs = Object.assign({ "data-fact": f[0] }, f[3] || {});
          return el("li", attrs, [].concat(f[1], f[2] ? [" ", el("span", { class: "fg-picker__kind" }, [f[2]])] : []));
        }))
      );
    }

    function tooLong(model, length) {
      show("limit", "Too long for the model.", model.title + " reads at most " + tokensText(model.max_positions) +
        " (its config's limit), fewer than " + number.format(length) + ".", []);
    }

    // An engine's error on published decode and prefill measurements, once where they are the same.
    function inferenceError(engine) {
      var decode = data.errors.decode[engine.key], prefill = data.errors.prefill[engine.key];
      return decode === prefill ? decode : "decode: " + decode + "; prefill: " + prefill;
    }

    function offline() {
      show("offline", "The picker can't load its formulas here", "(a page opened from disk?): the tables below answer, for fixed settings.", []);
    }

    function jobFact(rate, work, at, gpu, count) {
      var job = Number(controls.job.value);
      if (!(Number.isFinite(job) && job >= 1) || !rate) return null;
      var hours = job / rate / 3600;
      var budgets = gpu.budgets[count] || [];
      var lines = budgets.map(function (b) { return budgetText(b, hours); });
      var text = work + tokensText(job) + at + ": about " + hoursText(hours) +
        (lines.length ? "." : ". No free tier offers " + (count > 1 ? count + " × " : "") + gpu.name + ".");
      var resume = budgets.some(function (b) { return b.session_hours && hours > b.session_hours; })
        ? [" Past one session, save checkpoints and resume: ",
          el("a", { href: "../../guides/staying-connected/" }, ["Staying connected"]), "."]
        : [];
      var tiers = lines.length ? [el("ul", { class: "fg-picker__budgets" }, lines.map(function (line) { return el("li", {}, [line]); }))] : [];
      return ["job", el("span", {}, [text].concat(resume, tiers)), "Worked out here from that speed and the platforms' limits.", { "data-hours": String(hours) }];
    }

    // A GGUF file in llama.cpp: its buffers (all layers on the GPUs, or the -ngl that fit), the
    // longest context, and its speed with every layer on the GPU, as benchlib fit and predict
    // --engine llama.cpp answer.
    function llamaCppAnswer(model, formulas, choice) {
      var result = evaluateLlamaCpp(data, model, formulas, choice);
      var gpu = result.gpu, count = choice.count, on = (count > 1 ? count + " × " : "one ") + gpu.name;
      var file = result.setup.label, cache = cacheName(choice.cache);
      var cached = choice.cache === "fp16" ? "" : ", a " + cache + " KV cache";
      var setting = model.title + " in llama.cpp, its " + file + " file" + cached + ", one sequence of " + tokensText(choice.length) + " on " + on;
      if (result.notPredicted) {
        show("not-predicted", "Not predicted.", setting + ": " + result.notPredicted + ".", []);
        return;
      }
      if (result.tooLong) {
        tooLong(model, choice.length);
        return;
      }
      var fit = result.fit, kind = "Predicted by benchlib fit --engine llama.cpp (the committed formulas of " + data.created + "), not measured.";
      var why = fit.fits
        ? setting + ": " + bytesText(fit.peak_bytes) + " of llama.cpp's buffers, of " + (count > 1 ? "the GPUs' " + bytesText(gpu.memory.usable_bytes * count) : "its " + gpu.usable_text) + "."
        : setting + ": " + (fit.gpu_layers === fit.layers
          ? "-ngl " + fit.gpu_layers + " puts all its layers on the GPU" + (count > 1 ? "s" : "") + " but not the output layer, which runs on the CPU, slower."
          : fit.gpu_layers > 0
            ? "-ngl " + fit.gpu_layers + " puts " + fit.gpu_layers + " of its " + fit.layers + " layers on the GPU" + (count > 1 ? "s" : "") + " and runs the rest on the CPU, far slower."
            : "not even one layer fits beside the context's buffers.");
      var facts = [["largest", fit.largest_context > 0
        ? "Longest context with every layer on the GPU" + (count > 1 ? "s" : "") + ": " + tokensText(fit.largest_context) +
          (fit.largest_context >= model.max_positions ? " (the model's own limit)" : "") + "."
        : "No context fits with every layer on the GPU" + (count > 1 ? "s" : "") + ": the weights alone don't.", kind]];
      var rows = ["model " + bytesText(fit.model_buffer) + " (" + fit.gpu_layers + " of " + fit.layers + " layers" + (fit.output_on_gpu ? " and the output layer" : "") + ")",
        "KV cache " + bytesText(fit.kv_cache) + " (" + cache + ")", "compute buffer " + bytesText(fit.compute_buffer),
        "CUDA context " + bytesText(fit.cuda_context) + (count > 1 ? " (each GPU holds one more, with its compute buffer)" : "")];
      facts.push(["memory", "llama.cpp's GPU buffers" + (count > 1 ? ", the " + count + " GPUs together" : "") + ": " + rows.join(", ") +
        ". In host memory: " + bytesText(fit.host_model_buffer) + " (the token embeddings" + (fit.fits ? "" : " and the layers left on the CPU") + ").", ""]);
      var s = result.speed, name = engineName(s.engine), rate = null;
      if (s.refused) {
        facts.push(["speed-" + s.engine.key, name + ": speed not predicted: " + s.refused + ".", ""]);
      } else {
        var sp = s.speed, ifAll = fit.fits ? "" : "With every layer on the GPU, ";
        rate = sp.decode_tokens_per_s;
        var text = ifAll + name + (fit.fits ? " reads the prompt at about " : " would read the prompt at about ") + rateText(sp.prefill_tokens_per_s) + " tokens/s" +
          (rate ? (fit.fits ? " and generates about " : " and generate about ") + rateText(rate) + " tokens/s" : "") + "." +
          (fit.fits ? "" : " The CPU's share of the layers is not predicted.");
        var numbers = { "data-prefill": String(sp.prefill_tokens_per_s) };
        if (rate) numbers["data-decode"] = String(rate);
        facts.push(["speed-" + s.engine.key, text, "Predicted: " + inferenceError(s.engine) + ".", numbers]);
      }
      if (count > 1) facts.push(["split", "The " + count + " GPUs run their layers one after the other (--split-mode layer), so generation runs at one GPU's rate.", ""]);
      var job = fit.fits && rate ? jobFact(rate, "Generating ", " with " + name + " at that speed", gpu, count) : null;
      if (job) facts.push(job);
      facts.push(["setup", "Setup: llama.cpp with its " + file + " file, computing in f16 with " + (cache === "q8_0" ? "a " : "an ") + cache + " KV cache" +
        (choice.cache === "fp16" ? "" : " (-ctk " + cache + " -ctv " + cache + "; a quantized V cache needs flash attention, -fa)") + ", " +
        (fit.fits ? "every layer on the GPU" + (count > 1 ? "s" : "") + " (-ngl 99)" : "-ngl " + fit.gpu_layers) + ".", ""]);
      show(fit.fits ? "fits" : "no", fit.fits ? "Fits." : "Does not fit whole.", why, facts,
        { "data-peak": fit.peak_bytes, "data-largest": fit.largest_context, "data-gpu-layers": fit.gpu_layers });
    }

    // Each engine's speed at the reader's setting, the chosen engine first; an engine that doesn't
    // run inference at all is left out, one that doesn't run this format says why.
    function speedFacts(result, choice, trains) {
      var facts = [];
      var speeds = result.speeds.filter(function (s) { return !(trains && s.engine.refuses[result.setup.key]); });
      speeds.sort(function (a, b) { return (b.engine.key === choice.engine) - (a.engine.key === choice.engine); });
      var ifFitted = result.memory.fits ? "" : "If it fitted, ";
      speeds.forEach(function (s) {
        var name = engineName(s.engine), key = "speed-" + s.engine.key;
        if (s.refused) {
          facts.push([key, name + ": speed not predicted: " + s.refused + ".", ""]);
          return;
        }
        var sp = s.speed, text, error, numbers = {};
        ["prefill_tokens_per_s", "decode_tokens_per_s", "training_tokens_per_s"].forEach(function (f) {
          if (sp[f]) numbers["data-" + f.split("_")[0]] = String(sp[f]);
        });
        if (trains) {
          text = ifFitted + name + " would train about " + rateText(sp.training_tokens_per_s) + " tokens/s (" +
            rateText(1e6 / sp.training_tokens_per_s / 3600) + " hours per million tokens).";
          if (!ifFitted) text = text.replace(" would train ", " trains ");
          error = data.errors.training;
        } else {
          text = ifFitted + name + " would read the prompt" + (choice.batch > 1 ? "s" : "") + " at about " + rateText(sp.prefill_tokens_per_s) + " tokens/s" +
            (sp.decode_tokens_per_s ? " and generate about " + rateText(sp.decode_tokens_per_s) + " tokens/s" +
              (choice.batch > 1 ? ", the " + choice.batch + " sequences together" : "") : "") + ".";
          if (!ifFitted) text = text.replace(" would read ", " reads ").replace(" and generate ", " and generates ");
          error = inferenceError(s.engine);
        }
        facts.push([key, text, "Predicted: " + error + ".", numbers]);
      });
      return facts;
    }

    function jobOf(result, choice, trains) {
      var chosen = result.jobEngine;
      if (!chosen) return null;
      var work = (trains ? "Training on" : "Generating") + " ", using = " with " + engineName(chosen.engine);
      if (result.memory.fits) {
        return jobFact(trains ? chosen.speed.training_tokens_per_s : chosen.speed.decode_tokens_per_s, work, using + " at that speed", result.gpu, choice.count);
      }
      if (result.atLargest) {
        return jobFact(result.atLargest.training_tokens_per_s, work, using + " at batch " + result.largest + ", the largest that fits (about " +
          rateText(result.atLargest.training_tokens_per_s) + " tokens/s)", result.gpu, choice.count);
      }
      return null;
    }

    function formulaAnswer(model, formulas, choice) {
      var result = evaluate(data, model, formulas, choice);
      var gpu = result.gpu, setup = result.setup, count = choice.count, trains = setup.mode !== "inference";
      var on = (count > 1 ? count + " × " : "one ") + gpu.name;
      // "QLoRA" and "LoRA" as they are, "Inference" and "Full fine-tune" in lower case inside a sentence.
      var modeLabel = find(data.modes, setup.mode).label;
      if (!/[A-Z]/.test(modeLabel.slice(1))) modeLabel = modeLabel.toLowerCase();
      // The weights as the GPU loads them: 16-bit weights in fp16 where it has no bf16.
      var chosen = find(data.setups, choice.setup), weights = chosen.weights;
      if (weights === "bf16" && gpu.dtype !== "bf16") weights = gpu.dtype;
      // A KV cache stored in another format, as the weights menu says it; training without checkpointing.
      var cache = chosen.cache ? ", " + chosen.cache + " KV cache" : "";
      var kept = trains && !chosen.checkpointing ? ", no gradient checkpointing" : "";
      // Adapters other than the weights menu's own, as the adapters menu says them.
      if (chosen.adapter_of) kept = ", LoRA " + chosen.adapters + kept;
      var sized = trains
        ? "batch " + number.format(choice.batch) + " × " + tokensText(choice.length)
        : (choice.batch > 1 ? choice.batch + " sequences × " : "one sequence of ") + tokensText(choice.length);
      var setting = model.title + ", " + modeLabel + " with " + weights + " weights" + cache + kept + ", " + sized + " on " + on;
      var setupFact = ["setup", "Setup: " + setup.describe + (gpu.dtype !== setup.dtype && setup.dtype === "bf16"
        ? " (in " + gpu.dtype + ": the " + gpu.name + " has no bf16)" : "") + "." + (result.note ? " Note: " + result.note + "." : ""), ""];
      if (result.notPredicted) {
        show("not-predicted", "Not predicted.", setting + ": " + result.notPredicted + ".", [setupFact]);
        return;
      }
      if (result.tooLong) {
        tooLong(model, choice.length);
        return;
      }
      var m = result.memory;
      var why = setting + ": " + bytesText(m.peak) + (count > 1 ? " on the fullest GPU, of its " : ", of its ") + gpu.usable_text + ".";
      var memoryKind = "Predicted by benchlib fit's formulas (the committed table of " + data.created + "): " + data.errors.memory + ".";
      var facts = [];
      var largestText = trains
        ? (result.largest > 0 ? "Largest batch of " + number.format(choice.length) + "-token samples that fits: " + number.format(result.largest) + "." : "Not even a batch of 1 fits.")
        : (result.largest > 0 ? "Longest context that fits at " + (choice.batch > 1 ? choice.batch + " sequences" : "one sequence") + ": " + tokensText(result.largest) +
          (result.largest >= model.max_positions ? " (the model's own limit, before the GPU's memory runs out)" : "") + "." : "Not even a 1-token prompt fits at that batch.");
      facts.push(["largest", largestText, memoryKind]);
      var rows = [["weights", "weights"], ["gradients", "gradients"], ["optimizer_state", "optimizer state"], ["activations", "activations"], ["kv_cache", "KV cache"]]
        .filter(function (r) { return m.kinds[r[0]]; })
        .map(function (r) { return r[1] + " " + bytesText(m.kinds[r[0]]); });
      rows.push("CUDA context " + bytesText(m.cudaContext) + (count > 1 ? " (one per GPU)" : ""));
      rows.push("allocator " + bytesText(m.allocator));
      var breakdown = "Memory" + (count > 1 ? ", the " + count + " GPUs together" : "") + ": " + rows.join(", ") + ".";
      if (count > 1) breakdown += " Each GPU: " + m.perGpu.map(bytesText).join(", ") + ".";
      facts.push(["memory", breakdown, ""]);
      if (result.concurrency) {
        facts.push(["concurrency", "Sequences of " + tokensText(choice.length) + " whose KV caches fit at once beside the weights: " +
          number.format(result.concurrency.sequences) + ".", ""]);
      }
      facts = facts.concat(speedFacts(result, choice, trains));
      if (count > 1 && !trains) facts.push(["split", "The " + count + " GPUs run their layers one after the other, so generate() runs at one GPU's rate.", ""]);
      var job = jobOf(result, choice, trains);
      if (job) facts.push(job);
      facts.push(setupFact);
      var numbers = { "data-tensor-peak": m.tensorPeak, "data-largest": result.largest };
      if (result.concurrency) numbers["data-concurrency"] = result.concurrency.sequences;
      show(m.fits ? "fits" : "no", m.fits ? "Fits." : "Does not fit.", why, facts, numbers);
    }

    function update() {
      labelControls();
      var model = find(data.models, controls.model.value);
      var gpu = find(data.gpus, controls.gpu.value);
      var count = Number(controls.count.value);
      var setupKey = chosenSetup();
      var batch = Number(controls.batch.value), tokens = Number(controls.tokens.value);
      if (!(Number.isInteger(tokens) && tokens >= 1 && Number.isInteger(batch) && batch >= 1)) {
        show("invalid", "Enter whole numbers:", "a length and a batch of at least 1.", []);
        return;
      }
      var choice = { gpu: gpu.key, count: count, setup: setupKey, engine: controls.engine.value, batch: batch, length: tokens, cache: controls.cache.value };
      var formulas = loaded[model.key];
      if (formulas instanceof Error) {
        offline();
      } else if (formulas && !(formulas instanceof Promise)) {
        if (find(data.setups, setupKey).llama_cpp) llamaCppAnswer(model, formulas, choice);
        else formulaAnswer(model, formulas, choice);
      } else {
        answer.setAttribute("data-verdict", "loading");
        answer.replaceChildren(el("p", { class: "fg-picker__verdict" }, ["Loading " + model.title + "'s formulas…"]));
        load(model.key);
      }
    }

    function load(key) {
      if (loaded[key]) return;
      loaded[key] = fetch(FORMULAS + encodeURIComponent(key) + ".json")
        .then(function (response) {
          if (!response.ok) throw new Error(response.status + " " + response.statusText);
          return response.json();
        })
        .then(function (formulas) { loaded[key] = formulas; }, function (error) { loaded[key] = error instanceof Error ? error : new Error(String(error)); })
        .then(update);
    }

    controls.mode.addEventListener("change", function () { resetForMode(); update(); });
    form.addEventListener("input", update);
    form.addEventListener("change", update);
    form.addEventListener("submit", function (event) { event.preventDefault(); });
    resetForMode();
    update();
    root.classList.add("fg-picker--live");
  }

  function setUpAll() {
    document.querySelectorAll(".fg-picker[data-picker]:not(.fg-picker--live)").forEach(function (root) {
      try {
        setUp(root);
      } catch (error) {
        console.error("can-i-run-it.js: the short answer stays in place.", error);
      }
    });
  }

  if (typeof document === "undefined") {
    // Node (a developer's check against Python): the evaluation alone.
    module.exports = { memoryAt: memoryAt, peakAt: peakAt, largest: largest, speedOf: speedOf, maxConcurrency: maxConcurrency, evaluate: evaluate, llamaCppFit: llamaCppFit, withCacheOf: withCacheOf, evaluateLlamaCpp: evaluateLlamaCpp, NotPredicted: NotPredicted };
  } else if (typeof window.document$ !== "undefined") {
    window.document$.subscribe(setUpAll);
  } else {
    document.addEventListener("DOMContentLoaded", setUpAll);
  }
})();
