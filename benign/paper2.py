"""Paper 2 (Magen et al., "Benign Overfitting in Single-Head Attention"): two-token data and exact, fast GD.

Data. y ∈ {±1} uniform; an input X ∈ R^{2×d} holds the signal token μ_y and a noise token
ξ ~ N(0, I − μ₊μ₊ᵀ/ρ² − μ₋μ₋ᵀ/ρ²), in random order; ‖μ±‖ = ρ, μ₊ ⊥ μ₋; the observed label is −y with
probability η. SNR = ρ/√d.

Model. f(X) = vᵀXᵀ softmax(Xp), v = p = 0 at the start, GD on the logistic loss with step size β_t at step t.

Exact, fast training. Every gradient of v and p is a combination of training tokens, and the tokens are μ₊, μ₋
and ξ₁ … ξ_n. So v = a₊u₊ + a₋u₋ + Σⱼ a_ξⱼ ξⱼ and p = b₊u₊ + b₋u₋ + Σⱼ b_ξⱼ ξⱼ (u± = μ±/ρ), and as ξ ⊥ μ±,
    μ_c·v = ρ a_c,   ξᵢ·v = (N a_ξ)ᵢ   with N = ΞΞᵀ (n × n),
and the same for p. A GD step updates (a, b) with O(n²) work; only N (and the test cross Gram ΞₜₑₛₜΞᵀ) touch d.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field, replace

import numpy as np
import pandas as pd
import torch

from .checks import ParameterError, check, check_all, check_list_of, keywords
from .device import resolve_device, resolve_dtype, with_cpu_threads

TRAIN, TEST = 1, 2  # random streams of the two splits


@dataclass
class TwoTokenData:
    """One data set of paper 2 (float64, CPU). μ₊ = ρ u[0], μ₋ = ρ u[1]."""

    y: torch.Tensor  # (n,) observed labels ±1
    y_clean: torch.Tensor  # (n,) the class whose signal μ_y the input carries
    noisy: torch.Tensor  # (n,) bool, y != y_clean
    signal_first: torch.Tensor  # (n,) bool: the signal is token 0, else token 1
    xi: torch.Tensor  # (n, d) noise tokens
    u: torch.Tensor  # (2, d) orthonormal signal directions
    signal_norm: float  # ‖μ±‖
    params: dict = field(default_factory=dict)

    @property
    def mu(self) -> torch.Tensor:
        """(2, d): μ₊ and μ₋."""
        return self.signal_norm * self.u

    @property
    def signal_class(self) -> torch.Tensor:
        """(n,) index into `mu` of each input's signal: 0 for μ₊, 1 for μ₋."""
        return (self.y_clean < 0).long()

    def inputs(self) -> torch.Tensor:
        """X (n, 2, d) in token order."""
        signal = self.mu[self.signal_class]
        first = self.signal_first[:, None]
        return torch.stack([torch.where(first, signal, self.xi), torch.where(first, self.xi, signal)], dim=1)

    def with_signal_norm(self, signal_norm: float) -> "TwoTokenData":
        """The same draw with ‖μ±‖ = ρ = signal_norm (labels, order and noise unchanged: the noise does not depend
        on ρ)."""
        check("signal_norm", signal_norm)
        return replace(self, signal_norm=float(signal_norm), params={**self.params, "signal_norm": float(signal_norm)})

    def head(self, n: int) -> "TwoTokenData":
        """The first n inputs (views, no copy): what `make_data` draws for n with the same seed and split, ξ up to
        the rounding of its projection."""
        check("n", n)
        if n > len(self.y):
            raise ParameterError(f"n = {n} is not allowed here: the data hold {len(self.y)} inputs")
        return replace(self, y=self.y[:n], y_clean=self.y_clean[:n], noisy=self.noisy[:n],
                       signal_first=self.signal_first[:n], xi=self.xi[:n], params={**self.params, "n": n})


def signal_directions(d: int, seed: int) -> torch.Tensor:
    """u₊, u₋: two random orthonormal directions (2, d), seeded."""
    z = np.random.default_rng([seed, 0]).standard_normal((d, 2))
    q, _ = np.linalg.qr(z)
    return torch.from_numpy(q.T.copy())


def projected_noise(n: int, d: int, u: torch.Tensor, rng: np.random.Generator) -> torch.Tensor:
    """ξ = (I − uᵀu) z, z ~ N(0, I_d): N(0, I − μ₊μ₊ᵀ/ρ² − μ₋μ₋ᵀ/ρ²) without forming a d × d matrix."""
    z = torch.from_numpy(rng.standard_normal((n, d)))
    return z.addmm_(z @ u.T, u, alpha=-1)  # in place: no second n × d array


@keywords
def make_data(n: int, d: int, signal_norm: float, *, noise_ratio: float, seed: int = 0, split: int = TRAIN,
              u: torch.Tensor | None = None) -> TwoTokenData:
    """n inputs of paper 2 with ρ = `signal_norm` and each label flipped with probability η = `noise_ratio`
    (required; 0.0: clean labels), in [0, 1/2); `split` picks the random stream (TRAIN or TEST), `u` the signal
    directions (default: `signal_directions(d, seed)`).

    The random draws of row i (class, token order, flip and the Gaussian vector behind ξᵢ) depend only on
    (seed, split, i), so a larger n extends a smaller one: labels, order and flips exactly, ξᵢ up to the rounding
    of its projection (a product whose last bits may depend on n and the CPU)."""
    check_all(n=n, d=d, signal_norm=signal_norm, seed=seed)
    _check_noise_ratio(noise_ratio)
    u = signal_directions(d, seed) if u is None else u
    draws = np.random.default_rng([seed, split, 0]).random((n, 3))  # class, token order, flip
    y_clean = torch.from_numpy(np.where(draws[:, 0] < 0.5, 1.0, -1.0))
    noisy = torch.from_numpy(draws[:, 2] < noise_ratio)
    xi = projected_noise(n, d, u, np.random.default_rng([seed, split, 1]))
    params = dict(n=n, d=d, signal_norm=float(signal_norm), noise_ratio=noise_ratio, seed=seed, split=split)
    return TwoTokenData(torch.where(noisy, -y_clean, y_clean), y_clean, noisy, torch.from_numpy(draws[:, 1] < 0.5),
                        xi, u, float(signal_norm), params)


@keywords
def make_train_test(n: int, d: int, signal_norm: float, *, noise_ratio: float, n_test: int = 1000,
                    seed: int = 0) -> tuple[TwoTokenData, TwoTokenData]:
    """A training set of n inputs with labels flipped w.p. η = `noise_ratio` (required; 0.0: clean labels) and a
    clean test set of `n_test` inputs from its own streams, sharing μ±."""
    check("n_test", n_test)
    u = signal_directions(d, seed)
    return (make_data(n, d, signal_norm, noise_ratio=noise_ratio, seed=seed, split=TRAIN, u=u),
            make_data(n_test, d, signal_norm, noise_ratio=0.0, seed=seed, split=TEST, u=u))


@dataclass
class Run:
    """One GD run: data and the step sizes β₁, β₂, … (one per step)."""

    train: TwoTokenData
    test: TwoTokenData | None
    step_sizes: list
    label: str = ""


@dataclass
class Simulation:
    """The result of `simulate`."""

    history: pd.DataFrame  # one row per run × step (step 0 = v = p = 0)
    final: pd.DataFrame  # one row per run: settings and metrics after the last step
    samples: pd.DataFrame  # one row per run × split × input after the last step: noisy, signal attention, margin yf
    coefficients: list  # per run: the final (a_u, a_ξ, b_u, b_ξ), float64 on the CPU
    train: list  # per run: its training data, whose tokens the coefficients combine
    info: dict = field(default_factory=dict)

    def weights(self, i: int) -> tuple[torch.Tensor, torch.Tensor]:
        """The final v and p of run i as d-vectors: v = a_u·u + a_ξ·Ξ, p = b_u·u + b_ξ·Ξ."""
        a_u, a_xi, b_u, b_xi = self.coefficients[i]
        u, xi = self.train[i].u, self.train[i].xi
        return a_u @ u + a_xi @ xi, b_u @ u + b_xi @ xi


def _noise_values(gram, coef):
    """(R, k): ξ·w for w = Σⱼ coefⱼ ξⱼ, with `gram` (R, k, n) per run or (k, n) shared by every run."""
    return coef @ gram.T if gram.dim() == 2 else torch.bmm(gram, coef[..., None])[..., 0]


def _forward(signal_norm, cls, gram, a, b):
    """Softmax weight s on the signal token, outputs f and h_signal − h_noise for inputs whose noise tokens have
    inner products `gram` (R, k, n), or (k, n) shared, with the training noise; a, b = (coefficients of u±, of ξ) of
    v and p."""
    h_sig = signal_norm[:, None] * a[0].gather(1, cls)  # μ_c·v
    h_xi = _noise_values(gram, a[1])  # ξ·v
    z = signal_norm[:, None] * b[0].gather(1, cls) - _noise_values(gram, b[1])  # μ_c·p − ξ·p
    s = torch.sigmoid(z)  # softmax(Xp) weight on the signal token
    return s, h_xi + s * (h_sig - h_xi), h_sig - h_xi


def _gradients(signal_norm, cls, y, s, f, dh):
    """∇_v L = Σᵢ gᵢ (sᵢ μ_c + (1 − sᵢ) ξᵢ) and ∇_p L = Σᵢ gᵢ sᵢ(1 − sᵢ)(h_sig − h_noise)ᵢ (μ_c − ξᵢ),
    gᵢ = ∂L/∂fᵢ = −yᵢ σ(−yᵢfᵢ)/n, as coefficients of (u±, ξ)."""
    g = -y * torch.sigmoid(-y * f) / y.shape[1]
    w = g * s * (1 - s) * dh
    return (_per_class(signal_norm, cls, g * s), g * (1 - s)), (_per_class(signal_norm, cls, w), -w)


def _per_class(signal_norm, cls, x):
    """ρ Σ_{i: cᵢ = c} xᵢ for c = +, −: the coefficient of u_c of Σᵢ xᵢ μ_cᵢ."""
    return signal_norm[:, None] * torch.zeros_like(x[:, :2]).scatter_add_(1, cls, x)


def _stats(s, f, y, groups):
    """Loss, accuracy against y, and the mean signal weight over each boolean group (R, k) — NaN if empty."""
    margin = y * f
    weights = torch.stack(groups, -1).to(s.dtype)
    mean_s = (s[..., None] * weights).sum(1) / weights.sum(1)
    accuracy = (margin > 0).sum(1).cpu().double() / margin.shape[1]  # exact in float64, also from float32 runs
    return torch.nn.functional.softplus(-margin).mean(1), accuracy, mean_s


@keywords
@with_cpu_threads
def simulate(runs: list[Run], *, dtype: str = "float32", device: str = "auto", grams=None) -> Simulation:
    """GD from v = p = 0 with each run's step sizes, all runs at once (same n, n_test and number of steps).

    Runs that share a noise tensor (`TwoTokenData.with_signal_norm`) share its Gram matrix, stored once. `grams`:
    (N, C), the Gram matrices ΞΞᵀ and ΞₜₑₛₜΞᵀ of runs that all share one training and one test noise tensor, on the
    device in `dtype`, computed by the caller (`snr_sweep` slices them from a larger draw's); None computes them.
    History: train loss and accuracy, mean signal attention of clean and noisy training samples, test loss, accuracy
    and attention.
    """
    runs = check_list_of("runs", runs, Run, "paper2.Run(train, test, step_sizes) makes one", "run")
    if not runs:
        raise ParameterError("runs is empty: give at least one Run")
    for run in runs:
        check("step_sizes", run.step_sizes)
    n, steps = runs[0].train.xi.shape[0], len(runs[0].step_sizes)
    if any(r.train.xi.shape[0] != n or len(r.step_sizes) != steps for r in runs):
        raise ParameterError("runs differ in n or in the number of steps: batch only runs that share both")
    with_test = all(r.test is not None for r in runs)
    if with_test and len({r.test.xi.shape[0] for r in runs}) > 1:
        raise ParameterError("runs differ in n_test: batch only runs that share it")
    dev = resolve_device(device)
    dt = resolve_dtype(dtype, dev)
    started = time.perf_counter()

    cache = {}

    def gram(left, right):  # left·rightᵀ once per pair of noise tensors
        key = (id(left), id(right))
        if key not in cache:
            cache[key] = left.to(dev, dt) @ right.to(dev, dt).T
        return cache[key]

    shared = all(r.train.xi is runs[0].train.xi and (not with_test or r.test.xi is runs[0].test.xi) for r in runs)
    if grams is not None and not (shared and with_test):
        raise ParameterError("grams given for runs that do not share one training and one test noise tensor")
    if grams is not None:
        N, C = grams
    elif shared:  # one (n, n) matrix for every run
        N = gram(runs[0].train.xi, runs[0].train.xi)
    else:
        N = torch.stack([gram(r.train.xi, r.train.xi) for r in runs])  # (R, n, n) ξᵢ·ξⱼ
    signal_norm = torch.tensor([r.train.signal_norm for r in runs], dtype=dt, device=dev)
    cls = torch.stack([r.train.signal_class for r in runs]).to(dev)
    y = torch.stack([r.train.y for r in runs]).to(dev, dt)
    noisy = torch.stack([r.train.noisy for r in runs]).to(dev)
    step_sizes = torch.tensor([[float(b) for b in r.step_sizes] for r in runs], dtype=dt, device=dev)  # β (R, steps)
    if with_test:
        if grams is None:
            C = gram(runs[0].test.xi, runs[0].train.xi) if shared else \
                torch.stack([gram(r.test.xi, r.train.xi) for r in runs])  # (R, n_test, n) ξ'ₖ·ξⱼ
        cls_t = torch.stack([r.test.signal_class for r in runs]).to(dev)
        y_t = torch.stack([r.test.y for r in runs]).to(dev, dt)
        all_t = torch.ones_like(y_t, dtype=torch.bool)

    R = len(runs)
    a = (torch.zeros(R, 2, device=dev, dtype=dt), torch.zeros(R, n, device=dev, dtype=dt))  # v
    b = (torch.zeros(R, 2, device=dev, dtype=dt), torch.zeros(R, n, device=dev, dtype=dt))  # p
    rows = []
    with torch.inference_mode():
        for step in range(steps + 1):
            s, f, dh = _forward(signal_norm, cls, N, a, b)
            record = _stats(s, f, y, [~noisy, noisy])
            splits = [("train", s, y * f, noisy)]
            if with_test:
                s_t, f_t, _ = _forward(signal_norm, cls_t, C, a, b)
                record += _stats(s_t, f_t, y_t, [all_t])
                splits.append(("test", s_t, y_t * f_t, ~all_t))
            rows.append([x.double().cpu() for x in record])
            if step == steps:
                break
            grad_v, grad_p = _gradients(signal_norm, cls, y, s, f, dh)
            a = tuple(x - step_sizes[:, step, None] * g for x, g in zip(a, grad_v))  # v ← v − β_t ∇_v L
            b = tuple(x - step_sizes[:, step, None] * g for x, g in zip(b, grad_p))  # p ← p − β_t ∇_p L
    coefficients = [tuple(x[i].double().cpu() for x in (*a, *b)) for i in range(R)]
    elapsed = time.perf_counter() - started
    labels = [r.label or f"run{i}" for i, r in enumerate(runs)]
    history = _history(labels, rows, with_test)
    info = dict(device=str(dev), dtype=dtype, wall_s=elapsed, num_steps=steps)
    return Simulation(history, _final(runs, labels, history, steps), _samples(labels, splits), coefficients,
                      [r.train for r in runs], info)


def _samples(labels, splits) -> pd.DataFrame:
    frames = []
    for split, s, margin, noisy in splits:
        R, k = s.shape
        frames.append(pd.DataFrame({"run": np.repeat(labels, k), "split": split, "sample": np.tile(np.arange(k), R),
                                    "noisy": noisy.cpu().numpy().ravel(),
                                    "signal_attention": s.double().cpu().numpy().ravel(),
                                    "margin": margin.double().cpu().numpy().ravel()}))
    return pd.concat(frames, ignore_index=True)


def _history(labels, rows, with_test) -> pd.DataFrame:
    names = ["train_loss", "train_acc", "clean_signal_attention", "noisy_signal_attention"]
    names += ["test_loss", "test_acc", "test_signal_attention"] if with_test else []
    frames = []
    for step, (loss, acc, groups, *test) in enumerate(rows):
        cols = {"run": labels, "step": step, "train_loss": loss.numpy(), "train_acc": acc.numpy(),
                "clean_signal_attention": groups[:, 0].numpy(), "noisy_signal_attention": groups[:, 1].numpy()}
        if with_test:
            cols.update(test_loss=test[0].numpy(), test_acc=test[1].numpy(),
                        test_signal_attention=test[2][:, 0].numpy())
        frames.append(pd.DataFrame(cols))
    return pd.concat(frames, ignore_index=True)[["run", "step", *names]]


def _final(runs, labels, history, steps) -> pd.DataFrame:
    last = history[history.step == steps].set_index("run")
    rows = []
    for run, label in zip(runs, labels):
        p = run.train.params
        rows.append({"run": label, "n": p["n"], "d": p["d"], "signal_norm": run.train.signal_norm,
                     "noise_ratio": p["noise_ratio"], "seed": p["seed"], "snr": run.train.signal_norm / p["d"] ** 0.5,
                     "step_sizes": list(run.step_sizes),
                     **last.loc[label].drop("step").to_dict()})
    return pd.DataFrame(rows)


# The symbols of the columns of `simulate`'s tables as a page shows them (the other names read as `words.reader_name`
# writes them): the signal norm is ‖μ‖, the paper's ρ (the book keeps ρ for the first paper's weakly relevant tokens)
SYMBOLS = {"signal_norm": "‖μ‖", "snr": "SNR", "step_sizes": "β", "noise_ratio": "η"}


def first_step_threshold(noise_ratio: float) -> float:
    """The n·SNR² above which, after a small first step from v = p = 0, a clean input's signal value exceeds its
    noise value: v₁ = β₁/(4n) Σᵢ yᵢ(μ_cᵢ + ξᵢ) gives μ_y·v₁ ≈ β₁ρ²(1 − 2η)/8 and yξᵢ·v₁ ≈ β₁d/(4n), so the
    second step turns clean inputs' attention towards their signal when n·SNR² > 2/(1 − 2η). Our reading of the
    first step (the terms ξᵢ·ξⱼ, i ≠ j, neglected), not a constant from the paper."""
    _check_noise_ratio(noise_ratio)
    return 2 / (1 - 2 * noise_ratio)


def _check_noise_ratio(noise_ratio: float) -> None:
    """Paper 2 flips fewer labels than it keeps: η in [0, 1/2)."""
    check("noise_ratio", noise_ratio)
    if noise_ratio >= 0.5:
        raise ParameterError(f"noise_ratio = {noise_ratio!r} is not allowed in paper 2: it must be a number in "
                             "[0, 0.5) (more flips than not would swap the classes)")


def signal_norm_grid(low: float, high: float, steps_per_doubling: int) -> list[float]:
    """ρ = low·2^(k/m), k = 0, 1, … while ρ ≤ high (m = `steps_per_doubling`): a geometric grid of ratio 2^(1/m),
    the resolution to which `paper2_edge.sweep_summary` knows where benign overfitting starts."""
    check_all(signal_norm=low, signal_norm_max=high)
    if not (isinstance(steps_per_doubling, int) and not isinstance(steps_per_doubling, bool)
            and steps_per_doubling >= 1):
        raise ParameterError(f"signal_norm_steps_per_doubling = {steps_per_doubling!r} is not allowed: it must be an "
                             "integer >= 1 (the grid's ratio is 2 to the power 1 over it)")
    if high < low:
        raise ParameterError(f"signal_norm_max = {high!r} is not allowed: it must be at least signal_norm_min = "
                             f"{low!r}")
    count = int(np.floor(steps_per_doubling * np.log2(high / low) + 1e-9)) + 1
    return [float(low * 2 ** (k / steps_per_doubling)) for k in range(count)]


@keywords
@with_cpu_threads
def snr_sweep(n_values, signal_norm_values, *, d: int, noise_ratio: float, step_size_factors, n_test: int = 1000,
              num_seeds: int = 1, seed: int = 0, dtype: str = "float32", device: str = "auto") -> pd.DataFrame:
    """Final metrics of GD over n × ρ × seeds at fixed d, with step sizes β_t = c_t·n/d (c = `step_size_factors`): the
    first step then moves every noise value ξᵢ·v by about c₁/4 whatever n and d, so the grid compares SNRs, not
    step sizes. One data draw per seed at the largest n: a smaller n takes its first n inputs (what `make_data` draws
    for that n, ξ up to rounding) and the matching block of its Gram matrices; every ρ rescales the same draw and
    all ρ of one n train in one batch. One row per run."""
    check_all(n_values=n_values, signal_norm_values=signal_norm_values, d=d, noise_ratio=noise_ratio,
              step_size_factors=step_size_factors, num_seeds=num_seeds, seed=seed)
    dev = resolve_device(device)
    dt = resolve_dtype(dtype, dev)
    frames = []
    for k in range(num_seeds):
        largest, test = make_train_test(max(n_values), d, signal_norm_values[0], noise_ratio=noise_ratio,
                                         n_test=n_test, seed=seed + k)
        xi, xi_test = largest.xi.to(dev, dt), test.xi.to(dev, dt)
        N, C = xi @ xi.T, xi_test @ xi.T  # ξᵢ·ξⱼ and ξ'ₖ·ξⱼ at the largest n
        del xi, xi_test
        for n in n_values:
            train = largest.head(n)
            step_sizes = [c * n / d for c in step_size_factors]
            runs = [Run(train.with_signal_norm(r), test.with_signal_norm(r), step_sizes,
                        f"n={n} signal_norm={r:g} seed={seed + k}") for r in signal_norm_values]
            sim = simulate(runs, dtype=dtype, device=device, grams=(N[:n, :n], C[:, :n]))
            frames.append(sim.final)
    table = pd.concat(frames, ignore_index=True)
    table.attrs["device"] = sim.info["device"]
    return table
