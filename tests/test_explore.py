"""The explorable's engine (book/_static/explore/engine.mjs) is the book's exact trainer: run in node on data and W₀
exported from Python, it gives `benign.synthetic.simulate`'s float64 results to 1e-9, at settings nobody tuned.

Node is Debian's `nodejs` (`.ci/run` installs it): without it the test fails under CI and is skipped elsewhere.
"""

import json
import subprocess

import numpy as np
import pytest

from benign import data, paths, synthetic
from conftest import NODE, required

ENGINE = paths.ROOT / "book" / "_static" / "explore" / "engine.mjs"
TOL = 1e-9

# reads one exported run on stdin, trains it with the engine, writes its results on stdout
DRIVER = """
import * as engine from %s;
let text = "";
for await (const chunk of process.stdin) text += chunk;
const e = JSON.parse(text), F = (x) => Float64Array.from(x.flat(Infinity));
const run = {n: e.n, T: e.T, d: e.d, X: F(e.X), y: F(e.y), noisy: Uint8Array.from(e.noisy), nu: F(e.nu),
             Xtest: F(e.Xtest), yTest: F(e.yTest), W0rows: e.W0 ? engine.matrixRows(F(e.W0), e.d) : null};
const r = engine.train(run, {alpha: e.alpha, steps: e.steps, trainW: e.trainW, logEvery: e.logEvery, track: e.track});
const L = (x) => Array.from(x);
console.log(JSON.stringify({trainLoss: L(r.trainLoss), trainAcc: L(r.trainAcc), logged: r.logged,
  testLoss: L(r.testLoss), testAcc: L(r.testAcc), q: L(r.q), tracked: r.tracked.map(L),
  means: {clean: r.means.clean.map(L), noisy: r.means.noisy.map(L)}, regimes: engine.regimes(r)}));
"""

# settings nobody tuned: W trained and frozen, odd n, T other than 8, W₀ = I, α large and small
SETTINGS = [
    dict(d=40, signal_norm=3.0, n=7, T=8, rho=0.1, noise_ratio=0.3, alpha=0.05, steps=150, train_W=True),
    dict(d=40, signal_norm=3.0, n=7, T=8, rho=0.1, noise_ratio=0.3, alpha=0.05, steps=150, train_W=False),
    dict(d=25, signal_norm=5.0, n=6, T=5, rho=0.3, noise_ratio=0.4, alpha=0.5, steps=80, train_W=True),
    dict(d=64, signal_norm=1.5, n=9, T=8, rho=0.1, noise_ratio=0.2, alpha=1e-3, steps=1500, train_W=True),
    dict(d=31, signal_norm=4.0, n=11, T=6, rho=0.2, noise_ratio=0.2, alpha=0.2, steps=120, train_W=True,
         W_init="identity"),
    dict(d=31, signal_norm=4.0, n=11, T=6, rho=0.2, noise_ratio=0.2, alpha=0.2, steps=120, train_W=False,
         W_init="identity"),
]


def node_json(script: str, stdin: str | None = None):
    """What an ES-module script run by node prints as JSON on its last line (fails with node's stderr)."""
    done = subprocess.run([required(NODE, "nodejs"), "--input-type=module", "-e", script], input=stdin,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def engine_run(run: data.Run, *, alpha, steps, train_W, log_every, track) -> dict:
    """The engine's results on this run's data and W₀, computed by node."""
    X, Xt = run.train.X.numpy(), run.test.X.numpy()
    exported = dict(n=X.shape[0], T=X.shape[1], d=X.shape[2], X=X.tolist(), y=run.train.y.tolist(),
                    noisy=run.train.noisy.int().tolist(), nu=run.train.nu.tolist(), Xtest=Xt.tolist(),
                    yTest=run.test.y.tolist(), W0=None if run.W0 is None else run.W0.tolist(), alpha=alpha,
                    steps=steps, trainW=train_W, logEvery=log_every, track=track)
    return node_json(DRIVER % json.dumps(ENGINE.as_uri()), json.dumps(exported))


@pytest.mark.parametrize("setting", SETTINGS, ids=lambda s: "{d}-{n}-{T}-a{alpha}-{train_W}".format(**s)
                         + s.get("W_init", ""))
def test_engine_is_the_exact_trainer(setting):
    s = dict(setting)
    alpha, steps, train_W = s.pop("alpha"), s.pop("steps"), s.pop("train_W")
    run = data.make_run(s.pop("d"), s.pop("signal_norm"), seed=7, n_test=30, **s)
    track = [int((~run.train.noisy).nonzero()[0]), int(run.train.noisy.nonzero()[0]), run.train.X.shape[0] - 1]
    log_every = 7
    sim = synthetic.simulate([run], learning_rate=alpha, num_steps=steps, log_every=log_every, train_W=train_W,
                             track=track, dtype="float64", device="cpu")
    js = engine_run(run, alpha=alpha, steps=steps, train_W=train_W, log_every=log_every, track=track)
    h = sim.history
    np.testing.assert_allclose(js["trainLoss"], h.train_loss, rtol=TOL, atol=TOL)
    np.testing.assert_array_equal(js["trainAcc"], h.train_acc)  # margins differ by ~1e-13, none that near 0
    logged = h.dropna(subset=["test_loss"])
    assert js["logged"] == logged.step.tolist()
    np.testing.assert_allclose(js["testLoss"], logged.test_loss, rtol=TOL, atol=TOL)
    np.testing.assert_array_equal(js["testAcc"], logged.test_acc)
    for g, group in enumerate(("clean", "noisy")):
        for t, name in enumerate(data.TOKEN_TYPES):
            np.testing.assert_allclose(np.array(js["means"][group][t], dtype=float), h[f"score_{group}_{name}"],
                                       rtol=TOL, atol=TOL, err_msg=f"{group} {name}")
    T = run.train.X.shape[1]
    for k, i in enumerate(track):
        theirs = sim.scores[sim.scores["sample"] == i].sort_values(["step", "token"]).score.to_numpy()
        np.testing.assert_allclose(js["tracked"][k], theirs, rtol=TOL, atol=TOL, err_msg=f"sample {i}")
        assert len(theirs) == (steps + 1) * T
    q = sim.q[0].numpy()
    np.testing.assert_allclose(js["q"], q, rtol=0, atol=TOL * max(1.0, np.abs(q).max()))
    moved = np.abs(np.asarray(js["tracked"]) - 1 / T).max()
    assert moved > 0.02, f"the scores hardly moved ({moved:.3g}): the setting tests nothing"
    final = sim.final.iloc[0]
    assert js["regimes"]["trainAcc"] == final.train_acc and js["regimes"]["testAcc"] == final.test_acc



def test_the_page_runs_the_same_engine_as_a_classic_script(tmp_path):
    """The page cannot load a module from file://: it runs the text `benign book` writes into engine-source.js, with
    its "export " keywords removed, as a classic script (in a Web Worker). That text, run so in node, trains as the
    module does, bit for bit (the same code on the same machine)."""
    from benign import book

    (tmp_path / "engine.mjs").write_text(ENGINE.read_text())
    script = book.write_engine_script(tmp_path).read_text()
    check = """
import * as engine from %s;
import vm from "node:vm";
const context = {};
vm.runInNewContext(%s, context);
vm.runInNewContext(context.BENIGN_ENGINE_SOURCE.replace(/^export /gm, "") + "; this.engine = {makeRun, train};", context);
const p = {d: 60, signalNorm: 4, n: 9, T: 8, rho: 0.1, eta: 0.2, nTest: 50, seed: 3};
const opts = {alpha: 0.05, steps: 60, trainW: true, logEvery: 10};
const a = engine.train(engine.makeRun(p), opts), b = context.engine.train(context.engine.makeRun(p), opts);
console.log(JSON.stringify([Array.from(a.trainLoss), Array.from(b.trainLoss), Array.from(a.testAcc), Array.from(b.testAcc)]));
""" % (json.dumps(ENGINE.as_uri()), json.dumps(script))
    module_loss, classic_loss, module_acc, classic_acc = node_json(check)
    assert module_loss == classic_loss and module_acc == classic_acc
    assert module_loss[-1] < module_loss[0]


def test_the_page_draws_the_papers_data():
    """What the page draws by itself follows `benign.data`: the same labels and flips (the authors' deterministic
    rule) for odd and even n, the same signal on each token kind (the noise set to zero), the same head ν; W₀'s
    entries lie in ±1/√d with the uniform's mean and variance (1/(3d)) within their sampling error, and the noise ε
    has the standard normal's first, second and fourth moments within theirs."""
    cases = [(20, 0.2), (7, 0.3), (11, 0.45), (100, 0.2), (9, 0.0)]
    check = """
import * as engine from %s;
const zero = {normal: () => 0}, out = {labels: [], signal: [], nu: null, W: null};
for (const [n, eta] of %s) {
  const l = engine.labels(n, eta);
  out.labels.push([Array.from(l.y), Array.from(l.noisy)]);
  out.signal.push(Array.from(engine.tokens(l.yClean, 6, 3, 2.5, 0.3, zero)));
}
out.nu = Array.from(engine.head(5, 2.5));
const d = 400, W = new Float64Array(d * d);
engine.kaimingRows(d, 1)((k0, rows, count) => W.set(rows.subarray(0, count * d), k0 * d));
out.W = [W.length, W.reduce((a, b) => Math.min(a, b)), W.reduce((a, b) => Math.max(a, b)),
         W.reduce((a, b) => a + b) / W.length, W.reduce((a, b) => a + b * b, 0) / W.length];
const draw = engine.random(5, 1), N = 200000, e = Array.from({length: N}, () => draw.normal());
out.eps = [e.reduce((a, b) => a + b) / N, e.reduce((a, b) => a + b * b, 0) / N, e.reduce((a, b) => a + b ** 4, 0) / N];
console.log(JSON.stringify(out));
""" % (json.dumps(ENGINE.as_uri()), json.dumps(cases))
    out = node_json(check)
    for (n, eta), (y, noisy), signal in zip(cases, out["labels"], out["signal"]):
        mask = data.noise_mask(n, eta)
        assert y == data.observed_labels(mask).tolist() and noisy == mask.int().tolist()
        types = data.token_types(6)
        expected = np.zeros((n, 6, 3))
        expected[..., :2] = 2.5 * data.signal_pattern(data.balanced_labels(n), types, 0.3).numpy()
        np.testing.assert_array_equal(np.reshape(signal, (n, 6, 3)), expected)
    np.testing.assert_allclose(out["nu"], data.signals(5, 2.5)[2].numpy(), rtol=1e-15)
    mean, square, fourth = out["eps"]  # ε ~ N(0, 1): moments 0, 1, 3 within five standard errors (1, √2, √96)
    N = 200000
    assert abs(mean) < 5 / np.sqrt(N) and abs(square - 1) < 5 * np.sqrt(2 / N) and abs(fourth - 3) < 5 * np.sqrt(96 / N)
    count, low, high, mean, square = out["W"]
    d = 400
    assert count == d * d and -1 / np.sqrt(d) <= low and high <= 1 / np.sqrt(d)
    assert abs(mean) < 5 * np.sqrt(1 / (3 * d) / count)  # five standard errors
    assert abs(square - 1 / (3 * d)) < 5 * np.sqrt(4 / (45 * d * d) / count)  # Var(u²) for u ~ U(−b, b): 4b⁴/45


def test_what_the_page_tells_the_reader_to_look_for():
    """The explore page's prose: from the balanced preset at d = 4500 and seed 42, the first noisy training sample
    ends with most of its attention on the weakly relevant token of the opposite class (red) at ‖μ‖ = 20, and on an
    irrelevant token (grey) at ‖μ‖ = 10. (The large-noise preset's harm is checked in the browser.)"""
    check = """
import * as engine from %s;
const out = {};
for (const mu of [20, 10]) {
  const run = engine.makeRun({d: 4500, signalNorm: mu, n: 20, T: 8, rho: 0.1, eta: 0.2, nTest: 1, seed: 42});
  const r = engine.train(run, {alpha: 0.005, steps: 1000, trainW: true, logEvery: 1000});
  const last = Array.from(r.tracked[1].subarray(1000 * 8));
  out[mu] = engine.tokenTypes(8)[last.indexOf(Math.max(...last))];
}
console.log(JSON.stringify(out));
""" % json.dumps(ENGINE.as_uri())
    top = node_json(check)
    assert data.TOKEN_TYPES[top["20"]] == "weak_opposite" and data.TOKEN_TYPES[top["10"]] == "irrelevant"


def test_the_large_signal_preset_fits_a_noisy_label_late_as_the_page_says():
    """The explore page: at the large-signal preset (d = 1000, ‖μ‖ = 80) and seed 42 every clean label and no noisy one
    is fitted (training accuracy 0.8) for most of the run, then one of the four noisy labels (0.85) between steps 600
    and 700 of 1000, about two thirds of the way through, where it stays."""
    check = """
import * as engine from %s;
const run = engine.makeRun({d: 1000, signalNorm: 80, n: 20, T: 8, rho: 0.1, eta: 0.2, nTest: 1, seed: 42});
const r = engine.train(run, {alpha: 0.005, steps: 1000, trainW: true, logEvery: 1000});
console.log(JSON.stringify([r.trainAcc[600], r.trainAcc[700], r.trainAcc[1000]]));
""" % json.dumps(ENGINE.as_uri())
    assert node_json(check) == [0.8, 0.85, 0.85]
    assert "fitted\nabout two thirds of the way through the run" in (
        paths.ROOT / "book" / "explore.md").read_text()


def test_the_page_judges_by_the_books_thresholds():
    """The engine's regime rule reads the book's own thresholds (benign.thresholds), not copies that could drift."""
    from benign import thresholds

    check = "import * as e from %s; console.log(JSON.stringify([e.HARM, e.TEST_GOOD]));" % json.dumps(ENGINE.as_uri())
    assert node_json(check) == [thresholds.HARM.value, thresholds.TEST_GOOD.value]
