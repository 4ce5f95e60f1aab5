"""Outcomes over many draws: how often a setting lands where the paper puts it.

One run is one draw of the data (and of W₀); a verdict read off it is a verdict on that draw. The functions here run
a setting over many draws and return one row per draw (a tidy table), and turn such a table into headline numbers
(`spread`) and words (`fitted_words`, `gain_words`, `spread_words`).

- `dynamics_outcomes`: Figure 3's settings, W and p trained from p = 0 by the exact fast trainer
  (`benign.synthetic.simulate`, the draws of a setting batched) on the authors' data stream and initialisation:
  draw `seed` is the authors' main.py at that seed (`authors_run`) — its training set, and W₀ drawn right after
  `torch.manual_seed(seed)` as `benign.authors` draws it. Every draw of a setting is scored on one clean test set of
  that setting (`authors_test`), so the draws differ by their training data and W₀ only.
- `handbuilt_outcomes`: Figure 1's hand-built queries (W = I, `benign.synthetic.handbuilt_p`) over draws of the data
  (`benign.data.make_train_test`).
"""

from __future__ import annotations

import pandas as pd

from . import authors, synthetic, thresholds
from .checks import ParameterError, check, check_all
from .data import Run, TokenData, make_train_test, signals, token_types
from .words import and_list, share_words, signed, span

W0_BYTES = 1 << 30  # the W₀ (float32, d × d each) that one batched trainer call holds at once


def _seeds(seeds) -> list[int]:
    seeds = [check("seed", s) for s in seeds]
    if not seeds or len(set(seeds)) != len(seeds):
        raise ParameterError(f"seeds = {seeds} is not allowed: give at least one draw, each seed once")
    return seeds


def token_data(arrays: dict, signal_norm: float, rho: float, seed) -> TokenData:
    """A data set of `benign.authors` (X as they store it, float32) as the fast trainer's TokenData."""
    n, T, d = arrays["X"].shape
    mu_pos, mu_neg, nu = signals(d, signal_norm)
    params = dict(n=n, d=d, signal_norm=signal_norm, T=T, rho=rho,
                  noise_ratio=float(arrays["noisy"].double().mean()), seed=seed)
    return TokenData(arrays["X"], arrays["y"], arrays["y_clean"], arrays["noisy"], token_types(T), mu_pos, mu_neg,
                     nu, params)


def authors_test(d: int, signal_norm: float, *, seed: int, n_test: int = 1000, T: int = 8, rho: float = 0.1,
                 stream: str = "final") -> TokenData:
    """A clean test set drawn as the authors draw one, from their stream seeded with [seed, 1]: a stream none of their
    training sets uses (they seed with one integer), so it shares no input with any draw's training set."""
    check_all(d=d, signal_norm=signal_norm, seed=seed, n_test=n_test, T=T, rho=rho)
    return token_data(authors.dataset(n_test, d, signal_norm, seed=[seed, 1], stream=stream, T=T, rho=rho),
                      signal_norm, rho, [seed, 1])


def authors_run(d: int, signal_norm: float, *, seed: int, n: int = 20, T: int = 8, rho: float = 0.1,
                noise_ratio: float = 0.2, stream: str = "final", test: TokenData | None = None,
                label: str = "") -> Run:
    """The training set and W₀ of the authors' main.py at `seed` as a Run of the fast trainer: their data stream
    (float32, their label-noise pattern) and their W₀ (kaiming_uniform_(a=√5), float32) drawn right after
    `torch.manual_seed(seed)`, as `benign.authors.main` draws both; `test` is the Run's test set."""
    check_all(d=d, signal_norm=signal_norm, seed=seed, n=n, T=T, rho=rho, noise_ratio=noise_ratio)
    train = authors.dataset(n, d, signal_norm, seed=seed, stream=stream, T=T, rho=rho, noise_ratio=noise_ratio)
    with authors.seeded(seed):
        W0 = authors.Attention(d, signal_norm).W.detach()
    return Run(token_data(train, signal_norm, rho, seed), test, W0, label)


def _fitted(train: TokenData, q) -> dict:
    """`synthetic.fit_counts` and the training accuracy they make."""
    counts = synthetic.fit_counts(train, q)
    return {**counts, "train_acc": (counts["clean_fitted"] + counts["noisy_fitted"]) / len(train.y)}


def dynamics_outcomes(settings: dict, seeds, *, n: int = 20, n_test: int = 1000, T: int = 8, rho: float = 0.1,
                      noise_ratio: float = 0.2, learning_rate: float = 5e-3, num_steps: int = 1000,
                      stream: str = "final", dtype: str = "float32", device: str = "auto") -> pd.DataFrame:
    """One row per setting × draw: Figure 3's model trained on W and p from p = 0 for `num_steps` steps, on draw
    `seed` of the authors' data and W₀ (`authors_run`), by the exact fast trainer.

    `settings` maps a name to (d, ‖μ‖). Columns: setting, d, signal_norm, seed; clean_fitted and noisy_fitted, the
    training samples of clean_count and noisy_count whose observed label the final q = Wp predicts, and train_acc;
    test_acc_step0 (p = 0: uniform attention, the fixed head alone), test_acc (after the last step) and
    test_gain (their difference), on the setting's one test set (`authors_test` at the first seed).
    """
    seeds = _seeds(seeds)
    check_all(n=n, n_test=n_test, T=T, rho=rho, noise_ratio=noise_ratio, learning_rate=learning_rate,
              num_steps=num_steps, dtype=dtype, device=device)
    rows = []
    for name, (d, signal_norm) in settings.items():
        test = authors_test(d, signal_norm, seed=seeds[0], n_test=n_test, T=T, rho=rho, stream=stream)
        per_call = max(1, W0_BYTES // (4 * d * d))
        for start in range(0, len(seeds), per_call):
            runs = [authors_run(d, signal_norm, seed=s, n=n, T=T, rho=rho, noise_ratio=noise_ratio, stream=stream,
                                test=test, label=f"{name}_seed{s}") for s in seeds[start:start + per_call]]
            sim = synthetic.simulate(runs, learning_rate=learning_rate, num_steps=num_steps, log_every=num_steps,
                                     track=[0], dtype=dtype, device=device)
            test_acc = sim.history.set_index(["run", "step"]).test_acc
            for run, q in zip(runs, sim.q):
                first, last = test_acc[(run.label, 0)], test_acc[(run.label, num_steps)]
                rows.append({"setting": name, "d": d, "signal_norm": signal_norm, "seed": run.train.params["seed"],
                             **_fitted(run.train, q), "test_acc_step0": float(first), "test_acc": float(last),
                             "test_gain": float(last - first)})
    return pd.DataFrame(rows)


def handbuilt_outcomes(columns: dict, seeds, *, d: int = 10000, signal_norm: float = 20.0, n: int = 100,
                       n_test: int = 100, T: int = 8, rho: float = 0.2, noise_ratio: float = 0.2,
                       label_noise: str = "deterministic", authors_test_seed: bool = False) -> pd.DataFrame:
    """One row per column × draw: Figure 1's hand-built query (W = I, p = μ₊ + μ₋ + c Σᵢ ξᵢ,
    `benign.synthetic.handbuilt_p`) on the data of `seed` (`benign.data.make_train_test`). `columns` maps a name to
    its c. Columns: column, c, seed, clean_fitted of clean_count, noisy_fitted of noisy_count, train_acc, test_acc."""
    seeds = _seeds(seeds)
    rows = []
    for s in seeds:
        train, test = make_train_test(n, d, signal_norm, n_test=n_test, seed=s, T=T, rho=rho,
                                      noise_ratio=noise_ratio, label_noise=label_noise,
                                      authors_test_seed=authors_test_seed)
        for name, c in columns.items():
            p = synthetic.handbuilt_p(train, c)
            rows.append({"column": name, "c": c, "seed": s, **_fitted(train, p),
                         "test_acc": synthetic.attend(test, p)["acc"]})
    return pd.DataFrame(rows)


def spread(outcomes: pd.DataFrame, by: str, columns) -> dict:
    """Headline numbers of an outcome table, per group of its column `by`: `{group}_draws` (how many draws),
    `{group}_draws_none_fitted_share` and `{group}_draws_all_fitted_share` (the draws that fit none, and all, of
    their noisy training labels) and `{group}_draws_{column}_min`, `_median`, `_max` of each of `columns`."""
    out = {}
    for group, rows in outcomes.groupby(by, sort=False):
        out[f"{group}_draws"] = len(rows)
        out[f"{group}_draws_none_fitted_share"] = float((rows.noisy_fitted == 0).mean())
        out[f"{group}_draws_all_fitted_share"] = float((rows.noisy_fitted == rows.noisy_count).mean())
        for column in columns:
            for stat in ("min", "median", "max"):
                out[f"{group}_draws_{column}_{stat}"] = float(getattr(rows[column], stat)())
    return out


def spread_words(outcomes: pd.DataFrame, by: str, column: str, fmt: str) -> dict[str, str]:
    """Per group of the column `by`, how `column` spreads over the draws, its numbers formatted with `fmt`:
    `{group}_draws_{column}_span`, lowest to highest ('0.99 to 1.00', or '0.80 in every draw'), and
    `{group}_draws_{column}_median_words`, the median with that range ('0.60 (0.47 to 0.72)', '1.00 in every
    draw')."""
    words = {}
    for group, rows in outcomes.groupby(by, sort=False):
        low, median, high = (format(float(getattr(rows[column], stat)()), fmt) for stat in ("min", "median", "max"))
        same = low == high
        words[f"{group}_draws_{column}_span"] = f"{low} in every draw" if same else span(low, high)
        words[f"{group}_draws_{column}_median_words"] = (f"{median} in every draw" if same
                                                          else f"{median} ({span(low, high)})")
    return words


def sides_words(above: int, total: int, line: str = "it", rest: str = "at chance") -> str:
    """How `total` draws fall about a line, `above` of them on or above it: 'all 4 draws lie above it', '31 of the
    50 draws lie above it and the other 19 are at chance', 'no draw lies above it: all 50 are at chance'."""
    if above == 0:
        return f"no draw lies above {line}: {'the only one is' if total == 1 else f'all {total} are'} {rest}"
    if above == total:
        return f"{share_words(above, total, 'draw', 'draws')} {'lies' if total == 1 else 'lie'} above {line}"
    others = total - above
    return (f"{_draws(above, total, 'lies', 'lie')} above {line} and the other {others} "
            f"{'is' if others == 1 else 'are'} {rest}")


def cost_by_seed_words(costs, seeds, harm: float) -> str:
    """What the flipped labels cost a setting seed by seed (test accuracy against the same run on clean labels, in
    the order of `seeds`, the plotted seed first), as measured, against the harm threshold `harm`: 'against the same
    run on clean labels the flipped labels cost +0.014 (seed 42, plotted), +0.006 (seed 43) and +0.012 (seed 44):
    more than 0.01 on 2 of the 3 seeds, where the loss is theirs, and at most 0.01 on the other one, where it is
    training's'."""
    said = and_list([f"{signed(c, '+.3f')} (seed {s}{', plotted' if k == 0 else ''})"
                     for k, (s, c) in enumerate(zip(seeds, costs))])
    paid = int(thresholds.beyond(costs, harm).sum())
    out = (f"against the same run on clean labels the flipped labels cost {said}: more than {harm:g} on "
           f"{share_words(paid, len(costs), 'seed', 'seeds')}")
    if paid == len(costs):
        return out + ", where the loss is theirs"
    if paid == 0:
        return out + ", so the loss is training's, not the flipped labels'"
    rest = len(costs) - paid
    return (out + f", where the loss is theirs, and at most {harm:g} on the other "
            f"{'one' if rest == 1 else rest}, where it is training's")


def _draws(k: int, total: int, one: str, many: str) -> str:
    """`words.share_words` over draws with its verb in the right number: 'none of the 50 draws fit', 'neither draw
    fits', 'the only draw fits', '1 of the 50 draws fits', 'all 50 draws fit'."""
    return f"{share_words(k, total, 'draw', 'draws')} {one if k == 1 or (k == 0 and total <= 2) else many}"


def fitted_words(outcomes: pd.DataFrame, by: str) -> dict[str, str]:
    """Per group of the column `by`, `{group}_draws_fitted_words`: how many draws fit none and all of their noisy
    training labels (the paper's places), and how many fit some (when any does) with how many they fit, each number
    said once."""
    words = {}
    for group, rows in outcomes.groupby(by, sort=False):
        total, counts = len(rows), rows.noisy_fitted
        every = int(rows.noisy_count.iloc[0])
        none, all_ = int((counts == 0).sum()), int((counts == rows.noisy_count).sum())
        some = total - none - all_
        parts = [_draws(none, total, "leaves", "leave") + " every noisy label unfitted",
                 _draws(all_, total, "fits", "fit") + f" all {every}"]
        if some:
            partial = sorted(counts[(counts > 0) & (counts < every)].value_counts().items())
            listing = (f"{int(partial[0][0])} of the {every} in {'it' if some == 1 else 'each'}" if len(partial) == 1
                       else and_list([f"{int(k)} in {v} {'draw' if v == 1 else 'draws'}" for k, v in partial]))
            parts.append(_draws(some, total, "fits", "fit") + f" some but not all ({listing})")
        words[f"{group}_draws_fitted_words"] = and_list(parts)
    return words


def gain_words(outcomes: pd.DataFrame, by: str) -> dict[str, str]:
    """Per group of the column `by`, `{group}_draws_gain_words`: how many draws end with a test accuracy below, level
    with and above their step 0's (the head alone), naming only the cases that occur."""
    words = {}
    for group, rows in outcomes.groupby(by, sort=False):
        total, gain = len(rows), rows.test_gain
        cases = [(int((gain < 0).sum()), "below it"), (int((gain == 0).sum()), "level with it"),
                 (int((gain > 0).sum()), "above it")]
        words[f"{group}_draws_gain_words"] = and_list([_draws(k, total, "ends", "end") + f" {where}"
                                                   for k, where in cases if k])
    return words


def head_level_words(medians: dict[str, float], head: float, harm: float) -> str:
    """Which hand-built columns test at the fixed head's own level over the draws — a median test accuracy of at
    least `head` − `harm` — as the Figure-1 page says it; `medians` by column name (`not_overfitting` is said
    "not-overfitting")."""
    kept = [name.replace("_", "-") for name, median in medians.items() if median >= head - harm]
    if not kept:
        return "no column tests at that level (median over the draws)"
    tests = "columns test" if len(kept) > 1 else "column tests"
    return f"the {and_list(kept)} {tests} at that level (median over the draws), the head's own"
