/* Figure 5's regime map over training time: draws every block that benign.regimes.time_map_html put on the page.

A classic script with no modules and no libraries, so that a page opened from file:// and offline works: its data is
inline (<script type="application/json">), and everything is drawn by hand on a canvas. A block holds the grid
(d, ‖μ‖), and per cell the records of three conditions (first step, switches) and its logged train and test
accuracy. The regime at a step follows from the records exactly, by benign.regimes.regime_at's rule: a condition
holds at step t when it held at step 0 (first = 0) XOR it switched an odd number of times up to t; not overfitting
unless every clean and every noisy label is fitted, else benign if the test error is below δ, else harmful.

The logic (regimeAt, counts, the slider's log scale) is attached to globalThis.benignRegimeTime with no DOM, so node
can run this file in a vm context and test it against the Python rule (tests/test_regime_time.py). On a page,
benignRegimeTime.maps holds one controller per block (step, setStep, counts of the regimes drawn, select).
*/
(function () {
  "use strict";
  if (globalThis.benignRegimeTime) {  // the script named twice on a page: draw any block not drawn yet
    if (typeof document !== "undefined") globalThis.benignRegimeTime.mountAll();
    return;
  }

  const POSITIONS = 240;  // slider positions from step 1 to the last, log-spaced (position 0: step 0)

  // a condition at `step` from its record {first, switches}
  function held(record, step) {
    let flips = 0;
    for (const s of record.switches) {
      if (s > step) break;
      flips += 1;
    }
    return (record.first === 0) !== (flips % 2 === 1);
  }

  function regimeAt(cell, step) {
    const fitted = held(cell.events.clean_fitted, step) && held(cell.events.noisy_fitted, step);
    if (!fitted) return "not_overfitting";
    return held(cell.events.test_error, step) ? "benign" : "harmful";
  }

  function regimesAt(payload, step) {
    return payload.cells.map((cell) => regimeAt(cell, step));
  }

  function countOf(payload, regimes) {
    const out = {};
    for (const r of payload.regimes) out[r.key] = 0;
    for (const r of regimes) out[r] = (out[r] || 0) + 1;
    return out;
  }

  function counts(payload, step) {
    return countOf(payload, regimesAt(payload, step));
  }

  function positions(numSteps) {
    return Math.min(POSITIONS, numSteps);
  }

  // the slider: position 0 is step 0, position k of K is step round(N^(k/K)), so the last position is step N
  function stepAt(position, numSteps) {
    const K = positions(numSteps);
    if (position <= 0) return 0;
    if (position >= K) return numSteps;
    return K === numSteps ? position : Math.round(Math.pow(numSteps, position / K));
  }

  function positionOf(step, numSteps) {
    const K = positions(numSteps);
    if (step <= 0) return 0;
    if (step >= numSteps) return K;
    if (K === numSteps) return Math.round(step);
    return Math.max(1, Math.min(K, Math.round(K * Math.log(step) / Math.log(numSteps))));
  }

  const api = {regimeAt, regimesAt, counts, stepAt, positionOf, maps: [], mountAll: () => {}};
  globalThis.benignRegimeTime = api;
  if (typeof document === "undefined") return;  // node: the logic only

  const FONT = "12px system-ui, -apple-system, 'Segoe UI', sans-serif";
  const TRAIN = "#444444", TEST = "#ff7f0e";  // the course panel's two lines: benign.plots.accuracy_curves' colours
  const number = (x) => x.toLocaleString("en-US");
  const label = (x) => (Math.abs(x) >= 1000 ? number(x) : String(x));
  const power = (k) => String(k).replace(/\d/g, (c) => "⁰¹²³⁴⁵⁶⁷⁸⁹"[Number(c)]);  // 4 → ⁴

  function make(tag, attributes, parent) {
    const node = document.createElement(tag);
    for (const [k, v] of Object.entries(attributes || {})) {
      if (k === "text") node.textContent = v;
      else node.setAttribute(k, v);
    }
    if (parent) parent.appendChild(node);
    return node;
  }

  // every `every`-th label that fits: tick labels of `values` spaced `space` px apart need `width` px each
  function labelStride(ctx, values, space) {
    const widest = Math.max(...values.map((v) => ctx.measureText(label(v)).width)) + 6;
    return Math.max(1, Math.ceil(widest / Math.max(space, 1)));
  }

  let serial = 0;

  function mount(block) {
    if (block.dataset.drawn) return;
    block.dataset.drawn = "yes";
    const payload = JSON.parse(block.querySelector("script.benign-regime-time-data").textContent);
    const fallback = block.querySelector(".benign-regime-time-fallback");
    if (fallback) fallback.remove();
    const N = payload.num_steps, nD = payload.d.length, nMu = payload.signal_norm.length;
    const colorOf = Object.fromEntries(payload.regimes.map((r) => [r.key, r.color]));
    const nameOf = Object.fromEntries(payload.regimes.map((r) => [r.key, r.label]));
    const id = `benign-regime-time-${serial++}`;

    const controls = make("div", {class: "benign-rt-controls"}, block);
    make("label", {for: `${id}-slider`, text: "Step (log scale)"}, controls);
    const slider = make("input", {type: "range", id: `${id}-slider`, min: 0, max: positions(N), step: 1}, controls);
    const typed = make("input", {type: "number", min: 0, max: N, step: 1, "aria-label": "step, typed"}, controls);
    make("span", {class: "benign-rt-of", text: `of ${number(N)}`}, controls);
    const legend = make("p", {class: "benign-rt-legend", "aria-live": "polite"}, block);
    const canvas = make("canvas", {tabindex: 0, role: "img"}, block);
    const said = make("p", {class: "benign-rt-cell", "aria-live": "polite"}, block);
    const ctx = canvas.getContext("2d");

    let step = Math.max(0, Math.min(N, payload.start_step));
    let selected = Math.floor(nD / 2) * nMu + Math.floor(nMu / 2);  // a cell index (rows d, columns ‖μ‖)
    let drawn = [];  // the regimes drawn last
    let layout = null;

    function place(width) {  // the map's and the panel's boxes in CSS px
      const side = width >= 620;
      const mapW = side ? Math.floor(width * 0.55) : width;
      const plotH = Math.max(160, Math.min(340, nMu * 36));
      const map = {x: 52, y: 8, w: mapW - 52 - 8, h: plotH};
      const mapBottom = map.y + map.h + 40;
      const panelTop = side ? 0 : mapBottom + 6;
      const panelLeft = side ? mapW + 12 : 0;
      const panelH = side ? mapBottom : 210;
      const panel = {x: panelLeft + 44, y: panelTop + 44, w: width - panelLeft - 44 - 10, h: panelH - 44 - 40};
      return {width, height: side ? mapBottom : panelTop + panelH, map, panel};
    }

    function cellAt(x, y) {  // the cell under a point of the canvas (CSS px), or -1
      const m = layout.map;
      if (x < m.x || x >= m.x + m.w || y < m.y || y >= m.y + m.h) return -1;
      const i = Math.floor((x - m.x) / (m.w / nD)), j = nMu - 1 - Math.floor((y - m.y) / (m.h / nMu));
      return Math.min(nD - 1, i) * nMu + Math.max(0, j);
    }

    function drawMap() {
      const m = layout.map, cw = m.w / nD, ch = m.h / nMu;
      drawn = regimesAt(payload, step);
      drawn.forEach((regime, k) => {
        const i = Math.floor(k / nMu), j = k % nMu;
        ctx.fillStyle = colorOf[regime];
        ctx.fillRect(m.x + i * cw, m.y + (nMu - 1 - j) * ch, cw + 0.5, ch + 0.5);
      });
      ctx.strokeStyle = "#fff";  // the cells' edges
      ctx.lineWidth = 1;
      ctx.beginPath();
      for (let k = 1; k < nD; k++) {
        ctx.moveTo(m.x + k * cw, m.y);
        ctx.lineTo(m.x + k * cw, m.y + m.h);
      }
      for (let k = 1; k < nMu; k++) {
        ctx.moveTo(m.x, m.y + k * ch);
        ctx.lineTo(m.x + m.w, m.y + k * ch);
      }
      if (cw > 4 && ch > 4) ctx.stroke();
      const i = Math.floor(selected / nMu), j = selected % nMu;
      ctx.lineWidth = 2.5;
      ctx.strokeStyle = "#000";
      ctx.strokeRect(m.x + i * cw + 1.5, m.y + (nMu - 1 - j) * ch + 1.5, cw - 3, ch - 3);
      ctx.strokeStyle = "#fff";
      ctx.lineWidth = 1;
      ctx.strokeRect(m.x + i * cw + 3.5, m.y + (nMu - 1 - j) * ch + 3.5, Math.max(cw - 7, 1), Math.max(ch - 7, 1));
      ctx.fillStyle = "#222";
      ctx.font = FONT;
      ctx.textAlign = "center";
      ctx.textBaseline = "top";
      const every = labelStride(ctx, payload.d, cw);
      payload.d.forEach((d, k) => {
        if (k % every === 0) ctx.fillText(label(d), m.x + (k + 0.5) * cw, m.y + m.h + 4);
      });
      ctx.fillText("d", m.x + m.w / 2, m.y + m.h + 22);
      ctx.textAlign = "right";
      ctx.textBaseline = "middle";
      const everyMu = Math.max(1, Math.ceil(16 / ch));
      payload.signal_norm.forEach((mu, k) => {
        if (k % everyMu === 0) ctx.fillText(label(mu), m.x - 5, m.y + (nMu - 0.5 - k) * ch);
      });
      ctx.textAlign = "left";
      ctx.fillText("‖μ‖", 2, m.y + m.h / 2);
    }

    function drawPanel() {
      const p = layout.panel, cell = payload.cells[selected], steps = payload.steps;
      const xOf = (t) => p.x + p.w * Math.log10(1 + t) / Math.log10(1 + N);
      const all = cell.train.concat(cell.test, [payload.test_threshold]);
      const low = Math.min(0.5, Math.floor(Math.min(...all) * 10) / 10);
      const top = 1.02;  // a little room above accuracy one, so a line there stays off the frame
      const yOf = (a) => p.y + p.h * (top - a) / (top - low);
      ctx.font = FONT;
      ctx.fillStyle = "#222";
      ctx.textAlign = "left";
      ctx.textBaseline = "alphabetic";
      ctx.fillText(`accuracy of the cell d = ${label(cell.d)}, ‖μ‖ = ${cell.signal_norm}`, p.x - 40, p.y - 30);
      ctx.strokeStyle = "#999";
      ctx.lineWidth = 1;
      ctx.strokeRect(p.x, p.y, p.w, p.h);
      ctx.textAlign = "right";
      ctx.textBaseline = "middle";
      const tick = 1 - low > 0.45 ? 0.25 : 0.1;
      for (let a = 1; a >= low - 1e-9; a -= tick) {
        ctx.fillText(a.toFixed(tick < 0.2 ? 1 : 2), p.x - 4, yOf(a));
      }
      ctx.textAlign = "center";
      ctx.textBaseline = "top";
      let lastRight = -Infinity;
      for (let t = 0; t <= N; t = t === 0 ? 1 : t * 10) {  // 0, 1, 10, 100, …
        const text = t >= 1000 ? `10${power(Math.round(Math.log10(t)))}` : String(t);  // 0, 1, 10, 100, 10³, …
        const w = ctx.measureText(text).width, x = xOf(t);
        if (x - w / 2 > lastRight + 4 && x + w / 2 <= p.x + p.w + 8) {
          ctx.fillText(text, x, p.y + p.h + 4);
          lastRight = x + w / 2;
        }
      }
      ctx.fillText("step (log scale)", p.x + p.w / 2, p.y + p.h + 21);
      ctx.setLineDash([4, 3]);
      ctx.strokeStyle = "#777";
      ctx.beginPath();
      ctx.moveTo(p.x, yOf(payload.test_threshold));
      ctx.lineTo(p.x + p.w, yOf(payload.test_threshold));
      ctx.stroke();
      ctx.setLineDash([]);
      for (const [values, color] of [[cell.train, TRAIN], [cell.test, TEST]]) {
        ctx.strokeStyle = color;
        ctx.lineWidth = 2;
        ctx.beginPath();
        values.forEach((a, k) => (k ? ctx.lineTo(xOf(steps[k]), yOf(a)) : ctx.moveTo(xOf(steps[k]), yOf(a))));
        ctx.stroke();
      }
      ctx.strokeStyle = "#000";
      ctx.lineWidth = 1.5;
      ctx.beginPath();
      ctx.moveTo(xOf(step), p.y);
      ctx.lineTo(xOf(step), p.y + p.h);
      ctx.stroke();
      ctx.textAlign = "left";
      ctx.textBaseline = "middle";
      let x = p.x - 40;
      const keyY = p.y - 14;
      for (const [name, color, dash] of [["train", TRAIN, []], ["test", TEST, []], ["test threshold", "#777", [4, 3]],
                                         ["this step", "#000", []]]) {
        ctx.strokeStyle = color;
        ctx.lineWidth = name === "this step" ? 1.5 : 2;
        ctx.setLineDash(dash);
        ctx.beginPath();
        if (name === "this step") {
          ctx.moveTo(x + 5, keyY - 6);
          ctx.lineTo(x + 5, keyY + 6);
        } else {
          ctx.moveTo(x, keyY);
          ctx.lineTo(x + 14, keyY);
        }
        ctx.stroke();
        ctx.setLineDash([]);
        ctx.fillStyle = "#222";
        ctx.fillText(name, x + 17, keyY);
        x += 26 + ctx.measureText(name).width;
      }
    }

    function logged(values) {  // the value at the last logged step up to `step`
      let k = 0;
      while (k + 1 < payload.steps.length && payload.steps[k + 1] <= step) k += 1;
      return [payload.steps[k], values[k]];
    }

    function draw() {
      const width = Math.max(260, Math.floor(block.clientWidth));
      layout = place(width);
      const ratio = window.devicePixelRatio || 1;
      canvas.style.width = `${width}px`;
      canvas.style.height = `${layout.height}px`;
      canvas.width = Math.round(width * ratio);
      canvas.height = Math.round(layout.height * ratio);
      ctx.setTransform(ratio, 0, 0, ratio, 0, 0);
      ctx.fillStyle = "#fff";
      ctx.fillRect(0, 0, width, layout.height);
      drawMap();
      drawPanel();
      slider.value = positionOf(step, N);
      slider.setAttribute("aria-valuetext", `step ${number(step)}`);
      if (Number(typed.value) !== step) typed.value = step;
      const c = countOf(payload, drawn);
      legend.replaceChildren(make("span", {text: `At step ${number(step)}: `}));
      payload.regimes.forEach((r) => {
        const item = make("span", {class: "benign-rt-item"}, legend);
        make("span", {class: "benign-rt-swatch", style: `background:${r.color}`}, item);
        item.append(`${r.label} ${c[r.key]}`);
      });
      const cell = payload.cells[selected], [at, train] = logged(cell.train), test = logged(cell.test)[1];
      said.textContent = `Cell d = ${label(cell.d)}, ‖μ‖ = ${cell.signal_norm}: ${nameOf[drawn[selected]]} ` +
        `at step ${number(step)}; train accuracy ${train.toFixed(3)} and test accuracy ${test.toFixed(3)} at the ` +
        `logged step ${number(at)}. Point at or tap a cell (or use the arrow keys on the map) to follow another.`;
      canvas.setAttribute("aria-label", `Regime map at step ${number(step)}: ` +
        payload.regimes.map((r) => `${r.label} ${c[r.key]}`).join(", ") + " cells");
    }

    function setStep(t) {
      step = Math.max(0, Math.min(N, Math.round(Number(t) || 0)));
      draw();
    }

    function select(k) {
      if (k >= 0 && k !== selected) {
        selected = k;
        draw();
      }
    }

    slider.addEventListener("input", () => setStep(stepAt(Number(slider.value), N)));
    typed.addEventListener("change", () => setStep(typed.value));
    const pointed = (event) => {
      const box = canvas.getBoundingClientRect();
      select(cellAt(event.clientX - box.left, event.clientY - box.top));
    };
    canvas.addEventListener("pointermove", pointed);
    canvas.addEventListener("pointerdown", pointed);
    canvas.addEventListener("keydown", (event) => {
      const moves = {ArrowLeft: [-1, 0], ArrowRight: [1, 0], ArrowUp: [0, 1], ArrowDown: [0, -1]}[event.key];
      if (!moves) return;
      event.preventDefault();
      const i = Math.max(0, Math.min(nD - 1, Math.floor(selected / nMu) + moves[0]));
      const j = Math.max(0, Math.min(nMu - 1, (selected % nMu) + moves[1]));
      select(i * nMu + j);
    });
    if (typeof ResizeObserver !== "undefined") {
      let width = 0;
      new ResizeObserver(() => {
        if (block.clientWidth !== width) {
          width = block.clientWidth;
          draw();
        }
      }).observe(block);
    } else {
      window.addEventListener("resize", draw);
    }
    draw();
    api.maps.push({payload, step: () => step, setStep, select, selected: () => selected,
                   counts: () => countOf(payload, drawn)});
  }

  api.mountAll = () => document.querySelectorAll(".benign-regime-time").forEach(mount);
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", api.mountAll);
  else api.mountAll();
})();
