"""Tidy tables of paper 1's trainers (the exact token-selection trainer and the one-layer encoder), shared by both.

A simulation of R runs over S steps gives three tables:
- history: one row per run × step — train loss and accuracy every step, test loss and accuracy at the logged
  steps (NaN elsewhere), and the mean attention per token type of clean and of noisy training samples;
- scores: one row per run × step × tracked training sample × token — that token's attention score;
- final: one row per run — its data settings and final metrics.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import torch

from .data import TOKEN_TYPES


def default_track(noisy: torch.Tensor) -> list[int]:
    """The training samples whose score rows are kept by default: the first clean one, then the first noisy one."""
    clean = (~noisy).nonzero()
    first = [int(clean[0]) if len(clean) else 0]
    return first + ([int(noisy.nonzero()[0])] if noisy.any() else [])


def group_weights(masks: list[torch.Tensor]) -> torch.Tensor:
    """(R, n, G) averaging weights for G sample groups given as (R, n) masks; an empty group gets NaN weights."""
    w = torch.stack(masks, dim=-1).double()
    return w / w.sum(1, keepdim=True)


def type_means(scores: torch.Tensor, noisy: torch.Tensor, types: torch.Tensor) -> torch.Tensor:
    """Mean score per token type for clean and for noisy samples: scores (S, R, n, T) → (S, R, 2, len(TOKEN_TYPES))."""
    grp = group_weights([~noisy, noisy]).to(scores.dtype)
    typ = torch.stack([(types == k) for k in range(len(TOKEN_TYPES))], -1).to(scores.dtype)
    return torch.einsum("srnt,rng,tk->srgk", scores, grp, typ / typ.sum(0, keepdim=True))  # NaN for an absent type


def history(labels, loss, acc, means, log_steps, test_loss, test_acc) -> pd.DataFrame:
    """The history table from train loss and accuracy (S, R), type means (S, R, 2, types) and the test metrics at
    the logged steps (L, R)."""
    S, R = loss.shape
    cols = {"run": np.repeat(np.array(labels, dtype=object)[None], S, 0).ravel(),
            "step": np.repeat(np.arange(S), R),
            "train_loss": loss.double().cpu().numpy().ravel(),
            "train_acc": acc.double().cpu().numpy().ravel()}
    for name, logged in (("test_loss", test_loss), ("test_acc", test_acc)):
        full = np.full((S, R), np.nan)
        full[log_steps] = logged.numpy()
        cols[name] = full.ravel()
    tm = means.double().cpu().numpy()
    for g, group in enumerate(("clean", "noisy")):
        for t, name in enumerate(TOKEN_TYPES):
            cols[f"score_{group}_{name}"] = tm[:, :, g, t].ravel()
    return pd.DataFrame(cols)


def scores(labels, tracked: torch.Tensor, track: list[int], noisy: torch.Tensor) -> pd.DataFrame:
    """The scores table from the tracked samples' scores (S, R, K, T)."""
    S, R, K, T = tracked.shape
    idx = np.indices((S, R, K, T)).reshape(4, -1)
    noisy = noisy.cpu().numpy()
    return pd.DataFrame({
        "run": np.array(labels, dtype=object)[idx[1]],
        "step": idx[0],
        "sample": np.array(track)[idx[2]],
        "noisy": noisy[idx[1], np.array(track)[idx[2]]],
        "token": idx[3],
        "score": tracked.double().cpu().numpy().ravel(),
    })


def final(runs, labels, history_table: pd.DataFrame, num_steps: int) -> pd.DataFrame:
    """The final table: each run's data settings and its metrics at the last step."""
    last = history_table[history_table.step == num_steps].set_index("run")
    rows = []
    for run, label in zip(runs, labels):
        p = run.train.params
        rows.append({"run": label, "d": p["d"], "signal_norm": p["signal_norm"], "n": p["n"], "T": p["T"],
                     "rho": p["rho"], "noise_ratio": p["noise_ratio"], "seed": p["seed"],
                     **last.loc[label, ["train_loss", "train_acc", "test_loss", "test_acc"]].to_dict()})
    return pd.DataFrame(rows)


def seed_spread(metrics: dict, key: str, values) -> None:
    """`key_min` and `key_max` over the seeds' values of a headline number (the plotted run's stays `key`)."""
    values = [float(v) for v in values]
    metrics[f"{key}_min"], metrics[f"{key}_max"] = min(values), max(values)


def median_sample(scores: pd.DataFrame, run: str, samples, token: int = 0) -> int:
    """The representative of a group of tracked training samples: the one whose final score on `token` (default:
    the relevant token) is the median of the group's (the lower one for an even group)."""
    last = scores[(scores.run == run) & (scores.step == scores.step.max()) & (scores.token == token)
                  & scores["sample"].isin(list(samples))].sort_values(["score", "sample"])
    return int(last["sample"].iloc[(len(last) - 1) // 2])


def final_share(scores: pd.DataFrame, run: str, sample: int, tokens) -> float:
    """The share of its attention row that one tracked training sample of one run puts, at that run's last step, on
    the token positions `tokens` (in [0, 1]; the scores table holds every run of a simulation, so the run is named)."""
    own = scores[scores.run == run]
    last = own[(own.step == own.step.max()) & (own["sample"] == sample) & own.token.isin([int(t) for t in tokens])]
    if last.empty:
        raise ValueError(f"no final scores of sample {sample} in run {run!r}: it is not a tracked sample of that run")
    return float(last.score.sum())
