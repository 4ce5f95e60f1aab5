"""The one-layer encoder: the batched [CLS]-path trainer against autograd SGD on the literal module, batched runs
against runs trained alone, the grid kernel against `simulate`, and bad input."""

import pytest
import torch

from benign import data, device, encoder, models, sweep
from benign.checks import ParameterError

D, HIDDEN = 24, 16
FAST = dict(hidden=HIDDEN, learning_rate=0.05, num_steps=40, log_every=10, dtype="float64", device="cpu")


def small_run(signal_norm=3.0, seed=3, d=D, label=""):
    return data.make_run(d, signal_norm, seed=seed, n=8, n_test=50, noise_ratio=0.25, W_init="identity",
                              label=label)


def literal(run, skip, params=None):
    model = models.OneLayerEncoder(run.train.X.shape[-1], HIDDEN, skip=skip).double()
    model.load_state_dict(params or encoder.initial_parameters(run.train.X.shape[-1], HIDDEN, run.train.params["seed"]))
    return model


def test_initial_parameters_are_the_modules_own_seeded_and_pytorch_scaled():
    params = encoder.initial_parameters(D, HIDDEN, seed=5)
    model = models.OneLayerEncoder(D, HIDDEN)
    assert {k: v.shape for k, v in params.items()} == {k: v.shape for k, v in model.state_dict().items()}
    again, other = encoder.initial_parameters(D, HIDDEN, seed=5), encoder.initial_parameters(D, HIDDEN, seed=6)
    assert all(torch.equal(params[k], again[k]) for k in params)
    assert not torch.equal(params["to_qkv.weight"], other["to_qkv.weight"])
    assert params["to_qkv.weight"].abs().max() <= D ** -0.5 and params["mlp_out.weight"].abs().max() <= HIDDEN ** -0.5
    assert params["to_qkv.weight"].abs().max() > 0.9 * D ** -0.5  # U(−1/√fan_in, 1/√fan_in), not smaller
    assert torch.equal(params["norm.weight"], torch.ones(D)) and params["cls_token"].std() > 0.5


@pytest.mark.parametrize("skip", [True, False])
def test_cls_path_equals_the_literal_module(skip):
    run = small_run()
    model = literal(run, skip)
    with torch.no_grad():
        model.cls_token.mul_(3.0)  # move away from the symmetric start so every term matters
    f, attention = model.forward_with_scores(run.train.X)
    f_fast, attention_fast = encoder.cls_forward(dict(model.named_parameters()), run.train.X, skip)
    assert torch.allclose(f_fast, f, rtol=1e-12, atol=1e-14)
    assert torch.allclose(attention_fast, attention, rtol=1e-12, atol=1e-15)
    assert attention.sum(-1).max() < 1.0  # the [CLS] token takes a share of its own row


@pytest.mark.parametrize("skip", [True, False])
def test_trainer_equals_autograd_sgd_on_the_literal_module(skip):
    run = small_run()
    sim = encoder.simulate([run], skip=skip, **FAST)
    model = literal(run, skip)
    losses = models.train_autograd(model, run.train.X, run.train.y, learning_rate=FAST["learning_rate"],
                                   num_steps=FAST["num_steps"])
    assert losses[-1] < losses[0] - 0.05  # it trains
    assert sim.history.train_loss.to_numpy() == pytest.approx(losses, rel=1e-10)
    for name, value in model.state_dict().items():
        assert torch.allclose(sim.params[name][0], value, rtol=1e-10, atol=1e-12), name
    with torch.no_grad():
        f, attention = model.forward_with_scores(run.test.X)
    final = sim.final.iloc[0]
    assert final.test_acc == pytest.approx(float((run.test.y * f > 0).double().mean()))
    assert final.test_loss == pytest.approx(float(models.logistic_loss(f, run.test.y)), rel=1e-10)
    last = sim.scores[sim.scores.step == FAST["num_steps"]]
    with torch.no_grad():
        _, train_attention = model.forward_with_scores(run.train.X)
    for row in last.itertuples():
        assert row.score == pytest.approx(float(train_attention[row.sample, row.token]), rel=1e-10)


def test_a_given_initialisation_replaces_each_runs_seeded_draw():
    runs = [small_run(seed=3, label="a"), small_run(5.0, seed=3, label="b")]
    given = [encoder.initial_parameters(D, HIDDEN, 11), encoder.initial_parameters(D, HIDDEN, 12)]
    sim = encoder.simulate(runs, init=given, **FAST)
    for i, (run, params) in enumerate(zip(runs, given)):
        model = literal(run, True, params)
        losses = models.train_autograd(model, run.train.X, run.train.y, learning_rate=FAST["learning_rate"],
                                       num_steps=FAST["num_steps"])
        assert sim.history[sim.history.run == run.label].train_loss.to_numpy() == pytest.approx(losses, rel=1e-10)
        for name, value in model.state_dict().items():
            assert torch.allclose(sim.params[name][i], value, rtol=1e-10, atol=1e-12), name
    drawn = encoder.simulate(runs[:1], **FAST)  # no init: the run's seed (3) draws it
    assert drawn.history.train_loss.to_numpy() != pytest.approx(sim.history.train_loss.to_numpy()[:41], rel=1e-3)


def test_skip_connections_change_the_trained_model():
    run = small_run()
    with_skip, without = (encoder.simulate([run], skip=skip, **FAST) for skip in (True, False))
    assert with_skip.history.train_loss.iloc[0] != pytest.approx(without.history.train_loss.iloc[0], rel=1e-3)
    assert not torch.allclose(with_skip.params["to_qkv.weight"], without.params["to_qkv.weight"])


def test_batched_runs_equal_runs_trained_alone():
    runs = [small_run(mu, seed, label=f"r{i}") for i, (mu, seed) in enumerate([(2.0, 0), (5.0, 0), (3.0, 7)])]
    batched = encoder.simulate(runs, **FAST)
    for i, run in enumerate(runs):
        alone = encoder.simulate([run], **FAST)
        for name, value in alone.params.items():
            assert torch.allclose(batched.params[name][i], value[0], rtol=1e-12, atol=1e-14), name
        got = batched.history[batched.history.run == run.label].drop(columns="run").to_numpy()
        assert got == pytest.approx(alone.history.drop(columns="run").to_numpy(), rel=1e-11, nan_ok=True)
        scores = batched.scores[batched.scores.run == run.label].score.to_numpy()
        assert scores == pytest.approx(alone.scores.score.to_numpy(), rel=1e-11)


def test_runs_split_over_threads_equal_one_program(monkeypatch):
    runs = [small_run(mu, seed, label=f"r{i}") for i, (mu, seed) in enumerate([(2.0, 0), (5.0, 1), (3.0, 7)])]
    monkeypatch.setenv(device.CPU_THREADS_ENV, "1")
    whole = encoder.simulate(runs, **FAST)
    monkeypatch.setenv(device.CPU_THREADS_ENV, "3")  # three groups of one run, side by side
    split = encoder.simulate(runs, **FAST)
    for name, value in whole.params.items():
        assert torch.allclose(split.params[name], value, rtol=1e-12, atol=1e-14), name
    for table in ("history", "scores"):
        got, want = getattr(split, table), getattr(whole, table)
        assert list(got.run) == list(want.run)
        assert got.drop(columns="run").to_numpy() == pytest.approx(want.drop(columns="run").to_numpy(), rel=1e-11,
                                                                     nan_ok=True)


def test_grid_chunk_equals_simulate_on_the_same_runs():
    mus = [2.0, 6.0]
    common = dict(seed=4, n=8, n_test=50, noise_ratio=0.25)
    points = sweep.grid(d=D, signal_norm=mus, hidden=HIDDEN, learning_rate=0.05, num_steps=40, dtype="float64",
                        device="cpu", **common)
    rows = encoder.grid_chunk(points)
    runs = [data.make_run(D, mu, W_init="identity", label=str(mu), **common) for mu in mus]
    sim = encoder.simulate(runs, **FAST)
    for row, (_, ref) in zip(rows, sim.final.iterrows()):
        for key in ("train_loss", "train_acc", "test_loss", "test_acc"):
            assert row[key] == pytest.approx(ref[key], rel=1e-10), key
        assert 0 < row["attention_noisy_relevant"] < 1 and 0 < row["attention_clean_relevant"] < 1


def test_a_chunk_too_large_for_the_device_runs_in_batches_with_the_same_rows(monkeypatch):
    """Where the device's memory holds fewer runs than the chunk has (`device.runs_that_fit`), the chunk goes through
    in batches: the same rows in the same order, each run's numbers its own (to rounding), clean and noisy runs
    split across batches; the bytes asked for are the runs' parameters times MEMORY_PER_PARAMETER."""
    points = sweep.grid(d=D, signal_norm=[2.0, 4.0, 6.0], noise_ratio=[0.25, 0.0], seed=4, n=8, n_test=50,
                        hidden=HIDDEN, learning_rate=0.05, num_steps=40, dtype="float64", device="cpu")
    whole = encoder.grid_chunk(points)
    asked = []

    def two_at_a_time(bytes_per_run, dev, runs):
        asked.append(bytes_per_run)
        return 2

    monkeypatch.setattr(encoder, "runs_that_fit", two_at_a_time)
    batched = encoder.grid_chunk(points)
    assert asked == [encoder.MEMORY_PER_PARAMETER * encoder.parameter_count(D, HIDDEN) * 8]
    cells = [(r["signal_norm"], r["noise_ratio"]) for r in whole]
    assert [(r["signal_norm"], r["noise_ratio"]) for r in batched] == cells
    for a, b in zip(batched, whole):
        for key in ("train_loss", "test_loss", "test_acc", "attention_noisy_relevant", "attention_clean_relevant"):
            assert a[key] == pytest.approx(b[key], rel=1e-10, nan_ok=True), key


def test_a_batch_the_device_cannot_hold_is_halved_until_it_fits(monkeypatch):
    points = sweep.grid(d=D, signal_norm=[2.0, 4.0, 6.0], noise_ratio=[0.25, 0.0], seed=4, n=8, n_test=50,
                        hidden=HIDDEN, learning_rate=0.05, num_steps=20, dtype="float64", device="cpu")
    whole = encoder.grid_chunk(points)
    real, tried = encoder._grid_rows, []

    def holds(limit):
        def rows(batch, *args):
            tried.append(len(batch))
            if len(batch) > limit:
                raise torch.cuda.OutOfMemoryError("CUDA out of memory")
            return real(batch, *args)
        return rows

    monkeypatch.setattr(encoder, "_grid_rows", holds(2))
    halved = encoder.grid_chunk(points)
    assert tried == [6, 3, 1, 1, 1, 1, 1, 1]  # 6 and 3 ran out; 3 // 2 = 1 at a time from then on
    for a, b in zip(halved, whole):
        assert (a["signal_norm"], a["noise_ratio"]) == (b["signal_norm"], b["noise_ratio"])
        assert a["test_loss"] == pytest.approx(b["test_loss"], rel=1e-10)
    monkeypatch.setattr(encoder, "_grid_rows", holds(0))
    with pytest.raises(torch.cuda.OutOfMemoryError):  # not even one run fits: the error, not a loop
        encoder.grid_chunk(points)


def test_the_parameter_count_is_the_drawn_parameters():
    drawn = sum(v.numel() for v in encoder.initial_parameters(D, HIDDEN, 0).values())
    assert encoder.parameter_count(D, HIDDEN) == drawn == 3 * D * D + 2 * D * HIDDEN + HIDDEN + 9 * D + 1
    assert device.runs_that_fit(1e30, torch.device("cpu"), 78) == 78  # off CUDA the caller sized its batch


def test_sweep_drives_the_grid_kernel_with_its_cache(tmp_path):
    points = sweep.grid(d=[12, 16], signal_norm=[2.0, 4.0], seed=1, hidden=8, n=6, n_test=20, num_steps=5,
                        dtype="float64", device="cpu")
    first = sweep.run(encoder.grid_chunk, points, cache=tmp_path)
    again = sweep.run(encoder.grid_chunk, points, cache=tmp_path)
    assert first.attrs["chunks"] == 2 and first.attrs["computed_chunks"] == 2 and again.attrs["computed_chunks"] == 0
    assert again.test_loss.tolist() == first.test_loss.tolist()


def test_reduced_settings_keep_the_signal_against_the_fourth_root_of_d():
    d, mu, width = encoder.reduced(2000, 20.0, 2000, scale=10)
    assert (d, width) == (200, 200) and mu / d ** 0.25 == pytest.approx(20.0 / 2000 ** 0.25, rel=1e-6)
    assert encoder.reduced(5000, 5.0, 2000, scale=1) == (5000, 5.0, 2000)
    with pytest.raises(ParameterError, match="scale = 0 is not allowed"):
        encoder.reduced(2000, 20.0, 2000, scale=0)


def test_bad_input_is_one_clear_line():
    with pytest.raises(ParameterError, match=r"^hidden = 0 is not allowed: hidden must be an integer >= 1$"):
        encoder.simulate([small_run()], **{**FAST, "hidden": 0})
    with pytest.raises(ParameterError, match="skip = 'yes' is not allowed: skip must be True or False"):
        encoder.simulate([small_run()], **FAST, skip="yes")
    params = encoder.initial_parameters(D, HIDDEN, 0)
    with pytest.raises(ParameterError, match=r"^init has 2 parameter sets for 1 runs: give one per run$"):
        encoder.simulate([small_run()], init=[params, params], **FAST)
    with pytest.raises(ParameterError, match=r"^init\[0\] does not fit d = 24, hidden = 16: mlp_in.bias has shape "
                                             r"\(16,\) here, not \(17,\)$"):
        encoder.simulate([small_run()], init=[{**params, "mlp_in.bias": torch.zeros(17)}], **FAST)
    with pytest.raises(ParameterError, match=r"init\[0\] does not fit .*: attn.to_qkv.weight is not one of the"):
        encoder.simulate([small_run()], init=[{**params, "attn.to_qkv.weight": params["to_qkv.weight"]}], **FAST)
    with pytest.raises(ParameterError, match=r"init\[0\] does not fit .*: head.bias is missing$"):
        encoder.simulate([small_run()], init=[{k: v for k, v in params.items() if k != "head.bias"}], **FAST)
    with pytest.raises(ParameterError, match="runs differ in n, T or d"):
        encoder.simulate([small_run(), small_run(d=30)], **FAST)
    with pytest.raises(ParameterError, match="unknown parameter 'W_init' for this grid kernel"):
        encoder.grid_chunk([{"d": D, "signal_norm": 2.0, "W_init": "kaiming"}])
    with pytest.raises(ParameterError, match="a grid chunk must share"):
        encoder.grid_chunk([{"d": D, "signal_norm": 2.0}, {"d": 30, "signal_norm": 2.0}])


def test_noise_costs_compare_each_run_with_itself_on_clean_labels():
    common = dict(n=8, n_test=50, W_init="identity")
    runs = [data.make_run(D, 3.0, seed=s, noise_ratio=0.25, label=f"s{s}", **common) for s in (3, 4)]
    clean = [data.make_run(D, 3.0, seed=s, noise_ratio=0.0, label=f"s{s}_clean", **common) for s in (3, 4)]
    for run, twin in zip(runs, clean):  # the control is the same run: same inputs bit for bit, only labels differ
        assert torch.equal(run.train.X, twin.train.X) and torch.equal(run.test.X, twin.test.X)
        assert torch.equal(run.train.y_clean, twin.train.y_clean) and torch.equal(run.test.y, twin.test.y)
        assert torch.equal(twin.train.y, twin.train.y_clean) and not twin.train.noisy.any()
        assert torch.equal(run.train.y != twin.train.y, run.train.noisy) and run.train.noisy.sum() == 2
    sim = encoder.simulate(runs + clean, **FAST)
    start = sim.history[sim.history.step == 0].set_index("run")
    first = sim.scores[sim.scores.step == 0]
    for run, twin in zip(runs, clean):  # same seed, so the same initialisation: the same model at step 0
        assert start.loc[run.label, "test_acc"] == pytest.approx(start.loc[twin.label, "test_acc"], abs=1e-12)
        assert first[first.run == twin.label].score.to_numpy() == pytest.approx(
            first[first.run == run.label].score.to_numpy(), rel=1e-12)
    alone = encoder.simulate(clean[:1], **FAST)  # the clean run trained in the batch is the clean run trained alone
    assert torch.allclose(alone.params["to_qkv.weight"][0], sim.params["to_qkv.weight"][2], rtol=1e-12, atol=1e-14)
    costs = encoder.noise_costs(sim.final, runs, clean)
    final = sim.final.set_index("run").test_acc
    assert list(costs.run) == ["s3", "s4"] and list(costs.clean_run) == ["s3_clean", "s4_clean"]
    for row in costs.itertuples():
        assert row.noise_cost == final[row.clean_run] - final[row.run]
        assert row.costly == (row.noise_cost > 0.01)


def test_noise_costs_refuse_a_control_that_is_not_the_same_run():
    common = dict(n=8, n_test=50, noise_ratio=0.0, W_init="identity")
    run = small_run(seed=3, label="r")
    with pytest.raises(ParameterError, match="clean run 'c' is not run 'r' on clean labels"):
        encoder.noise_costs(None, [run], [data.make_run(D, 3.0, seed=4, label="c", **common)])
    with pytest.raises(ParameterError, match="clean run 'c' is not run 'r' on clean labels"):
        encoder.noise_costs(None, [run], [data.make_run(D, 4.0, seed=3, label="c", **common)])
    with pytest.raises(ParameterError, match="clean run 'c' has flipped labels"):
        encoder.noise_costs(None, [run], [small_run(seed=3, label="c")])
    with pytest.raises(ParameterError, match="1 runs but 2 clean runs"):
        encoder.noise_costs(None, [run], [run, run])
