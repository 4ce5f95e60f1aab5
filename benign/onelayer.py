"""Figures 6 and 7, the one-layer Transformer encoder: how each run reads against its clean-label control, how its
[CLS] attention moved, Figure 7's map as a typed result (`EncoderMap`; Figure 6's is `benign.onelayer_dynamics`), and
the pages' sentences built from those numbers (the runs themselves are `benign.encoder`'s; nothing here keys a cache).

The encoder's head starts at random, so its step 0 is at chance and says nothing; a run is read against the same run
on clean labels (`encoder.noise_costs`). That cost alone cannot call a run benign: a run near chance whose clean-label
twin is near chance too loses nothing to the flipped labels because it generalizes nothing (`seed_reading`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from . import regimes, theory, thresholds, timing
from .data import RELEVANT
from .words import and_list, direction, percent, reader_name, share_words, signed, slope_words, span, trend

NEAR_CHANCE = "near_chance"  # a run that generalizes nothing, with or without the flipped labels
# Kept here, not in `benign.thresholds`: `benign.encoder` imports that module, so any edit of it re-keys the
# cache of every encoder run (Figures 6 and 7 recompute); move it there with the next recompute.
CHANCE_GAP = thresholds.Threshold(
    0.05, "test accuracy lost against a control that counts as a cost where both runs end near chance (below "
    "thresholds.NEAR_CHANCE): two classifiers near chance disagree on about half of the test samples, so on 1000 test "
    "samples (Figures 6 and 7) their accuracies differ by sampling alone with a standard error of about "
    "√(0.5/1000) ≈ 0.022, which HARM's 0.01 lies inside; 0.05 is more than two such errors")


def resolved_cost(test_acc, control_test_acc) -> np.ndarray:
    """Whether the flipped labels cost a run more test accuracy than its test set can tell from sampling: more than
    `thresholds.HARM` against its clean-label control, or, where both runs end near chance (below
    `thresholds.NEAR_CHANCE`), more than `CHANCE_GAP` — two runs near chance disagree on about half of the
    test samples, so a gap of `HARM` between them is sampling, not the flipped labels."""
    test, control = np.asarray(test_acc, dtype=float), np.asarray(control_test_acc, dtype=float)
    near = (test < thresholds.NEAR_CHANCE.value) & (control < thresholds.NEAR_CHANCE.value)
    return thresholds.beyond(control - test, np.where(near, CHANCE_GAP.value, thresholds.HARM.value))


def seed_reading(train_acc, test_acc, control_test_acc) -> np.ndarray:
    """Each run's regime against its clean-label control (`regimes.trained_regime`: not overfitting while a label is
    unfitted, harmful when the flipped labels cost more than `thresholds.HARM`, else benign), except that a run that
    ends below `thresholds.NEAR_CHANCE` and whose cost its test set cannot resolve (`resolved_cost`) reads
    `NEAR_CHANCE`, neither benign nor harmful: its clean-label twin is near chance too, and there was nothing to
    lose."""
    regime = regimes.trained_regime(train_acc, test_acc, control_test_acc)
    low = np.asarray(test_acc) < thresholds.NEAR_CHANCE.value
    unresolved = ~resolved_cost(test_acc, control_test_acc)
    return np.where(np.isin(regime, ["benign", "harmful"]) & low & unresolved, NEAR_CHANCE, regime)


def cost_words(costs: pd.DataFrame, test_threshold: float) -> str:
    """What the flipped labels cost a setting over its seeds (`encoder.noise_costs` rows of one setting), in words:
    on how many seeds more than its test set resolves (`resolved_cost`), then what the clean-label runs say of the
    rest. Where they end near chance on every seed (below `thresholds.NEAR_CHANCE`), the encoder generalizes nothing
    at this signal, with or without the flipped labels, and the gap it takes to resolve a cost is
    `CHANCE_GAP`; where they end below `test_threshold` on every seed, the low accuracy is (the rest of
    it, where some seed pays) the encoder's own; else, where most seeds pay, the loss is the flipped labels'."""
    harm, near, gap = thresholds.HARM.value, thresholds.NEAR_CHANCE.value, CHANCE_GAP.value
    paid = int(resolved_cost(costs.test_acc, costs.clean_test_acc).sum())
    seeds = share_words(paid, len(costs), "seed", "seeds")
    if costs.clean_test_acc.max() < near:
        return (f"the clean-label runs end near chance too (below {near:g} on every seed), where two runs differ by "
                f"up to {gap:g} by sampling alone: the flipped labels cost more than that on {seeds}, and at this "
                "signal the encoder generalizes nothing, with or without them")
    out = f"the flipped labels cost more than {harm:g} of test accuracy on {seeds}"
    if costs.clean_test_acc.max() < test_threshold:
        return out + (f": part of the loss is theirs, and the clean-label runs end below {test_threshold:g} too, so "
                      "the rest is the encoder's own at this signal" if paid else
                      f": the clean-label runs end below {test_threshold:g} too, so the low accuracy is the "
                      "encoder's own at this signal, not theirs")
    return out + (": the loss is theirs" if paid / len(costs) > thresholds.MAJORITY.value else "")


def readings_words(readings) -> str:
    """How a setting's seeds read (`seed_reading`), commonest first: 'all 3 seeds harmful', '2 of the 3 seeds near
    chance and 1 of the 3 seeds benign'."""
    readings = pd.Series(list(readings))
    return and_list([f"{share_words(k, len(readings), 'seed', 'seeds')} {reader_name(r)}"
                     for r, k in readings.value_counts().items()])


def attention_shift(scores: pd.DataFrame, run: str, noisy: bool) -> dict:
    """How a run's tracked clean (or noisy) training samples moved their [CLS] attention on the relevant token: the
    mean at step 0 (`start`) and at the last step (`end`), the standard error of the mean change over the samples
    (`se`; NaN for one sample), how many samples end above their step-0 value (`rising`) and how many there are
    (`count`)."""
    own = scores[(scores.run == run) & (scores.noisy == noisy) & (scores.token == RELEVANT)]
    first, last = (own[own.step == step].set_index("sample").score for step in (own.step.min(), own.step.max()))
    change = (last - first.loc[last.index]).to_numpy()
    se = float(change.std(ddof=1) / np.sqrt(len(change))) if len(change) > 1 else float("nan")
    return {"start": float(first.mean()), "end": float(last.mean()), "se": se, "rising": int((change > 0).sum()),
            "count": len(change)}


def _moved(shift: dict, kind: str) -> str:
    """'the mean attention of clean samples on their relevant token rises (0.09 at step 0, 0.25 at the end), 8 of
    the 16 rising': the direction word computed from the mean change and its standard error (`words.direction`)."""
    word = direction(shift["end"] - shift["start"], shift["se"])
    return (f"the mean attention of {kind} samples on their relevant token {word} ({shift['start']:.2f} at step 0, "
            f"{shift['end']:.2f} at the end), {share_words(shift['rising'], shift['count'], 'sample', 'samples')} "
            f"rising")


def _moves(shift: dict, way: str) -> bool:
    """Whether a group of samples moves `way` ('rises', 'falls'): its mean beyond `thresholds.SLOPE_SE` standard
    errors, and more than `thresholds.MAJORITY` of its samples."""
    share = (shift["rising"] if way == "rises" else shift["count"] - shift["rising"]) / shift["count"]
    return trend(shift["end"] - shift["start"], shift["se"]) == way and share > thresholds.MAJORITY.value


def claim_words(runs: dict) -> str:
    """Whether the claim's picture is seen on the plotted seed: where a run overfits benignly by the clean-label
    reading the verdict uses (`seed_reading`), clean samples move their attention towards the relevant token and
    noisy samples away from it.

    `runs`: setting → {"reading" (its `seed_reading`), "test_acc", "cost" (test accuracy the flipped labels cost
    against the same run on clean labels), "clean": `attention_shift` of its clean samples, "noisy": of its noisy
    ones}. A group moves when its mean does (beyond `thresholds.SLOPE_SE` standard errors) and most of its samples do
    (`thresholds.MAJORITY`). The sentence names the benign runs, says how both groups moved there and whether the
    clean mean ends above `thresholds.SELECTED` (the book's level for selecting a token), and gives the verdict:
    seen, seen only in part (one of the two moves), not seen; with no benign run, that the claim's condition never
    arises."""
    good = {name: run for name, run in runs.items() if run["reading"] == "benign"}
    reading = "by the clean-label reading the verdict uses"
    if not good:
        return (f"On the plotted seed no setting's run overfits benignly {reading}, so the claim's condition never "
                "arises and its picture is not seen.")
    moves = {name: f"{_moved(run['clean'], 'clean')}, and {_moved(run['noisy'], 'noisy')}"
             for name, run in good.items()}
    said = {name: f"test accuracy {run['test_acc']:.3f}, {signed(-run['cost'], '+.3f')} against the same run on clean "
                  "labels" for name, run in good.items()}
    if len(good) == 1:
        name = next(iter(good))
        out = (f"On the plotted seed only the {reader_name(name)} setting's run overfits benignly {reading} "
               f"({said[name]}). There {moves[name]}. ")
    else:
        out = (f"On the plotted seed the runs of the {and_list([reader_name(name) for name in good])} settings "
               f"overfit benignly {reading}. " +
               " ".join(f"In the {reader_name(name)} setting ({said[name]}) {text}." for name, text in moves.items())
               + " ")
    level = thresholds.SELECTED.value
    if all(run["clean"]["end"] <= level for run in good.values()):
        out += (f"The clean samples' mean stays at or below {level:g}, the level at which the book counts a token as "
                "selected: at most, attention leans towards the relevant token; it does not select it. ")
    towards = [_moves(run["clean"], "rises") for run in good.values()]
    away = [_moves(run["noisy"], "falls") for run in good.values()]
    if all(towards) and all(away):
        return out + "The claim's picture is seen here."
    if not any(towards) and not any(away):
        return out + ("The claim's picture is not seen in this build: neither do most clean samples move towards "
                      "the relevant token nor most noisy samples away from it.")
    missing = ("noisy samples' attention does not leave the relevant token" if all(towards) and not any(away) else
               "clean samples' attention does not move towards it" if all(away) and not any(towards) else
               "not every benign run shows both moves")
    return out + f"The claim's picture is seen only in part: {missing}."


def per_setting(values: dict, fmt: str) -> str:
    """Numbers of the settings as prose says them: '0.500 in every setting' when they read the same, else
    '0.500 (balanced), 0.520 (harmful) and 0.510 (not overfitting)'."""
    shown = {name: format(value, fmt) for name, value in values.items()}
    if len(set(shown.values())) == 1 and len(shown) > 1:
        return f"{next(iter(shown.values()))} in every setting"
    return and_list([f"{text} ({reader_name(name)})" for name, text in shown.items()])


def formatted(frame: pd.DataFrame, formats: dict) -> pd.DataFrame:
    """`frame` as a page shows it: each column named in `formats` written by its format spec ('.3f') or function
    (`words.reader_name`), the others as they are, so a table gives a number to the digits its prose does."""
    out = frame.copy()
    for column, how in formats.items():
        out[column] = out[column].map(how if callable(how) else lambda v, spec=how: format(v, spec))
    return out


def on_grid(settings: dict, d_values, mu_values) -> dict:
    """The settings {name: (d, ‖μ‖)} that lie on a grid of `d_values` by `mu_values` (within its ranges)."""
    return {name: (d, mu) for name, (d, mu) in settings.items()
            if min(d_values) <= d <= max(d_values) and min(mu_values) <= mu <= max(mu_values)}


def marked_words(settings: dict, d_values, mu_values) -> str:
    """Which settings {name: (d, ‖μ‖)} a map marks (`on_grid`) and where the others lie:
    'balanced (d = 200, ‖μ‖ = 11.2) and harmful (d = 500, ‖μ‖ = 2.81); not overfitting (d = 100, ‖μ‖ = 56.2) lies
    above the grid's largest ‖μ‖, 53.4, and has no star'."""
    def cell(name: str) -> str:
        d, mu = settings[name]
        return f"{reader_name(name)} (d = {d:g}, ‖μ‖ = {mu:.3g})"

    shown = on_grid(settings, d_values, mu_values)
    said = and_list([cell(name) for name in shown]) if shown else "none of them"
    for name, (d, mu) in settings.items():
        if name in shown:
            continue
        where = [f"{side} the grid's {'largest' if side == 'above' else 'smallest'} {axis}, {edge:.3g}"
                 for axis, value, values in (("d", d, d_values), ("‖μ‖", mu, mu_values))
                 for side, edge in (("above", max(values)), ("below", min(values)))
                 if (value > edge if side == "above" else value < edge)]
        said += f"; {cell(name)} lies {and_list(where)}, and has no star"
    return said


def grid_words(d_values, mu_values) -> str:
    """A map's grid as run: 'd = 50 to 500 and ‖μ‖ = 2.81 to 53.4, 7 × 7 cells'."""
    return (f"d = {span(f'{min(d_values):g}', f'{max(d_values):g}', ' to ')} and "
            f"‖μ‖ = {span(f'{min(mu_values):.3g}', f'{max(mu_values):.3g}', ' to ')}, "
            f"{len(d_values)} × {len(mu_values)} cells")


def value_span(values, fmt: str = ".3f") -> str:
    """Numbers (a setting's over its seeds, a map's over its cells) as a range: '0.711 to 0.928', or the one number
    when both ends read the same (`words.span`)."""
    return span(format(min(values), fmt), format(max(values), fmt))


def against(low: float, high: float, limits: tuple) -> str:
    """Where values from `low` to `high` lie against a colour range `limits`: 'below', 'above', 'within' or
    'partly inside'."""
    return ("below" if high < limits[0] else "above" if low > limits[1]
            else "within" if limits[0] <= low and high <= limits[1] else "partly inside")


def ranges_words(ours: str, theirs: str, loss: str) -> str:
    """Ours and the authors' `loss` ('train', 'test') losses against the paper's colour range for them (`against`'s
    words), as one clause: 'like ours, its train losses lie below the paper's train-loss colour range' or, where
    they differ, 'its train losses lie below the paper's train-loss colour range, ours within it'."""
    if ours == theirs:
        return f"like ours, its {loss} losses lie {theirs} the paper's {loss}-loss colour range"
    return f"its {loss} losses lie {theirs} the paper's {loss}-loss colour range, ours {ours} it"


def fitted_words(train_acc: dict) -> str:
    """Whether the plotted runs (setting → final train accuracy) fit every training label, as a sentence."""
    fitted = [reader_name(name) for name, value in train_acc.items() if value == 1]
    if len(fitted) == len(train_acc):
        return "Every setting's plotted run ends with every training label fitted (train accuracy 1.000)."
    listed = per_setting(train_acc, ".3f")  # as the table gives it
    if not fitted:
        return f"No setting's plotted run fits every training label: train accuracy {listed}."
    runs = f"the {fitted[0]} setting's run fits" if len(fitted) == 1 else f"the {and_list(fitted)} settings' runs fit"
    return f"The plotted runs end at train accuracy {listed}: only {runs} every training label."


def landed_words(shares: dict) -> str:
    """Whether the settings land in the regime they are named after (setting → share of its seeds that do), as
    the ledger judges it (`rules.encoder_rule`: a setting lands when more than `thresholds.MAJORITY` of its seeds
    do), in one sentence."""
    landed = [reader_name(name) for name, share in shares.items() if share > thresholds.MAJORITY.value]
    if all(share == 1 for share in shares.values()):
        return "Every setting lands in the regime it is named after on every seed."
    if not landed:
        return "No setting lands in the regime it is named after on most of its seeds."
    return (f"Only the {and_list(landed)} setting{'s' if len(landed) > 1 else ''} land"
            f"{'' if len(landed) > 1 else 's'} in the regime it is named after on most of its seeds.")


def clean_below_words(harmful: int, below: int, threshold: float) -> str:
    """Of the `harmful` cells the paper's threshold calls harmful, the `below` ones whose run on clean labels scores
    under the threshold too (their low test accuracy is not the flipped labels'), as a clause: '12 of which have a
    clean-label run below 0.95 too', 'none of which has …', 'all of which have …'."""
    if harmful == 0:
        return "so no cell is set against its clean-label run"
    if harmful == 1:
        return f"and its clean-label run scores {'below' if below else 'at least'} {threshold:g}{' too' if below else ''}"
    which = "none" if below == 0 else "all" if below == harmful else str(below)
    verb = "has" if below == 1 or below == 0 else "have"
    return f"{which} of which {verb} a clean-label run below {threshold:g}" + ("" if below == 0 else " too")


NAMED_REGIME = {"balanced": "benign", "harmful": "harmful", "not_overfitting": "not_overfitting"}  # Figure 7's cells
PAPER_LOSS_LIMITS = {"train_loss": (0.405, 0.55), "test_loss": (0.41, 0.64)}  # Figure 7's colour limits


def against_clean_runs(runs: pd.DataFrame, noise_ratio: float, test_threshold: float) -> pd.DataFrame:
    """Figure 7's sweep (every cell at η and on clean labels) as one row per cell at η, with its clean-label run's
    test accuracy and what the flipped labels cost against it (`regimes.against_clean_labels`), the paper's threshold
    rule (`regime`: `theory.observed_regime`) and the reading against the clean run (`regime_trained`:
    `seed_reading`)."""
    cells = regimes.against_clean_labels(runs, noise_ratio)
    cells["regime"] = theory.observed_regime(cells.train_acc, cells.test_acc, test_threshold)
    cells["regime_trained"] = seed_reading(cells.train_acc, cells.test_acc, cells.clean_test_acc)
    return cells


@dataclass(frozen=True)
class EncoderMap:
    """Figure 7's map as its page and the claims ledger read it (`rules.encoder_regions_rule`); `metrics()` gives
    the numbers and sentences under the keys they glue and read."""

    cells: pd.DataFrame  # one row per cell (`against_clean_runs`)
    d_values: list  # the grid as run
    mu_values: list
    named: dict  # Figure 7's named cells as run: name → (d, ‖μ‖)
    test_threshold: float

    def shares(self, column: str, keys) -> dict[str, float]:
        return {k: float(v) for k, v in self.cells[column].value_counts(normalize=True)
                .reindex(list(keys), fill_value=0.0).items()}

    def slope(self, axis: str) -> tuple[float, float]:
        """The test loss's least-squares slope against log d or log ‖μ‖ over the cells, and its standard error."""
        return timing.line_fit(np.log(self.cells[axis]), self.cells.test_loss)

    def metrics(self) -> dict:
        cells, threshold = self.cells, self.test_threshold
        out = {f"{key}_{end}": float(getattr(cells[key], end)()) for key in ("train_loss", "test_loss")
               for end in ("min", "max")}
        out |= {f"share_{k}": v for k, v in self.shares("regime", theory.REGIMES).items()}
        trained = self.shares("regime_trained", (*theory.REGIMES, NEAR_CHANCE))
        out |= {f"share_{k}_trained": v for k, v in trained.items()}
        inside = {key: cells[key].between(*limits) for key, limits in PAPER_LOSS_LIMITS.items()}
        out |= {"noise_cost_max": float(cells.noise_cost.max()),
                "clean_test_acc_min": float(cells.clean_test_acc.min()),
                **{f"share_{key}_in_paper_limits": float(v.mean()) for key, v in inside.items()},
                "train_loss_against_paper": against(cells.train_loss.min(), cells.train_loss.max(),
                                                    PAPER_LOSS_LIMITS["train_loss"]),
                **{f"{key}_span": value_span(cells[key]) for key in ("train_loss", "test_loss")}}
        out |= {f"{key}_words": percent(out[key]) for key in
                ("share_benign", "share_harmful", "share_not_overfitting", "share_train_loss_in_paper_limits",
                 "share_test_loss_in_paper_limits", "share_benign_trained", "share_harmful_trained",
                 "share_near_chance_trained")}
        below = cells[cells.regime == "harmful"]
        clean_below = int((below.clean_test_acc < threshold).sum())
        out |= {"harm_words": percent(thresholds.HARM.value),  # the test accuracy a harmful cell loses, at least
                "near_chance_value": thresholds.NEAR_CHANCE.value,  # below it a run and its twin may read near chance
                "harmful_by_rule_words": share_words(len(below), len(cells), "cell", "cells"),
                "harmful_clean_below_share": clean_below / len(below) if len(below) else None,
                "harmful_clean_below_words": clean_below_words(len(below), clean_below, threshold),
                "share_fitted_words": percent(1 - out["share_not_overfitting"]),  # every training label fitted
                "region_share": thresholds.REGION.value, "region_share_words": percent(thresholds.REGION.value),
                "test_threshold_value": threshold, "grid_words": grid_words(self.d_values, self.mu_values),
                "marked_words": marked_words(self.named, self.d_values, self.mu_values),
                "test_loss_in_paper_limits_words": share_words(int(inside["test_loss"].sum()), len(cells), "cell",
                                                               "cells"),
                "trend_errors": thresholds.SLOPE_SE.value}
        for axis, word in (("d", "d"), ("signal_norm", "‖μ‖")):
            slope, se = self.slope(axis)
            out |= {f"test_loss_slope_log_{axis}": slope, f"test_loss_slope_log_{axis}_se": se,
                    f"test_loss_trend_{axis}": slope_words(slope, se, f"grows towards large {word}",
                                                           f"falls towards large {word}",
                                                           f"shows no measurable trend in {word}")}
        worst = cells.loc[cells.test_loss.idxmax()]
        out |= {"test_loss_max_d": int(worst.d), "test_loss_max_signal_norm": float(worst.signal_norm),
                "test_loss_max_cell": f"d = {int(worst.d)}, ‖μ‖ = {worst.signal_norm:.3g}"}
        cell = cells.set_index(["d", "signal_norm"])
        for name, key in self.named.items():
            if key in cell.index:
                out |= {f"{name}_{column}": float(cell.loc[key, column])
                        for column in ("train_acc", "test_acc", "test_loss")}
                out[f"{name}_as_named"] = float(cell.loc[key, "regime"] == NAMED_REGIME[name])
        return out
