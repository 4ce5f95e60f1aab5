"""Grids of runs: the batched grid kernel against single runs, executors, the cache, resume, and bad specs."""

import functools
import json
import warnings
from concurrent.futures import ThreadPoolExecutor

import pandas as pd
import pytest

from benign import data, sweep, synthetic, words
from benign.checks import ParameterError

SMALL = dict(n=9, n_test=40, T=8, learning_rate=0.5, num_steps=120, dtype="float64", device="cpu")
METRICS = ["train_loss", "train_acc", "test_loss", "test_acc", "frak_clean", "frak_noisy"]


def assert_same_results(a: pd.DataFrame, b: pd.DataFrame) -> None:
    """Two computations of the same grid: equal to float64 rounding. Another thread count (a dask worker runs one
    thread) or another CPU's BLAS kernels may round differently; 120 steps amplify a rounding difference of 1e-16
    far less than to 1e-10. Only cached copies are compared bit for bit."""
    pd.testing.assert_frame_equal(a, b, check_exact=False, rtol=1e-10, atol=1e-13)


def small_grid():
    return sweep.grid(d=[40, 70], seed=[3, 4], signal_norm=[2.0, 5.0], noise_ratio=[0.0, 0.3], **SMALL)


def test_grid_chunk_equals_the_same_runs_one_by_one():
    points = [p for p in small_grid() if p["d"] == 40 and p["seed"] == 3]
    rows = synthetic.grid_chunk(points)
    for point, row in zip(points, rows):
        run = data.make_run(40, point["signal_norm"], seed=3, n=9, n_test=40, noise_ratio=point["noise_ratio"])
        sim = synthetic.simulate([run], learning_rate=0.5, num_steps=120, log_every=120, dtype="float64",
                                 device="cpu")
        final = sim.final.iloc[0]
        for key in ("train_loss", "test_loss", "train_acc", "test_acc"):
            assert row[key] == pytest.approx(final[key], rel=1e-11, abs=1e-14), key
        frak, noisy = sim.frak_s[0], run.train.noisy
        assert row["frak_clean"] == pytest.approx(float(frak[~noisy].sum()), rel=1e-11)
        assert row["frak_noisy"] == pytest.approx(float(frak[noisy].sum()), rel=1e-11, abs=1e-14)


def test_grid_chunk_with_identity_W_and_only_p_trained_equals_single_runs():
    points = sweep.grid(d=50, seed=1, signal_norm=[3.0, 6.0], noise_ratio=0.3, n_relevant=2, n_weak=2,
                        W_init="identity", train_W=False, **SMALL)
    rows = synthetic.grid_chunk(points)
    for point, row in zip(points, rows):
        run = data.make_run(50, point["signal_norm"], seed=1, n=9, n_test=40, noise_ratio=0.3, n_relevant=2,
                                 n_weak=2, W_init="identity")
        final = synthetic.simulate([run], learning_rate=0.5, num_steps=120, log_every=120, dtype="float64",
                                   device="cpu", train_W=False).final.iloc[0]
        assert row["test_loss"] == pytest.approx(final["test_loss"], rel=1e-11)
        assert row["train_loss"] == pytest.approx(final["train_loss"], rel=1e-11)


def test_sweep_in_process_equals_a_thread_pool():
    points = small_grid()
    here = sweep.run(synthetic.grid_chunk, points)
    assert len(here) == len(points) == 16
    with ThreadPoolExecutor(2) as pool:
        threaded = sweep.run(synthetic.grid_chunk, points, executor=pool)
    assert_same_results(here, threaded)


def test_sweep_on_a_dask_local_cluster_equals_in_process():
    distributed = pytest.importorskip("distributed")
    points = small_grid()
    here = sweep.run(synthetic.grid_chunk, points)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster:
        with distributed.Client(cluster) as client:
            remote = sweep.run(synthetic.grid_chunk, points, executor=client.get_executor())
    assert_same_results(here, remote)


def test_sweep_resumes_after_an_interruption(tmp_path):
    points = small_grid()
    calls = []

    @functools.wraps(synthetic.grid_chunk)  # same name, so the same cache keys
    def interrupted(chunk):
        if len(calls) == 2:
            raise KeyboardInterrupt
        calls.append(chunk[0]["d"])
        return synthetic.grid_chunk(chunk)

    with pytest.raises(KeyboardInterrupt):
        sweep.run(interrupted, points, cache=tmp_path)
    finished = sorted(tmp_path.glob("*.json"))
    assert len(finished) == 2 and not list(tmp_path.glob(".*"))  # two whole chunks, no temporary files
    stamps = {p: p.stat().st_mtime_ns for p in finished}

    @functools.wraps(synthetic.grid_chunk)
    def counting(chunk):
        calls.append(chunk[0]["d"])
        return synthetic.grid_chunk(chunk)

    calls.clear()
    cached = {p: json.loads(p.read_text())["rows"] for p in finished}
    resumed = sweep.run(counting, points, cache=tmp_path)
    assert len(calls) == 2  # only the two unfinished chunks (of four) were computed
    assert {p: p.stat().st_mtime_ns for p in finished} == stamps
    served = resumed.to_dict(orient="records")
    for rows in cached.values():  # the finished chunks are served as they were stored, bit for bit
        assert all(row in served for row in rows)
    assert_same_results(resumed, sweep.run(synthetic.grid_chunk, points))


@pytest.mark.parametrize("damage", ["truncate", "alter", "garbage"])
def test_a_corrupt_chunk_is_recomputed_not_used(tmp_path, damage):
    points = small_grid()
    first = sweep.run(synthetic.grid_chunk, points, cache=tmp_path)
    victim = sorted(tmp_path.glob("*.json"))[0]
    text = victim.read_text()
    if damage == "truncate":
        victim.write_text(text[: len(text) // 2])
    elif damage == "alter":
        record = json.loads(text)
        record["rows"][0]["test_acc"] = 0.123
        victim.write_text(json.dumps(record))
    else:
        victim.write_bytes(b"\x00\xff not json")
    with pytest.warns(UserWarning, match="corrupt: recomputing"):
        again = sweep.run(synthetic.grid_chunk, points, cache=tmp_path)
    assert_same_results(first, again)
    assert_same_results(pd.DataFrame(json.loads(victim.read_text())["rows"]), pd.DataFrame(json.loads(text)["rows"]))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the rewritten chunk is whole again
        third = sweep.run(synthetic.grid_chunk, points, cache=tmp_path)
    assert third.attrs["computed_chunks"] == 0
    pd.testing.assert_frame_equal(third, again, check_exact=True)  # cached copies


def test_cache_key_depends_on_every_parameter():
    base = small_grid()[:2]
    changed = [{**p, "learning_rate": 0.25} for p in base]
    assert sweep.chunk_key(synthetic.grid_chunk, base) != sweep.chunk_key(synthetic.grid_chunk, changed)
    assert sweep.chunk_key(synthetic.grid_chunk, base) == sweep.chunk_key(synthetic.grid_chunk, [dict(p) for p in base])


@pytest.mark.parametrize("call,message", [
    (lambda: sweep.arange("d_grid", [5000, 250, 125]), r"d_grid = \[5000, 250, 125\] is not allowed: d_grid must be"),
    (lambda: sweep.arange("d_grid", [250, 5000]), "must be \\[start, stop, step\\]"),
    (lambda: sweep.arange("d_grid", [250, 5000, 0]), "step > 0"),
    (lambda: sweep.grid(d=[], signal_norm=[1.0]), "grid axis 'd' is empty"),
    (lambda: sweep.grid(d=[0, 10], signal_norm=[1.0]), "d = 0 is not allowed"),
    (lambda: sweep.grid(d=[10], signal_norm=[-1.0]), "signal_norm = -1.0 is not allowed"),
    (lambda: sweep.run(synthetic.grid_chunk, [{"d": 10, "signal_norm": 1.0}]), "grid points lack seed"),
    (lambda: synthetic.grid_chunk([{"d": 10, "seed": 0, "signal_norm": 1.0, "lr": 1}]), "unknown parameter 'lr' for this grid kernel"),
    (lambda: synthetic.grid_chunk([{"d": 10, "seed": 0, "signal_norm": 1.0}, {"d": 20, "seed": 0, "signal_norm": 1.0}]),
     "a grid chunk must share d"),
])
def test_bad_grid_specifications_give_clear_errors(call, message):
    with pytest.raises(ParameterError, match=message) as err:
        call()
    assert "\n" not in str(err.value)


def test_arange_is_inclusive():
    assert sweep.arange("d", [250, 5000, 125])[:3] == [250, 375, 500] and len(sweep.arange("d", [250, 5000, 125])) == 39
    assert sweep.arange("s", [5.0, 100.0, 2.5])[-1] == 100.0 and len(sweep.arange("s", [5.0, 100.0, 2.5])) == 39


def test_regimes_land_where_the_paper_puts_them_on_a_coarse_grid():
    """n = 20, η = 0.2, 1000 steps at the paper's scale: harmful at large d / small ‖μ‖, benign in between,
    no overfitting at small d / large ‖μ‖."""
    points = sweep.grid(d=[1000, 2000, 4500], seed=42, signal_norm=[5.0, 20.0, 80.0], n_test=1000, device="cpu")
    cells = sweep.run(synthetic.grid_chunk, points).set_index(["d", "signal_norm"])
    harmful, benign, not_overfitting = cells.loc[(4500, 5.0)], cells.loc[(2000, 20.0)], cells.loc[(1000, 80.0)]
    assert harmful.train_acc == 1.0 and harmful.test_acc < 0.95
    assert benign.train_acc == 1.0 and benign.test_acc >= 0.98
    assert not_overfitting.train_acc < 1.0 and not_overfitting.test_acc >= 0.99
    for d in (1000, 2000, 4500):  # more signal never hurts the test loss
        losses = cells.loc[d].test_loss
        assert losses.is_monotonic_decreasing


class _Job:
    """A submitit-like job: done() and result(), not a concurrent.futures.Future."""

    def __init__(self, fn, arg):
        self._value, self._polls = fn(arg), 0

    def done(self):
        self._polls += 1
        return self._polls > 1

    def result(self):
        return self._value


class _JobExecutor:
    def submit(self, fn, arg):
        return _Job(fn, arg)


def test_sweep_accepts_submitit_style_executors():
    points = small_grid()
    assert_same_results(sweep.run(synthetic.grid_chunk, points, executor=_JobExecutor()),
                        sweep.run(synthetic.grid_chunk, points))


def test_maps_lay_a_sweep_table_out_as_grids():
    cells = sweep.run(synthetic.grid_chunk, [p for p in small_grid() if p["seed"] == 3 and p["noise_ratio"] == 0.3])
    d_values, mu_values, maps = sweep.maps(cells, ("test_loss", "train_acc"))
    assert d_values == [40, 70] and mu_values == [2.0, 5.0]
    for i, d in enumerate(d_values):
        for j, mu in enumerate(mu_values):
            row = cells[(cells.d == d) & (cells.signal_norm == mu)].iloc[0]
            assert maps["test_loss"][i, j] == row.test_loss and maps["train_acc"][i, j] == row.train_acc
    assert words.sweep_said(cells).startswith("4 runs in 2 chunks, all computed in this build, in ")


def test_the_cache_recomputes_a_changed_kernel_and_reuses_an_unchanged_one(tmp_path, monkeypatch):
    """The cache key holds the source of the kernel's module and of every module it imports, directly or not: a
    change two imports away is recomputed, never served from the cache."""
    import importlib
    import sys

    package = tmp_path / "toykernels"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "kernel.py").write_text("from . import middle\n\n\ndef chunk(points):\n"
                                       "    return [{**p, 'value': p['d'] * middle.factor()} for p in points]\n")
    (package / "middle.py").write_text("from .leaf import base\n\n\ndef factor():\n    return base() + 1\n")
    (package / "leaf.py").write_text("def base():\n    return 1\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    kernel = importlib.import_module("toykernels.kernel")
    points = sweep.grid(d=[3, 4], seed=[0, 1])
    first = sweep.run(kernel.chunk, points, cache=tmp_path / "cache")
    assert first.attrs["computed_chunks"] == 4 and first.value.tolist() == [6, 6, 8, 8]
    again = sweep.run(kernel.chunk, points, cache=tmp_path / "cache")
    assert again.attrs["computed_chunks"] == 0 and again.value.tolist() == [6, 6, 8, 8]

    (package / "leaf.py").write_text("def base():\n    return 2\n")  # two imports away from the kernel
    for name in ("toykernels.leaf", "toykernels.middle", "toykernels.kernel"):
        importlib.reload(sys.modules[name])
    changed = sweep.run(kernel.chunk, points, cache=tmp_path / "cache")
    assert changed.attrs["computed_chunks"] == 4 and changed.value.tolist() == [9, 9, 12, 12]
    for name in [m for m in sys.modules if m.startswith("toykernels")]:
        monkeypatch.delitem(sys.modules, name)


def test_one_cache_root_holds_every_kind_and_reads_damage_as_missing(tmp_path, monkeypatch):
    """`paths.cache_dir` is the one root ($BENIGN_CACHE moves it) of the three caches — sweep chunks, fine-tuning
    runs, made backbones — and `records.read_cached` reads a missing or damaged entry as None, never a crash."""
    from benign import paths, records
    from benign.realdata import image_backbone

    monkeypatch.setenv(paths.CACHE_ENV, str(tmp_path))
    assert paths.cache_dir() == tmp_path and paths.cache_dir("sweeps") == tmp_path / "sweeps"
    assert image_backbone.folder_of(image_backbone.recipe()).parent == tmp_path / "backbones"
    key = records.cache_key({"a": 1, "b": [2, 3]})
    assert key == records.cache_key({"b": [2, 3], "a": 1}) != records.cache_key({"a": 1, "b": [3, 2]})
    assert records.read_cached(paths.cache_dir("finetune"), key) is None
    records.write_cached(paths.cache_dir("finetune"), key, {"x": 0.5})
    assert records.read_cached(tmp_path / "finetune", key) == {"x": 0.5}
    assert [p.name for p in (tmp_path / "finetune").iterdir()] == [f"{key}.json"]  # no temporary file left
    (tmp_path / "finetune" / f"{key}.json").write_text('{"x": 0.')
    assert records.read_cached(tmp_path / "finetune", key) is None
    points = sweep.grid(d=[40], seed=[3], signal_norm=[2.0], noise_ratio=[0.0], **SMALL)
    sweep.run(synthetic.grid_chunk, points, cache=paths.cache_dir("sweeps"))
    assert len(list((tmp_path / "sweeps").glob("*.json"))) == 1
