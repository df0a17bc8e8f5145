/* The "Can I run it?" picker (docs/gpus/can-i-run-it.md).
 *
 * Its data is in the page: benchlib.site.can_i_run_it.picker_data(), the committed prediction
 * table reshaped at build time, in the data-picker attribute. Models, GPUs, modes and weight
 * formats are whatever that data lists. For each task (a mode with one weight format) it holds,
 * per model and GPU, the largest prompt (inference) or batch (training) that fits, the peak
 * memory at the task's own setting and the predicted speeds, with the tables' text for each.
 *
 * Computed here: whether the reader's prompt length or batch is at most the table's largest, and
 * for training, the hours a job of the reader's tokens takes at the table's speed, in the free
 * tiers' sessions and quotas (their limits are in the data, with dates). Everything else shown is
 * read from the data; a choice the table has no cell for is answered "Not predicted", with why.
 * Nothing is fetched.
 */
(function () {
  "use strict";

  var number = new Intl.NumberFormat("en-US");
  var tenths = new Intl.NumberFormat("en-US", { minimumFractionDigits: 1, maximumFractionDigits: 1 });

  function el(tag, attrs, children) {
    var node = document.createElement(tag);
    Object.keys(attrs || {}).forEach(function (name) { node.setAttribute(name, attrs[name]); });
    (children || []).forEach(function (child) {
      node.appendChild(typeof child === "string" ? document.createTextNode(child) : child);
    });
    return node;
  }

  function find(list, key) {
    for (var i = 0; i < list.length; i++) if (list[i].key === key) return list[i];
    return null;
  }

  function tokensText(n) {
    return number.format(n) + " tokens";
  }

  // "1,024-token prompt": the length before a noun.
  function tokenLength(n) {
    return number.format(n) + "-token";
  }

  // An engine's short name: "vLLM" from "vLLM (CUDA graphs; ...)".
  function engineName(engine) {
    return engine.title.split(" (")[0];
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

  function setUp(root) {
    var data = JSON.parse(root.getAttribute("data-picker"));
    var uid = "fg-picker-" + Math.random().toString(36).slice(2, 8);
    var ids = {};
    ["model", "gpu", "mode", "weights", "tokens", "batch", "job"].forEach(function (k) { ids[k] = uid + "-" + k; });

    var form = el("form", { class: "fg-picker__form", "aria-label": "Can I run it?" }, [
      field(ids.model, "Model", select(ids.model, data.models.map(function (m) { return { value: m.key, label: m.title }; }))),
      field(ids.gpu, "GPU", select(ids.gpu, data.gpus.map(function (g) { return { value: g.key, label: g.label }; }))),
      field(ids.mode, "Mode", select(ids.mode, data.modes.map(function (m) { return { value: m.key, label: m.label }; }))),
      field(ids.weights, "Weights", select(ids.weights, data.formats.map(function (f) { return { value: f, label: f }; }))),
      field(ids.tokens, "Tokens", numberInput(ids.tokens, data.tokens, uid + "-tokens-list")),
      field(ids.batch, "Batch", numberInput(ids.batch, data.batches, uid + "-batch-list")),
      field(ids.job, "Tokens to train on", numberInput(ids.job, [1e6, 1e7, 1e8, 1e9], uid + "-job-list"))
    ]);
    var answer = el("div", { class: "fg-picker__answer", "aria-live": "polite" });
    root.appendChild(form);
    root.appendChild(answer);
    var controls = {};
    Object.keys(ids).forEach(function (k) { controls[k] = form.querySelector("#" + ids[k]); });
    controls.job.value = String(data.job_tokens);

    function tasksFor(mode) {
      return data.tasks.filter(function (t) { return t.mode === mode; });
    }

    // A new mode starts at the table's own setting for it: its first weight format, and the
    // batch (inference) or sample length (training) the table holds.
    function resetForMode() {
      var task = tasksFor(controls.mode.value)[0];
      if (!task) return;
      controls.weights.value = task.weights;
      if (task.axis === "tokens") {
        controls.batch.value = String(task.batch);
        if (!controls.tokens.value) controls.tokens.value = String(task.seq_len);
      } else {
        controls.tokens.value = String(task.seq_len);
        if (!controls.batch.value) controls.batch.value = String(task.batch);
      }
    }

    function labelControls() {
      var mode = controls.mode.value;
      var formats = tasksFor(mode).map(function (t) { return t.weights; });
      Array.prototype.forEach.call(controls.weights.options, function (o) {
        o.textContent = o.value + (formats.indexOf(o.value) < 0 ? " (not predicted)" : "");
      });
      var gpu = find(data.gpus, controls.gpu.value);
      form.querySelector("label[for='" + ids.tokens + "']").textContent =
        mode === "inference" ? "Prompt length (tokens)" : "Sample length (tokens)";
      form.querySelector("label[for='" + ids.batch + "']").textContent =
        "Batch";
      // A job's tokens count for training only: hidden for inference.
      controls.job.closest(".fg-picker__field").hidden = mode === "inference";
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

    // why: text, or a list of text and nodes (a link).
    function show(verdict, headline, why, facts) {
      answer.setAttribute("data-verdict", verdict);
      answer.replaceChildren(
        el("p", { class: "fg-picker__verdict" }, [el("strong", {}, [headline]), " "].concat(why)),
        el("ul", { class: "fg-picker__facts" }, facts.map(function (f) {
          return el("li", { "data-fact": f[0] }, [f[1]].concat(f[2] ? [" ", el("span", { class: "fg-picker__kind" }, [f[2]])] : []));
        }))
      );
    }

    function update() {
      labelControls();
      var model = find(data.models, controls.model.value);
      var gpu = find(data.gpus, controls.gpu.value);
      var mode = controls.mode.value;
      var modeLabel = find(data.modes, mode).label;
      var weights = controls.weights.value;
      var tokens = Number(controls.tokens.value);
      var batch = Number(controls.batch.value);
      var setting = model.title + " on " + gpu.label + ", " + modeLabel + " with " + weights + " weights";
      var kind = ["kind", "Kind: predicted by benchlib fit and benchlib predict (the committed table of " + data.created + "), not measured."];

      if (!(Number.isInteger(tokens) && tokens >= 1 && Number.isInteger(batch) && batch >= 1)) {
        show("invalid", "Enter whole numbers:", "a prompt or sample length and a batch of at least 1.", []);
        return;
      }
      var task = null;
      tasksFor(mode).forEach(function (t) { if (t.weights === weights) task = t; });
      // The page's own section on `benchlib fit`: a fragment, the same under both builders.
      function notPredicted(why) {
        var ask = el("a", { href: "#ask-about-your-own-model" }, ["Ask about your own model"]);
        show("not-predicted", "Not predicted.", [why + "; benchlib fit answers it (", ask, ", below)."], [kind]);
      }
      if (!task) {
        var held = tasksFor(mode).map(function (t) { return t.weights; }).join(", ");
        notPredicted("The table holds " + modeLabel + " with " + held + " weights only, not " + weights);
        return;
      }
      if (task.files && task.files[model.key]) {
        // llama.cpp runs a GGUF file: Q4_K_M, or the model's own MXFP4 (gpt-oss).
        setting = model.title + " on " + gpu.label + ", " + modeLabel + " in llama.cpp with its GGUF " + task.files[model.key] + " file";
      }
      var value = (task.largest[model.key] || {})[gpu.key];
      if (value === null || value === undefined) {
        if (task.left_out) {
          // The table says why it left this format out for such models (a GPTQ mixture of experts).
          show("not-predicted", "Not predicted.", "For " + model.title + ", " + task.left_out + ".", [kind]);
        } else {
          notPredicted("The table has no " + modeLabel + " cell for " + model.title + " on " + gpu.label);
        }
        return;
      }
      // Two GPUs split the layers (device_map="auto"): a batch is the whole batch, through both.
      var perGpu = gpu.count > 1 ? " (the layers split over " + gpu.count + " GPUs)" : "";
      var chosen, largestFact;
      if (task.axis === "tokens") {
        if (batch !== task.batch) {
          notPredicted("The table's " + modeLabel + " answers are for batch " + task.batch +
            " only, not batch " + batch);
          return;
        }
        if (tokens > model.max_positions) {
          show("limit", "Too long for the model.", model.title + " reads at most " + tokensText(model.max_positions) +
            " (its config's limit), fewer than " + number.format(tokens) + ".", [kind]);
          return;
        }
        chosen = "a " + tokenLength(tokens) + " prompt at batch " + batch;
        largestFact = value > 0
          ? "Longest prompt that fits at batch " + task.batch + ": " + tokensText(value) +
            (value >= model.max_positions ? " (the model's own limit, before the GPU's memory runs out)" : "") + "."
          : "Not even a 1-token prompt fits at batch " + task.batch + ".";
      } else {
        if (tokens !== task.seq_len) {
          notPredicted("The table's " + modeLabel + " batches are of " + tokenLength(task.seq_len) +
            " samples only, not " + tokenLength(tokens) + " ones");
          return;
        }
        chosen = "batch " + batch + perGpu + " of " + tokenLength(tokens) + " samples";
        largestFact = value > 0
          ? "Largest batch that fits: " + value + perGpu + ", of " + tokenLength(task.seq_len) + " samples."
          : "Not even a batch of 1 fits.";
      }
      var fits = value > 0 && (task.axis === "tokens" ? tokens : batch) <= value;
      var facts = [["largest", largestFact, "From the table."]];

      var peak = task.peak[model.key];
      var atSetup = "a " + tokenLength(task.seq_len) + (task.axis === "tokens" ? " prompt" : " sample") + ", batch " + task.batch;
      if (peak) {
        var together = gpu.count > 1 ? ", all GPUs together" : "";
        var peakText = task.engine === "llama.cpp"
          ? peak.text + " of llama.cpp's GPU buffers at " + atSetup + ", its CUDA context included."
          : peak.text + " of tensors at " + atSetup + together + ", before the CUDA context (" + data.allowances.context +
            ") and the allocator's " + data.allowances.overhead + ".";
        var yours = tokens === task.seq_len && batch === task.batch;
        facts.push(["peak", "Peak memory: " + peakText + (yours ? "" : " At your setting: not predicted (the table holds the peak at " + atSetup + " only)."),
          "From the table."]);
      } else {
        facts.push(["peak", "Peak memory: not predicted (the table holds none for this mode).", ""]);
      }

      if (task.decode) {
        var rates = ((task.decode.rates[model.key] || {})[gpu.key]) || {};
        var eager = task.decode.engines[0], served = task.decode.engines[1];
        var at = " at batch " + task.decode.batch + " with " + tokensText(task.decode.seq_len) + " in the KV cache";
        if (!served) {  // one engine: llama.cpp on its GGUF file
          facts.push(rates[eager.key]
            ? ["speed", "Decode speed" + at + ": about " + rates[eager.key].text + " tokens/s in " + engineName(eager) + ".", "From the table."]
            : ["speed", "Decode speed: not predicted (the table predicts it only where a " + tokenLength(task.decode.seq_len) + " prompt fits).", ""]);
        } else if (rates[eager.key]) {
          var text = "Decode speed" + at + ": about " + rates[eager.key].text + " tokens/s with " + engineName(eager) + "' generate()";
          if (rates[served.key]) text += ", " + rates[served.key].text + " with a served engine (" + engineName(served) + ").";
          else text += "; with a served engine (" + engineName(served) + "): not predicted" + (task.decode.missing[gpu.key] ? ", " + task.decode.missing[gpu.key] + "." : ".");
          facts.push(["speed", text, "From the table."]);
        } else {
          facts.push(["speed", "Decode speed: not predicted (the table predicts it only where a " + tokenLength(task.decode.seq_len) + " prompt fits).", ""]);
        }
      } else if (task.training) {
        var rate = (task.training[model.key] || {})[gpu.key];
        if (rate) {
          facts.push(["speed", "Training speed at batch " + value + perGpu + " (the largest that fits): about " + rate.text +
            " tokens/s, " + rate.hours_text + " hours per million tokens.", "From the table."]);
          var job = Number(controls.job.value);
          if (Number.isFinite(job) && job >= 1) {
            var hours = job / rate.value / 3600;
            var budgets = data.budgets[gpu.key] || [];
            var lines = budgets.map(function (b) { return budgetText(b, hours); });
            var text = "A job of " + tokensText(job) + " at that speed: about " + hoursText(hours) +
              (lines.length ? "." : ". No free tier offers " + gpu.label + ".");
            var resume = budgets.some(function (b) { return b.session_hours && hours > b.session_hours; })
              ? [" Past one session, save checkpoints and resume: ",
                el("a", { href: "../../guides/staying-connected/" }, ["Staying connected"]), "."]
              : [];
            var tiers = lines.length
              ? [el("ul", { class: "fg-picker__budgets" }, lines.map(function (line) { return el("li", {}, [line]); }))]
              : [];
            facts.push(["job", el("span", {}, [text].concat(resume, tiers)),
              "Worked out here from the table's speed and the platforms' limits."]);
          }
        } else {
          facts.push(["speed", "Training speed: not predicted for " + (value > 0 ? gpu.label : "a batch that does not fit") + ".", ""]);
        }
      }
      facts.push(["kind", kind[1] + " Worked out on this page: only whether your " + (task.axis === "tokens" ? "prompt" : "batch") +
        " is at most the table's largest" + (task.training ? ", and the job's hours in the platforms' limits." : ".")]);
      show(fits ? "fits" : "no", fits ? "Fits." : "Does not fit.", setting + ", " + chosen + ".", facts);
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

  if (typeof window.document$ !== "undefined") {
    window.document$.subscribe(setUpAll);
  } else {
    document.addEventListener("DOMContentLoaded", setUpAll);
  }
})();
