"""Paper 1's one-layer Transformer encoder (appendix, Figures 6 and 7): many runs trained at once, exactly.

The literal module is `benign.models.OneLayerEncoder`. Its output reads only the [CLS] position, so the trainer
computes only what reaches it, with the products reassociated (same function, same gradients):
    q = W_q ĉ,  logits_j = (W_kᵀ q)·x̂_j / √d,  out = W_v (Σ_j a_j x̂_j),   x̂ = LN(x), ĉ = LN([CLS])
— two d×d matrix-vector products and one d×d product with n columns, instead of three with n(T+1) columns, and
the MLP on n rows instead of n(T+1). `torch.func` turns this one-run function into a batched program: `grad`
differentiates it and `vmap` maps it over runs whose parameters and data are stacked along a leading axis. Runs
share n, T and d; every run's initialisation is drawn from its own seed, so it is the same whether trained alone
or in a batch, unless it is given (`simulate(init=…)`: the authors' initial weights, say).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field

import pandas as pd
import torch
from torch.func import grad_and_value, vmap
from torch.nn.functional import gelu, layer_norm, softplus

from . import models, sweep, tables, thresholds
from .checks import ParameterError, check_all, check_flags, check_indices, check_list_of, keywords
from .data import (DATA_DEFAULTS, DATA_SHARED, Run, balanced_labels, clean_test_stream, gaussian_noise, noise_mask,
                   observed_labels, signal_pattern, token_types)
from .device import resolve_device, resolve_dtype, runs_that_fit, side_by_side, side_parts, with_cpu_threads
from .progress import iterate


def initial_parameters(d: int, hidden: int, seed: int) -> dict[str, torch.Tensor]:
    """The encoder's initial parameters, named as in `OneLayerEncoder.state_dict()` (float64, CPU).

    PyTorch's defaults, seeded: [CLS] ~ N(0, I); every Linear weight and bias ~ U(−1/√fan_in, 1/√fan_in)
    (kaiming_uniform_(a=√5)); LayerNorm weight 1, bias 0. Drawn from one generator in a fixed order.
    """
    check_all(d=d, hidden=hidden, seed=seed)
    gen = torch.Generator().manual_seed(seed)

    def uniform(*shape, fan_in):
        bound = 1 / math.sqrt(fan_in)
        return torch.empty(*shape, dtype=torch.float64).uniform_(-bound, bound, generator=gen)

    ones, zeros = torch.ones(d, dtype=torch.float64), torch.zeros(d, dtype=torch.float64)
    params = {"cls_token": torch.randn(d, generator=gen, dtype=torch.float64),
              "to_qkv.weight": uniform(3 * d, d, fan_in=d),
              "mlp_in.weight": uniform(hidden, d, fan_in=d), "mlp_in.bias": uniform(hidden, fan_in=d),
              "mlp_out.weight": uniform(d, hidden, fan_in=hidden), "mlp_out.bias": uniform(d, fan_in=hidden),
              "head.weight": uniform(1, d, fan_in=d), "head.bias": uniform(1, fan_in=d)}
    for norm in ("attn_norm", "mlp_norm", "norm"):
        params[f"{norm}.weight"], params[f"{norm}.bias"] = ones.clone(), zeros.clone()
    return params


def checked_init(init: list[dict], runs: int, d: int, hidden: int) -> list[dict]:
    """Given initialisations, one per run, each named and shaped as `initial_parameters` draws them."""
    if len(init) != runs:
        raise ParameterError(f"init has {len(init)} parameter sets for {runs} runs: give one per run")
    with torch.device("meta"):
        shapes = {k: tuple(v.shape) for k, v in models.OneLayerEncoder(d, hidden).state_dict().items()}
    for r, params in enumerate(init):
        for name in sorted(set(shapes) | set(params)):
            if name not in shapes or name not in params or tuple(params[name].shape) != shapes[name]:
                need = ("is not one of the encoder's" if name not in shapes else "is missing" if name not in params
                        else f"has shape {shapes[name]} here, not {tuple(params[name].shape)}")
                raise ParameterError(f"init[{r}] does not fit d = {d}, hidden = {hidden}: {name} {need}")
    return init


def reduced(d: int, signal_norm: float, hidden: int, scale: int) -> tuple[int, float, int]:
    """A setting shrunk for a CPU: d and the MLP width divided by `scale`, ‖μ‖ by scale^{1/4}.

    This keeps ‖μ‖/d^{1/4}, i.e. SNR relative to the harmful boundary SNR ≍ d^{-1/4}, and raises n·SNR² by
    √scale. (Keeping the SNR itself instead turned the balanced setting harmful at d = 200.) `scale` = 1 is the
    setting itself.
    """
    check_all(d=d, signal_norm=signal_norm, hidden=hidden, scale=scale)
    return max(3, round(d / scale)), round(signal_norm / scale ** 0.25, 6), max(1, round(hidden / scale))


def cls_forward(params: dict, X: torch.Tensor, skip: bool = True) -> tuple[torch.Tensor, torch.Tensor]:
    """One run's outputs f (n,) and [CLS] attention on the input tokens (n, T), computing only the [CLS] path."""
    n, _, d = X.shape
    c_hat = layer_norm(params["cls_token"], (d,), params["attn_norm.weight"], params["attn_norm.bias"])
    X_hat = layer_norm(X, (d,), params["attn_norm.weight"], params["attn_norm.bias"])
    W_q, W_k, W_v = params["to_qkv.weight"].chunk(3, dim=0)
    key_query = (W_q @ c_hat) @ W_k * d ** -0.5  # W_kᵀ q / √d
    logits = torch.cat([(c_hat @ key_query).expand(n, 1), X_hat @ key_query], dim=1)
    attention = torch.softmax(logits, dim=-1)  # (n, T + 1): the [CLS] row over [CLS] and the T input tokens
    mixed = attention[:, :1] * c_hat + torch.einsum("nt,ntd->nd", attention[:, 1:], X_hat)
    out = mixed @ W_v.T
    if skip:
        h = out + params["cls_token"]
        h = h + _mlp(params, h)
    else:
        h = _mlp(params, out)
    h = layer_norm(h, (d,), params["norm.weight"], params["norm.bias"])
    return h @ params["head.weight"][0] + params["head.bias"][0], attention[:, 1:]


def _mlp(params, h):
    d = h.shape[-1]
    h = layer_norm(h, (d,), params["mlp_norm.weight"], params["mlp_norm.bias"])
    return gelu(h @ params["mlp_in.weight"].T + params["mlp_in.bias"]) @ params["mlp_out.weight"].T \
        + params["mlp_out.bias"]


def training_loss(params, X, y, skip):
    """The mean logistic loss of one run, with its outputs and [CLS] attention (for `grad_and_value`)."""
    f, attention = cls_forward(params, X, skip)
    return softplus(-y * f).mean(), (f, attention)


def _margins_stats(f, y):
    """Mean logistic loss and accuracy (float64 where the device has it, so 0.55 stays 0.55)."""
    margin = y * f
    exact = torch.float32 if f.device.type == "mps" else torch.float64
    return softplus(-margin).mean(-1).to(exact), (margin > 0).to(exact).mean(-1)


def descend(params, X, y, *, skip, learning_rate, num_steps, evaluate_at, evaluate, keep_scores, progress=False):
    """Full-batch SGD on every parameter of R runs at once (`params` and X, y stacked along a leading run axis,
    updated in place). Train loss, accuracy and [CLS] attention come from the forward pass of each step (before its
    update) and one more pass after the last update; `evaluate(params)` runs at the steps in `evaluate_at`.

    Returns loss and accuracy (S+1, R), the attention of every step (S+1, R, n, T) or of the last (R, n, T), and
    the evaluations in step order.
    """
    step_fn = vmap(grad_and_value(training_loss, has_aux=True), in_dims=(0, 0, 0, None))
    forward = vmap(cls_forward, in_dims=(0, 0, None))
    R, n, T, _ = X.shape
    loss = torch.empty(num_steps + 1, R, dtype=torch.float32 if X.device.type == "mps" else torch.float64,
                       device=X.device)
    acc = torch.empty_like(loss)
    scores = torch.empty(num_steps + 1 if keep_scores else 1, R, n, T, dtype=X.dtype, device=X.device)
    evaluations = []
    steps = iterate(range(num_steps + 1), num_steps + 1, "encoder SGD", progress)
    for step in steps:
        if step in evaluate_at:
            with torch.no_grad():
                evaluations.append(evaluate(params))
        if step == num_steps:
            with torch.no_grad():
                f, attention = forward(params, X, skip)
        else:
            grads, (_, (f, attention)) = step_fn(params, X, y, skip)
            with torch.no_grad():
                for name, g in grads.items():
                    params[name].sub_(g, alpha=learning_rate)
        loss[step], acc[step] = _margins_stats(f.detach(), y)
        scores[step if keep_scores else 0] = attention.detach()
    return loss, acc, scores if keep_scores else scores[0], evaluations


def descend_side_by_side(params, X, y, test_sets, *, skip, learning_rate, num_steps, evaluate_at, progress):
    """`descend` with every score kept, the runs split into groups (`device.side_parts`) trained side by side on one
    torch thread each (`device.side_by_side`) and joined back in run order; the parameters are updated in place as
    `descend` does. Runs are independent, so this is the same computation."""
    R = len(X)
    parts = side_parts(R) if X.device.type == "cpu" else 1
    bounds = [(k * R // parts, (k + 1) * R // parts) for k in range(parts)]

    def one(k):
        a, b = bounds[k]
        own = {name: value[a:b].clone() for name, value in params.items()}
        out = descend(own, X[a:b], y[a:b], skip=skip, learning_rate=learning_rate, num_steps=num_steps,
                      evaluate_at=evaluate_at, evaluate=_test_evaluator(test_sets[a:b], skip), keep_scores=True,
                      progress=progress and k == 0)
        return own, out

    done = side_by_side(one, list(range(parts)))
    for (a, b), (own, _) in zip(bounds, done):
        for name, value in own.items():
            params[name][a:b] = value
    outs = [out for _, out in done]
    loss, acc, scores = (torch.cat([out[i] for out in outs], dim=1) for i in range(3))
    evaluations = [torch.cat(at_step, dim=1) for at_step in zip(*(out[3] for out in outs))]
    return loss, acc, scores, evaluations


def _stack_parameters(inits: list[dict], device, dtype) -> dict:
    """Parameters of R runs stacked along a new leading axis, on `device` in `dtype`."""
    return {name: torch.stack([p[name].to(device, dtype) for p in inits]) for name in inits[0]}


def repeat_parameters(init: dict, runs: int, device, dtype) -> dict:
    """One initialisation for R runs (a grid chunk), copied on the device."""
    return {name: value.to(device, dtype).expand(runs, *value.shape).clone() for name, value in init.items()}


def _test_evaluator(test_sets, skip):
    """evaluate(params) → test loss and accuracy (R,), one run at a time (test sets are large)."""

    def evaluate(params):
        out = []
        for r, (Xt, yt) in enumerate(test_sets):
            f, _ = cls_forward({k: v[r] for k, v in params.items()}, Xt, skip)
            out.append(torch.stack(_margins_stats(f, yt)))
        return torch.stack(out, dim=1)  # (2, R)

    return evaluate


@dataclass
class EncoderSimulation:
    """The result of `simulate`: tidy tables (as `synthetic.simulate` writes them) and the final parameters."""

    history: pd.DataFrame  # one row per run × step; test metrics at the logged steps
    scores: pd.DataFrame  # one row per run × step × tracked sample × token: the [CLS] attention on that token
    final: pd.DataFrame  # one row per run: settings and final metrics
    params: dict  # final parameters, stacked over runs (CPU)
    info: dict = field(default_factory=dict)


@keywords
@with_cpu_threads
def simulate(runs: list[Run], *, hidden: int = 2000, skip: bool = True, learning_rate: float = 5e-3,
             num_steps: int = 1000, log_every: int = 10, track=None, init: list[dict] | None = None,
             dtype: str = "float32", device: str = "auto", progress: bool = False) -> EncoderSimulation:
    """Train the encoder on each run's training set from its own seeded initialisation, all runs at once.

    `runs` is a list of `benign.data.Run`, one per setting; `benign.data.make_run` makes one (W_init is unused here):

        run = data.make_run(d=200, signal_norm=5.0, noise_ratio=0.2, seed=0)
        sim = encoder.simulate([run], hidden=200, num_steps=300)

    All runs must share n, T and d. hidden: the MLP width; skip: residual connections; learning_rate: the SGD
    step size; num_steps: full-batch steps; log_every: test metrics every that many steps and at the last step
    (train metrics every step); `track`: the training samples whose attention rows are kept (default: the first
    clean and the first noisy sample). `init`: the initial parameters of each run instead (one dict per run,
    named and shaped as `initial_parameters` gives them; `benign.authors.encoder_parameters` renames the authors'
    module's). dtype, device and progress as in `benign.synthetic.simulate`.

    Returns an `EncoderSimulation`: history, scores (the [CLS] attention on each input token) and final, with the
    columns of `benign.synthetic.Simulation`'s tables; params, the final parameters stacked over runs (CPU); and
    info (device, dtype, wall_s, hidden, skip, learning_rate, num_steps, log_every, track).
    """
    runs = check_list_of("runs", runs, Run, "data.make_run makes one", "run")
    check_all(hidden=hidden, learning_rate=learning_rate, num_steps=num_steps, log_every=log_every)
    check_flags(skip=skip, progress=progress)
    if init is not None:
        init = check_list_of("init", init, dict, "initial_parameters makes one", "params")
    if not runs:
        raise ParameterError("runs is empty: give at least one Run")
    shape = runs[0].train.X.shape[1:]
    if any(r.train.X.shape[1:] != shape or len(r.train.X) != len(runs[0].train.X) for r in runs):
        raise ParameterError("runs differ in n, T or d: batch only runs with the same n, T and d")
    if track is not None:
        track = check_indices("track", track, len(runs[0].train.X), "training-sample")
    dev = resolve_device(device)
    dt = resolve_dtype(dtype, dev)
    started = time.perf_counter()
    _, d = shape
    if init is None:
        drawn = {seed: initial_parameters(d, hidden, seed) for seed in {r.train.params["seed"] for r in runs}}
        init = [drawn[r.train.params["seed"]] for r in runs]
    params = _stack_parameters(checked_init(init, len(runs), d, hidden), dev, dt)
    X = torch.stack([r.train.X for r in runs]).to(dev, dt)
    y = torch.stack([r.train.y for r in runs]).to(dev, dt)
    noisy = torch.stack([r.train.noisy for r in runs]).to(dev)
    track = tables.default_track(noisy[0]) if track is None else track
    test_sets = [(r.test.X.to(dev, dt), r.test.y.to(dev, dt)) for r in runs if r.test is not None]
    log_steps = sorted(set(range(0, num_steps + 1, log_every)) | {num_steps})
    evaluate_at = set(log_steps) if len(test_sets) == len(runs) else set()
    loss, acc, scores, evaluations = descend_side_by_side(params, X, y, test_sets, skip=skip,
                                                          learning_rate=float(learning_rate), num_steps=num_steps,
                                                          evaluate_at=evaluate_at, progress=progress)
    test = torch.stack(evaluations).double().cpu() if evaluations else torch.full((len(log_steps), 2, len(runs)),
                                                                                 float("nan"), dtype=torch.float64)
    elapsed = time.perf_counter() - started
    labels = [r.label or f"run{i}" for i, r in enumerate(runs)]
    types = runs[0].train.token_type.to(dev)
    history = tables.history(labels, loss, acc, tables.type_means(scores, noisy, types), log_steps, test[:, 0],
                             test[:, 1])
    info = dict(device=str(dev), dtype=dtype, wall_s=elapsed, hidden=hidden, skip=skip, learning_rate=learning_rate,
                num_steps=num_steps, log_every=log_every, track=track)
    return EncoderSimulation(history, tables.scores(labels, scores[:, :, track], track, noisy),
                             tables.final(runs, labels, history, num_steps),
                             {k: v.detach().cpu() for k, v in params.items()}, info)


def noise_costs(final: pd.DataFrame, runs: list[Run], clean_runs: list[Run]) -> pd.DataFrame:
    """What the flipped labels cost each run: its final test accuracy against the same run on clean labels.

    `clean_runs[i]` is `runs[i]` made again with noise_ratio 0 (`make_run(…, noise_ratio=0.0)`, same seed): the
    same training and test inputs bit for bit, the same clean labels and test labels, the same seed (so `simulate`
    draws the same initialisation); only the observed training labels differ. Anything else raises. `final` holds
    both runs' final rows (`EncoderSimulation.final` of one or two simulations, concatenated).

    Returns one row per run: run, clean_run, test_acc, clean_test_acc, noise_cost = clean_test_acc − test_acc, and
    costly (noise_cost > `thresholds.HARM`).
    """
    def setting(run):  # everything but the labels' noise
        return {k: v for k, v in run.train.params.items() if k != "noise_ratio"}

    if len(runs) != len(clean_runs):
        raise ParameterError(f"{len(runs)} runs but {len(clean_runs)} clean runs: give one clean run per run")
    for run, clean in zip(runs, clean_runs):
        same = (setting(run) == setting(clean) and torch.equal(run.train.X, clean.train.X)
                and torch.equal(run.train.y_clean, clean.train.y_clean) and run.test is not None
                and clean.test is not None and torch.equal(run.test.X, clean.test.X)
                and torch.equal(run.test.y, clean.test.y))
        if not same:
            raise ParameterError(f"clean run {clean.label!r} is not run {run.label!r} on clean labels: make it with "
                                 "the same arguments and noise_ratio = 0.0")
        if clean.train.noisy.any():
            raise ParameterError(f"clean run {clean.label!r} has flipped labels: make it with noise_ratio = 0.0")
    acc = final.set_index("run").test_acc
    rows = pd.DataFrame({"run": [r.label for r in runs], "clean_run": [c.label for c in clean_runs]})
    rows["test_acc"] = acc.loc[rows.run].to_numpy(dtype=float)
    rows["clean_test_acc"] = acc.loc[rows.clean_run].to_numpy(dtype=float)
    rows["noise_cost"] = rows.clean_test_acc - rows.test_acc
    rows["costly"] = thresholds.beyond(rows.noise_cost, thresholds.HARM.value)
    return rows


GRID_SHARED = DATA_SHARED + ("hidden", "skip", "learning_rate", "num_steps", "dtype", "device")
GRID_DEFAULTS = dict(DATA_DEFAULTS, hidden=2000, skip=True, learning_rate=5e-3, num_steps=1000, dtype="float32",
                     device="auto")
# a grid chunk's peak device memory over its runs' parameter bytes: 3.4 and 3.5 measured on an H100 at d = 1250 and
# 2500 (benchmarks/fig7_paper.py: parameters, their gradients, the step's temporaries), with room
MEMORY_PER_PARAMETER = 4


@with_cpu_threads
def grid_chunk(points: list[dict]) -> list[dict]:
    """Final metrics for encoder runs that share d and seed, differing in ‖μ‖ and η: one batched program.

    The runs share their noise draws (train and test) and their initialisation, exactly as `make_run` and
    `simulate` draw them for that seed. Each row: the point, final train/test loss and accuracy, and the final
    mean [CLS] attention on the relevant token of clean and of noisy training samples.

    On a CUDA device the runs go through in as few batches as its free memory allows (`device.runs_that_fit`, at
    `MEMORY_PER_PARAMETER` times their parameters' bytes): the paper profile's 78 runs at d = 5000 need about 100 GiB
    in one batch. A batch the device cannot hold after all (a sweep's other workers share it) is halved and tried
    again. Each run's numbers do not depend on its batch, up to rounding.
    """
    points, shared = sweep.chunk_points(points, GRID_DEFAULTS, GRID_SHARED)
    dev = resolve_device(shared["device"])
    dt = resolve_dtype(shared["dtype"], dev)
    per_run = MEMORY_PER_PARAMETER * parameter_count(shared["d"], shared["hidden"]) * dt.itemsize
    size, rows = runs_that_fit(per_run, dev, len(points)), []
    while len(rows) < len(points):
        try:
            rows += _grid_rows(points[len(rows):len(rows) + size], shared, dev, dt)
        except torch.cuda.OutOfMemoryError:
            if size == 1:
                raise
            size //= 2
    return rows


def parameter_count(d: int, hidden: int) -> int:
    """The encoder's parameters per run (`initial_parameters`): query, key and value (d × d each), the MLP
    (d × hidden and hidden × d), the biases, layer norms, [CLS] token and head."""
    with torch.device("meta"):
        return sum(v.numel() for v in models.OneLayerEncoder(d, hidden).state_dict().values())


def _grid_rows(points: list[dict], shared: dict, dev: torch.device, dt: torch.dtype) -> list[dict]:
    """`grid_chunk`'s rows of one batch of its runs."""
    d, seed, n, T = shared["d"], shared["seed"], shared["n"], shared["T"]
    types = token_types(T, shared["n_relevant"], shared["n_weak"])
    mu = torch.tensor([float(p["signal_norm"]) for p in points], dtype=dt, device=dev)

    def inputs(n_samples, stream):  # X = ε + ‖μ‖·(signal pattern on e₁, e₂), one tensor per run
        E = gaussian_noise(n_samples, T, d, stream, shared["sigma"]).to(dev, dt)
        P = signal_pattern(balanced_labels(n_samples), types, shared["rho"]).to(dev, dt)
        return lambda r: torch.cat([E[..., :2] + mu[r] * P, E[..., 2:]], dim=-1)

    train_inputs = inputs(n, seed)
    X = torch.stack([train_inputs(r) for r in range(len(points))])
    noisy = torch.stack([noise_mask(n, p["noise_ratio"], shared["label_noise"], seed) for p in points]).to(dev)
    y = observed_labels(noisy).to(dev, dt)
    test_inputs = inputs(shared["n_test"], clean_test_stream(seed, shared["authors_test_seed"]))
    y_test = balanced_labels(shared["n_test"]).to(dev, dt)

    def evaluate(params):
        out = []
        for r in range(len(points)):
            f, _ = cls_forward({k: v[r] for k, v in params.items()}, test_inputs(r), shared["skip"])
            out.append(torch.stack(_margins_stats(f, y_test)))
        return torch.stack(out, dim=1)

    params = repeat_parameters(initial_parameters(d, shared["hidden"], seed), len(points), dev, dt)
    loss, acc, scores, (test,) = descend(params, X, y, skip=shared["skip"],
                                          learning_rate=float(shared["learning_rate"]),
                                          num_steps=shared["num_steps"], evaluate_at={shared["num_steps"]},
                                          evaluate=evaluate, keep_scores=False)
    relevant = scores[..., types == 0].sum(-1)  # (R, n)
    clean = (~noisy).to(dt)
    metrics = {"train_loss": loss[-1], "train_acc": acc[-1], "test_loss": test[0], "test_acc": test[1],
               "attention_clean_relevant": (relevant * clean).sum(-1) / clean.sum(-1),
               "attention_noisy_relevant": (relevant * noisy).sum(-1) / noisy.sum(-1)}
    metrics = {k: v.double().cpu().tolist() for k, v in metrics.items()}
    return [{**p, **{k: v[r] for k, v in metrics.items()}} for r, p in enumerate(points)]
