// Paper 1's token-selection model f(X) = νᵀXᵀ softmax(XWp), trained by exact full-batch gradient descent on
// (W, p) — or on p alone — from p = 0, in the page and in node. The same recursion as benign.synthetic (the model
// page derives it): the loss depends on (W, p) only through q = Wp, and with g = ∂L/∂q one GD step gives exactly
//     q'    = q − α K g − α ‖p‖² g + α² (q·g) g        (K = WWᵀ)
//     K'    = K − α (g qᵀ + q gᵀ) + α² ‖p‖² g gᵀ
//     ‖p'‖² = ‖p‖² − 2α (q·g) + α² gᵀ K g.
// g = Bᵀc lies in the span of the m = nT training tokens (rows of B), so q = U a and K Bᵀ = U M with
// U = [Bᵀ, K₀Bᵀ]: each step is a few products with G = BBᵀ and H = BK₀Bᵀ (m × m), whatever d is. d enters only
// the set-up (B W₀, one pass over the rows of W₀, never a d × d product) and the test predictions at logged steps.
//
// A plain ES module with no imports: node imports it; the page runs its text in a Web Worker (explore.js), with
// "export " removed, because module scripts and module workers cannot load from file://. Keep it that way.

export const HARM = 0.01; // test accuracy lost against the step-0 control that counts as harmful (benign.thresholds.HARM)
export const TEST_GOOD = 0.95; // the paper's Figure 5 rule for "generalizes" (benign.thresholds.TEST_GOOD)

// ---- random draws: sfc32 seeded through splitmix32, normals by Box–Muller (the page's own stream, not numpy's)

export function random(seed, stream) {
  let s = (Math.imul(seed | 0, 0x9e3779b1) ^ Math.imul(stream | 0, 0x85ebca6b)) >>> 0;
  const mix = () => {
    s = (s + 0x9e3779b9) >>> 0;
    let z = s;
    z = Math.imul(z ^ (z >>> 16), 0x85ebca6b);
    z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35);
    return (z ^ (z >>> 16)) >>> 0;
  };
  let a = mix(), b = mix(), c = mix(), d = mix();
  const uniform = () => { // in [0, 1), 32 random bits
    const t = (((a + b) >>> 0) + d) >>> 0;
    d = (d + 1) >>> 0;
    a = b ^ (b >>> 9);
    b = (c + (c << 3)) >>> 0;
    c = ((c << 21) | (c >>> 11)) >>> 0;
    c = (c + t) >>> 0;
    return t / 4294967296;
  };
  for (let i = 0; i < 12; i++) uniform();
  let spare = NaN;
  const normal = () => {
    if (spare === spare) { const x = spare; spare = NaN; return x; }
    const u = 1 - uniform(), r = Math.sqrt(-2 * Math.log(u)), t = 2 * Math.PI * uniform();
    spare = r * Math.sin(t);
    return r * Math.cos(t);
  };
  return { uniform, normal };
}

// ---- the data of paper 1 (benign.data.make_data): token t of input i is
//   relevant  μ_{Y*} + ε,  weak aligned  ρ μ_{Y*} + ε,  weak opposite  ρ μ_{−Y*} + ε,  irrelevant  ε,
// with μ₊ = ‖μ‖e₁, μ₋ = ‖μ‖e₂, ε ~ N(0, I), balanced clean labels Y* and the first ⌈nη⌉/2 of each class flipped.

export function tokenTypes(T) { // 0 relevant, 1 weak aligned, 2 weak opposite, 3 irrelevant
  return Array.from({ length: T }, (_, t) => Math.min(t, 3));
}

export function labels(n, eta) { // observed labels y, clean labels y*, noisy (the authors' deterministic flips)
  const yClean = new Float64Array(n), noisy = new Uint8Array(n), y = new Float64Array(n);
  const half = Math.floor(n / 2), k = Math.floor(Math.ceil(n * eta) / 2);
  for (let i = 0; i < n; i++) {
    yClean[i] = i < half ? 1 : -1;
    noisy[i] = (i < k) || (i >= half && i < half + k) ? 1 : 0;
    y[i] = noisy[i] ? -yClean[i] : yClean[i];
  }
  return { y, yClean, noisy };
}

export function inputRows(yClean, T, d, signalNorm, rho, draw, per = 8) { // visit(i0, rows, count): `per` inputs
  // at a time (count·T rows of d), noise first, then the signal; the same stream whether streamed or stored
  const n = yClean.length, types = tokenTypes(T);
  return (visit) => {
    const rows = new Float64Array(per * T * d);
    for (let i0 = 0; i0 < n; i0 += per) {
      const count = Math.min(per, n - i0);
      for (let j = 0; j < count * T * d; j++) rows[j] = draw.normal();
      for (let i = 0; i < count; i++) {
        const own = yClean[i0 + i] > 0 ? 0 : 1;
        for (let t = 0; t < T; t++) {
          if (types[t] === 3) continue;
          rows[(i * T + t) * d + (types[t] === 2 ? 1 - own : own)] += signalNorm * (types[t] === 0 ? 1 : rho);
        }
      }
      visit(i0, rows, count);
    }
  };
}

export function storedRows(X, n, T, d, per = 8) { // the same visits over stored inputs X (n·T × d)
  return (visit) => {
    for (let i0 = 0; i0 < n; i0 += per) visit(i0, X.subarray(i0 * T * d), Math.min(per, n - i0));
  };
}

export function tokens(yClean, T, d, signalNorm, rho, draw) { // X (n·T × d, row-major), all inputs stored
  const X = new Float64Array(yClean.length * T * d);
  inputRows(yClean, T, d, signalNorm, rho, draw)((i0, rows, count) => X.set(rows.subarray(0, count * T * d), i0 * T * d));
  return X;
}

export function head(d, signalNorm) { // ν = (μ₊ − μ₋)/‖μ₊ − μ₋‖ · 1/‖μ‖
  const nu = new Float64Array(d);
  nu[0] = 1 / (Math.SQRT2 * signalNorm);
  nu[1] = -nu[0];
  return nu;
}

export const BLOCK = 8; // rows of W₀ drawn and used at a time

export function kaimingRows(d, seed) { // W₀ ~ U(−1/√d, 1/√d), BLOCK rows at a time; the same rows on every call
  return (visit) => {
    const draw = random(seed, 3), rows = new Float64Array(BLOCK * d), bound = 1 / Math.sqrt(d);
    for (let k0 = 0; k0 < d; k0 += BLOCK) {
      const count = Math.min(BLOCK, d - k0);
      for (let j = 0; j < count * d; j++) rows[j] = (2 * draw.uniform() - 1) * bound;
      visit(k0, rows, count);
    }
  };
}

export function matrixRows(W, d) { // the rows of a given W₀ (d × d, row-major), e.g. exported from Python
  return (visit) => {
    for (let k0 = 0; k0 < d; k0 += BLOCK) visit(k0, W.subarray(k0 * d), Math.min(BLOCK, d - k0));
  };
}

export function makeRun(p) { // a run drawn in the page: p = {d, signalNorm, n, T, rho, eta, nTest, seed, W}, with
  // W₀ random (kaiming) unless W is "identity" (W₀ = I)
  const { d, signalNorm, n, T, rho, eta, nTest, seed } = p;
  const train = labels(n, eta), test = labels(nTest, 0);
  return {
    n, T, d, y: train.y, noisy: train.noisy, nu: head(d, signalNorm),
    X: tokens(train.yClean, T, d, signalNorm, rho, random(seed, 1)),
    yTest: test.y, // the test inputs are drawn as they are evaluated, after training, from their own stream
    testRows: (visit) => inputRows(test.yClean, T, d, signalNorm, rho, random(seed, 2))(visit), // the same each call
    W0rows: p.W === "identity" ? null : kaimingRows(d, seed),
  };
}

// ---- products: A Bᵀ for row-major A (nA × d) and B (nB × d), four rows of A at a time (each row of B read once
// per four), and the set-up: h = Xν, G = BBᵀ, B W₀ (one pass over W₀'s rows), H = (BW₀)(BW₀)ᵀ

export function products(A, nA, B, nB, d, out = new Float64Array(nA * nB)) {
  let i = 0;
  for (; i + 4 <= nA; i += 4) {
    const a0 = A.subarray(i * d, (i + 1) * d), a1 = A.subarray((i + 1) * d, (i + 2) * d);
    const a2 = A.subarray((i + 2) * d, (i + 3) * d), a3 = A.subarray((i + 3) * d, (i + 4) * d);
    for (let j = 0; j < nB; j++) {
      const b = B.subarray(j * d, (j + 1) * d);
      let s0 = 0, s1 = 0, s2 = 0, s3 = 0;
      for (let k = 0; k < d; k++) {
        const v = b[k];
        s0 += a0[k] * v; s1 += a1[k] * v; s2 += a2[k] * v; s3 += a3[k] * v;
      }
      out[i * nB + j] = s0; out[(i + 1) * nB + j] = s1; out[(i + 2) * nB + j] = s2; out[(i + 3) * nB + j] = s3;
    }
  }
  for (; i < nA; i++) {
    const a = A.subarray(i * d, (i + 1) * d);
    for (let j = 0; j < nB; j++) {
      let s = 0;
      for (let k = 0, o = j * d; k < d; k++) s += a[k] * B[o + k];
      out[i * nB + j] = s;
    }
  }
  return out;
}

export function gram(A, nA, d) { // A Aᵀ: the products with j ≤ i (four rows at a time), mirrored
  const out = new Float64Array(nA * nA);
  for (let i = 0; i < nA; i += 4) {
    const rows = Math.min(4, nA - i), upto = i + rows;
    const block = products(A.subarray(i * d, upto * d), rows, A, upto, d);
    for (let r = 0; r < rows; r++) out.set(block.subarray(r * upto, (r + 1) * upto), (i + r) * nA);
  }
  for (let i = 0; i < nA; i++) for (let j = i + 1; j < nA; j++) out[i * nA + j] = out[j * nA + i];
  return out;
}

function timesW0(X, m, d, W0rows) { // B W₀ = Σ_k B[:, k] W₀[k, :], a block of W₀'s rows at a time
  const BW = new Float64Array(m * d);
  W0rows((k0, rows, count) => {
    for (let i = 0; i < m; i++) {
      const out = BW.subarray(i * d, (i + 1) * d), b = X.subarray(i * d + k0, i * d + k0 + count);
      if (count === BLOCK) {
        const [b0, b1, b2, b3, b4, b5, b6, b7] = b;
        const w0 = rows.subarray(0, d), w1 = rows.subarray(d, 2 * d), w2 = rows.subarray(2 * d, 3 * d);
        const w3 = rows.subarray(3 * d, 4 * d), w4 = rows.subarray(4 * d, 5 * d), w5 = rows.subarray(5 * d, 6 * d);
        const w6 = rows.subarray(6 * d, 7 * d), w7 = rows.subarray(7 * d, 8 * d);
        for (let j = 0; j < d; j++) {
          out[j] += b0 * w0[j] + b1 * w1[j] + b2 * w2[j] + b3 * w3[j] + b4 * w4[j] + b5 * w5[j] + b6 * w6[j]
            + b7 * w7[j];
        }
      } else {
        for (let r = 0; r < count; r++) for (let j = 0; j < d; j++) out[j] += b[r] * rows[r * d + j];
      }
    }
  });
  return BW;
}

export function values(X, rows, d, nu) { // h = X ν, one value per token
  const h = new Float64Array(rows);
  for (let i = 0; i < rows; i++) {
    let s = 0;
    for (let k = 0; k < d; k++) s += X[i * d + k] * nu[k];
    h[i] = s;
  }
  return h;
}

export function setup(run) {
  const { n, T, d, X, W0rows, nu } = run, m = n * T;
  const G = gram(X, m, d), h = values(X, m, d, nu);
  if (!W0rows) return { m, G, H: G, h, BW: null }; // W₀ = I: H = G
  const BW = timesW0(X, m, d, W0rows);
  return { m, G, H: gram(BW, m, d), h, BW };
}

// ---- forward pass and one gradient step

export function forward(z, h, n, T, s, f) { // scores s = softmax of the logits z per input, outputs f = Σ_t s_t h_t
  for (let i = 0; i < n; i++) {
    const o = i * T;
    let top = -Infinity, sum = 0, out = 0;
    for (let t = 0; t < T; t++) top = Math.max(top, z[o + t]);
    for (let t = 0; t < T; t++) { s[o + t] = Math.exp(z[o + t] - top); sum += s[o + t]; }
    for (let t = 0; t < T; t++) { s[o + t] /= sum; out += s[o + t] * h[o + t]; }
    f[i] = out;
  }
}

function times(A, x, m, out) { // out = A x for a symmetric m × m A
  for (let i = 0; i < m; i++) {
    let s = 0;
    for (let j = 0, o = i * m; j < m; j++) s += A[o + j] * x[j];
    out[i] = s;
  }
}

export class Descent {
  // The state in U coordinates: q = U a (a = [a₁; a₂], 2m), the training logits z = Bq, and with W trained also
  // Mᵀ (m × 2m, K Bᵀ = U M; M = [0; I] at K = K₀) and ‖p‖². p = 0 at the start: a = 0, z = 0.
  constructor(G, H, h, y, n, T, alpha, trainW) {
    const m = n * T;
    Object.assign(this, { G, H, h, y, n, T, m, alpha, trainW });
    this.a = new Float64Array(2 * m);
    this.z = new Float64Array(m);
    this.c = new Float64Array(m);
    this.v = new Float64Array(2 * m);
    this.cG = new Float64Array(m);
    this.cH = new Float64Array(m);
    this.u = new Float64Array(m);
    this.pp = 0;
    if (trainW) {
      this.Mt = new Float64Array(m * 2 * m);
      for (let j = 0; j < m; j++) this.Mt[j * 2 * m + m + j] = 1;
    }
  }

  step(s, f) { // one gradient step from the scores s and outputs f at the current q
    const { n, T, m, h, y, alpha, a, z, c, G, H } = this;
    for (let i = 0; i < n; i++) { // c: g = Bᵀc, with ∂L/∂f_i = −y_i σ(−y_i f_i) / n
      const dLdf = -y[i] / (1 + Math.exp(y[i] * f[i])) / n;
      for (let t = 0, o = i * T; t < T; t++) c[o + t] = dLdf * s[o + t] * (h[o + t] - f[i]);
    }
    if (!this.trainW) { // q' = q − α K₀ g: a₂ ← a₂ − α c, z = H a₂
      for (let j = 0; j < m; j++) a[m + j] -= alpha * c[j];
      times(H, a.subarray(m), m, z);
      return;
    }
    const { Mt, v, cG, cH, u } = this, w = 2 * m;
    v.fill(0); // K g = U v with v = M c (a sum of rows of Mᵀ)
    for (let j = 0; j < m; j++) {
      const cj = c[j], o = j * w;
      if (cj !== 0) for (let k = 0; k < w; k++) v[k] += cj * Mt[o + k];
    }
    let zc = 0; // q·g = (Bq)·c
    for (let j = 0; j < m; j++) zc += z[j] * c[j];
    times(G, c, m, cG); // B g = G c
    times(H, c, m, cH);
    let gKg = 0; // gᵀKg = cᵀ(BU)v = (Gc)·v₁ + (Hc)·v₂
    for (let j = 0; j < m; j++) gKg += cG[j] * v[j] + cH[j] * v[m + j];
    const pp = this.pp;
    // K' Bᵀ = U M − α U a (Bg)ᵀ − α U[c; 0] (Bq − α‖p‖² Bg)ᵀ, as rows of Mᵀ (with the old a, z and ‖p‖²)
    for (let j = 0; j < m; j++) {
      const p1 = alpha * cG[j], p2 = alpha * (z[j] - alpha * pp * cG[j]), o = j * w;
      for (let k = 0; k < w; k++) Mt[o + k] -= p1 * a[k];
      for (let k = 0; k < m; k++) Mt[o + k] -= p2 * c[k];
    }
    const shrink = alpha * alpha * zc - alpha * pp; // q' = q − α K g − α‖p‖² g + α²(q·g) g
    for (let k = 0; k < w; k++) a[k] -= alpha * v[k];
    for (let j = 0; j < m; j++) a[j] += shrink * c[j];
    this.pp = pp + alpha * alpha * gKg - 2 * alpha * zc;
    times(G, a, m, z); // z' = B q' = G a₁' + H a₂'
    times(H, a.subarray(m), m, u);
    for (let j = 0; j < m; j++) z[j] += u[j];
  }
}

// ---- test predictions at the logged steps: q = Bᵀa₁ + K₀Bᵀa₂ = Bᵀa₁ + W₀(BW₀)ᵀa₂ (one more pass over W₀'s
// rows for all of them), then the test logits X_test q, the test inputs streamed once

export function directions(run, prep, A) { // Q (L × d): q at each logged step, from its coordinates a (2m)
  const { d, X, W0rows } = run, m = prep.m, L = A.length, Q = new Float64Array(L * d);
  const U = W0rows ? new Float64Array(L * d) : Q; // (BW₀)ᵀa₂, or with W₀ = I straight into q
  for (let l = 0; l < L; l++) {
    const q = Q.subarray(l * d, (l + 1) * d), u = U.subarray(l * d, (l + 1) * d), a = A[l];
    for (let i = 0; i < m; i++) {
      const a1 = a[i], a2 = a[m + i], x = X.subarray(i * d, (i + 1) * d);
      if (a1 !== 0) for (let k = 0; k < d; k++) q[k] += a1 * x[k];
      if (a2 === 0) continue;
      const b = W0rows ? prep.BW.subarray(i * d, (i + 1) * d) : x;
      for (let k = 0; k < d; k++) u[k] += a2 * b[k];
    }
  }
  if (W0rows) {
    W0rows((k0, rows, count) => {
      const out = products(rows, count, U, L, d);
      for (let r = 0; r < count; r++) for (let l = 0; l < L; l++) Q[l * d + k0 + r] += out[r * L + l];
    });
  }
  return Q;
}

export function evaluate(testRows, yTest, nu, T, d, Q, L) { // test loss and accuracy at each of the L directions
  const loss = new Float64Array(L), right = new Float64Array(L), z = new Float64Array(T);
  const s = new Float64Array(T), f = new Float64Array(1);
  testRows((i0, rows, count) => {
    const Z = products(rows, count * T, Q, L, d), h = values(rows, count * T, d, nu);
    for (let i = 0; i < count; i++) {
      for (let l = 0; l < L; l++) {
        for (let t = 0; t < T; t++) z[t] = Z[(i * T + t) * L + l];
        forward(z, h.subarray(i * T, (i + 1) * T), 1, T, s, f);
        const margin = yTest[i0 + i] * f[0];
        loss[l] += softplus(-margin);
        right[l] += margin > 0 ? 1 : 0;
      }
    }
  });
  const n = yTest.length, mean = (x) => x.map((v) => v / n);
  return { loss: mean(loss), acc: mean(right) };
}

function softplus(x) { // log(1 + eˣ), without overflow
  return x > 0 ? x + Math.log1p(Math.exp(-x)) : Math.log1p(Math.exp(x));
}

export function logSteps(steps, every) { // 0, every, 2·every, …, and the last step
  const out = [];
  for (let t = 0; t <= steps; t += every) out.push(t);
  if (out[out.length - 1] !== steps) out.push(steps);
  return out;
}

export function defaultTrack(noisy) { // the first clean training sample, then the first noisy one if any
  const clean = noisy.indexOf(0), flipped = noisy.indexOf(1);
  return flipped < 0 ? [clean] : [clean, flipped];
}

// ---- a whole run: train (every step's train metrics and scores), then test at the logged steps.
// opts = {alpha, steps, trainW, logEvery, track, chunk}, and for `train` also onProgress.

export function* training(run, opts) { // the run as a generator: yields [result, stage, step] every `chunk` steps
  // of training (stage "train"), once before the test evaluation ("test") and at the end ("done"); the arrays of
  // `result` fill in place. A page runs it a slice at a time; `train` runs it through.
  const { alpha, steps, trainW = true, logEvery = 10, chunk = 50 } = opts;
  const { n, T, d, y, noisy } = run, m = n * T, types = tokenTypes(T);
  const prep = setup(run);
  const track = opts.track || defaultTrack(noisy);
  const gd = new Descent(prep.G, prep.H, prep.h, y, n, T, alpha, trainW);
  const S = steps + 1, logged = logSteps(steps, logEvery);
  const result = {
    steps, trainLoss: new Float64Array(S).fill(NaN), trainAcc: new Float64Array(S).fill(NaN),
    means: { clean: [0, 1, 2, 3].map(() => new Float64Array(S).fill(NaN)),
             noisy: [0, 1, 2, 3].map(() => new Float64Array(S).fill(NaN)) }, // mean score of one token per type
    track, tracked: track.map(() => new Float64Array(S * T).fill(NaN)), // every step's T scores of each tracked sample
    logged, testLoss: new Float64Array(logged.length).fill(NaN), testAcc: new Float64Array(logged.length).fill(NaN),
    trained: 0,
  };
  const A = logged.map(() => null), s = new Float64Array(m), f = new Float64Array(n);
  const counts = [0, 0, 0, 0];
  for (const t of types) counts[t] += 1;
  for (let step = 0, k = 0; step <= steps; step++) {
    forward(gd.z, prep.h, n, T, s, f);
    record(result, step, s, f, y, noisy, types, counts, T);
    if (logged[k] === step) A[k++] = Float64Array.from(gd.a);
    result.trained = step;
    if (step % chunk === 0 || step === steps) yield [result, "train", step];
    if (step < steps) gd.step(s, f);
  }
  yield [result, "test", 0];
  const Q = directions(run, prep, A);
  const test = evaluate(run.testRows || storedRows(run.Xtest, run.yTest.length, T, d), run.yTest, run.nu, T, d, Q,
    logged.length);
  result.testLoss.set(test.loss);
  result.testAcc.set(test.acc);
  result.q = Q.slice((logged.length - 1) * d);
  yield [result, "done", steps];
  return result;
}

export function train(run, opts) { // the whole run; opts.onProgress(result, stage, step) at each of training's yields
  let result = null;
  for (const [r, stage, step] of training(run, opts)) {
    result = r;
    if (opts.onProgress) opts.onProgress(r, stage, step);
  }
  return result;
}

function record(result, step, s, f, y, noisy, types, counts, T) {
  const n = y.length, sums = { clean: [0, 0, 0, 0], noisy: [0, 0, 0, 0] }, sizes = { clean: 0, noisy: 0 };
  let loss = 0, right = 0;
  for (let i = 0; i < n; i++) {
    const margin = y[i] * f[i], group = noisy[i] ? "noisy" : "clean";
    loss += softplus(-margin);
    right += margin > 0 ? 1 : 0;
    sizes[group] += 1;
    for (let t = 0; t < T; t++) sums[group][types[t]] += s[i * T + t];
  }
  result.trainLoss[step] = loss / n;
  result.trainAcc[step] = right / n;
  for (const group of ["clean", "noisy"]) {
    for (let type = 0; type < 4; type++) {
      result.means[group][type][step] = sizes[group] && counts[type] ? sums[group][type] / (sizes[group] * counts[type]) : NaN;
    }
  }
  result.track.forEach((i, r) => result.tracked[r].set(s.subarray(i * T, (i + 1) * T), step * T));
}

// ---- the regime a run lands in: by what training adds (benign.regimes.trained_regime: against its own step 0, the
// head alone with uniform attention) and by the paper's Figure 5 rule (benign.theory.observed_regime)

export function regimes(result) {
  const fitted = result.trainAcc[result.steps] >= 1;
  const last = result.testAcc[result.testAcc.length - 1], step0 = result.testAcc[0];
  return {
    trained: !fitted ? "not_overfitting" : last - step0 < -HARM ? "harmful" : "benign",
    paper: !fitted ? "not_overfitting" : last >= TEST_GOOD ? "benign" : "harmful",
    trainAcc: result.trainAcc[result.steps], testAcc: last, testAccStep0: step0,
  };
}
