"""The long-run mode against `simulate` (the memory-bound path), its exact test-error and test-selection events, the
shared-noise Gram matrices, the theorem's time scales and the clock's parameter errors."""

import numpy as np
import pytest
import torch

from benign import clock, data, grams, notebooks, sweep, synthetic, theory
from benign.checks import ParameterError

SMALL = dict(n=7, T=8, n_test=60, num_steps=150, learning_rate=0.8, dtype="float64", device="cpu",
             history_points=25, delta=0.05, epsilon=0.6)
MODELS = [("identity", False), ("kaiming", True), ("identity", True), ("kaiming", False)]


def small_points(W_init, train_W, **extra):
    points = sweep.grid(d=[50, 80], seed=[0, 1], signal_norm=[2.0, 5.0], noise_ratio=[0.0, 0.3],
                        W_init=W_init, train_W=train_W, **{**SMALL, **extra})
    return points[:-1]  # groups of unequal size (padded inside)


def brute_force(point):
    """Every condition at every step, from `simulate` keeping everything (scores of all samples, test every step)."""
    run = data.make_run(point["d"], point["signal_norm"], seed=point["seed"], n=point["n"], n_test=point["n_test"],
                        noise_ratio=point["noise_ratio"], W_init=point["W_init"])
    sim = synthetic.simulate([run], learning_rate=point["learning_rate"], num_steps=point["num_steps"], log_every=1,
                             train_W=point["train_W"], track=list(range(point["n"])), dtype="float64", device="cpu")
    sc = sim.scores.sort_values(["step", "sample", "token"])
    s = torch.tensor(sc.score.to_numpy()).view(point["num_steps"] + 1, point["n"], point["T"])
    f = (s * (run.train.X @ run.train.nu)).sum(-1)
    fit = run.train.y * f > 0
    noisy = run.train.noisy
    errors = np.rint((1 - sim.history.test_acc.to_numpy()) * point["n_test"])
    test_ok = torch.tensor(errors < point["delta"] * point["n_test"])
    conditions = {"clean_fitted": (fit | noisy).all(-1), "noisy_fitted": (fit | ~noisy).all(-1),
                  "noisy_unfitted": (~fit | ~noisy).all(-1), "all_fitted": fit.all(-1),
                  "train_loss": torch.tensor(sim.history.train_loss.to_numpy() < point["epsilon"]),
                  "test_error": test_ok, "benign": fit.all(-1) & test_ok,
                  "not_overfitting": (fit | noisy).all(-1) & (~fit | ~noisy).all(-1) & test_ok}
    return sim.history.set_index("step"), conditions, float((run.train.y * f).abs().min())


def first_settled_switches(cond):
    cond = cond.numpy()
    first = int(np.argmax(cond)) if cond.any() else None
    failing = np.nonzero(~cond)[0]
    settled = 0 if not len(failing) else (int(failing[-1]) + 1 if failing[-1] < len(cond) - 1 else None)
    return first, settled, (np.nonzero(cond[1:] != cond[:-1])[0] + 1).tolist()


@pytest.mark.parametrize("W_init,train_W", MODELS)
def test_long_runs_equal_simulate_step_by_step(W_init, train_W):
    points = small_points(W_init, train_W, block=32)
    points = points[1::2] + points[::2]  # runs of one (d, seed) not next to each other: rows follow the points
    rows = clock.grid_chunk(points)
    for point, row in zip(points, rows):
        history, conditions, closest = brute_force(point)
        assert closest > 1e-9  # no training margin within rounding of zero: the event steps are well defined
        logged = history.loc[row["history"]["step"]]
        for key in ("train_loss", "train_acc", "test_loss", "test_acc", "score_clean_relevant",
                    "score_noisy_weak_opposite"):
            assert np.array(row["history"][key]) == pytest.approx(logged[key].to_numpy(), rel=1e-9, abs=1e-12,
                                                                  nan_ok=True), key
        for name, cond in conditions.items():
            record = row[f"{name}_first"], row[f"{name}_settled"], row[f"{name}_switches"]
            assert record == first_settled_switches(cond), name
            every_step = clock.condition_at(row[f"{name}_first"], row[f"{name}_switches"], np.arange(len(cond)))
            assert every_step.tolist() == cond.tolist(), name  # the condition at any step, from its switches
    switched = [row[f"{name}_switches"] for row in rows for name in ("clean_fitted", "noisy_unfitted", "test_error")]
    assert sum(len(s) > 1 for s in switched) > 0  # some condition switched more than once: the lists are tested


def test_test_error_events_do_not_depend_on_the_block_length(monkeypatch):
    """Blocks of 1 step evaluate the test set at every step; longer ones certify, list candidates or halve."""
    calls = {"candidates": 0, "halved": 0}
    candidates, fill = clock._TestError._candidate_errors, clock._TestError._fill

    def count_candidates(self, *args):
        calls["candidates"] += 1
        return candidates(self, *args)

    def count_halves(self, B, ok, lo, hi, *args):
        calls["halved"] += (lo, hi) != (0, B.shape[0] - 1)  # part of a block: it was halved
        return fill(self, B, ok, lo, hi, *args)

    monkeypatch.setattr(clock._TestError, "_candidate_errors", count_candidates)
    monkeypatch.setattr(clock._TestError, "_fill", count_halves)
    points = small_points("identity", False, n_test=200, num_steps=400, learning_rate=1.5, delta=0.02)
    reference = clock.grid_chunk([dict(p, block=1) for p in points])
    for block in (3, 16, 128):
        rows = clock.grid_chunk([dict(p, block=block) for p in points])
        for ref, row in zip(reference, rows):
            for name in ("test_error", "benign", "not_overfitting"):
                assert row[f"{name}_switches"] == ref[f"{name}_switches"], (block, name)
    assert calls["candidates"] > 0 and calls["halved"] > 0  # every path of the test-error decision was taken


def relevant_attention_by_step(points):
    """S at every step 0 … num_steps of each point: the mean softmax score of its test inputs on the relevant token,
    from the q = W p that `simulate` returns after k steps (one simulation per k, nothing of the clock used)."""
    point = points[0]
    runs = [data.make_run(p["d"], p["signal_norm"], seed=p["seed"], n=p["n"], n_test=p["n_test"],
                          noise_ratio=p["noise_ratio"], W_init=p["W_init"]) for p in points]
    S = [[1 / point["T"]] * len(points)]  # step 0: p = 0, uniform attention
    for k in range(1, point["num_steps"] + 1):
        q = synthetic.simulate(runs, learning_rate=point["learning_rate"], num_steps=k, train_W=point["train_W"],
                               dtype="float64", device="cpu").q
        S.append([torch.softmax(run.test.X.double() @ q_r, -1)[:, run.test.token_type == data.RELEVANT].sum(-1).mean()
                  for run, q_r in zip(runs, q)])
    return torch.tensor(S, dtype=torch.float64)  # (num_steps + 1, runs)


@pytest.mark.parametrize("W_init,train_W", MODELS[:2])
def test_test_selection_events_equal_simulate_step_by_step(W_init, train_W, monkeypatch):
    """The first step (and every switch) at which fresh inputs' mean attention on their relevant token reaches the
    level, exact for any block length, against the attention computed from `simulate`'s q at every step."""
    halved, fill = [0], clock._TestSelection._fill

    def count_halves(self, B, ok, lo, hi, *args):
        halved[0] += (lo, hi) != (0, B.shape[0] - 1)  # part of a block: it was halved
        return fill(self, B, ok, lo, hi, *args)

    monkeypatch.setattr(clock._TestSelection, "_fill", count_halves)
    points = sweep.grid(d=[50, 80], seed=[0, 1], signal_norm=[2.0, 5.0], noise_ratio=[0.3], W_init=W_init,
                        train_W=train_W, **{**SMALL, "num_steps": 80})  # a simulation per step: short runs
    S = relevant_attention_by_step(points)
    switched = 0
    for level in (0.13, 0.35):  # small ‖μ‖: S hovers about 0.13 and crosses it both ways; large: it passes 0.35
        expected = [first_settled_switches(S[:, r] >= level) for r in range(len(points))]
        switched += sum(len(e[2]) for e in expected)
        for block in (1, 7, 32):  # every step at a block end; certified blocks; blocks halved down to single steps
            rows = clock.grid_chunk([dict(p, block=block, attention_level=level) for p in points])
            for r, row in enumerate(rows):
                record = row["test_selected_first"], row["test_selected_settled"], row["test_selected_switches"]
                assert record == expected[r], (level, block, r)
                logged = S[row["history"]["step"], r].numpy()
                assert np.array(row["history"]["score_test_relevant"]) == pytest.approx(logged, rel=1e-9, abs=1e-12)
    assert switched >= 8  # the level is crossed, once back: the events are tested
    assert halved[0] > 0  # blocks the bound did not settle were halved down to their crossing step


def test_shared_noise_grams_equal_dense_matrices():
    torch.manual_seed(0)
    Gb, V, N, M, d = 2, 3, 9, 6, 11
    EL, ER = torch.randn(Gb, N, d, dtype=torch.float64), torch.randn(Gb, M, d, dtype=torch.float64)
    PL, PR = torch.randn(Gb, N, 2, dtype=torch.float64), torch.randn(Gb, M, 2, dtype=torch.float64)
    W0 = torch.randn(Gb, d, d, dtype=torch.float64)
    K = W0 @ W0.transpose(1, 2)
    mu = torch.rand(Gb, V, dtype=torch.float64) + 0.5
    J = torch.zeros(d, 2, dtype=torch.float64)
    J[0, 0] = J[1, 1] = 1.0
    C = grams.signal_gram(EL @ K @ ER.transpose(1, 2), EL @ K @ J, PL, ER @ K @ J, PR, J.T @ K @ J, mu)
    x = torch.randn(Gb * V, 4, M, dtype=torch.float64)
    runs = torch.arange(Gb * V)
    for r in range(Gb * V):
        g, v = divmod(r, V)
        XL, XR = EL[g] + mu[g, v] * PL[g] @ J.T, ER[g] + mu[g, v] * PR[g] @ J.T
        dense = XL @ K[g] @ XR.T
        assert C.mv(x)[r] == pytest.approx(x[r] @ dense.T, rel=1e-10, abs=1e-10)
        assert C.rows(runs, torch.tensor([[3, 0]] * (Gb * V)))[r] == pytest.approx(dense[[3, 0]], rel=1e-10)
        assert C.row_norms(chunk=4)[r] == pytest.approx(dense.norm(dim=-1), rel=1e-10)


def test_chunked_noise_draws_are_the_same_numbers_as_one_draw():
    d = 13
    whole = data.gaussian_noise(10, 3, d, [4, 1], sigma=2.0).reshape(30, d)
    assert torch.equal(grams.noise_products(10, 3, d, [4, 1], 2.0, torch.eye(d, dtype=torch.float64), chunk=3), whole)


def test_history_is_log_spaced_and_bounded():
    steps = clock.log_steps(10**6, 50)
    assert steps[0] == 0 and steps[-1] == 10**6 and len(steps) <= 52 and steps == sorted(set(steps))
    ratios = np.diff(np.log(steps[1:]))
    assert ratios.max() < 3 * np.log(10**6) / 49


def test_theorem_time_scales():
    # ‖ν‖‖μ‖ = 1, σ_ε = 1, W₀ = I: the benign prefactor is α d / n and the time exp(1/(n SNR²)) n / (α d)
    assert theory.sigma_w2("identity", 400) == pytest.approx(1 / 400)
    assert theory.sigma_w2("kaiming", 300) == pytest.approx(1 / 900)
    pre = theory.benign_prefactor(0.01, 20, 2000, 10.0, 0.1, theory.sigma_w2("identity", 2000))
    assert pre == pytest.approx(0.01 * 2000 / 20)
    x = theory.n_snr2(10.0, 2000, 20)
    assert theory.benign_time(0.01, 20, 2000, 10.0, 0.1, 1 / 2000) == pytest.approx(np.exp(1 / x) / pre)
    assert theory.not_overfitting_time(0.01, 2000, 10.0, 0.1, 1 / 2000) == pytest.approx(1 / (0.01 * 100))


def test_theorem_time_is_given_where_the_theorem_gives_one():
    # d = 2000, n = 20, α = 0.05 (α d / n = 5): harmful below ‖μ‖ = d^(1/4) ≈ 6.7, benign up to n·SNR² = 1 (‖μ‖ = 10)
    alpha, n, d = 0.05, 20, 2000
    mu = np.array([5.0, 8.0, 10.0, 20.0])
    tau = theory.theorem_time(alpha, n, d, mu, 1 / mu, theory.sigma_w2("identity", d))
    assert np.isnan(tau[0])  # harmful: no time
    x = theory.n_snr2(mu[1:3], d, n)
    assert tau[1:3] == pytest.approx(np.exp(1 / x) / 5)  # benign: exp(1/(n SNR²)) / (α d / n)
    assert tau[3] == pytest.approx(1 / (5 * theory.n_snr2(20.0, d, n)))  # not overfitting: 1 / (α ‖μ‖² d σ_w²)


def test_theorem_grid_refuses_a_grid_without_a_benign_cell():
    points = clock.theorem_grid([2000], [20], [0.5, 2.0], [0], [1.0])
    assert [p["signal_norm"] for p in points] == pytest.approx([50 ** 0.5, 200 ** 0.5])  # ‖μ‖ = √(n SNR² d / n)
    assert points[0]["learning_rate"] == pytest.approx(1.0 * 20 / 2000)
    with pytest.raises(ParameterError, match="has no benign cell"):
        clock.theorem_grid([2000], [20], [0.05, 5.0], [0], [1.0])  # harmful and not overfitting only
    with pytest.raises(ParameterError, match="n_snr2_values"):
        clock.theorem_grid([2000], [20], [], [0], [1.0])


@pytest.mark.parametrize("override,message", [
    ({"delta": 1.5}, "delta = 1.5 is not allowed: delta must be a number in (0.0, 1.0)"),
    ({"delta": 0.0}, "delta = 0.0 is not allowed"),
    ({"num_steps": -5}, "num_steps = -5 is not allowed: num_steps must be an integer >= 1"),
    ({"num_steps_trained_W": 0}, "num_steps_trained_W = 0 is not allowed"),
    ({"epsilon": -0.1}, "epsilon = -0.1 is not allowed"),
    ({"learning_rate_factors": [0.5, -1.0]}, "learning_rate_factors = [0.5, -1.0] is not allowed"),
    ({"attention_level": 1.0}, "attention_level = 1.0 is not allowed"),
])
def test_bad_notebook_parameters_are_one_line_errors(override, message):
    with pytest.raises(ParameterError, match=message.replace("(", r"\(").replace(")", r"\)").replace("[", r"\[")
                       .replace("]", r"\]")):
        notebooks.resolve("theory_clock", "book", override)


def test_bad_kernel_arguments_are_refused():
    point = small_points("identity", False)[0]
    with pytest.raises(ParameterError, match="delta = 1.0 is not allowed"):
        clock.grid_chunk([dict(point, delta=1.0)])
    with pytest.raises(ParameterError, match="num_steps = -3 is not allowed"):
        clock.grid_chunk([dict(point, num_steps=-3)])
    with pytest.raises(ParameterError, match="a grid chunk must share"):
        clock.grid_chunk([point, dict(point, n=9)])


def test_cli_refuses_a_grid_without_a_benign_cell(benign_cli, tmp_path):
    import subprocess

    done = subprocess.run([benign_cli, "run", "theory_clock", "--profile", "smoke", "-p", "n_snr2_values",
                           "[5.0, 20.0]", "--out", str(tmp_path / "out")], capture_output=True, text=True, timeout=600)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    errors = [line for line in done.stderr.splitlines() if line.startswith("benign: error")]  # (the kernel may warn)
    assert len(errors) == 1 and "has no benign cell" in errors[0], done.stderr
    assert not (tmp_path / "out").exists()
