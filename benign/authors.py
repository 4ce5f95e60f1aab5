"""The authors' experiment scripts, transcribed: executable references for "what their code gives".

Sakamoto & Sato published the code behind paper 1's experiments (github.com/keitaroskmt/benign-attention). Each
function below restates, in a few lines of our own, what one of their scripts computes — same algorithm, same data
stream, same quirks — so that every paper-vs-here table can show three numbers: the paper's, the authors' code's
and ours. By default it follows their final published version, `main` at c563aae ("Final version", 2025-05-14).

- `main`       main.py, config/main.yaml (seed 42), Figures 3 and 5: W and p trained by full-batch SGD, autograd
               through (X @ W) @ p, W ~ kaiming_uniform_(a=√5), p = 0; each step logs its loss and every training
               sample's attention scores (what Figure 3 plots; versions before c244a46 kept a running sum).
- `one_layer`  main_one_layer.py, config/main_one_layer.yaml (seed 42), Figures 6 and 7: a one-layer encoder with a
               learnable [CLS] token, every parameter trained by full-batch SGD, on main.py's `CustomDataset`.
- `math_frak`  main_math_frak.py, only on the `expt` branch (492715f, 2025-01-18, its config's seed 0): the v2
               appendix's checks of Eq. 9/10 and the η sweep. p alone (no W), two relevant, two aligned and two
               opposite weakly relevant tokens, and the cumulative 𝔖 = s_R(1 − s_R) summed over steps for clean
               and noisy samples of each observed class.
- `figure1`    Figure 1's hand-built query (the repository's README figure): W = I and p = μ₊ + μ₋ + c Σᵢ ξᵢ. Its
               code is not in the repository; this follows the construction the paper describes, on main.py's data.

Their data streams (`STREAMS`), each function defaulting to its script's: `final`,
`np.random.default_rng(seed).standard_normal` (main.py since 4acb1a0, 2025-04-07); `january`, `np.random.seed(seed)`
then `np.random.randn` (main_synthetic.py, main_math_frak.py and main.py before 4acb1a0). Their quirks, kept:
inputs stored as float32; balanced labels (first half +1); k = ⌈nη⌉ noisy samples, ⌊k/2⌋ flipped at the start of
each class; the clean test set drawn with the *training* seed, so its first n/2 inputs repeat training inputs;
losses as they log them, log(1 + exp(−y f)) in the run's dtype (in their float32 exactly 0 above a margin of ≈ 16.6,
inf below ≈ −88.7). One change: their initialisations are unseeded; here they are their code run right after
`torch.manual_seed(seed)`.

These are references, not the fast path: slow, literal, and independent of the fast code (numpy and torch, and
only the package's CPU-thread setting and error type). The tests check the fast trainers against them; the
notebooks run them through the sweep kernels `main_chunk`, `math_frak_chunk` (their runs side by side,
`math_frak_side_by_side`) and `one_layer_chunk`, cached like any sweep.
"""

from __future__ import annotations

from contextlib import contextmanager

import numpy as np
import torch
from torch import nn

from .checks import ParameterError
from .device import cpu_threads

DTYPES = {"float32": torch.float32, "float64": torch.float64}


@contextmanager
def seeded(seed: int):
    """Their unseeded torch draws as if right after `torch.manual_seed(seed)`; the global generator is left alone."""
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        yield


# --- data: `CustomDataset` of main.py (one relevant token) and of main_math_frak.py (two) --------------------------

STREAMS = ("final", "january")


def generator(seed: int, stream: str = "final"):
    """Their numpy stream: np.random.default_rng(seed) (`final`) or RandomState(seed), np.random.seed's (`january`).
    Both draw with `standard_normal` (RandomState's `randn` is that draw)."""
    if stream == "final":
        return np.random.default_rng(seed)
    if stream == "january":
        return np.random.RandomState(seed)
    raise ParameterError(f"stream = {stream!r} is not allowed: use one of {', '.join(STREAMS)}")


def signals(d: int, signal_norm: float, dtype: str = "float32"):
    """vmu_1 = ‖μ‖e₁ (class +1) and vmu_2 = ‖μ‖e₂ (class −1); float32 as torch.zeros makes them in their code."""
    vmu_1, vmu_2 = torch.zeros(d, dtype=DTYPES[dtype]), torch.zeros(d, dtype=DTYPES[dtype])
    vmu_1[0], vmu_2[1] = signal_norm, signal_norm
    return vmu_1, vmu_2


def linear_head(d: int, signal_norm: float, dtype: str = "float32") -> torch.Tensor:
    """ν = (vmu_1 − vmu_2)/‖vmu_1 − vmu_2‖ · (1/‖μ‖) as a (d, 1) column: `init_linear_head` with nu_norm = 1/‖μ‖."""
    vmu_1, vmu_2 = signals(d, signal_norm, dtype)
    return (vmu_1 - vmu_2).view(-1, 1) / torch.norm(vmu_1 - vmu_2) * (1 / signal_norm)


def draw(rng, num_samples: int, d: int, signal_norm: float, *, T: int = 8, rho: float = 0.1,
         noise_ratio: float = 0.0, n_relevant: int = 1, dtype: str = "float32") -> dict:
    """One data set from the numpy stream `rng` (`generator`). Tokens 0…r−1 get μ_y, the next r get ρμ_y, the next
    r get ρμ_{−y} (r = n_relevant: 1 in main.py, 2 in main_math_frak.py). Theirs is float32; float64 keeps numpy's
    draws unrounded (for the tests)."""
    X = torch.tensor(rng.standard_normal((num_samples, T, d)), dtype=DTYPES[dtype])
    y = torch.cat([torch.ones(num_samples // 2), -torch.ones(num_samples - num_samples // 2)])
    vmu_1, vmu_2 = signals(d, signal_norm, dtype)
    own = torch.where(y.view(-1, 1) == 1, vmu_1, vmu_2)  # the clean class's signal
    other = torch.where(y.view(-1, 1) == 1, vmu_2, vmu_1)
    r = n_relevant
    for t in range(r):
        X[:, t, :] = X[:, t, :] + own
        X[:, r + t, :] = X[:, r + t, :] + rho * own
        X[:, 2 * r + t, :] = X[:, 2 * r + t, :] + rho * other
    k = int(np.ceil(num_samples * noise_ratio))  # noisy samples, half of them (rounded down) in each class
    assert k > 0 if noise_ratio > 0.0 else k == 0
    noisy = torch.zeros(num_samples, dtype=torch.bool)
    noisy[: k // 2] = True
    noisy[num_samples // 2: num_samples // 2 + k // 2] = True
    return {"X": X, "y": torch.where(noisy, -y, y).to(X.dtype), "y_clean": y.to(X.dtype), "noisy": noisy}


def dataset(num_samples: int, d: int, signal_norm: float, *, seed: int = 42, stream: str = "final", **kwargs) -> dict:
    """`CustomDataset(..., seed)`: one draw from a fresh stream seeded with `seed`. The test set is made by the same
    call with the training seed (their quirk), so its first n/2 inputs are the first n/2 training inputs."""
    return draw(generator(seed, stream), num_samples, d, signal_norm, **kwargs)


# --- the analysed model: `Attention` of main.py (with W) and of main_math_frak.py (without) ------------------------

class Attention(nn.Module):
    """f(X) = νᵀXᵀ softmax(X W p), or softmax(X p) without W. W ~ kaiming_uniform_(a=√5), p = 0, ν fixed."""

    def __init__(self, d: int, signal_norm: float, with_W: bool = True, dtype: str = "float32"):
        super().__init__()
        self.W = nn.Parameter(torch.empty(d, d)) if with_W else None
        self.p = nn.Parameter(torch.zeros(d, 1))
        self.nu = nn.Parameter(linear_head(d, signal_norm, dtype))  # a Parameter in their code, never given to SGD
        if with_W:
            nn.init.kaiming_uniform_(self.W, a=5 ** 0.5)  # their draw, in float32 (then cast to `dtype`)
        self.to(DTYPES[dtype])

    def forward_with_scores(self, x: torch.Tensor):
        logits = (x @ self.W @ self.p if self.W is not None else x @ self.p).squeeze(-1)  # (x @ W) @ p
        scores = torch.softmax(logits, dim=-1)
        return torch.sum(scores * (x @ self.nu).squeeze(-1), dim=1), scores

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.forward_with_scores(x)[0]


def logistic(output: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    """Their loss per sample, log(1 + exp(−y f)), written (and so rounded) as they write it."""
    return torch.log(1.0 + torch.exp(-target * output))


def accuracy_and_loss(model: nn.Module, data: dict) -> tuple[float, float]:
    """`calc_accuracy_and_loss`: share of y·f > 0 and mean loss over the whole set (one batch)."""
    with torch.no_grad():
        pred = model(data["X"])
        total = len(data["y"])
        return (pred * data["y"] > 0).sum().item() / total, logistic(pred, data["y"]).sum().item() / total


def sgd_loop(model: nn.Module, parameters: list, train: dict, test: dict | None, *, learning_rate: float,
             num_steps: int, log_interval: int) -> dict:
    """The loop main.py and main_one_layer.py share: full-batch SGD on `parameters`; each step logs its loss and the
    attention scores of its forward pass (before its update); after every `log_interval`-th update, train and test
    accuracy and loss (no test when `test` is None). Returns `loss`, `scores`, `stats`, `final` (the last stats
    row), the model and its data."""
    optimizer = torch.optim.SGD(parameters, lr=learning_rate)
    losses, scores, stats = [], [], []
    for time_step in range(num_steps):
        optimizer.zero_grad()
        output, attention_scores = model.forward_with_scores(train["X"])
        loss = logistic(output, train["y"]).mean()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
        scores.append(attention_scores.detach().clone())
        if time_step % log_interval == log_interval - 1:
            row = {"time_step": time_step, "steps_done": time_step + 1, "loss": loss.item()}
            row["train_accuracy"], row["train_loss"] = accuracy_and_loss(model, train)
            if test is not None:
                row["test_accuracy"], row["test_loss"] = accuracy_and_loss(model, test)
            stats.append(row)
    return {"loss": losses, "scores": torch.stack(scores), "stats": stats, "final": stats[-1] if stats else None,
            "model": model, "train": train, "test": test}


def main(d: int, signal_norm: float, *, n: int = 20, n_test: int = 1000, T: int = 8, rho: float = 0.1,
         noise_ratio: float = 0.2, learning_rate: float = 5e-3, num_steps: int = 1000, seed: int = 42,
         stream: str = "final", log_interval: int = 10, evaluate_test: bool = True, dtype: str = "float32",
         train: dict | None = None, test: dict | None = None, W0: torch.Tensor | None = None) -> dict:
    """main.py (c563aae): SGD on [W, p] over the full batch for `num_steps` steps.

    Returns their logs: `loss` (each step's loss, before its update), `scores` (every training sample's attention
    at every step, before its update: (num_steps, n, T)), `stats` (train/test accuracy and loss after every
    `log_interval`-th update; `steps_done` counts updates), `final` (the last of them), the trained `model` and
    what it ran on (`train`, `test`, `W0`). `log_interval` = num_steps evaluates only at the end (the same final
    numbers, far cheaper at large d: their evaluation every 10 steps costs minutes). `train`, `test`, `W0` replace
    their draws (tests).
    """
    train = train if train is not None else dataset(n, d, signal_norm, seed=seed, stream=stream, T=T, rho=rho,
                                                    noise_ratio=noise_ratio, dtype=dtype)
    if evaluate_test and test is None:  # the training seed, again
        test = dataset(n_test, d, signal_norm, seed=seed, stream=stream, T=T, rho=rho, dtype=dtype)
    with seeded(seed):
        model = Attention(d, signal_norm, dtype=dtype)
    if W0 is not None:
        model.W.data.copy_(W0)
    W0 = model.W.detach().clone()
    return {**sgd_loop(model, [model.W, model.p], train, test if evaluate_test else None,
                       learning_rate=learning_rate, num_steps=num_steps, log_interval=log_interval), "W0": W0}


def math_frak(d: int, signal_norm: float, *, n: int = 20, n_test: int = 1000, T: int = 8, rho: float = 0.1,
              noise_ratio: float = 0.2, learning_rate: float = 5e-3, num_steps: int = 1000, seed: int = 0,
              stream: str = "january", n_relevant: int = 2, evaluate_test: bool = True, dtype: str = "float32",
              train: dict | None = None, test: dict | None = None) -> dict:
    """main_math_frak.py (expt, 492715f; its config's seed 0 and its January stream): SGD on p alone; after every
    step (with that step's scores, before its update) add 𝔖⁽ⁱ⁾ = s_R(1 − s_R), s_R = the scores of tokens 0 and 1
    summed, to one of four running sums — clean or noisy sample, observed label +1 (`_1`) or −1 (`_2`) — in Python
    floats, as they do; train and test accuracy and loss once, after the last step.

    Returns the four sums (`clean_1`, `clean_2`, `noisy_1`, `noisy_2`: their values at the last step), the sums per
    step (`history`, (num_steps, 4) in that order), the final metrics, the trained `model` and what it ran on.
    """
    data = dict(seed=seed, stream=stream, T=T, rho=rho, n_relevant=n_relevant, dtype=dtype)
    train = train if train is not None else dataset(n, d, signal_norm, noise_ratio=noise_ratio, **data)
    if evaluate_test and test is None:
        test = dataset(n_test, d, signal_norm, **data)
    model = Attention(d, signal_norm, with_W=False, dtype=dtype)
    optimizer = torch.optim.SGD([model.p], lr=learning_rate)
    noisy, positive = train["noisy"].tolist(), (train["y"] == 1).tolist()
    sums = {"clean_1": 0.0, "clean_2": 0.0, "noisy_1": 0.0, "noisy_2": 0.0}
    history = []
    for _ in range(num_steps):
        optimizer.zero_grad()
        output, attention_scores = model.forward_with_scores(train["X"])
        logistic(output, train["y"]).mean().backward()
        optimizer.step()
        for row, is_noisy, is_positive in zip(attention_scores[:, :n_relevant].tolist(), noisy, positive):
            s_R = sum(row)
            sums[f"{'noisy' if is_noisy else 'clean'}_{1 if is_positive else 2}"] += s_R * (1.0 - s_R)
        history.append(list(sums.values()))
    out = {**sums, "history": torch.tensor(history, dtype=torch.float64), "model": model, "train": train,
           "test": test}
    out["train_accuracy"], out["train_loss"] = accuracy_and_loss(model, train)
    if evaluate_test:
        out["test_accuracy"], out["test_loss"] = accuracy_and_loss(model, test)
    return out


# --- Figure 1: a hand-built query ---------------------------------------------------------------------------------

def figure1(c: float, *, d: int = 10000, signal_norm: float = 20.0, n: int = 100, n_test: int = 100, T: int = 8,
            rho: float = 0.2, noise_ratio: float = 0.2, seed: int = 0, stream: str = "final",
            dtype: str = "float32", train: dict | None = None, test: dict | None = None) -> dict:
    """Figure 1's construction: W = I and p = μ₊ + μ₋ + c Σᵢ ξᵢ, where ξᵢ is the noise of the relevant token (0) of
    a clean sample and of the weakly relevant token carrying ρμ of the flipped label (2) of a noisy one.

    Data as main.py draws it (its final stream by default), training set then test set from one numpy stream
    seeded once (as a notebook does):
    with the seed drawn again, as main.py does, the test inputs would be the training inputs (n_test = n), and
    the benign column could not reach the test accuracy 1.0 the paper shows. Returns p and, for each set, its
    scores, outputs f and accuracy against its labels.
    """
    if train is None or test is None:
        rng = generator(seed, stream)
        train = draw(rng, n, d, signal_norm, T=T, rho=rho, noise_ratio=noise_ratio, dtype=dtype)
        test = draw(rng, n_test, d, signal_norm, T=T, rho=rho, dtype=dtype)
    dtype = str(train["X"].dtype).removeprefix("torch.")
    vmu_1, vmu_2 = signals(d, signal_norm, dtype)
    p = vmu_1 + vmu_2
    for i in range(len(train["y"])):
        clean_class = vmu_1 if train["y_clean"][i] == 1 else vmu_2
        if train["noisy"][i]:  # token 2 carries ρ μ of the other class, the flipped label's
            xi = train["X"][i, 2] - rho * (vmu_2 if train["y_clean"][i] == 1 else vmu_1)
        else:
            xi = train["X"][i, 0] - clean_class
        p = p + c * xi
    nu = linear_head(d, signal_norm, dtype)
    out = {"p": p}
    for name, data in (("train", train), ("test", test)):
        scores = torch.softmax(data["X"] @ p, dim=-1)  # X W p with W = I
        f = (scores * (data["X"] @ nu).squeeze(-1)).sum(-1)
        out[name] = {"scores": scores, "f": f, "accuracy": (f * data["y"] > 0).double().mean().item(), "data": data}
    return out


# --- the one-layer encoder of main_one_layer.py --------------------------------------------------------------------

class SingleHeadAttention(nn.Module):
    """Pre-LayerNorm single-head self-attention, fused bias-free q, k, v, scale d^{-1/2}."""

    def __init__(self, dim: int):
        super().__init__()
        self.scale = dim ** -0.5
        self.norm = nn.LayerNorm(dim)
        self.attend = nn.Softmax(dim=-1)
        self.to_qkv = nn.Linear(dim, dim * 3, bias=False)

    def forward_with_scores(self, x: torch.Tensor):
        q, k, v = self.to_qkv(self.norm(x)).chunk(3, dim=-1)
        attn = self.attend(torch.matmul(q, k.transpose(-1, -2)) * self.scale)
        return torch.matmul(attn, v), attn


class FeedForward(nn.Module):
    """LayerNorm, Linear(d, hidden), GELU, Dropout(0), Linear(hidden, d), Dropout(0)."""

    def __init__(self, dim: int, hidden_dim: int, dropout: float = 0.0):
        super().__init__()
        self.net = nn.Sequential(nn.LayerNorm(dim), nn.Linear(dim, hidden_dim), nn.GELU(), nn.Dropout(dropout),
                                 nn.Linear(hidden_dim, dim), nn.Dropout(dropout))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.net(x)


class OneLayerEncoder(nn.Module):
    """[CLS] ~ N(0, I) prepended; attention (+ input), MLP (+ its input), final LayerNorm, linear head on [CLS].
    Without skip connections the MLP reads the attention output alone. Parameters created in their order."""

    def __init__(self, dim: int, mlp_dim: int, use_skip_connection: bool = True):
        super().__init__()
        self.use_skip_connection = use_skip_connection
        self.attn = SingleHeadAttention(dim)
        self.ff = FeedForward(dim, mlp_dim)
        self.norm = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, 1)
        self.cls_token = nn.Parameter(torch.randn(1, 1, dim))

    def forward_with_scores(self, x: torch.Tensor):
        x = torch.cat((self.cls_token.expand(x.shape[0], 1, -1), x), dim=1)
        out, attention_scores = self.attn.forward_with_scores(x)
        if self.use_skip_connection:
            x = out + x
            x = self.ff(x) + x
        else:
            x = self.ff(out)
        return self.head(self.norm(x)[:, 0]).squeeze(1), attention_scores[:, 0, 1:]  # [CLS] row, input tokens

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.forward_with_scores(x)[0]


def one_layer(d: int, signal_norm: float, *, hidden: int = 2000, skip: bool = True, n: int = 20, n_test: int = 1000,
              T: int = 8, rho: float = 0.1, noise_ratio: float = 0.2, learning_rate: float = 5e-3,
              num_steps: int = 1000, seed: int = 42, stream: str = "final", log_interval: int = 10,
              evaluate_test: bool = True, dtype: str = "float32", train: dict | None = None,
              test: dict | None = None, init: dict | None = None) -> dict:
    """main_one_layer.py (c563aae): SGD on every parameter over the full batch; each step logs its loss and the
    [CLS] attention on the input tokens (before its update); after every `log_interval`-th update, train and test
    accuracy and loss. Returns `loss`, `scores` (num_steps, n, T), `stats`, `final`, the model, its data and its
    initial state dict `init`. `init` given (a state dict) replaces their seeded initialisation (tests)."""
    data = dict(seed=seed, stream=stream, T=T, rho=rho, dtype=dtype)
    train = train if train is not None else dataset(n, d, signal_norm, noise_ratio=noise_ratio, **data)
    if evaluate_test and test is None:
        test = dataset(n_test, d, signal_norm, **data)
    with seeded(seed):
        model = OneLayerEncoder(d, hidden, use_skip_connection=skip).to(DTYPES[dtype])
    if init is not None:
        model.load_state_dict(init)
    init = {name: value.detach().clone() for name, value in model.state_dict().items()}
    return {**sgd_loop(model, list(model.parameters()), train, test if evaluate_test else None,
                       learning_rate=learning_rate, num_steps=num_steps, log_interval=log_interval), "init": init}


ENCODER_NAMES = {"attn.norm": "attn_norm", "attn.to_qkv": "to_qkv", "ff.net.0": "mlp_norm", "ff.net.1": "mlp_in",
                 "ff.net.4": "mlp_out", "norm": "norm", "head": "head"}  # their modules → benign.models'


def encoder_parameters(state: dict) -> dict:
    """Their encoder's state dict under the names and shapes of `benign.models.OneLayerEncoder` ([CLS] (d,)), as
    `benign.encoder.simulate` takes an initialisation."""
    out = {}
    for name, value in state.items():
        module, dot, kind = name.rpartition(".")
        out[ENCODER_NAMES[module] + dot + kind if dot else name] = value if dot else value.reshape(-1)
    return out


# --- sweep kernels: final numbers of many runs, for `benign.sweep.run` (chunked by d and seed, cached) -------------

SETTINGS = ("d", "signal_norm", "seed", "stream", "n", "n_test", "T", "rho", "noise_ratio", "learning_rate",
            "num_steps", "dtype")


def _final_row(point: dict, train_acc, train_loss, test_acc=None, test_loss=None) -> dict:
    row = {**point, "train_acc": float(train_acc), "train_loss": float(train_loss)}
    if test_acc is not None:
        row.update(test_acc=float(test_acc), test_loss=float(test_loss))
    return row


def _settings(point: dict, allowed: tuple) -> dict:
    unknown = sorted(set(point) - set(allowed))
    if unknown:
        raise ParameterError(f"unknown parameter {unknown[0]!r} for this kernel: use one of {', '.join(allowed)}")
    return dict(point)


def main_chunk(points: list[dict]) -> list[dict]:
    """main.py's final train and test accuracy and loss for each point (one run each, evaluated once, after the
    last step; their every-10-steps evaluation changes nothing at the end)."""
    rows = []
    for point in points:
        kwargs = _settings(point, SETTINGS)
        with cpu_threads(1):  # long chains of small operations: more threads only slow them
            run = main(log_interval=kwargs.get("num_steps", 1000), **kwargs)
        f = run["final"]
        rows.append(_final_row(point, f["train_accuracy"], f["train_loss"], f["test_accuracy"], f["test_loss"]))
    return rows


def math_frak_side_by_side(runs: list[dict], signal_norms: list[float], *, learning_rate: float = 5e-3,
                           num_steps: int = 1000, n_relevant: int = 2, dtype: str = "float32") -> list[dict]:
    """`math_frak` for R runs of one d at once (the grid kernel: their per-step cost is all overhead at this size).

    `runs`: each a dict with its `train` set and optionally its `test` set; `signal_norms`: each run's ‖μ‖ (its
    head ν). The loss is the sum of the R runs' mean losses, so each run's p receives exactly its own run's gradient
    and SGD takes their step; the 𝔖 sums are theirs, per run. Returns, per run, what `math_frak` returns (the
    four sums and the final metrics).
    """
    X = torch.stack([r["train"]["X"] for r in runs])  # (R, n, T, d)
    y = torch.stack([r["train"]["y"] for r in runs])
    nu = torch.stack([linear_head(X.shape[-1], mu, dtype) for mu in signal_norms])  # (R, d, 1)
    p = nn.Parameter(torch.zeros(len(runs), X.shape[-1], 1, dtype=DTYPES[dtype]))
    optimizer = torch.optim.SGD([p], lr=learning_rate)

    def forward(inputs, values, r=slice(None)):  # outputs Σ_t s_t (x_t·ν) and scores softmax(X p) of every run
        scores = torch.softmax((inputs @ p[r, None]).squeeze(-1), dim=-1)
        return (scores * values).sum(-1), scores

    h = (X @ nu[:, None]).squeeze(-1)  # x_t·ν: their forward recomputes it every step, the same numbers each time
    clean = torch.stack([~r["train"]["noisy"] for r in runs])
    positive = y == 1
    groups = {"clean_1": clean & positive, "clean_2": clean & ~positive, "noisy_1": ~clean & positive,
              "noisy_2": ~clean & ~positive}
    sums = {k: torch.zeros(len(runs), dtype=torch.float64) for k in groups}
    for _ in range(num_steps):
        optimizer.zero_grad()
        output, scores = forward(X, h)
        logistic(output, y).mean(-1).sum().backward()
        optimizer.step()
        s_R = scores[..., :n_relevant].detach().double().sum(-1)  # their Python floats: float64
        for k, mask in groups.items():
            sums[k] += (s_R * (1.0 - s_R) * mask).sum(-1)
    out = []
    for r, run in enumerate(runs):
        row = {k: float(v[r]) for k, v in sums.items()}
        with torch.no_grad():
            for name, data in (("train", run["train"]), ("test", run.get("test"))):
                if data is not None:
                    inputs = data["X"][None]
                    f = forward(inputs, (inputs @ nu[r, None]).squeeze(-1), slice(r, r + 1))[0][0]
                    row[f"{name}_accuracy"] = (f * data["y"] > 0).sum().item() / len(data["y"])
                    row[f"{name}_loss"] = logistic(f, data["y"]).sum().item() / len(data["y"])
        out.append(row)
    return out


def math_frak_chunk(points: list[dict]) -> list[dict]:
    """main_math_frak.py for every point of a chunk (one d and seed), side by side: the four cumulative 𝔖 sums and
    the final metrics. Points whose data are the same (η values that flip the same samples) are one run; with
    `evaluate_test` False the test set (drawn with the training seed) is skipped, and points of one ‖μ‖ share it."""
    kwargs = [_settings(p, SETTINGS + ("n_relevant", "evaluate_test")) for p in points]
    shared = {k: kwargs[0].get(k, v) for k, v in dict(d=None, seed=0, stream="january", n=20, n_test=1000, T=8,
                                                      rho=0.1, learning_rate=5e-3, num_steps=1000, n_relevant=2,
                                                      evaluate_test=True, dtype="float32").items()}
    if any(k.get(key, shared[key]) != shared[key] for k in kwargs for key in shared):
        raise ParameterError(f"a chunk of math_frak_chunk must share {', '.join(shared)}: chunk by d and seed")
    data = {k: shared[k] for k in ("seed", "stream", "T", "rho", "n_relevant", "dtype")}
    runs, tests, which = {}, {}, []  # distinct runs: η values that flip the same samples give the same run
    for k in kwargs:
        train = dataset(shared["n"], shared["d"], k["signal_norm"], noise_ratio=k.get("noise_ratio", 0.2), **data)
        key = (k["signal_norm"], tuple(train["noisy"].tolist()))
        which.append(key)
        if key in runs:
            continue
        runs[key] = {"train": train}
        if shared["evaluate_test"]:
            if k["signal_norm"] not in tests:
                tests[k["signal_norm"]] = dataset(shared["n_test"], shared["d"], k["signal_norm"], **data)
            runs[key]["test"] = tests[k["signal_norm"]]
    with cpu_threads(1):  # long chains of small operations: more threads only slow them
        results = dict(zip(runs, math_frak_side_by_side(list(runs.values()), [key[0] for key in runs],
                                                        learning_rate=shared["learning_rate"],
                                                        num_steps=shared["num_steps"],
                                                        n_relevant=shared["n_relevant"], dtype=shared["dtype"])))
    rows = []
    for point, res in zip(points, (results[key] for key in which)):
        row = _final_row(point, res["train_accuracy"], res["train_loss"], res.get("test_accuracy"),
                         res.get("test_loss"))
        rows.append({**row, **{f"frak_{k}": res[k] for k in ("clean_1", "clean_2", "noisy_1", "noisy_2")}})
    return rows


def one_layer_chunk(points: list[dict]) -> list[dict]:
    """main_one_layer.py's final train and test accuracy and loss for each point (evaluated once, at the end), and
    the final mean [CLS] attention on the relevant token of clean and of noisy training samples."""
    rows = []
    for point in points:
        kwargs = _settings(point, SETTINGS + ("hidden", "skip"))
        with cpu_threads(1):  # long chains of small operations: more threads only slow them
            run = one_layer(log_interval=kwargs.get("num_steps", 1000), **kwargs)
        f, noisy = run["final"], run["train"]["noisy"]
        with torch.no_grad():
            relevant = run["model"].forward_with_scores(run["train"]["X"])[1][:, 0]  # after the last update
        rows.append({**_final_row(point, f["train_accuracy"], f["train_loss"], f["test_accuracy"], f["test_loss"]),
                     "attention_clean_relevant": float(relevant[~noisy].mean()),
                     "attention_noisy_relevant": float(relevant[noisy].mean()) if noisy.any() else float("nan")})
    return rows
