"""The fast trainer against autograd gradient descent on the literal module, and the paper's regimes."""

import pytest
import torch

from benign import data, models, synthetic
from benign.checks import ParameterError
from benign.data import make_train_test

CONFIGS = [  # (n, T, d, η, steps, α): odd n, T = 3 and 8, η = 0 included
    (7, 3, 50, 0.0, 300, 0.5),
    (9, 8, 40, 0.2, 200, 1.0),
    (5, 8, 30, 0.0, 300, 2.0),
    (11, 3, 60, 0.3, 250, 0.8),
]


def reference(run, lr, steps, train_W=True):
    model = models.TokenSelectionAttention(run.W0, run.train.nu)
    params = None if train_W else [model.p]
    losses = models.train_autograd(model, run.train.X, run.train.y, learning_rate=lr, num_steps=steps, params=params)
    return (model.W @ model.p).detach(), torch.tensor(losses, dtype=torch.float64)


def rel(a, b):
    return float((a - b).norm() / b.norm())


@pytest.mark.parametrize("n,T,d,eta,steps,lr", CONFIGS)
@pytest.mark.parametrize("train_W", [True, False])
def test_fast_trainer_equals_autograd(n, T, d, eta, steps, lr, train_W):
    run = data.make_run(d, 5.0, seed=3, n=n, T=T, rho=0.3, noise_ratio=eta, n_test=10)
    sim = synthetic.simulate([run], learning_rate=lr, num_steps=steps, log_every=7, dtype="float64", device="cpu",
                             train_W=train_W)
    q_ref, loss_ref = reference(run, lr, steps, train_W)
    assert q_ref.norm() > 1.0  # the runs move far from p = 0
    assert rel(sim.q[0], q_ref) < 1e-8
    assert rel(torch.tensor(sim.history.train_loss.values), loss_ref) < 1e-8


def test_batched_runs_equal_single_runs():
    runs = [data.make_run(d, mu, seed=s, n=9, T=8, noise_ratio=0.2, n_test=30, label=f"r{i}")
            for i, (d, mu, s) in enumerate([(40, 5.0, 0), (70, 3.0, 1), (25, 8.0, 2)])]
    kwargs = dict(learning_rate=0.7, num_steps=120, log_every=10, dtype="float64", device="cpu")
    batched = synthetic.simulate(runs, **kwargs)
    for i, run in enumerate(runs):
        single = synthetic.simulate([run], **kwargs)
        assert torch.allclose(batched.q[i], single.q[0], rtol=1e-12, atol=1e-12)
        cols = ["train_loss", "test_loss", "test_acc", "score_clean_relevant", "score_noisy_weak_opposite"]
        got = batched.history[batched.history.run == run.label][cols].to_numpy()
        assert got == pytest.approx(single.history[cols].to_numpy(), rel=1e-10, nan_ok=True)


def test_test_metrics_match_the_literal_model():
    run = data.make_run(60, 4.0, seed=5, n=10, T=8, noise_ratio=0.2, n_test=200)
    sim = synthetic.simulate([run], learning_rate=1.0, num_steps=50, log_every=50, dtype="float64", device="cpu")
    model = models.TokenSelectionAttention(run.W0, run.train.nu)
    models.train_autograd(model, run.train.X, run.train.y, learning_rate=1.0, num_steps=50)
    with torch.no_grad():
        f = model(run.test.X)
    last = sim.history.iloc[-1]
    assert last.test_loss == pytest.approx(float(models.logistic_loss(f, run.test.y)), rel=1e-10)
    assert last.test_acc == pytest.approx(float((f * run.test.y > 0).double().mean()))


def test_tracked_scores_and_token_means_are_consistent():
    run = data.make_run(50, 5.0, seed=1, n=10, T=8, noise_ratio=0.2, n_test=10)
    sim = synthetic.simulate([run], learning_rate=1.0, num_steps=20, dtype="float64", device="cpu")
    clean, noisy = sim.info["track"]
    assert not run.train.noisy[clean] and run.train.noisy[noisy]
    per_step = sim.scores.groupby(["step", "sample"]).score.sum()
    assert per_step.to_numpy() == pytest.approx(1.0)  # softmax rows
    h = sim.history
    total = (h.score_clean_relevant + h.score_clean_weak_aligned + h.score_clean_weak_opposite
             + 5 * h.score_clean_irrelevant)
    assert total.to_numpy() == pytest.approx(1.0)
    assert h.step.tolist() == list(range(21))


def test_bad_trainer_arguments_are_refused():
    run = data.make_run(20, 5.0, noise_ratio=0.25, n=4, T=3, n_test=4)
    with pytest.raises(ParameterError, match="learning_rate"):
        synthetic.simulate([run], learning_rate=-1.0, num_steps=5)
    with pytest.raises(ParameterError, match="track"):
        synthetic.simulate([run], learning_rate=1.0, num_steps=5, track=[9])
    with pytest.raises(ParameterError, match="device"):
        synthetic.simulate([run], learning_rate=1.0, num_steps=5, device="tpu")


def test_figure3_settings_reproduce_the_regimes():
    """The paper's three settings at full scale (n = 20, T = 8, ρ = 0.1, η = 0.2, α = 5e-3, 1000 steps)."""
    settings = {"balanced": (2000, 20.0), "large_noise": (4500, 5.0), "large_signal": (1000, 80.0)}
    runs = [data.make_run(d, mu, seed=42, n=20, n_test=1000, rho=0.1, noise_ratio=0.2, label=name)
            for name, (d, mu) in settings.items()]
    final = synthetic.simulate(runs, learning_rate=5e-3, num_steps=1000, log_every=100, device="cpu").final
    final = final.set_index("run")
    assert final.loc["balanced", "train_acc"] == 1.0 and final.loc["balanced", "test_acc"] >= 0.98
    assert final.loc["large_noise", "train_acc"] == 1.0 and final.loc["large_noise", "test_acc"] < 0.95
    assert final.loc["large_signal", "test_acc"] >= 0.99 and final.loc["large_signal", "train_acc"] < 1.0


def test_figure1_handbuilt_queries_give_the_three_regimes():
    train, test = make_train_test(100, 10000, 20.0, n_test=100, seed=0, rho=0.2, noise_ratio=0.2)
    acc = {c: (synthetic.attend(train, synthetic.handbuilt_p(train, c))["acc"],
               synthetic.attend(test, synthetic.handbuilt_p(train, c))["acc"]) for c in (1.0, 0.06, 0.001)}
    assert acc[1.0][0] == 1.0 and acc[1.0][1] < 0.9  # harmful
    assert acc[0.06] == (1.0, 1.0)  # benign
    assert acc[0.001] == (0.8, 1.0)  # not overfitting: the 20 noisy samples stay unfitted


def head_alone_accuracy(run) -> float:
    """Step 0 by hand: p = 0, uniform attention, f(X) = ν·mean_t(x_t)."""
    f = (run.test.X.mean(1) @ run.test.nu)
    return float((run.test.y * f > 0).double().mean())


def test_controls_measure_training_against_step_0_and_clean_labels():
    settings = dict(seed=3, n=12, n_test=200, T=8, rho=0.1)
    runs = [data.make_run(d, mu, noise_ratio=0.25, label=f"r{d}", **settings) for d, mu in ((60, 3.0), (80, 6.0))]
    clean = [data.make_run(d, mu, noise_ratio=0.0, label=f"c{d}", **settings) for d, mu in ((60, 3.0), (80, 6.0))]
    sim = synthetic.simulate(runs, learning_rate=0.5, num_steps=80, dtype="float64")
    clean_sim = synthetic.simulate(clean, learning_rate=0.5, num_steps=80, dtype="float64")
    out = synthetic.controls(sim, runs, clean_sim, clean)
    final = sim.final.set_index("run").test_acc
    clean_final = clean_sim.final.set_index("run").test_acc
    for i, (run, c) in enumerate(zip(runs, clean)):
        assert out["test_acc_step0"][i] == pytest.approx(head_alone_accuracy(run), abs=1 / 200)
        assert out["test_gain"][i] == pytest.approx(final[run.label] - out["test_acc_step0"][i], abs=1e-12)
        assert out["noise_cost"][i] == pytest.approx(clean_final[c.label] - final[run.label], abs=1e-12)
        s = synthetic.attend(run.test, sim.q[i].double())["scores"][:, 0]
        assert out["test_attention_relevant"][i] == pytest.approx(float(s.mean()), abs=1e-9)
    # a run is its own control on clean labels: the flipped labels cost nothing
    same = synthetic.controls(clean_sim, clean, clean_sim, clean)
    assert same["noise_cost"] == [0.0, 0.0]
    with pytest.raises(ParameterError, match="aligned one to one"):
        synthetic.controls(sim, runs, clean_sim, clean[:1])


def test_the_grid_records_the_head_alone_accuracy_of_every_cell():
    point = dict(d=60, seed=5, n=10, n_test=300, T=8, noise_ratio=0.2, num_steps=20, learning_rate=0.5,
                 dtype="float64", device="cpu")
    rows = synthetic.grid_chunk([dict(point, signal_norm=mu) for mu in (2.0, 4.0)])
    for row, mu in zip(rows, (2.0, 4.0)):
        run = data.make_run(60, mu, seed=5, n=10, n_test=300, T=8, noise_ratio=0.2)
        assert row["test_acc_step0"] == pytest.approx(head_alone_accuracy(run), abs=1 / 300)
