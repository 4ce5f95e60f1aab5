"""Paper 2 (Magen et al.): the two-token data, the fast trainer against autograd on the literal module, and the
seed notebook's gradient error."""

import numpy as np
import pytest
import torch

from benign import models, pages, paper2, paper2_edge
from benign.paper2_rules import two_steps
from benign.checks import ParameterError

CONFIGS = [  # (n, d, ρ, η, β₁ … β_T, seed): the paper's two steps, longer runs, η = 0, odd n
    (20, 300, 4.0, 0.1, [0.1, 2.0], 0),
    (15, 120, 2.0, 0.2, [0.05, 0.5, 1.0, 0.3, 2.0], 1),
    (9, 60, 3.0, 0.0, [0.3] * 12, 2),
    (30, 500, 1.5, 0.3, [1.0, 0.2, 0.7], 3),
]


def autograd_gd(data, beta):
    """GD by autograd on the literal module, one step size per step; the loss before each step and after the last."""
    model = models.SingleHeadAttention(data.xi.shape[1])
    X = data.inputs()
    losses = []
    for step_size in beta:
        losses += models.train_autograd(model, X, data.y, learning_rate=step_size, num_steps=1)[:1]
    with torch.no_grad():
        losses.append(float(models.logistic_loss(model(X), data.y)))
    return model, torch.tensor(losses, dtype=torch.float64)


def signal_weight(model, data):
    """Softmax weight of each input on its signal token, read off the literal module."""
    with torch.no_grad():
        s = model.scores(data.inputs())
    return torch.where(data.signal_first, s[:, 0], s[:, 1])


def rel(a, b):
    return float((a - b).norm() / b.norm())


@pytest.mark.parametrize("n,d,rho,eta,beta,seed", CONFIGS)
def test_fast_trainer_equals_autograd_on_the_literal_module(n, d, rho, eta, beta, seed):
    train, test = paper2.make_train_test(n, d, rho, noise_ratio=eta, n_test=40, seed=seed)
    sim = paper2.simulate([paper2.Run(train, test, beta)], dtype="float64", device="cpu")
    model, losses = autograd_gd(train, beta)
    assert model.p.norm() > 0.1 and (signal_weight(model, train) - 0.5).abs().max() > 0.05  # attention moved
    v, p = sim.weights(0)
    assert rel(v, model.v.detach()) < 1e-10 and rel(p, model.p.detach()) < 1e-10
    assert sim.history.train_loss.to_numpy() == pytest.approx(losses.numpy(), rel=1e-10)
    last = sim.final.iloc[0]
    s = signal_weight(model, train)
    assert last.clean_signal_attention == pytest.approx(float(s[~train.noisy].mean()), rel=1e-10)
    if train.noisy.any():
        assert last.noisy_signal_attention == pytest.approx(float(s[train.noisy].mean()), rel=1e-10)
    with torch.no_grad():
        f = model(test.inputs())
    assert last.test_loss == pytest.approx(float(models.logistic_loss(f, test.y)), rel=1e-10)
    assert last.test_acc == float((f * test.y > 0).double().mean())
    assert last.test_signal_attention == pytest.approx(float(signal_weight(model, test).mean()), rel=1e-10)


def test_batched_runs_equal_single_runs_and_share_rescaled_noise():
    train, test = paper2.make_train_test(12, 80, 3.0, noise_ratio=0.2, n_test=25, seed=4)
    other, other_test = paper2.make_train_test(12, 50, 2.0, noise_ratio=0.1, n_test=25, seed=5)
    runs = [paper2.Run(train, test, [0.1, 1.0], "a"),
            paper2.Run(train.with_signal_norm(6.0), test.with_signal_norm(6.0), [0.5, 0.2], "b"),
            paper2.Run(other, other_test, [0.3, 0.3], "c")]
    batched = paper2.simulate(runs, dtype="float64", device="cpu")
    for i, run in enumerate(runs):
        single = paper2.simulate([run], dtype="float64", device="cpu")
        for got, want in zip(batched.weights(i), single.weights(0)):
            assert torch.allclose(got, want, rtol=1e-12, atol=1e-12)
        cols = ["train_loss", "train_acc", "noisy_signal_attention", "test_loss", "test_acc"]
        got = batched.history[batched.history.run == run.label][cols].to_numpy()
        assert got == pytest.approx(single.history[cols].to_numpy(), rel=1e-10)


def test_float32_agrees_with_float64_at_the_seed_scale_of_d():
    train, test = paper2.make_train_test(50, 20000, 30.0, noise_ratio=0.1, n_test=100, seed=0)
    runs = [paper2.Run(train, test, [0.01, 1.0])]
    f32, f64 = (paper2.simulate(runs, dtype=dt, device="cpu") for dt in ("float32", "float64"))
    for got, want in zip(f32.weights(0), f64.weights(0)):
        assert rel(got, want) < 1e-4
    assert f32.final.test_acc[0] == pytest.approx(f64.final.test_acc[0])


def test_noise_is_orthogonal_to_the_signals_and_norms_are_right():
    data = paper2.make_data(50, 400, 7.0, noise_ratio=0.2, seed=3)
    mu = data.mu
    assert mu.norm(dim=1).numpy() == pytest.approx([7.0, 7.0], rel=1e-12)
    assert abs(float(mu[0] @ mu[1])) < 1e-10
    assert float((data.xi @ data.u.T).abs().max()) < 1e-12  # ‖ξ‖ ≈ 20: zero up to rounding
    assert float((data.xi.norm(dim=1) ** 2).mean() / 398) == pytest.approx(1.0, abs=0.03)  # E‖ξ‖² = d − 2
    X = data.inputs()
    signal = torch.where(data.signal_first[:, None], X[:, 0], X[:, 1])
    noise = torch.where(data.signal_first[:, None], X[:, 1], X[:, 0])
    assert torch.equal(signal, mu[data.signal_class]) and torch.equal(noise, data.xi)
    assert 0 < int(data.signal_first.sum()) < 50  # both token orders occur


def test_noise_covariance_is_the_projector():
    u = paper2.signal_directions(4, seed=0)
    xi = paper2.projected_noise(40000, 4, u, np.random.default_rng(1))
    cov = xi.T @ xi / 40000
    assert torch.allclose(cov, torch.eye(4, dtype=torch.float64) - u.T @ u, atol=0.02)


def test_labels_flips_and_seeds():
    data = paper2.make_data(20000, 3, 1.0, noise_ratio=0.1, seed=0)
    assert torch.equal(data.noisy, data.y != data.y_clean)
    assert float(data.noisy.double().mean()) == pytest.approx(0.1, abs=0.01)
    assert float((data.y_clean > 0).double().mean()) == pytest.approx(0.5, abs=0.01)
    assert not paper2.make_data(500, 3, 1.0, noise_ratio=0.0, seed=0).noisy.any()
    a, b, c = (paper2.make_data(30, 40, 2.0, noise_ratio=0.2, seed=s) for s in (5, 5, 6))
    assert torch.equal(a.inputs(), b.inputs()) and torch.equal(a.y, b.y)
    assert not torch.equal(a.xi, c.xi) and not torch.equal(a.u, c.u)
    longer = paper2.make_data(45, 40, 2.0, noise_ratio=0.2, seed=5)  # a larger n extends a smaller one:
    for field in ("y", "y_clean", "noisy", "signal_first"):  # the same draws, exactly
        assert torch.equal(getattr(longer, field)[:30], getattr(a, field)), field
    # the noise tokens are projections of the same Gaussian draws: equal up to rounding (a BLAS product of another
    # shape may round its last bits differently)
    torch.testing.assert_close(longer.xi[:30], a.xi, rtol=1e-12, atol=1e-12)


def test_train_and_test_share_the_signals_but_not_the_noise():
    train, test = paper2.make_train_test(10, 60, 3.0, noise_ratio=0.3, n_test=10, seed=2)
    assert torch.equal(train.u, test.u)
    assert not test.noisy.any() and not torch.equal(train.xi, test.xi)
    rescaled = train.with_signal_norm(9.0)
    assert rescaled.xi is train.xi and rescaled.mu.norm(dim=1).numpy() == pytest.approx([9.0, 9.0])


@pytest.mark.parametrize("call,message", [
    (lambda: paper2.make_data(10, 50, 3.0, noise_ratio=0.6),
     "noise_ratio = 0.6 is not allowed in paper 2: it must be a number in [0, 0.5)"),
    (lambda: paper2.first_step_threshold(0.5), "noise_ratio = 0.5 is not allowed in paper 2"),
    (lambda: paper2.make_data(1, 50, 3.0, noise_ratio=0.0), "n = 1 is not allowed"),
    (lambda: paper2.make_data(10, 50, -1.0, noise_ratio=0.0), "signal_norm = -1.0 is not allowed"),
    (lambda: paper2.simulate([paper2.Run(paper2.make_data(5, 9, 1.0, noise_ratio=0.0), None, [0.1, -1.0])]),
     "step_sizes = [0.1, -1.0] is not allowed: step_sizes must be a non-empty list, each a number in (0.0, inf)"),
    (lambda: paper2.simulate([paper2.Run(paper2.make_data(5, 9, 1.0, noise_ratio=0.0), None, [0.1]),
                              paper2.Run(paper2.make_data(6, 9, 1.0, noise_ratio=0.0), None, [0.1])]), "runs differ in n"),
    (lambda: paper2.simulate([]), "runs is empty"),
])
def test_bad_arguments_are_one_line_parameter_errors(call, message):
    with pytest.raises(ParameterError) as err:
        call()
    assert message in str(err.value) and "\n" not in str(err.value)


def test_the_paper_regimes_at_the_seed_settings():
    """n = 200, d = 40000, ρ = 30, η = 0.05: small steps do not interpolate, a small then a large step is benign,
    a large first step makes every input attend to its noise."""
    train, test = paper2.make_train_test(200, 40000, 30.0, noise_ratio=0.05, n_test=500, seed=0)
    cases = {"seed": [0.01, 0.01], "benign": [0.01, 1.0], "harmful": [0.5, 1.0]}
    final = paper2.simulate([paper2.Run(train, test, b, k) for k, b in cases.items()], device="cpu").final
    final = final.set_index("run")
    assert final.loc["seed", "train_acc"] < 1.0 and final.loc["seed", "test_acc"] > 0.99
    assert final.loc["benign", "train_acc"] == 1.0 and final.loc["benign", "test_acc"] > 0.99
    assert final.loc["benign", "clean_signal_attention"] > 0.99 > 0.01 > final.loc["benign", "noisy_signal_attention"]
    assert final.loc["harmful", "train_acc"] == 1.0 and final.loc["harmful", "test_acc"] < 0.6
    assert final.loc["harmful", "clean_signal_attention"] < 0.01
    assert final.loc["harmful", "test_signal_attention"] < 0.01


# The seed notebook (004), cell "compute_gradients", transcribed line by line (numpy, its loop over samples).
def _softmax(x):
    e = np.exp(x - np.max(x, axis=-1, keepdims=True))
    return e / np.sum(e, axis=-1, keepdims=True)


def seed_notebook_gradients(X, y, v, p):
    """The seed's grad_v and grad_p (before `v -= beta * grad_v`, `p -= beta * grad_p`)."""
    predictions = np.einsum("ij,ijk->ik", _softmax(X @ p), X) @ v
    sigmoid = 1 / (1 + np.exp(-y * predictions))
    grad_v = -np.dot((1 - sigmoid) * y, np.einsum("ij,ijk->ik", _softmax(np.dot(X, p)), X)) / X.shape[0]
    grad_p = np.zeros_like(p)
    for i in range(X.shape[0]):
        attention_weights = _softmax(np.dot(X[i], p))
        grad_softmax = attention_weights[0] * (1 - attention_weights[0]) * X[i, 0] \
            + attention_weights[1] * (1 - attention_weights[1]) * X[i, 1]
        grad_p += (1 - sigmoid[i]) * y[i] * np.dot(v, grad_softmax)  # a scalar, added to every coordinate
    return grad_v, grad_p / X.shape[0]


def test_the_seed_notebooks_p_gradient_is_a_broadcast_scalar_with_the_wrong_sign():
    train = paper2.make_data(40, 200, 5.0, noise_ratio=0.1, seed=7)
    sim = paper2.simulate([paper2.Run(train, None, [0.05, 0.5])], dtype="float64", device="cpu")
    model = models.SingleHeadAttention(200)
    with torch.no_grad():  # a point where v ≠ 0 and p ≠ 0, reached by two true GD steps
        v, p = sim.weights(0)
        model.v.copy_(v)
        model.p.copy_(p)
    X, y = train.inputs(), train.y
    loss = models.logistic_loss(model(X), y)
    true_v, true_p = (g.numpy() for g in torch.autograd.grad(loss, [model.v, model.p]))
    seed_v, seed_p = seed_notebook_gradients(X.numpy(), y.numpy(), model.v.detach().numpy(), model.p.detach().numpy())

    assert seed_v == pytest.approx(true_v, rel=1e-10)  # the v-gradient is right
    assert np.all(seed_p == seed_p[0])  # the p-gradient is one number in every coordinate
    assert np.linalg.norm(seed_p - true_p) > 0.5 * np.linalg.norm(true_p)

    # What the seed computes is +(1/n) Σᵢ σ(−yᵢfᵢ) yᵢ Σ_t s_t(1 − s_t) x_t·v; with the correct sign −, and the
    # diagonal of the softmax Jacobian replaced by the full one, Σ_t s_t (x_t·v − fᵢ) x_t, it is the true gradient.
    with torch.no_grad():
        s, h = model.scores(X), X @ model.v
        f = (s * h).sum(-1)
        weight = torch.sigmoid(-y * f) * y / len(y)
        seed_scalar = float((weight * (s * (1 - s) * h).sum(-1)).sum())
        true_formula = -torch.einsum("i,it,itd->d", weight, s * (h - f[:, None]), X)
    assert seed_p[0] == pytest.approx(seed_scalar, rel=1e-10)
    assert true_formula.numpy() == pytest.approx(true_p, rel=1e-10)


def test_per_sample_table_matches_the_literal_module():
    train, test = paper2.make_train_test(10, 50, 3.0, noise_ratio=0.3, n_test=7, seed=8)
    sim = paper2.simulate([paper2.Run(train, test, [0.2, 1.0], "r")], dtype="float64", device="cpu")
    model, _ = autograd_gd(train, [0.2, 1.0])
    for split, data in (("train", train), ("test", test)):
        rows = sim.samples[sim.samples.split == split]
        with torch.no_grad():
            margin = data.y * model(data.inputs())
        assert rows.signal_attention.to_numpy() == pytest.approx(signal_weight(model, data).numpy(), rel=1e-10)
        assert rows.margin.to_numpy() == pytest.approx(margin.numpy(), rel=1e-10)
        assert rows.noisy.tolist() == data.noisy.tolist()


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
def test_cuda_equals_cpu():
    train, test = paper2.make_train_test(30, 400, 5.0, noise_ratio=0.1, n_test=50, seed=1)
    runs = [paper2.Run(train, test, [0.1, 1.0])]
    cpu, cuda = (paper2.simulate(runs, dtype="float64", device=dev) for dev in ("cpu", "cuda"))
    for got, want in zip(cuda.weights(0), cpu.weights(0)):
        assert rel(got, want) < 1e-10
    assert cuda.final.test_acc[0] == cpu.final.test_acc[0]


def test_snr_sweep_rows_are_single_runs_with_steps_scaled_by_n_over_d():
    grid = paper2.snr_sweep([10, 20], [1.0, 4.0], d=100, noise_ratio=0.1, step_size_factors=[2.0, 50.0], n_test=20,
                            num_seeds=2, dtype="float64", device="cpu")
    assert len(grid) == 8 and sorted(set(grid.seed)) == [0, 1]
    # n = 20 is the seed's draw; n = 10 its first ten inputs and a block of its Gram matrices, which equals a fresh
    # draw of ten up to the rounding of ξ's projection and of the products (BLAS of other shapes)
    for n, rel_tol in ((20, 1e-12), (10, 1e-9)):
        row = grid[(grid.n == n) & (grid.signal_norm == 4.0) & (grid.seed == 1)].iloc[0]
        assert row.step_sizes == pytest.approx([2.0 * n / 100, 50.0 * n / 100])
        train, test = paper2.make_train_test(n, 100, 4.0, noise_ratio=0.1, n_test=20, seed=1)
        alone = paper2.simulate([paper2.Run(train, test, row.step_sizes)], dtype="float64", device="cpu").final.iloc[0]
        for key in ("train_loss", "test_loss", "clean_signal_attention"):
            assert row[key] == pytest.approx(alone[key], rel=rel_tol), (n, key)
        assert row.test_acc == alone.test_acc and row.train_acc == alone.train_acc


def test_head_is_the_smaller_draw_and_given_grams_are_used():
    big = paper2.make_data(30, 60, 2.0, noise_ratio=0.2, seed=3)
    head, fresh = big.head(12), paper2.make_data(12, 60, 2.0, noise_ratio=0.2, seed=3)
    for field in ("y", "y_clean", "noisy", "signal_first"):
        assert torch.equal(getattr(head, field), getattr(fresh, field)), field
    torch.testing.assert_close(head.xi, fresh.xi, rtol=1e-12, atol=1e-12)
    assert head.params["n"] == 12 and head.xi.data_ptr() == big.xi.data_ptr()  # a view, no copy
    test = paper2.make_data(9, 60, 2.0, noise_ratio=0.0, seed=3, split=paper2.TEST, u=big.u)
    runs = [paper2.Run(head.with_signal_norm(r), test.with_signal_norm(r), [0.2, 1.0]) for r in (1.0, 3.0)]
    grams = (big.xi @ big.xi.T)[:12, :12], (test.xi @ big.xi.T)[:, :12]
    given = paper2.simulate(runs, dtype="float64", device="cpu", grams=grams)
    computed = paper2.simulate(runs, dtype="float64", device="cpu")
    assert given.history.drop(columns="run").to_numpy() == pytest.approx(
        computed.history.drop(columns="run").to_numpy(), rel=1e-10)
    with pytest.raises(ParameterError, match="do not share one training"):
        paper2.simulate([runs[0], paper2.Run(fresh, test, [0.2, 1.0])], device="cpu", grams=grams)
    with pytest.raises(ParameterError, match="the data hold 30 inputs"):
        big.head(31)


def test_signal_norm_grid_is_geometric_with_the_given_ratio():
    grid = paper2.signal_norm_grid(2.0, 256.0, 8)
    assert len(grid) == 57 and grid[0] == 2.0 and grid[-1] == pytest.approx(256.0, rel=1e-12)
    assert np.diff(np.log(grid)) == pytest.approx(np.full(56, np.log(2) / 8), rel=1e-9)
    assert grid[::8] == pytest.approx([2.0 * 2 ** k for k in range(8)], rel=1e-12)
    assert paper2.signal_norm_grid(3.0, 5.0, 1) == [3.0]
    assert paper2_edge.grid_log_step(grid) == pytest.approx(np.log(2) / 8, rel=1e-9)
    with pytest.raises(ParameterError, match="signal_norm_steps_per_doubling = 2.5 is not allowed"):
        paper2.signal_norm_grid(2.0, 8.0, 2.5)
    with pytest.raises(ParameterError, match="signal_norm_max = 1.0 is not allowed"):
        paper2.signal_norm_grid(2.0, 1.0, 4)


def test_page_table_writes_step_zero_without_accuracy_and_tiny_numbers_in_words():
    """At step 0 every output is 0 (v = p = 0): the raw accuracy counts that tie as wrong (0); the page's table shows
    no accuracy there. Numbers the page would write with an exponent read in words; paper 2's symbols head the table."""
    train, test = paper2.make_train_test(200, 40000, 30.0, noise_ratio=0.05, n_test=100, seed=0)
    sim = paper2.simulate([paper2.Run(train, test, [0.01, 1.0], "benign_steps")], device="cpu", dtype="float64")
    history = sim.history
    assert (history.loc[history.step == 0, ["train_acc", "test_acc"]] == 0).all(axis=None)  # sign(0) = 0: wrong
    shown = pages.paper2_table(history)
    assert shown.loc[shown.step == 0, ["train_acc", "test_acc"]].isna().all(axis=None)
    assert shown.loc[shown.step > 0, "train_acc"].tolist() == history.loc[history.step > 0, "train_acc"].tolist()
    last = shown.iloc[-1]
    assert history.iloc[-1].noisy_signal_attention < 1e-6 and last.noisy_signal_attention == "below 10⁻⁶"
    assert last.clean_signal_attention == history.iloc[-1].clean_signal_attention  # ordinary numbers untouched
    final = pages.paper2_table(sim.final)
    assert {"‖μ‖", "SNR", "β", "η"} <= set(final.columns) and "signal_norm" not in final.columns
    assert final["β"].tolist() == ["(0.01, 1)"]
    assert final.train_acc.tolist() == sim.final.train_acc.tolist()  # no step column: accuracies kept
    columns = list(final.columns)  # the headline numbers before the attention weights a wide table scrolls to
    assert max(columns.index(c) for c in ("train_acc", "test_acc")) < min(
        columns.index(c) for c in columns if c.endswith("attention"))
    underflow = pages.paper2_table(sim.final.assign(clean_signal_attention=0.0, train_loss=0.0))
    assert underflow.clean_signal_attention.tolist() == ["below 10⁻⁶"]  # a softmax weight of 0 is an underflow
    assert underflow.train_loss.tolist() == [0.0]  # another 0 is a 0


def test_the_two_step_reading_counts_labels_and_derives_the_first_step_values():
    """`paper2_rules.two_steps` on three schedules: each schedule's numbers are the trainer's final row, its fitted
    shares the margins counted here sample by sample against the flip mask of the data, the flipped count the data's,
    and the first step's values the page's formulas; every key the page glues is there."""
    n, d, mu, eta = 40, 2000, 13.0, 0.1
    train, test = paper2.make_train_test(n, d, mu, noise_ratio=eta, n_test=100, seed=2)
    cases = {"small_steps": [0.01, 0.01], "benign_steps": [0.01, 1.0], "harmful_steps": [0.5, 1.0]}
    sim = paper2.simulate([paper2.Run(train, test, beta, name) for name, beta in cases.items()], dtype="float64",
                          device="cpu")
    result = two_steps(sim.final, sim.samples, n=n, d=d, signal_norm=mu, noise_ratio=eta, benign_first_step=0.01)
    assert list(result.schedules) == list(cases) and result.flipped_count == int(train.noisy.sum()) > 0
    for name, schedule in result.schedules.items():
        row = sim.final.set_index("run").loc[name]
        assert schedule.train_acc == row.train_acc and schedule.test_acc == row.test_acc
        margins = sim.samples[(sim.samples.run == name) & (sim.samples.split == "train")].margin.to_numpy()
        noisy = train.noisy.numpy()
        assert schedule.clean_fitted == pytest.approx((margins[~noisy] > 0).mean())
        assert schedule.flipped_fitted == pytest.approx((margins[noisy] > 0).mean())
    assert result.snr == pytest.approx(13 / 2000 ** 0.5) and result.n_snr2 == pytest.approx(40 * 169 / 2000)
    assert result.benign_signal_value == pytest.approx(0.01 * 169 * 0.8 / 8)
    assert result.benign_noise_value == pytest.approx(0.01 * 2000 / 160)
    metrics = result.metrics()
    assert {"benign_steps_flipped_fitted", "small_steps_clean_fitted", "harmful_steps_test_signal_attention",
            "benign_steps_clean_signal_weight_words", "flipped_count", "n_snr2"} <= set(metrics)
    assert len(metrics) == 3 * 7 + 7
