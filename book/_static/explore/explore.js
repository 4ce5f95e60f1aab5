/* The explorable page (book/explore.md): paper 1's token-selection model trained in the reader's browser.

A classic script with no modules and no libraries, so that a page opened from file:// and offline works. The engine is
engine.mjs (the book's exact recursion, checked against benign.synthetic in tests/test_explore.py); the page reads its
text from BENIGN_ENGINE_SOURCE (engine-source.js, written at book build) and runs it in a Web Worker built from a Blob
with its "export " keywords removed. A new run terminates the worker of the old one. Where no worker can be made, the
same engine runs in the page, a few steps per timer tick (runInPage below: the worker's messages, one per tick).

Everything is drawn by hand on canvases that follow the column's width and the screen's pixel ratio. The test hook
window.explorable = {set(params), run() → Promise of the final metrics, presets, params(), withoutWorker(flag)}
drives the page (tests/test_explore_page.py, benchmarks/explore.py).
*/
(function () {
  "use strict";

  const TOKEN_COLORS = ["#1f77b4", "#2ca02c", "#d62728", "#7f7f7f"]; // benign.plots.TOKEN_COLORS, by token kind
  const TOKEN_NAMES = ["relevant", "weakly relevant, aligned", "weakly relevant, opposite", "irrelevant"];
  const REGIME_COLORS = { harmful: "#d62728", benign: "#2ca02c", not_overfitting: "#1f77b4" }; // benign.plots
  const REGIME_WORDS = { harmful: "harmful", benign: "benign", not_overfitting: "not overfitting" };
  const TRAIN_COLOR = "#444444", TEST_COLOR = "#ff7f0e"; // benign.plots' accuracy panel: train, test
  const T = 8; // tokens per input, as in every figure of paper 1
  const POST_MS = 50; // the worker posts progress at most 20 times a second

  const W_CHOICES = [
    ["trained", "W and p trained (W₀ random)"],
    ["frozen", "p only, W frozen at W₀"],
    ["identity", "p only, W = I"],
  ];
  // sliders (a range and a typed number each): key, label, min, max, step
  const SLIDERS = [
    ["d", "d (dimension)", 50, 10000, 50],
    ["signalNorm", "‖μ‖ (signal)", 0.5, 100, 0.5],
    ["n", "n (training samples)", 2, 100, 1],
    ["eta", "η (label noise)", 0, 0.5, 0.05],
    ["rho", "ρ (weak signal)", 0, 1, 0.05],
    ["alpha", "α (step size)", 0.0005, 0.05, 0.0005],
    ["steps", "steps", 10, 5000, 10],
    ["nTest", "test samples", 100, 2000, 100],
    ["seed", "seed", 0, 9999, 1],
  ];
  const FIG3 = { n: 20, eta: 0.2, rho: 0.1, alpha: 0.005, steps: 1000, nTest: 1000, W: "trained", seed: 42 };
  const PRESETS = {
    balanced: { label: "Figure 3 (a): balanced", d: 2000, signalNorm: 20, ...FIG3 },
    largeNoise: { label: "Figure 3 (b): large noise", d: 4500, signalNorm: 5, ...FIG3 },
    largeSignal: { label: "Figure 3 (c): large signal", d: 1000, signalNorm: 80, ...FIG3 },
    figure1: { label: "Figure 1's settings", d: 10000, signalNorm: 20, n: 100, eta: 0.2, rho: 0.2, alpha: 0.005,
               steps: 1000, nTest: 100, W: "identity", seed: 0 },
  };

  // ---- one run's messages to the page: at most every POST_MS, the new slices of its per-step arrays, then its test
  // metrics. The same generator runs in the worker (its source is put there, after the engine's) and, where no worker
  // can be made, in the page a message per tick; it reads nothing from this script but its arguments.

  function* runMessages(p, engine, postMs) {
    const run = engine.makeRun(p);
    let sent = 0, posted = 0;
    for (const [result, stage, step] of engine.training(run, { alpha: p.alpha, steps: p.steps,
      trainW: p.W === "trained", logEvery: p.logEvery, chunk: 10 })) {
      const now = Date.now();
      if (stage === "train" && step < result.steps && now - posted < postMs) continue;
      posted = now;
      const upTo = result.trained + 1;
      yield { stage, from: sent, trainLoss: result.trainLoss.slice(sent, upTo),
              trainAcc: result.trainAcc.slice(sent, upTo),
              tracked: result.tracked.map((x) => x.slice(sent * p.T, upTo * p.T)),
              track: result.track, noisy: Array.from(run.noisy) };
      sent = upTo;
      if (stage === "done") {
        yield { stage: "final", logged: result.logged, testLoss: result.testLoss, testAcc: result.testAcc,
                regimes: engine.regimes(result) };
      }
    }
  }

  const HANDLER = `
self.onmessage = (event) => {
  const engine = {makeRun, training, regimes}, id = event.data.id;
  for (const msg of (${runMessages})(event.data.params, engine, ${POST_MS})) self.postMessage({id, ...msg});
};
`;

  function engineSource() {
    if (typeof BENIGN_ENGINE_SOURCE !== "string") throw new Error("engine-source.js is not loaded");
    return BENIGN_ENGINE_SOURCE.replace(/^export /gm, "");
  }

  function makeWorker() {
    const url = URL.createObjectURL(new Blob([engineSource() + HANDLER], { type: "text/javascript" }));
    try {
      return new Worker(url);
    } finally {
      URL.revokeObjectURL(url);
    }
  }

  // ---- the fallback without a worker: the same messages, one per tick of the page

  let pageEngine = null;
  function engineInPage() {
    if (!pageEngine) pageEngine = new Function(engineSource() + "\nreturn {makeRun, training, regimes};")();
    return pageEngine;
  }

  function runInPage(params, deliver) { // returns a cancel function
    const messages = runMessages(params, engineInPage(), POST_MS);
    let stopped = false, timer = null;
    const tick = () => {
      const item = stopped ? { done: true } : messages.next();
      if (item.done) return;
      deliver(item.value);
      timer = setTimeout(tick, 0);
    };
    timer = setTimeout(tick, 0);
    return () => { stopped = true; clearTimeout(timer); };
  }

  // ---- plotting by hand

  function niceTicks(lo, hi, count) {
    const span = hi - lo, raw = span / Math.max(1, count), mag = Math.pow(10, Math.floor(Math.log10(raw)));
    const step = [1, 2, 2.5, 5, 10].map((x) => x * mag).find((x) => span / x <= count) || 10 * mag;
    const out = [];
    for (let v = Math.ceil(lo / step - 1e-9) * step; v <= hi + 1e-9 * span; v += step) out.push(+v.toPrecision(12));
    return out;
  }

  function label(v) {
    const a = Math.abs(v);
    if (a === 0) return "0";
    if (a >= 1000) return String(Math.round(v));
    return String(+v.toPrecision(3));
  }

  function setUpCanvas(canvas) { // the drawing buffer at the shown size times the pixel ratio
    const ratio = window.devicePixelRatio || 1, width = canvas.clientWidth;
    const height = Math.round(Math.max(170, Math.min(280, width * 0.62)));
    canvas.style.height = height + "px";
    if (canvas.width !== Math.round(width * ratio) || canvas.height !== Math.round(height * ratio)) {
      canvas.width = Math.round(width * ratio);
      canvas.height = Math.round(height * ratio);
    }
    const ctx = canvas.getContext("2d");
    ctx.setTransform(ratio, 0, 0, ratio, 0, 0);
    ctx.clearRect(0, 0, width, height);
    return { ctx, width, height };
  }

  // axes: {xMax, yLo, yHi, log, title, xLabel}; series: [{xs(i) or step index, ys, color, width, dash}]
  function drawPlot(canvas, axes, series, marks) {
    const { ctx, width, height } = setUpCanvas(canvas);
    const font = "12px system-ui, -apple-system, 'Segoe UI', sans-serif";
    ctx.font = font;
    const left = 44, right = 18, top = 22, bottom = 34;
    const w = Math.max(10, width - left - right), h = Math.max(10, height - top - bottom);
    const ty = axes.log ? Math.log10 : (v) => v;
    const lo = ty(axes.yLo), hi = ty(axes.yHi);
    const X = (x) => left + (x / axes.xMax) * w, Y = (v) => top + (1 - (ty(v) - lo) / (hi - lo)) * h;
    ctx.fillStyle = "#222";
    ctx.textBaseline = "alphabetic";
    ctx.textAlign = "left";
    ctx.fillText(axes.title, left, 14);
    ctx.strokeStyle = "#ddd";
    ctx.lineWidth = 1;
    ctx.textAlign = "right";
    ctx.textBaseline = "middle";
    const yTicks = axes.log ? logTicks(axes.yLo, axes.yHi) : niceTicks(axes.yLo, axes.yHi, 5);
    for (const v of yTicks) {
      const y = Math.round(Y(v)) + 0.5;
      ctx.beginPath(); ctx.moveTo(left, y); ctx.lineTo(left + w, y); ctx.stroke();
      ctx.fillText(label(v), left - 4, y);
    }
    ctx.textAlign = "center";
    ctx.textBaseline = "top";
    for (const v of niceTicks(0, axes.xMax, Math.max(2, Math.floor(w / 70)))) {
      const x = Math.round(X(v)) + 0.5;
      ctx.beginPath(); ctx.moveTo(x, top); ctx.lineTo(x, top + h); ctx.stroke();
      ctx.fillText(label(v), x, top + h + 4);
    }
    ctx.fillText(axes.xLabel, left + w / 2, top + h + 18);
    ctx.strokeStyle = "#888";
    ctx.strokeRect(left + 0.5, top + 0.5, w, h);
    ctx.save();
    ctx.beginPath();
    ctx.rect(left, top, w, h);
    ctx.clip();
    for (const m of marks || []) {
      ctx.strokeStyle = m.color; ctx.lineWidth = 1.5; ctx.setLineDash([5, 4]);
      ctx.beginPath(); ctx.moveTo(left, Y(m.y)); ctx.lineTo(left + w, Y(m.y)); ctx.stroke();
    }
    ctx.setLineDash([]);
    for (const s of series) {
      ctx.strokeStyle = s.color;
      ctx.lineWidth = s.width || 1.5;
      ctx.beginPath();
      let pen = false;
      for (let i = 0; i < s.count; i++) {
        const v = s.y(i);
        if (!(v === v) || (axes.log && v <= 0)) { pen = false; continue; }
        const x = X(s.x(i)), y = Y(v);
        if (pen) ctx.lineTo(x, y); else ctx.moveTo(x, y);
        pen = true;
      }
      ctx.stroke();
    }
    ctx.restore();
  }

  function logTicks(lo, hi) { // 1, 2, 5 times a power of ten; 1 to 9 times it in a short range; else linear
    for (const mantissas of [[1, 2, 5], [1, 2, 3, 4, 5, 6, 7, 8, 9]]) {
      const out = [];
      for (let e = Math.floor(Math.log10(lo)); e <= Math.ceil(Math.log10(hi)); e++) {
        for (const m of mantissas) {
          const v = m * Math.pow(10, e);
          if (v >= lo && v <= hi) out.push(+v.toPrecision(6));
        }
      }
      if (out.length >= 3) return out.length > 8 ? out.filter((v, i) => i % 2 === 0) : out;
    }
    return niceTicks(lo, hi, 4);
  }

  // ---- the widget

  function mount(root) {
    const state = { params: null, data: null, cancel: null, id: 0, worker: null, noWorker: false, mode: null,
                    drawQueued: false, started: 0, firstCurvesMs: null, resolve: null, debounce: null };
    const el = (tag, attrs, parent, text) => {
      const e = document.createElement(tag);
      for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
      if (text !== undefined) e.textContent = text;
      if (parent) parent.appendChild(e);
      return e;
    };
    root.textContent = "";
    const presetBox = el("div", { class: "bx-presets", role: "group", "aria-label": "presets" }, root);
    el("span", { class: "bx-presets-title" }, presetBox, "Presets:");
    for (const [key, preset] of Object.entries(PRESETS)) {
      const b = el("button", { type: "button", "data-preset": key }, presetBox, preset.label);
      b.addEventListener("click", () => { setParams(preset); start(); });
    }
    const form = el("div", { class: "bx-controls" }, root);
    const inputs = {};
    for (const [key, text, min, max, step] of SLIDERS) {
      const row = el("div", { class: "bx-control" }, form);
      el("label", { for: `bx-${key}-number` }, row, text);
      const range = el("input", { type: "range", min, max, step, id: `bx-${key}-range`, "aria-label": text }, row);
      const number = el("input", { type: "number", min, max, step,
                                   id: `bx-${key}-number`, inputmode: "decimal" }, row);
      range.addEventListener("input", () => { number.value = range.value; });
      number.addEventListener("input", () => { if (number.value !== "") range.value = number.value; });
      for (const e of [range, number]) e.addEventListener("change", settingChanged);
      inputs[key] = { range, number, min, max, step };
    }
    const wRow = el("div", { class: "bx-control bx-choice" }, form);
    el("label", { for: "bx-W" }, wRow, "W");
    const wSelect = el("select", { id: "bx-W" }, wRow);
    for (const [value, text] of W_CHOICES) el("option", { value }, wSelect, text);
    wSelect.addEventListener("change", settingChanged);
    const actions = el("div", { class: "bx-actions" }, root);
    const runButton = el("button", { type: "button", class: "bx-run" }, actions, "Run");
    runButton.addEventListener("click", () => start());
    const progress = el("span", { class: "bx-progress", role: "status", "aria-live": "polite" }, actions);
    const resultBox = el("p", { class: "bx-result", "aria-live": "polite" }, root);

    const plots = el("div", { class: "bx-plots" }, root);
    const panel = (title, legend) => {
      const box = el("figure", { class: "bx-plot" }, plots);
      const canvas = el("canvas", { role: "img", "aria-label": title }, box);
      const cap = el("figcaption", {}, box);
      for (const [color, text, dash] of legend) {
        const item = el("span", { class: "bx-key" }, cap);
        el("span", { class: "bx-swatch" + (dash ? " bx-dashed" : ""), style: `border-color: ${color}` }, item);
        item.appendChild(document.createTextNode(text));
      }
      return canvas;
    };
    const curves = [[TRAIN_COLOR, "train"], [TEST_COLOR, "test"]];
    const canvases = {
      acc: panel("Accuracy", [...curves, [TEST_COLOR, "test at step 0 (head alone)", true]]),
      loss: panel("Loss (log scale)", curves),
      clean: panel("Attention of a clean training sample", TOKEN_COLORS.map((c, k) => [c, TOKEN_NAMES[k]])),
      noisy: panel("Attention of a noisy training sample", TOKEN_COLORS.map((c, k) => [c, TOKEN_NAMES[k]])),
    };

    function readParams() {
      const p = { T };
      for (const [key, input] of Object.entries(inputs)) {
        let v = Number(input.number.value);
        if (!(v === v) || input.number.value === "") v = Number(input.range.value);
        v = Math.min(input.max, Math.max(input.min, v));
        if (["d", "n", "steps", "nTest", "seed"].includes(key)) v = Math.round(v);
        p[key] = v;
      }
      p.W = wSelect.value;
      p.logEvery = Math.max(1, Math.ceil(p.steps / 100)); // about a hundred test evaluations (every 10 of 1000)
      return p;
    }

    function setParams(given) {
      for (const [key, input] of Object.entries(inputs)) {
        if (given[key] === undefined) continue;
        input.number.value = String(given[key]);
        input.range.value = String(given[key]);
      }
      if (given.W !== undefined) {
        if (!W_CHOICES.some(([v]) => v === given.W)) throw new Error(`W must be one of trained, frozen, identity`);
        wSelect.value = given.W;
      }
      clearTimeout(state.debounce);
      for (const b of presetBox.querySelectorAll("button")) {
        const p = PRESETS[b.dataset.preset], now = readParams();
        b.setAttribute("aria-pressed", String(Object.keys(p).every((k) => k === "label" || p[k] === now[k])));
      }
    }

    function settingChanged() { // a new setting cancels the old run and runs after a short pause
      setParams({});
      stop();
      progress.textContent = "Setting changed: running shortly…";
      clearTimeout(state.debounce);
      state.debounce = setTimeout(start, 600);
    }

    function stop() {
      if (state.cancel) state.cancel();
      state.cancel = null;
      if (state.resolve) state.resolve({ cancelled: true });
      state.resolve = null;
    }

    function start() {
      clearTimeout(state.debounce);
      stop();
      const params = readParams(), id = ++state.id, S = params.steps + 1;
      state.params = params;
      state.data = { S, upTo: 0, trainLoss: new Float64Array(S).fill(NaN), trainAcc: new Float64Array(S).fill(NaN),
                     tracked: [new Float64Array(S * T).fill(NaN), new Float64Array(S * T).fill(NaN)],
                     track: null, noisy: null, final: null };
      state.started = performance.now();
      state.firstCurvesMs = null;
      resultBox.textContent = "";
      resultBox.style.borderColor = "transparent";
      progress.textContent = "Drawing the data and setting up…";
      const promise = new Promise((resolve) => { state.resolve = resolve; });
      const deliver = (msg) => { if (id === state.id) received(msg); };
      let worker = null;
      try { // a worker is kept between runs; stop() has terminated one still running
        if (state.noWorker) throw new Error("no worker wanted");
        if (!state.worker) state.worker = makeWorker();
        worker = state.worker;
      } catch (err) {
        state.worker = null;
      }
      if (worker) {
        worker.onmessage = (event) => { if (event.data.id === id) received(event.data); };
        worker.onerror = (event) => { event.preventDefault(); failed(event.message || "the worker failed"); };
        worker.postMessage({ id, params });
        state.cancel = () => { worker.terminate(); if (state.worker === worker) state.worker = null; };
        state.mode = "worker";
      } else {
        state.cancel = runInPage(params, deliver);
        state.mode = "page";
      }
      drawAll();
      return promise;
    }

    function failed(message) {
      progress.textContent = "The run failed: " + message;
      if (state.worker) state.worker.terminate();
      state.worker = null;
      state.cancel = null;
      if (state.resolve) state.resolve({ error: message });
      state.resolve = null;
    }

    function received(msg) {
      const data = state.data, P = state.params;
      if (msg.stage === "final") {
        state.cancel = null;
        const wallMs = performance.now() - state.started, r = msg.regimes;
        data.final = { logged: Array.from(msg.logged), testLoss: Float64Array.from(msg.testLoss),
                       testAcc: Float64Array.from(msg.testAcc) };
        const metrics = { regime: r.trained, paperRegime: r.paper, trainAcc: r.trainAcc, testAcc: r.testAcc,
                          testAccStep0: r.testAccStep0, trainLoss: data.trainLoss[P.steps],
                          testLoss: data.final.testLoss[data.final.testLoss.length - 1], wallMs,
                          firstCurvesMs: state.firstCurvesMs, mode: state.mode, params: P };
        progress.textContent = `Done in ${(wallMs / 1000).toFixed(1)} s.`;
        showResult(metrics);
        queueDraw();
        if (state.resolve) state.resolve(metrics);
        state.resolve = null;
        return;
      }
      data.trainLoss.set(msg.trainLoss, msg.from);
      data.trainAcc.set(msg.trainAcc, msg.from);
      msg.tracked.forEach((x, k) => data.tracked[k].set(x, msg.from * T));
      data.upTo = msg.from + msg.trainLoss.length;
      data.track = msg.track;
      data.noisy = msg.noisy;
      if (state.firstCurvesMs === null && data.upTo > 0) state.firstCurvesMs = performance.now() - state.started;
      progress.textContent = msg.stage === "train"
        ? `Training: step ${data.upTo - 1} of ${P.steps}…`
        : `Testing on ${P.nTest} fresh samples at ${Math.floor(P.steps / P.logEvery) + 1 +
            (P.steps % P.logEvery ? 1 : 0)} logged steps…`;
      queueDraw();
    }

    function showResult(m) {
      const box = resultBox, fix = (v) => v.toFixed(3);
      box.textContent = "";
      box.style.borderColor = REGIME_COLORS[m.regime];
      const strong = el("strong", { style: `color: ${REGIME_COLORS[m.regime]}` }, null, REGIME_WORDS[m.regime]);
      box.append("By the book's rule this run is ", strong,
        `: train accuracy ${fix(m.trainAcc)}, test accuracy ${fix(m.testAcc)} against ${fix(m.testAccStep0)} ` +
        `at step 0 (the head alone). The paper's reading (test accuracy at least 0.95): ` +
        `${REGIME_WORDS[m.paperRegime]}. Time: ${(m.wallMs / 1000).toFixed(1)} s in this browser, first curves ` +
        `after ${(m.firstCurvesMs / 1000).toFixed(1)} s.`);
    }

    function queueDraw() {
      if (state.drawQueued) return;
      state.drawQueued = true;
      requestAnimationFrame(() => { state.drawQueued = false; drawAll(); });
    }

    function drawAll() {
      const data = state.data, P = state.params;
      if (!data) return;
      const steps = P.steps, upTo = data.upTo, fin = data.final, xLabel = "gradient-descent step";
      const perStep = (arr, color) => ({ count: upTo, x: (i) => i, y: (i) => arr[i], color });
      const logged = (arr, color) => ({ count: fin ? fin.logged.length : 0, x: (i) => fin.logged[i],
                                        y: (i) => arr[i], color });
      const acc = [perStep(data.trainAcc, TRAIN_COLOR)];
      if (fin) acc.push(logged(fin.testAcc, TEST_COLOR));
      let lo = 1;
      for (let i = 0; i < upTo; i++) lo = Math.min(lo, data.trainAcc[i]);
      if (fin) for (const v of fin.testAcc) lo = Math.min(lo, v);
      drawPlot(canvases.acc, { xMax: steps, yLo: Math.min(0.5, Math.floor(lo * 10) / 10), yHi: 1.02, title: "Accuracy",
                               xLabel }, acc, fin ? [{ y: fin.testAcc[0], color: TEST_COLOR }] : []);
      let lmin = Infinity, lmax = 0;
      const seen = (v) => { if (v > 0) { lmin = Math.min(lmin, v); lmax = Math.max(lmax, v); } };
      for (let i = 0; i < upTo; i++) seen(data.trainLoss[i]);
      if (fin) fin.testLoss.forEach(seen);
      if (!(lmax > 0)) { lmin = 0.1; lmax = 1; }
      const loss = [perStep(data.trainLoss, TRAIN_COLOR)];
      if (fin) loss.push(logged(fin.testLoss, TEST_COLOR));
      drawPlot(canvases.loss, { xMax: steps, yLo: lmin / 1.3, yHi: lmax * 1.3, log: true, title: "Loss (log scale)",
                                xLabel }, loss);
      const types = Array.from({ length: T }, (_, t) => Math.min(t, 3));
      const noisyCount = data.noisy ? data.noisy.reduce((a, b) => a + b, 0) : 0;
      for (const [k, which] of [[0, "clean"], [1, "noisy"]]) {
        const sample = data.track && data.track[k] !== undefined ? data.track[k] : null;
        const series = [];
        if (sample !== null) {
          for (let t = T - 1; t >= 0; t--) { // irrelevant tokens first, under the others
            series.push({ count: upTo, x: (i) => i, y: (i) => data.tracked[k][i * T + t], color: TOKEN_COLORS[types[t]],
                          width: types[t] < 3 ? 2 : 1.2 });
          }
        }
        const title = sample === null
          ? (data.track && which === "noisy" && !noisyCount ? "No noisy training sample (η n rounds to none)"
            : `Attention of a ${which} training sample`)
          : `${which === "clean" ? "Clean" : "Noisy"} training sample ${sample + 1}: attention per token`;
        drawPlot(canvases[which], { xMax: steps, yLo: 0, yHi: 1.02, title, xLabel }, series);
      }
    }

    let width = root.clientWidth;
    const onResize = () => { if (root.clientWidth !== width) { width = root.clientWidth; drawAll(); } };
    if (window.ResizeObserver) new ResizeObserver(onResize).observe(root); else window.addEventListener("resize", onResize);

    setParams(PRESETS.balanced);
    const api = {
      presets: JSON.parse(JSON.stringify(PRESETS)),
      params: () => readParams(),
      set: (given) => { stop(); setParams(given || {}); return readParams(); },
      run: () => start(),
      withoutWorker: (flag) => { state.noWorker = !!flag; }, // runs in the page, as where no worker can be made
    };
    return api;
  }

  function mountAll() {
    const root = document.getElementById("benign-explore");
    if (!root || window.explorable) return;
    try {
      window.explorable = mount(root);
      window.explorable.run();
    } catch (err) {
      root.textContent = "The explorable could not start: " + err.message;
      throw err;
    }
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", mountAll);
  else mountAll();
})();
