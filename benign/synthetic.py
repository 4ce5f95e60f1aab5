"""Exact, fast full-batch gradient descent for paper 1's token-selection model, many runs at once.

The loss depends on (W, p) only through q = W p: the logits of input i are X_i q. With g = ∂L/∂q, the GD step
W' = W − α g pᵀ, p' = p − α Wᵀ g gives, exactly (K = W Wᵀ),
    q'    = q − α K g − α ‖p‖² g + α² (q·g) g
    K'    = K − α (g qᵀ + q gᵀ) + α² ‖p‖² g gᵀ
    ‖p'‖² = ‖p‖² − 2α (q·g) + α² gᵀ K g.
g = Bᵀc lies in the span of the m = nT training tokens (rows of B), so q = U a and K Bᵀ = U M with
U = [Bᵀ, K₀Bᵀ] (d × 2m). Every step is then a few products with the Gram matrices G = B Bᵀ and H = B K₀ Bᵀ
(m × m): O(m²) per step, independent of d. Only the set-up (K₀Bᵀ) touches d², and test predictions need
q = U a at the logged steps only. With W frozen (only p trained), q' = q − α K₀ g and M stays at [0; I].
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import pandas as pd
import torch

from . import grams, sweep, tables
from .checks import ParameterError, check_all, check_flags, check_indices, check_list_of, keywords
from .data import (DATA_DEFAULTS, DATA_SHARED, RELEVANT, Run, TokenData, balanced_labels, clean_test_stream,
                   init_W, noise_mask, observed_labels, token_types)
from .device import resolve_device, resolve_dtype, with_cpu_threads
from .progress import iterate


def _gram(run: Run, dtype, device):
    """The one-off d-dependent set-up of a run: Bᵀ, K₀Bᵀ, G = BBᵀ, H = BK₀Bᵀ and h = Xν."""
    X = run.train.X.to(device, dtype)
    n, T, d = X.shape
    B = X.reshape(n * T, d)
    G, h = B @ B.T, X @ run.train.nu.to(device, dtype)
    if run.W0 is None:  # W₀ = I: K₀Bᵀ = Bᵀ, H = G
        return dict(Bt=B.T, K0Bt=B.T, G=G, H=G, h=h)
    W0 = run.W0.to(device, dtype)
    WtBt = W0.T @ B.T  # W₀ᵀBᵀ (d × m)
    K0Bt = W0 @ WtBt  # K₀Bᵀ = W₀(W₀ᵀBᵀ): the only d² work
    return dict(Bt=B.T, K0Bt=K0Bt, G=G, H=WtBt.T @ WtBt, h=h)


def outputs(logits: torch.Tensor, h: torch.Tensor):
    """Softmax scores s (… , T) and outputs f = Σ_t s_t h_t for logits and token values h = Xν of the same shape.

    The softmax is written out (exp of the logits minus their maximum, normalised): on the CPU torch's own kernel
    is several times slower for T = 8 scores per row."""
    e = torch.exp(logits - logits.amax(-1, keepdim=True))
    s = e.div_(e.sum(-1, keepdim=True))
    return s, (s * h).sum(-1)


@dataclass
class Simulation:
    """The result of `simulate` for R runs of n training samples with T tokens, over num_steps steps (step 0 is
    p = 0: uniform attention, the head ν alone).

    - history: one row per run × step 0 … num_steps. Columns: run (its label), step, train_loss and train_acc
      (every step), test_loss and test_acc (at the logged steps, NaN elsewhere), and score_<group>_<type>: the mean
      attention score of one token of that type (relevant, weak_aligned, weak_opposite, irrelevant) over the clean
      or the noisy training samples (group clean or noisy; NaN where the group or the type is empty).
    - scores: one row per run × step × tracked training sample × token. Columns: run, step, sample (its index),
      noisy (its label was flipped), token (its position 0 … T−1; its type is the data's token_type), score.
    - final: one row per run. Columns: run, d, signal_norm, n, T, rho, noise_ratio, seed, and train_loss,
      train_acc, test_loss, test_acc at the last step.
    - q: the final q = W p of each run, a (d,) tensor on the CPU, in run order.
    - frak_s: a (runs, n) tensor, Σ_τ 𝔖⁽ⁱ⁾(τ) over τ = 0 … num_steps−1 for each training sample i, with
      𝔖 = (Σ_{t∈R} s_t)(1 − Σ_{t∈R} s_t), R the relevant token positions.
    - info: device, dtype, wall_s (seconds), learning_rate, num_steps, log_every, train_W and track.
    """

    history: pd.DataFrame  # one row per run × step
    scores: pd.DataFrame  # one row per run × step × tracked sample × token
    final: pd.DataFrame  # one row per run: settings and final metrics
    q: list  # final q = W p of each run (d,)
    frak_s: torch.Tensor  # (R, n): Σ_τ 𝔖⁽ⁱ⁾(τ), 𝔖 = (Σ_{t∈R} s_t)(1 − Σ_{t∈R} s_t), over τ = 0 … num_steps−1
    info: dict = field(default_factory=dict)


class Descent:
    """Gradient descent in the coordinates q = U a, K Bᵀ = U M, for R runs at once, one step at a time.

    G and H are the Gram operators x ↦ x BBᵀ and x ↦ x BK₀Bᵀ of every run (`grams.GroupGram`); h (R, n, T) the
    token values Xν, y (R, n) the labels, alpha a step size or one per run (R,). The state is a (R, 2m) with
    q = U a, the training logits z = B q, and with `train_W` also Mᵀ and ‖p‖².

    Each step reads G, H and M once: the rank-2 updates of M are kept aside and applied `lazy` at a time (one
    product), M c being corrected for the pending ones.
    """

    def __init__(self, G, H, h, y, *, alpha, train_W: bool, lazy: int = 16):
        (R, n, T), dev, dt = h.shape, h.device, h.dtype
        m = n * T
        self.G, self.H, self.h, self.train_W, self.lazy, self.m = G, H, h, train_W, lazy, m
        self.ny, self.nyn = -y, -y / n  # dL/df = −y σ(−y f) / n
        self.alpha = torch.as_tensor(alpha, dtype=dt, device=dev).expand(R).reshape(R, 1)  # α per run
        self.a = torch.zeros(R, 2 * m, device=dev, dtype=dt)  # q = U a, p = 0
        self.z = torch.zeros(R, m, device=dev, dtype=dt)  # training logits B q (q = 0)
        if train_W:
            self.Mt = torch.zeros(R, m, 2 * m, device=dev, dtype=dt)  # Mᵀ with K Bᵀ = U M (row products are fastest)
            self.Mt[:, :, m:] = torch.eye(m, device=dev, dtype=dt)
            self.Q = torch.zeros(R, 2 * lazy, 2 * m, device=dev, dtype=dt)  # pending: Mᵀ ← Mᵀ − Pᵀ Q (α inside P)
            self.P = torch.zeros(R, 2 * lazy, m, device=dev, dtype=dt)
            self.pending = 0
            self.pp = torch.zeros(R, device=dev, dtype=dt)  # ‖p‖²

    def forward(self):
        """Scores s (R, n, T) and outputs f (R, n) at the current q."""
        return outputs(self.z.view(self.h.shape), self.h)

    def step(self, s: torch.Tensor, f: torch.Tensor) -> None:
        """One gradient step from the scores and outputs at the current q."""
        R, n, _ = self.h.shape
        m, alpha, a = self.m, self.alpha, self.a
        dLdf = self.nyn * torch.sigmoid(self.ny * f)
        c = (dLdf[..., None] * s * (self.h - f[..., None])).reshape(R, m)  # g = Bᵀ c
        a1, a2 = a[:, :m], a[:, m:]
        if not self.train_W:
            a2.addcmul_(c, alpha, value=-1)  # q' = q − α K₀ g
            self.z = self.H.mv(a2[:, None])[:, 0]
            return
        z, pp, P, Q, k = self.z, self.pp, self.P, self.Q, self.pending
        v = torch.bmm(c[:, None], self.Mt)[:, 0]  # K g = U v
        if k:
            v -= torch.bmm(torch.bmm(c[:, None], P[:, :k].transpose(1, 2)), Q[:, :k])[:, 0]
        zc = (z * c).sum(-1, keepdim=True)  # q·g
        Q[:, k], Q[:, k + 1, :m] = a, c  # q and g in U coordinates
        a.addcmul_(v, alpha, value=-1)  # − α K g
        a1.add_(c * (alpha * alpha * zc - alpha * pp[:, None]))  # − α‖p‖² g + α²(q·g) g
        Gca = self.G.mv(torch.stack([c, a1], 1))  # cᵀBBᵀ = (g·rows of B), a₁ᵀBBᵀ (G symmetric)
        Hca = self.H.mv(torch.stack([c, a2], 1))
        cG = Gca[:, 0]
        gKg = (cG * v[:, :m] + Hca[:, 0] * v[:, m:]).sum(-1)  # gᵀKg = cᵀ(BU)v
        P[:, k], P[:, k + 1] = alpha * cG, alpha * (z - alpha * pp[:, None] * cG)
        self.pending = k + 2  # K' = K − α (q gᵀ + g qᵀ) + α²‖p‖² g gᵀ, times Bᵀ
        if self.pending == 2 * self.lazy:
            self.Mt.baddbmm_(P.transpose(1, 2), Q, alpha=-1)
            Q[:, :, :m].zero_()  # the g rows have zeros in their second half
            self.pending = 0
        pp.add_(alpha[:, 0] ** 2 * gKg - 2 * alpha[:, 0] * zc[:, 0])
        self.z = Gca[:, 1] + Hca[:, 1]  # B q' = BBᵀa₁' + BK₀Bᵀa₂'


def descend(G, H, h, y, relevant, *, alpha, num_steps, log_steps, train_W, keep_scores, progress=False, lazy=16):
    """Gradient descent (`Descent`) from p = 0 for R runs at once (G, H: Gram operators, see `Descent`).

    Returns a at the logged steps (L, R, 2m); the training scores of every step (S+1, R, n, T) if `keep_scores`;
    the final scores (R, n, T); and, when `relevant` (a (T,) 0/1 mask) is given, Σ_τ 𝔖⁽ⁱ⁾(τ) (R, n) over
    τ = 0 … num_steps−1, with 𝔖 = (Σ_{t∈R} s_t)(1 − Σ_{t∈R} s_t).
    """
    gd = Descent(G, H, h, y, alpha=alpha, train_W=train_W, lazy=lazy)
    (R, n, T), dev, dt = h.shape, h.device, h.dtype
    A = torch.empty(len(log_steps), R, 2 * n * T, device=dev, dtype=dt)
    scores = torch.empty(num_steps + 1, R, n, T, device=dev, dtype=dt) if keep_scores else None
    frak = None if relevant is None else torch.zeros(R, n, device=dev, dtype=dt)
    steps = iterate(range(num_steps + 1), num_steps + 1, "gradient descent", progress)
    k = 0
    for step in steps:
        s, f = gd.forward()
        if keep_scores:
            scores[step] = s
        if k < len(log_steps) and log_steps[k] == step:
            A[k] = gd.a
            k += 1
        if step == num_steps:
            break
        if frak is not None:
            s_rel = (s * relevant).sum(-1)
            frak += s_rel * (1 - s_rel)
        gd.step(s, f)
    return A, scores, s, frak


@keywords
@with_cpu_threads
def simulate(runs: list[Run], *, learning_rate: float, num_steps: int, log_every: int = 10, train_W: bool = True,
             track=None, dtype: str = "float32", device: str = "auto", progress: bool = False) -> Simulation:
    """Full-batch GD on (W, p) — or on p alone with `train_W=False` — from p = 0 for every run, batched.

    `runs` is a list of `benign.data.Run`, one per setting; `benign.data.make_run` makes one:

        run = data.make_run(d=2000, signal_norm=20.0, noise_ratio=0.2, seed=0)
        sim = synthetic.simulate([run], learning_rate=5e-3, num_steps=1000)

    All runs must share n and T (d may differ). learning_rate: the step size α; num_steps: GD steps; log_every:
    test metrics every that many steps and at the last step (train metrics every step); train_W: train W too
    (False: p alone, W = W₀); track: the training samples whose full score rows are kept in `scores` (default: the
    first clean sample, then the first noisy one if any); dtype: float32 or float64; device: auto (cuda, then mps,
    then cpu), cpu, cuda, cuda:N or mps; progress: a progress bar. Returns a `Simulation`, whose docstring lists
    the columns of its tables (history, scores, final) and what q, frak_s and info hold.
    """
    runs = check_list_of("runs", runs, Run, "data.make_run makes one", "run")
    check_all(learning_rate=learning_rate, num_steps=num_steps, log_every=log_every)
    check_flags(train_W=train_W, progress=progress)
    if not runs:
        raise ParameterError("runs is empty: give at least one Run")
    n, T = runs[0].train.X.shape[:2]
    if any(r.train.X.shape[:2] != (n, T) for r in runs):
        raise ParameterError("runs differ in n or T: batch only runs with the same n and T")
    if track is not None:
        track = check_indices("track", track, n, "training-sample")
    dev = resolve_device(device)
    dt = resolve_dtype(dtype, dev)
    started = time.perf_counter()

    setups = [_gram(r, dt, dev) for r in runs]
    G = grams.GroupGram.symmetric(torch.stack([g["G"] for g in setups]))  # (R, m, m)
    # W₀ = I for every run: H = G, the same matrices (not a second copy read every step)
    H = G if all(r.W0 is None for r in runs) else grams.GroupGram.symmetric(torch.stack([g["H"] for g in setups]))
    h = torch.stack([g["h"] for g in setups])  # (R, n, T)
    y = torch.stack([r.train.y for r in runs]).to(dev, dt)  # (R, n)
    noisy = torch.stack([r.train.noisy for r in runs]).to(dev)
    alpha = float(learning_rate)

    track = tables.default_track(noisy[0]) if track is None else track

    log_steps = sorted(set(range(0, num_steps + 1, log_every)) | {num_steps})
    with torch.inference_mode():
        types = runs[0].train.token_type.to(dev)
        A, scores, _, frak_s = descend(G, H, h, y, (types == 0).to(dt), alpha=alpha, num_steps=num_steps,
                                        log_steps=log_steps, train_W=train_W, keep_scores=True, progress=progress)
        test_loss, test_acc, q_final = _evaluate(runs, setups, A, dt, dev)
        loss, acc, type_means = _train_stats(scores, h, y, noisy, types)
    elapsed = time.perf_counter() - started
    labels = [r.label or f"run{i}" for i, r in enumerate(runs)]
    history = tables.history(labels, loss, acc, type_means, log_steps, test_loss, test_acc)
    tracked = tables.scores(labels, scores[:, :, track], track, noisy)
    final = tables.final(runs, labels, history, num_steps)
    info = dict(device=str(dev), dtype=dtype, wall_s=elapsed, learning_rate=alpha, num_steps=num_steps,
                log_every=log_every, train_W=train_W, track=track)
    return Simulation(history, tracked, final, q_final, frak_s.cpu(), info)


def _train_stats(scores, h, y, noisy, types):
    """From the scores of every step: train loss and accuracy, and the mean score per token type for clean and
    noisy samples."""
    f = (scores * h).sum(-1)  # (S, R, n)
    margin = y * f
    loss = torch.nn.functional.softplus(-margin).mean(-1)
    acc = (margin > 0).double().mean(-1) if scores.device.type != "mps" else (margin > 0).float().mean(-1)
    return loss, acc, tables.type_means(scores, noisy, types)


def _evaluate(runs, setups, A, dt, dev):
    """Test loss and accuracy at the logged steps (q = U a there), and the final q of each run."""
    L = A.shape[0]
    test_loss = torch.full((L, len(runs)), float("nan"), dtype=torch.float64)
    test_acc = test_loss.clone()
    q_final = []
    m = setups[0]["G"].shape[0]
    for r, (run, gr) in enumerate(zip(runs, setups)):
        Q = gr["Bt"] @ A[:, r, :m].T + gr["K0Bt"] @ A[:, r, m:].T  # (d, L): q at each logged step
        q_final.append(Q[:, -1].cpu())
        if run.test is None:
            continue
        Xt = run.test.X.to(dev, dt)
        logits = torch.einsum("ntd,dl->lnt", Xt, Q)
        _, f = outputs(logits, (Xt @ run.test.nu.to(dev, dt))[None])
        margin = run.test.y.to(dev, dt) * f
        test_loss[:, r] = torch.nn.functional.softplus(-margin).mean(-1).double().cpu()
        test_acc[:, r] = (margin > 0).double().mean(-1).cpu()
    return test_loss, test_acc, q_final


def handbuilt_p(train: TokenData, c: float) -> torch.Tensor:
    """Figure 1's hand-built query p = μ₊ + μ₋ + c Σᵢ ξᵢ, where ξᵢ is the noise of the relevant token of a clean
    sample and of the opposite weakly relevant token (which carries ρμ_{Y}) of a noisy one; used with W = I."""
    check_all(c=c)
    types = train.token_type
    relevant = int((types == 0).nonzero()[0])
    opposite = (types == 2).nonzero()
    if len(opposite) == 0:
        raise ParameterError("Figure 1 needs an opposite weakly relevant token: use n_weak >= 1")
    chosen = torch.where(train.noisy, int(opposite[0]), relevant)
    X = train.X[torch.arange(len(chosen)), chosen]  # the chosen token of every sample
    clean_class = train.y_clean[:, None] > 0
    mu, mu_other = (torch.where(clean_class, train.mu_pos, train.mu_neg),
                    torch.where(clean_class, train.mu_neg, train.mu_pos))
    signal_part = torch.where(train.noisy[:, None], train.params["rho"] * mu_other, mu)
    xi = X - signal_part  # its noise ξᵢ (the opposite token carries ρ μ_{−Y*}, orthogonal to μ_{Y*})
    return train.mu_pos + train.mu_neg + c * xi.sum(0)


def attend(data: TokenData, q: torch.Tensor) -> dict:
    """Scores, outputs, accuracy against the observed labels and the argmax-attended token for a fixed q = W p."""
    X = data.X.to(q.dtype)
    s, f = outputs(X @ q, X @ data.nu.to(q.dtype))
    chosen = s.argmax(-1)
    token = X[torch.arange(len(chosen)), chosen]
    return {"scores": s, "f": f, "acc": float((data.y * f > 0).double().mean()), "argmax": chosen,
            "coords": torch.stack([token @ data.mu_neg, token @ data.mu_pos], -1) / data.params["signal_norm"]}


def controls(sim: Simulation, runs: list[Run], clean_sim: Simulation, clean_runs: list[Run]) -> dict:
    """What training adds, per run (lists in the order of `runs`): its test accuracy at step 0 (p = 0, uniform
    attention: the head ν alone), its gain over it by the end, the same run trained on clean labels (`clean_runs`,
    aligned with `runs`: same inputs and W₀) and what the flipped labels cost against it, and the mean final
    attention of fresh test inputs on their relevant token (1/T at step 0)."""
    def setting(run):  # everything but the labels' noise
        return {k: v for k, v in run.train.params.items() if k != "noise_ratio"}

    if len(runs) != len(clean_runs) or any(setting(r) != setting(c) for r, c in zip(runs, clean_runs)):
        raise ParameterError("runs and clean_runs must be aligned one to one (same settings, clean labels)")
    history, final = sim.history.set_index(["run", "step"]), sim.final.set_index("run")
    clean_final = clean_sim.final.set_index("run")
    qs = dict(zip(sim.final.run, sim.q))
    out = {key: [] for key in ("test_acc_step0", "test_gain", "clean_labels_test_acc", "noise_cost",
                               "test_attention_relevant")}
    for run, clean in zip(runs, clean_runs):
        start, end = float(history.loc[(run.label, 0), "test_acc"]), float(final.loc[run.label, "test_acc"])
        clean_end = float(clean_final.loc[clean.label, "test_acc"])
        s = attend(run.test, qs[run.label].double())["scores"]
        out["test_acc_step0"].append(start)
        out["test_gain"].append(end - start)
        out["clean_labels_test_acc"].append(clean_end)
        out["noise_cost"].append(clean_end - end)
        out["test_attention_relevant"].append(float(s[:, run.test.token_type == RELEVANT].sum(-1).mean()))
    return out


def fit_counts(data: TokenData, q: torch.Tensor) -> dict:
    """How many clean and how many noisy training samples a fixed q = W p fits (predicts their observed label)."""
    q = q.detach().cpu().double()
    fits = data.y.double() * attend(data, q)["f"] > 0
    noisy = data.noisy.to(fits.device)
    return {"clean_fitted": int(fits[~noisy].sum()), "clean_count": int((~noisy).sum()),
            "noisy_fitted": int(fits[noisy].sum()), "noisy_count": int(noisy.sum())}


GRID_SHARED = DATA_SHARED + ("W_init", "train_W", "learning_rate", "num_steps", "dtype", "device")
GRID_DEFAULTS = dict(DATA_DEFAULTS, W_init="kaiming", train_W=True, learning_rate=5e-3, num_steps=1000,
                     dtype="float32", device="auto")


@with_cpu_threads
def grid_chunk(points: list[dict]) -> list[dict]:
    """Final metrics for runs that share d and seed, differing in ‖μ‖ and η: one tensor program.

    The runs share their noise draws (train and test) and W₀, exactly as `make_run` draws them for that seed; the
    signal adds ‖μ‖·P to two coordinates, so BBᵀ and BK₀Bᵀ are one shared product plus a rank-4 term per run
    (`grams.signal_gram`), and the d² work (W₀ᵀEᵀ) is done once per chunk. Each row: the point, final train/test
    loss and accuracy, the test accuracy at step 0 (the head alone), and the cumulative 𝔖 summed over clean (+1 / −1
    observed class) and noisy training samples.
    """
    points, shared = sweep.chunk_points(points, GRID_DEFAULTS, GRID_SHARED)
    dev = resolve_device(shared["device"])
    dt = resolve_dtype(shared["dtype"], dev)
    d, seed, n, T = shared["d"], shared["seed"], shared["n"], shared["T"]
    mu = torch.tensor([float(p["signal_norm"]) for p in points], dtype=torch.float64)
    types = token_types(T, shared["n_relevant"], shared["n_weak"])

    def tokens(n_samples, stream):
        E, P = grams.tokens(n_samples, T, d, stream, types, shared["rho"], shared["sigma"])
        return E.to(dev, dt), P.to(dev, dt)

    E, P = tokens(n, seed)
    mu_d = mu.to(dev, dt)
    E2 = E[:, :2]
    G = grams.signal_gram((E @ E.T)[None], E2[None], P[None], E2[None], P[None], torch.eye(2).to(dev, dt)[None],
                          mu_d[None], symmetric=True)
    if shared["W_init"] == "kaiming":
        W0 = init_W(d, seed).to(dev, dt)
        Z, V = W0.T @ E.T, W0[:2].T  # W₀ᵀEᵀ (d × m), W₀ᵀ[e₁ e₂] (d × 2): E K₀ Eᵀ = ZᵀZ, E K₀ J = ZᵀV
        ZV = (Z.T @ V)[None]
        H = grams.signal_gram((Z.T @ Z)[None], ZV, P[None], ZV, P[None], (V.T @ V)[None], mu_d[None], symmetric=True)
    else:
        W0, H = None, G
    masks = torch.stack([noise_mask(n, p["noise_ratio"], shared["label_noise"], seed) for p in points]).to(dev)
    y = observed_labels(masks).to(dev, dt)
    h = grams.head_values(E, P, mu_d).view(len(points), n, T)
    with torch.inference_mode():
        A, _, s, frak = descend(G, H, h, y, (types == 0).to(dev, dt), alpha=float(shared["learning_rate"]),
                                 num_steps=shared["num_steps"], log_steps=[shared["num_steps"]],
                                 train_W=shared["train_W"], keep_scores=False)
        a1, a2 = A[0, :, : n * T].T, A[0, :, n * T:].T  # (m, R)
        if W0 is None:  # q = Bᵀ(a₁ + a₂)
            Q = E.T @ (a1 + a2)
            Q[:2] += mu_d * (P.T @ (a1 + a2))
        else:  # q = Bᵀa₁ + W₀(W₀ᵀBᵀ a₂)
            Q = E.T @ a1 + W0 @ (Z @ a2 + mu_d * (V @ (P.T @ a2)))
            Q[:2] += mu_d * (P.T @ a1)
        Et, Pt = tokens(shared["n_test"], clean_test_stream(seed, shared["authors_test_seed"]))
        logits = (Et @ Q + mu_d * (Pt @ Q[:2])).T.reshape(len(points), -1, T)
        h_test = grams.head_values(Et, Pt, mu_d).view(len(points), -1, T)
        _, f_test = outputs(logits, h_test)
        f_head = h_test.mean(-1)  # step 0: p = 0, uniform attention, the head ν alone
    f = (s * h).sum(-1)
    y_test = balanced_labels(shared["n_test"]).to(dev, dt)
    metrics = {
        "train_loss": torch.nn.functional.softplus(-y * f).mean(-1),
        "train_acc": (y * f > 0).double().mean(-1),
        "test_loss": torch.nn.functional.softplus(-y_test * f_test).mean(-1),
        "test_acc": (y_test * f_test > 0).double().mean(-1),
        "test_acc_step0": (y_test * f_head > 0).double().mean(-1),
        "frak_clean": (frak * ~masks).sum(-1),
        "frak_noisy": (frak * masks).sum(-1),
        "frak_clean_pos": (frak * (~masks & (y > 0))).sum(-1),
        "frak_clean_neg": (frak * (~masks & (y < 0))).sum(-1),
    }
    metrics = {k: v.double().cpu().tolist() for k, v in metrics.items()}
    return [{**p, **{k: v[r] for k, v in metrics.items()}} for r, p in enumerate(points)]
