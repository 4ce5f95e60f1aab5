"""The fast trainers against the transcriptions of the authors' scripts (`benign.authors`), at small scale, with the
authors' quirks switched on; and the paper-vs-authors-vs-here table that uses them.

Where the fast code cannot draw the authors' data stream, the transcription's data are handed to it (or ours to
the transcription): these tests test the trainers, not the random generators. Both sides run in float64, so the
tolerances are those of two different float64 computations of the same numbers.
"""

import numpy as np
import pytest
import torch

from benign import authors, data, encoder, synthetic
from benign.checks import ParameterError
from benign.data import Run, TokenData

TIGHT = dict(rel=1e-9, abs=1e-12)


def token_data(arrays: dict, signal_norm: float, rho: float, n_relevant: int = 1, seed: int = 0) -> TokenData:
    """A transcription's data set as the fast code's TokenData (float64)."""
    n, T, d = arrays["X"].shape
    mu_pos, mu_neg, nu = data.signals(d, signal_norm)
    noise_ratio = float(arrays["noisy"].double().mean())
    params = dict(n=n, d=d, signal_norm=signal_norm, T=T, rho=rho, noise_ratio=noise_ratio, seed=seed)
    return TokenData(arrays["X"].double(), arrays["y"].double(), arrays["y_clean"].double(), arrays["noisy"],
                     data.token_types(T, n_relevant, n_relevant), mu_pos, mu_neg, nu, params)


def arrays(d: TokenData) -> dict:
    """Our data set as a transcription takes it."""
    return {"X": d.X, "y": d.y, "y_clean": d.y_clean, "noisy": d.noisy}


def same_accuracy(ours: float, theirs: float, margins: torch.Tensor):
    """Accuracies of two float64 computations agree up to the samples whose margin is within rounding of zero."""
    assert abs(ours - theirs) <= float((margins.abs() < 1e-8).double().mean()) + 1e-12


def margins(model, d: dict) -> torch.Tensor:
    with torch.no_grad():
        return model(d["X"]) * d["y"]


# --- their data and ours ----------------------------------------------------------------------------------------

@pytest.mark.parametrize("n", [7, 20, 21, 100])
def test_label_noise_is_the_authors_deterministic_pattern(n):
    for i in range(19):
        eta = round(0.05 * i, 10)
        theirs = authors.dataset(n, 3, 1.0, noise_ratio=eta, T=3)["noisy"]
        assert torch.equal(theirs, data.noise_mask(n, eta)), eta


def test_their_test_set_repeats_training_inputs_as_ours_does_with_authors_test_seed():
    train = authors.dataset(10, 6, 2.0, seed=4, noise_ratio=0.2)
    test = authors.dataset(30, 6, 2.0, seed=4)
    assert torch.equal(test["X"][:5], train["X"][:5]) and not torch.equal(test["X"][5:10], train["X"][5:10])
    ours, our_test = data.make_train_test(10, 6, 2.0, n_test=30, seed=4, noise_ratio=0.2, authors_test_seed=True)
    assert torch.equal(our_test.X[:5], ours.X[:5]) and not torch.equal(our_test.X[5:10], ours.X[5:10])


def test_their_tokens_carry_the_signals_the_paper_describes():
    d = authors.dataset(4, 5, 3.0, seed=1, rho=0.5, n_relevant=2, T=8, dtype="float64")
    noise = torch.tensor(np.random.RandomState(1).randn(4, 8, 5))
    signal = d["X"] - noise
    assert torch.allclose(signal[0, :2, :2], torch.tensor([[3.0, 0.0]] * 2, dtype=torch.float64))  # μ₊ (+1 class)
    assert torch.allclose(signal[3, 4:6, :2], torch.tensor([[1.5, 0.0]] * 2, dtype=torch.float64))  # ρμ₊ for −1
    assert signal[:, 6:].abs().max() < 1e-12 and signal[..., 2:].abs().max() < 1e-12


# --- main.py (W and p) against the exact fast trainer -------------------------------------------------------------

def test_fast_trainer_equals_main_py():
    mu, rho, lr, steps = 3.0, 0.3, 0.5, 120
    ref = authors.main(30, mu, n=10, n_test=40, rho=rho, noise_ratio=0.2, learning_rate=lr, num_steps=steps,
                       seed=3, log_interval=10, dtype="float64")
    run = Run(token_data(ref["train"], mu, rho), token_data(ref["test"], mu, rho), ref["W0"].double())
    sim = synthetic.simulate([run], learning_rate=lr, num_steps=steps, log_every=10, track=list(range(10)),
                             dtype="float64", device="cpu")
    assert ref["loss"][0] - ref["loss"][-1] > 0.05  # it trains
    assert sim.history.train_loss.to_numpy()[:steps] == pytest.approx(ref["loss"], **TIGHT)
    ours = torch.tensor(sim.scores.sort_values(["step", "sample", "token"]).score.to_numpy()).view(steps + 1, 10, 8)
    assert torch.allclose(ours[:steps], ref["scores"], rtol=1e-9, atol=1e-12)
    logged = sim.history.set_index("step")
    for row in ref["stats"]:  # after `steps_done` updates
        got = logged.loc[row["steps_done"]]
        assert got.train_loss == pytest.approx(row["train_loss"], **TIGHT)
        assert got.test_loss == pytest.approx(row["test_loss"], **TIGHT)
    same_accuracy(logged.loc[steps].train_acc, ref["final"]["train_accuracy"], margins(ref["model"], ref["train"]))
    same_accuracy(logged.loc[steps].test_acc, ref["final"]["test_accuracy"], margins(ref["model"], ref["test"]))


def test_main_chunk_is_main_evaluated_once_at_the_end():
    point = dict(d=12, signal_norm=2.0, seed=1, n=6, n_test=20, num_steps=30, learning_rate=0.5, dtype="float64")
    (row,) = authors.main_chunk([point])
    ref = authors.main(**point, log_interval=10)["final"]
    assert row["train_loss"] == pytest.approx(ref["train_loss"], **TIGHT)
    assert row["test_loss"] == pytest.approx(ref["test_loss"], **TIGHT)
    with pytest.raises(ParameterError, match="unknown parameter 'eta'"):
        authors.main_chunk([{**point, "eta": 0.1}])


def test_grid_chunk_equals_main_py_on_our_data():
    point = dict(d=25, signal_norm=2.5, seed=2, n=8, n_test=30, T=8, noise_ratio=0.25, learning_rate=0.6,
                 num_steps=80, authors_test_seed=True, dtype="float64", device="cpu")
    (row,) = synthetic.grid_chunk([point])
    run = data.make_run(25, 2.5, seed=2, n=8, n_test=30, noise_ratio=0.25, authors_test_seed=True)
    ref = authors.main(25, 2.5, learning_rate=0.6, num_steps=80, log_interval=80, dtype="float64",
                       train=arrays(run.train), test=arrays(run.test), W0=run.W0)
    assert row["train_loss"] == pytest.approx(ref["final"]["train_loss"], **TIGHT)
    assert row["test_loss"] == pytest.approx(ref["final"]["test_loss"], **TIGHT)
    same_accuracy(row["test_acc"], ref["final"]["test_accuracy"], margins(ref["model"], ref["test"]))


# --- main_math_frak.py (p only, two relevant tokens) ---------------------------------------------------------------

def frak_sums(frak: torch.Tensor, train: TokenData) -> dict:
    clean, positive = ~train.noisy, train.y > 0
    return {"clean_1": float(frak[clean & positive].sum()), "clean_2": float(frak[clean & ~positive].sum()),
            "noisy_1": float(frak[~clean & positive].sum()), "noisy_2": float(frak[~clean & ~positive].sum())}


def test_p_only_fast_trainer_equals_main_math_frak():
    mu, rho, lr, steps = 2.0, 0.4, 1.0, 150
    ref = authors.math_frak(40, mu, n=12, n_test=50, rho=rho, noise_ratio=0.4, learning_rate=lr, num_steps=steps,
                            seed=5, dtype="float64")
    train, test = token_data(ref["train"], mu, rho, 2), token_data(ref["test"], mu, rho, 2)
    sim = synthetic.simulate([Run(train, test, None)], learning_rate=lr, num_steps=steps, log_every=steps,
                             train_W=False, dtype="float64", device="cpu")
    ours = frak_sums(sim.frak_s[0], train)
    assert ours == pytest.approx({k: ref[k] for k in ours}, **TIGHT)
    assert ref["clean_1"] > 0 and ref["noisy_2"] > 0
    final = sim.final.iloc[0]
    assert final.train_loss == pytest.approx(ref["train_loss"], **TIGHT)
    assert final.test_loss == pytest.approx(ref["test_loss"], **TIGHT)
    same_accuracy(final.test_acc, ref["test_accuracy"], margins(ref["model"], ref["test"]))


def test_grid_chunk_p_only_equals_main_math_frak_on_our_data():
    shared = dict(d=30, seed=1, n=10, n_test=40, T=8, n_relevant=2, n_weak=2, learning_rate=0.8, num_steps=100,
                  W_init="identity", train_W=False, authors_test_seed=True, dtype="float64", device="cpu")
    rows = synthetic.grid_chunk([{**shared, "signal_norm": mu, "noise_ratio": eta} for mu, eta in
                                 [(2.0, 0.2), (4.0, 0.6)]])
    for row in rows:
        run = data.make_run(30, row["signal_norm"], seed=1, n=10, n_test=40, n_relevant=2, n_weak=2,
                            noise_ratio=row["noise_ratio"], W_init="identity", authors_test_seed=True)
        ref = authors.math_frak(30, row["signal_norm"], learning_rate=0.8, num_steps=100, dtype="float64",
                                train=arrays(run.train), test=arrays(run.test))
        assert row["frak_clean_pos"] == pytest.approx(ref["clean_1"], **TIGHT)
        assert row["frak_clean_neg"] == pytest.approx(ref["clean_2"], **TIGHT)
        assert row["frak_noisy"] == pytest.approx(ref["noisy_1"] + ref["noisy_2"], **TIGHT)
        assert row["test_loss"] == pytest.approx(ref["test_loss"], **TIGHT)


# --- Figure 1's hand-built query ------------------------------------------------------------------------------------

@pytest.mark.parametrize("c", [1.0, 0.06, 0.001])
def test_handbuilt_query_equals_the_figure1_construction(c):
    ref = authors.figure1(c, d=200, n=20, n_test=40, seed=3, dtype="float64")
    train, test = token_data(ref["train"]["data"], 20.0, 0.2), token_data(ref["test"]["data"], 20.0, 0.2)
    p = synthetic.handbuilt_p(train, c)
    assert torch.allclose(p, ref["p"], rtol=1e-12, atol=1e-9)
    for name, d in (("train", train), ("test", test)):
        ours = synthetic.attend(d, p)
        assert torch.allclose(ours["f"], ref[name]["f"], rtol=1e-9, atol=1e-12)
        same_accuracy(ours["acc"], ref[name]["accuracy"], ref[name]["f"] * d.y)


# --- main_one_layer.py against the batched encoder -----------------------------------------------------------------

THEIR_NAMES = {"cls_token": "cls_token", "attn_norm": "attn.norm", "to_qkv": "attn.to_qkv", "mlp_norm": "ff.net.0",
               "mlp_in": "ff.net.1", "mlp_out": "ff.net.4", "norm": "norm", "head": "head"}


def their_state(ours: dict) -> dict:
    """Our encoder's parameters under the names (and the [CLS] shape) of their module."""
    state = {}
    for name, value in ours.items():
        module, _, kind = name.rpartition(".") if name != "cls_token" else ("cls_token", "", "")
        key = THEIR_NAMES[module] + (f".{kind}" if kind else "")
        state[key] = value.view(1, 1, -1) if name == "cls_token" else value
    return state


@pytest.mark.parametrize("skip", [True, False])
def test_encoder_equals_main_one_layer(skip):
    d, hidden, lr, steps = 16, 12, 0.05, 40
    run = data.make_run(d, 3.0, seed=3, n=8, n_test=30, noise_ratio=0.25, W_init="identity", authors_test_seed=True)
    sim = encoder.simulate([run], hidden=hidden, skip=skip, learning_rate=lr, num_steps=steps, log_every=10,
                           track=list(range(8)), dtype="float64", device="cpu")
    ref = authors.one_layer(d, 3.0, hidden=hidden, skip=skip, learning_rate=lr, num_steps=steps, log_interval=10,
                            dtype="float64", train=arrays(run.train), test=arrays(run.test),
                            init=their_state(encoder.initial_parameters(d, hidden, 3)))
    assert ref["loss"][0] - ref["loss"][-1] > 0.05  # it trains
    assert sim.history.train_loss.to_numpy()[:steps] == pytest.approx(ref["loss"], **TIGHT)
    ours = torch.tensor(sim.scores.sort_values(["step", "sample", "token"]).score.to_numpy()).view(steps + 1, 8, 8)
    assert torch.allclose(ours[:steps], ref["scores"], rtol=1e-9, atol=1e-12)
    logged = sim.history.set_index("step")
    for row in ref["stats"]:
        assert logged.loc[row["steps_done"]].test_loss == pytest.approx(row["test_loss"], **TIGHT)
    same_accuracy(logged.loc[steps].test_acc, ref["final"]["test_accuracy"], margins(ref["model"], ref["test"]))


def test_encoder_grid_chunk_equals_main_one_layer_on_our_data():
    point = dict(d=12, signal_norm=2.0, seed=4, n=8, n_test=20, T=8, noise_ratio=0.25, hidden=10, learning_rate=0.05,
                 num_steps=25, authors_test_seed=True, dtype="float64", device="cpu")
    (row,) = encoder.grid_chunk([point])
    run = data.make_run(12, 2.0, seed=4, n=8, n_test=20, noise_ratio=0.25, W_init="identity", authors_test_seed=True)
    ref = authors.one_layer(12, 2.0, hidden=10, learning_rate=0.05, num_steps=25, log_interval=25, dtype="float64",
                            train=arrays(run.train), test=arrays(run.test),
                            init=their_state(encoder.initial_parameters(12, 10, 4)))
    assert row["train_loss"] == pytest.approx(ref["final"]["train_loss"], **TIGHT)
    assert row["test_loss"] == pytest.approx(ref["final"]["test_loss"], **TIGHT)


def test_their_encoder_initialisation_is_seeded_and_leaves_the_global_generator_alone():
    state = torch.random.get_rng_state()
    a = authors.one_layer(6, 1.0, hidden=4, n=4, n_test=4, num_steps=1, log_interval=1)["model"].state_dict()
    b = authors.one_layer(6, 1.0, hidden=4, n=4, n_test=4, num_steps=1, log_interval=1)["model"].state_dict()
    assert all(torch.equal(a[k], b[k]) for k in a)
    assert torch.equal(torch.random.get_rng_state(), state)


def test_math_frak_chunk_runs_side_by_side_as_each_run_alone():
    points = [dict(d=20, seed=2, n=10, n_test=30, signal_norm=mu, noise_ratio=eta, num_steps=60, learning_rate=0.7,
                   dtype="float64") for mu, eta in [(2.0, 0.2), (2.0, 0.4), (5.0, 0.2), (2.0, 0.25)]]
    rows = authors.math_frak_chunk(points)
    assert rows[3]["frak_noisy_1"] == rows[0]["frak_noisy_1"]  # η = 0.25 flips the same samples as 0.2: one run
    for row, point in zip(rows, points):
        ref = authors.math_frak(**point)
        assert [row[f"frak_{k}"] for k in ("clean_1", "clean_2", "noisy_1", "noisy_2")] == pytest.approx(
            [ref[k] for k in ("clean_1", "clean_2", "noisy_1", "noisy_2")], **TIGHT)
        assert (row["train_loss"], row["test_loss"]) == pytest.approx((ref["train_loss"], ref["test_loss"]), **TIGHT)
        assert (row["train_acc"], row["test_acc"]) == (ref["train_accuracy"], ref["test_accuracy"]) or \
            same_accuracy(row["test_acc"], ref["test_accuracy"], margins(ref["model"], ref["test"])) is None
    with pytest.raises(ParameterError, match="must share"):
        authors.math_frak_chunk([points[0], {**points[1], "learning_rate": 0.1}])
