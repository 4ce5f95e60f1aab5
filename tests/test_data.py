"""Paper 1's data: shapes, norms, orthogonality, label noise, seeds, and parameter errors."""

import math

import pytest
import torch

from benign import theory
from benign.checks import ParameterError
from benign.data import gaussian_noise, init_W, make_data, make_train_test, noise_mask


def test_shapes_norms_and_orthogonality():
    data = make_data(10, 50, 7.0, T=8, rho=0.1, noise_ratio=0.2, seed=3)
    assert data.X.shape == (10, 8, 50) and data.y.shape == (10,)
    assert data.mu_pos @ data.mu_neg == 0
    assert float(data.mu_pos.norm()) == pytest.approx(7.0) and float(data.mu_neg.norm()) == pytest.approx(7.0)
    assert float(data.nu.norm()) == pytest.approx(1 / 7.0)
    assert float(data.nu @ data.mu_pos) == pytest.approx(1 / math.sqrt(2))
    assert float(data.nu @ data.mu_neg) == pytest.approx(-1 / math.sqrt(2))
    assert data.token_type.tolist() == [0, 1, 2, 3, 3, 3, 3, 3]


def test_tokens_are_signal_plus_the_seeded_noise():
    data = make_data(6, 30, 4.0, T=5, rho=0.5, noise_ratio=0.0, seed=11)
    signal = data.X - gaussian_noise(6, 5, 30, 11)
    mu_true = torch.where(data.y_clean[:, None] > 0, data.mu_pos, data.mu_neg)
    mu_other = torch.where(data.y_clean[:, None] > 0, data.mu_neg, data.mu_pos)
    assert torch.allclose(signal[:, 0], mu_true)
    assert torch.allclose(signal[:, 1], 0.5 * mu_true)
    assert torch.allclose(signal[:, 2], 0.5 * mu_other)
    assert torch.count_nonzero(signal[:, 3:]) == 0


def test_deterministic_noise_is_the_authors_pattern():
    # n = 20, η = 0.2: k = 4, two flips at the start of each class
    assert noise_mask(20, 0.2).nonzero().flatten().tolist() == [0, 1, 10, 11]
    # n = 21, η = 0.3: k = ceil(6.3) = 7 is odd, so one flip is lost: 3 per class; the −1 class starts at 10
    assert noise_mask(21, 0.3).nonzero().flatten().tolist() == [0, 1, 2, 10, 11, 12]
    data = make_data(20, 10, 3.0, noise_ratio=0.2)
    assert data.y_clean.tolist() == [1.0] * 10 + [-1.0] * 10
    assert torch.equal(data.y != data.y_clean, data.noisy) and int(data.noisy.sum()) == 4


def test_bernoulli_noise_rate_and_reproducibility():
    masks = [noise_mask(20000, 0.3, "bernoulli", seed=s) for s in (0, 0, 1)]
    assert torch.equal(masks[0], masks[1]) and not torch.equal(masks[0], masks[2])
    assert float(masks[0].double().mean()) == pytest.approx(0.3, abs=0.01)


def test_seeds_reproduce_and_differ():
    a, b, c = (make_data(4, 20, 2.0, noise_ratio=0.0, seed=s).X for s in (5, 5, 6))
    assert torch.equal(a, b) and not torch.equal(a, c)
    assert torch.equal(init_W(30, 1), init_W(30, 1)) and not torch.equal(init_W(30, 1), init_W(30, 2))


def test_W_init_is_kaiming_uniform_bound():
    W = init_W(400, 0)
    assert float(W.abs().max()) <= 1 / math.sqrt(400)
    assert float(W.abs().max()) > 0.99 / math.sqrt(400)
    assert float(W.var()) == pytest.approx(1 / (3 * 400), rel=0.02)  # variance of U(−b, b) is b²/3


def test_test_set_is_independent_by_default_and_a_copy_with_the_authors_seed():
    train, test = make_train_test(6, 20, 3.0, noise_ratio=0.0, n_test=10, seed=2)
    assert not torch.isclose(test.X[:6], train.X).any()
    train, test = make_train_test(6, 20, 3.0, noise_ratio=0.0, n_test=10, seed=2, authors_test_seed=True)
    assert torch.equal(test.X[:3], train.X[:3])  # the authors' quirk: the first n/2 test inputs are training inputs
    assert test.noisy.sum() == 0


@pytest.mark.parametrize("kwargs,message", [
    (dict(n=0), "n = 0 is not allowed: n must be an integer >= 2"),
    (dict(d=0), "d = 0 is not allowed: d must be an integer >= 3"),
    (dict(noise_ratio=1.5), r"noise_ratio = 1.5 is not allowed: noise_ratio must be a number in \[0.0, 1.0\)"),
    (dict(signal_norm=-1.0), "signal_norm = -1.0 is not allowed"),
    (dict(T=3, n_weak=2), "do not fit T = 3"),
    (dict(label_noise="sometimes"), "label_noise = 'sometimes' is not allowed"),
])
def test_bad_parameters_give_one_line_errors(kwargs, message):
    args = dict(n=10, d=20, signal_norm=3.0, noise_ratio=0.2) | kwargs
    with pytest.raises(ParameterError, match=message) as err:
        make_data(**args)
    assert "\n" not in str(err.value)


def test_theory_quantities():
    assert theory.snr(20.0, 2000) == pytest.approx(20 / math.sqrt(2000))
    assert theory.n_snr2(20.0, 2000, 20) == pytest.approx(4.0)
    assert theory.harmful_snr(10000) == pytest.approx(0.1)
    assert theory.regime(5.0, 4500, 20) == "harmful"
    assert theory.regime(80.0, 1000, 20) == "not_overfitting"
    assert theory.regime(20.0, 2000, 20, c_overfit=10.0) == "benign"
    assert theory.signal_norm_at_n_snr2(2000, 20) == pytest.approx(10.0)
    assert theory.growth(math.log(8), T=8) == pytest.approx(2 * math.log(8))
