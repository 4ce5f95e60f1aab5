"""The API says what it wants: required and visible keywords, unknown or renamed keywords refused in one line, arguments
of the wrong kind refused as TypeErrors that name what was given and what is wanted, and `import benign` that is
light and reaches every module."""

import inspect
import pkgutil
import subprocess
import sys

import pytest
import torch

import benign
from benign import data, encoder, paper2, synthetic
from benign.checks import ParameterError

D, MU = 30, 4.0


@pytest.fixture(scope="module")
def run():
    return data.make_run(D, MU, noise_ratio=0.25, seed=1, n=8, n_test=10)


def one_line_type_error(call, *words):
    """The call raises a ParameterTypeError (a TypeError for the API, a ParameterError for the CLI) whose one-line
    message holds every word."""
    with pytest.raises(TypeError) as err:
        call()
    assert isinstance(err.value, ParameterError) and "\n" not in str(err.value)
    for word in words:
        assert word in str(err.value), (word, str(err.value))
    return str(err.value)


@pytest.mark.parametrize("call", [
    lambda: data.make_run(D, MU),
    lambda: data.make_train_test(10, D, MU),
    lambda: data.make_data(10, D, MU),
    lambda: paper2.make_data(10, D, MU),
    lambda: paper2.make_train_test(10, D, MU),
])
def test_the_noise_ratio_has_no_default(call):
    with pytest.raises(TypeError, match="noise_ratio"):
        call()


def test_make_run_draws_what_its_parts_draw():
    run = data.make_run(D, MU, noise_ratio=0.2, seed=3, n=10, n_test=12, T=6, rho=0.3)
    train, test = data.make_train_test(10, D, MU, noise_ratio=0.2, n_test=12, seed=3, T=6, rho=0.3)
    for ours, ref in ((run.train, train), (run.test, test)):
        for field in ("X", "y", "y_clean", "noisy", "token_type", "nu"):
            assert torch.equal(getattr(ours, field), getattr(ref, field)), field
    assert torch.equal(run.W0, data.init_W(D, 3))


def test_make_run_draws_what_the_call_without_explicit_keywords_drew():
    """Known numbers of make_run(30, 4.0, seed=3, n=10, n_test=12, noise_ratio=0.2, T=6, rho=0.3) before its data
    keywords were spelled out (single elements: each is one draw, not a reduction)."""
    run = data.make_run(D, MU, noise_ratio=0.2, seed=3, n=10, n_test=12, T=6, rho=0.3)
    assert float(run.train.X[0, 0, 0]) == 6.0409191213851825
    assert float(run.train.X[4, 2, 7]) == 0.20638165811738485
    assert float(run.train.X[9, 5, 29]) == 0.6719362710029061
    assert float(run.test.X[11, 0, 1]) == 3.26586781377953
    assert float(run.W0[29, 0]) == 0.11712807926795801 and float(run.W0[0, 1]) == -0.07787145895545176
    assert run.train.y.tolist() == [-1.0, 1.0, 1.0, 1.0, 1.0, 1.0, -1.0, -1.0, -1.0, -1.0]
    assert run.train.noisy.nonzero().flatten().tolist() == [0, 5]
    assert run.test.y.tolist() == [1.0] * 6 + [-1.0] * 6


def test_renamed_keyword_names_the_new_one():
    one_line_type_error(lambda: data.make_run(D, MU, eta=0.1), "'eta'", "renamed", "use 'noise_ratio'",
                        "benign.data.make_run")
    one_line_type_error(lambda: paper2.make_data(10, D, MU, noise_ratio=0.1, rho=2.0), "'rho'", "'signal_norm'")


@pytest.mark.parametrize("call,where", [
    (lambda: data.make_run(D, MU, noise_ratio=0.2, nosie=1), "benign.data.make_run"),
    (lambda: data.make_train_test(10, D, MU, noise_ratio=0.2, nosie=1), "benign.data.make_train_test"),
    (lambda: data.make_data(10, D, MU, noise_ratio=0.2, nosie=1), "benign.data.make_data"),
    (lambda: synthetic.simulate([], learning_rate=0.1, num_steps=1, nosie=1), "benign.synthetic.simulate"),
    (lambda: encoder.simulate([], nosie=1), "benign.encoder.simulate"),
    (lambda: paper2.simulate([], nosie=1), "benign.paper2.simulate"),
    (lambda: paper2.snr_sweep([4], [1.0], d=D, noise_ratio=0.1, step_size_factors=[1.0], nosie=1),
     "benign.paper2.snr_sweep"),
])
def test_unknown_keyword_is_refused_with_the_known_ones(call, where):
    one_line_type_error(call, "'nosie'", where, "use one of")


@pytest.mark.parametrize("fn,names", [
    (data.make_run, ["d", "signal_norm", "noise_ratio", "seed", "n", "n_test", "T", "rho", "sigma", "n_relevant",
                     "n_weak", "label_noise", "authors_test_seed", "W_init", "label"]),
    (data.make_train_test, ["n", "d", "signal_norm", "noise_ratio", "n_test", "seed", "T", "rho", "sigma",
                            "n_relevant", "n_weak", "label_noise", "authors_test_seed"]),
    (synthetic.simulate, ["runs", "learning_rate", "num_steps", "log_every", "train_W", "track", "dtype", "device",
                          "progress"]),
    (encoder.simulate, ["runs", "hidden", "skip", "learning_rate", "num_steps", "log_every", "track", "init", "dtype",
                        "device", "progress"]),
    (paper2.make_data, ["n", "d", "signal_norm", "noise_ratio", "seed", "split", "u"]),
])
def test_signatures_show_the_real_keywords(fn, names):
    parameters = inspect.signature(fn).parameters
    assert list(parameters) == names
    assert all(p.kind != p.VAR_KEYWORD for p in parameters.values())


@pytest.mark.parametrize("fn", [data.make_run, data.make_train_test, data.make_data])
def test_data_defaults_are_the_grid_defaults(fn):
    """The keywords are written out in each signature (for `help`): each default must stay the grid kernels'."""
    parameters = inspect.signature(fn).parameters
    assert parameters["noise_ratio"].default is inspect.Parameter.empty
    keywords = {name: p.default for name, p in parameters.items() if p.default is not inspect.Parameter.empty}
    assert keywords  # the data keywords, written out
    for name, value in data.DATA_DEFAULTS.items():
        if name in keywords:
            assert keywords[name] == value, name


def test_one_run_where_a_list_goes(run):
    one_line_type_error(lambda: synthetic.simulate(run, learning_rate=0.1, num_steps=2),
                        "runs must be a list of Run", "make_run", "got one Run", "pass [run]")
    one_line_type_error(lambda: encoder.simulate(run, hidden=4, num_steps=2), "runs must be a list of Run",
                        "pass [run]")


def test_a_list_of_other_things(run):
    one_line_type_error(lambda: synthetic.simulate([{"d": D}], learning_rate=0.1, num_steps=2),
                        "list of Run", "item 0 is a dict")
    one_line_type_error(lambda: paper2.simulate([run]), "list of Run", "item 0 is a benign.data.Run")
    one_line_type_error(lambda: encoder.simulate([run], hidden=4, num_steps=2, init={}), "init must be a list of dict",
                        "pass [params]")


@pytest.mark.parametrize("simulate", [
    lambda run, **kw: synthetic.simulate([run], learning_rate=0.1, num_steps=2, **kw),
    lambda run, **kw: encoder.simulate([run], hidden=4, num_steps=2, **kw),
], ids=["synthetic", "encoder"])
def test_track_is_a_list_of_sample_indices(run, simulate):
    for track in ("everything", 3, [0.5]):
        one_line_type_error(lambda: simulate(run, track=track), f"track = {track!r}",
                            "list of training-sample indices", "[0, 7]")
    with pytest.raises(ParameterError, match=r"track = \[9\] is not allowed"):
        simulate(run, track=[9])
    assert simulate(run, track=(1, 0)).info["track"] == [1, 0]


@pytest.mark.parametrize("call,flag", [
    (lambda run: synthetic.simulate([run], learning_rate=0.1, num_steps=2, train_W="no"), "train_W = 'no'"),
    (lambda run: synthetic.simulate([run], learning_rate=0.1, num_steps=2, progress=1), "progress = 1"),
    (lambda run: encoder.simulate([run], hidden=4, num_steps=2, skip="yes"), "skip = 'yes'"),
    (lambda run: data.make_run(D, MU, noise_ratio=0.2, authors_test_seed="no"), "authors_test_seed = 'no'"),
])
def test_flags_are_bools(run, call, flag):
    one_line_type_error(lambda: call(run), flag, "True or False")


def test_import_benign_is_light_and_reaches_every_module():
    code = ("import sys, benign; assert 'torch' not in sys.modules, 'torch imported'; "
            "assert not [m for m in sys.modules if m.startswith('benign.')]; "
            "s = benign.synthetic; assert 'torch' in sys.modules and s.simulate; "
            "from benign import paper2; print(sorted(dir(benign)))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "'synthetic'" in done.stdout and "'paper2_edge'" in done.stdout


def test_the_package_lists_every_module_once_with_a_line_each():
    modules = sorted(m.name for m in pkgutil.iter_modules(benign.__path__))
    assert sorted(benign.__all__) == modules
    lines = [line.split() for line in benign.__doc__.splitlines() if line.startswith("    ")]
    assert sorted(words[0] for words in lines) == modules and all(len(words) > 2 for words in lines)
    with pytest.raises(AttributeError, match="no attribute 'synthetics'"):
        benign.synthetics
