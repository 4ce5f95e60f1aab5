"""What Figure 3's page reads off its runs, as one typed result (`Dynamics`): the plotted seed's end in each of the
paper's three settings (`plotted_ends`: mean attention per token type, the median samples' shares), every seed's
fit counts and controls (`seed_table`: against its own step 0 and the same run on clean labels), the draws
(`Draws`: how often a setting lands where the paper puts it) and the authors' script's final rows. `metrics()` gives
the flat record the page glues, the claims ledger reads (`rules.regime_rule`) and the comparison table compares,
every key built in one place. The runs themselves are `benign.synthetic`'s and `benign.draws`'; nothing here keys
a cache.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from . import draws, expected, synthetic, tables, theory, thresholds, verdicts
from .data import IRRELEVANT
from .words import and_list, reader_name, share_words

NAME = "fig3_dynamics"  # the notebook whose record this is
NAMED_REGIME = {"balanced": "benign", "large_noise": "harmful", "large_signal": "not_overfitting"}  # the paper's names
STREAM_WORDS = {"final": "the final main.py's data stream", "january": "the January scripts' data stream"}
FINAL = ("train_acc", "test_acc", "train_loss", "test_loss")  # each run's end, as the trainer's final table has it
COUNTS = ("clean_fitted", "clean_count", "noisy_fitted", "noisy_count")  # `synthetic.fit_counts`
CONTROLS = ("test_acc_step0", "test_gain", "clean_labels_test_acc", "noise_cost", "test_attention_relevant")
SCORES = ("score_clean_relevant", "score_noisy_relevant", "score_noisy_weak_opposite")  # the page quotes these
NOISY_NAMED = ("score_noisy_relevant", "score_noisy_weak_aligned", "score_noisy_weak_opposite")  # not irrelevant


def three_digits(values) -> list[float]:
    """SNR and n·SNR² as the table shows them: three significant digits."""
    return [float(f"{v:.3g}") for v in values]


def settings_table(final: pd.DataFrame, settings: dict, n: int) -> pd.DataFrame:
    """The plotted seed's run of each setting (`final`: the trainer's final table) with its SNR, n·SNR² and the
    region the theorem's orders put it in, every constant one."""
    plotted = final[final.run.isin(list(settings))]
    return plotted.assign(SNR=three_digits(theory.snr(plotted.signal_norm, plotted.d)),
                          n_snr2=three_digits(theory.n_snr2(plotted.signal_norm, plotted.d, n)),
                          regime_by_order=theory.regime(plotted.signal_norm, plotted.d, n)) \
        .rename(columns={"run": "setting"})[["setting", "d", "signal_norm", "SNR", "n_snr2", "regime_by_order",
                                             "train_acc", "test_acc"]]


def shown_samples(scores: pd.DataFrame, noisy, settings: dict) -> dict[str, tuple[int, int]]:
    """Each setting's plotted samples: the median clean and the median noisy training sample of its plotted run by
    final attention on the relevant token (`tables.median_sample`); `noisy`, the plotted seed's flipped samples."""
    return {name: (tables.median_sample(scores, name, (~noisy).nonzero()[0]),
                   tables.median_sample(scores, name, noisy.nonzero()[0])) for name in settings}


def plotted_ends(sim: synthetic.Simulation, shown: dict, types) -> pd.DataFrame:
    """One row per setting (its index), the plotted run's last step: the mean attention per token type of clean and
    noisy training samples (the history's score columns), and the shares its median samples (`shown`) put on the
    irrelevant tokens (the noisy one) and on the relevant token (the clean one); `types`, the token types."""
    last = sim.history[sim.history.step == sim.history.step.max()].set_index("run")
    irrelevant = (types == IRRELEVANT).nonzero().flatten().tolist()
    rows = {name: {**last.loc[name, [*SCORES, "score_noisy_weak_aligned"]].to_dict(),
                   "shown_noisy_on_irrelevant": tables.final_share(sim.scores, name, noisy, irrelevant),
                   "shown_clean_relevant": tables.final_share(sim.scores, name, clean, [0])}
            for name, (clean, noisy) in shown.items()}
    return pd.DataFrame.from_dict(rows, orient="index")


def seed_table(sim: synthetic.Simulation, runs: list, clean_sim: synthetic.Simulation, clean_runs: list,
               settings: dict, seeds: list[int]) -> pd.DataFrame:
    """One row per setting × seed, the plotted seed (the first; its run labelled by the setting's name) first: the
    run's end, its fit counts and its controls (`synthetic.controls`: `clean_runs`, labelled name_seed<s>, are the
    same runs on clean labels)."""
    final = sim.final.set_index("run")
    rows = []
    for name in settings:
        labels = [name] + [f"{name}_seed{s}" for s in seeds[1:]]
        mine = [(run, q) for run, q in zip(runs, sim.q) if run.label in labels]
        control = synthetic.controls(sim, [run for run, _ in mine], clean_sim,
                                     [r for r in clean_runs if r.label in [f"{name}_seed{s}" for s in seeds]])
        for k, (run, q) in enumerate(mine):
            rows.append({"setting": name, "seed": run.train.params["seed"], **final.loc[run.label, list(FINAL)],
                         **synthetic.fit_counts(run.train, q), **{key: control[key][k] for key in CONTROLS}})
    return pd.DataFrame(rows)


@dataclass(frozen=True)
class Draws:
    """The settings over many draws of the data and W₀ (`draws.dynamics_outcomes`), and how often each lands where
    the paper puts it: every noisy label fitted, or none for large signal."""

    outcomes: pd.DataFrame  # one row per setting × draw
    stream: str  # the authors' data stream the draws come from (`STREAM_WORDS`)

    def histogram(self, name: str) -> list[int]:
        """How many draws of a setting fit 0, 1, … of its noisy labels, up to all of them."""
        rows = self.outcomes[self.outcomes.setting == name]
        return [int((rows.noisy_fitted == k).sum()) for k in range(int(rows.noisy_count.iloc[0]) + 1)]

    def landed(self) -> dict[str, str]:
        """Per setting, the draws that land where the paper puts it, in words ('all 50 draws')."""
        out = {}
        for name, rows in self.outcomes.groupby("setting", sort=False):
            as_paper = rows.noisy_fitted == (0 if NAMED_REGIME[name] == "not_overfitting" else rows.noisy_count)
            out[name] = share_words(int(as_paper.sum()), len(rows), "draw", "draws")
        return out

    def metrics(self) -> dict:
        outcomes, seeds = self.outcomes, self.outcomes.seed
        out = {**draws.spread(outcomes, "setting", ["test_acc", "test_gain"]),
               **draws.fitted_words(outcomes, "setting"), **draws.gain_words(outcomes, "setting"),
               **draws.spread_words(outcomes, "setting", "test_acc", ".3f"),
               "draw_seeds": f"{int(seeds.min())} to {int(seeds.max())}", "draw_stream": STREAM_WORDS[self.stream]}
        landed = self.landed()
        for name, rows in outcomes.groupby("setting", sort=False):
            out[f"{name}_draws_test_acc_step0"] = float(rows.test_acc_step0.iloc[0])  # one test set
            out[f"{name}_draws_landed_words"] = landed[name]
        out["draws_landed_words"] = and_list([f"{reader_name(k)} in {v}" for k, v in landed.items()])
        return out


@dataclass(frozen=True)
class Dynamics:
    """Figure 3's page as its prose, the claims ledger and the comparison table read it."""

    settings: dict  # name → (d, ‖μ‖), the paper's three settings (`NAMED_REGIME`)
    n: int  # training samples
    seeds: list  # the seeds, the plotted one first
    seed_runs: pd.DataFrame  # one row per setting × seed (`seed_table`)
    ends: pd.DataFrame  # the plotted run's end, one row per setting (`plotted_ends`)
    draws: Draws
    authors: dict  # setting → the authors' script's final row, where it ran (train/test accuracy and loss)
    authors_max_d: int  # the largest d the authors' script runs at

    def per_seed(self, name: str) -> dict:
        """A setting's numbers: the plotted seed's under its key, the range over the seeds under key_min, key_max."""
        rows = self.seed_runs[self.seed_runs.setting == name]
        out = {f"{name}_{key}": float(rows[key].iloc[0]) for key in (*FINAL, *CONTROLS)}
        out |= {f"{name}_{key}": int(rows[key].iloc[0]) for key in COUNTS}
        for key in (*COUNTS, "test_acc", "train_acc", *CONTROLS):
            tables.seed_spread(out, f"{name}_{key}", rows[key])
        # the seeds on which the same run on clean labels loses as much (the ledger's Figure 3(b) counts them)
        out[f"{name}_noise_cost_free_seeds"] = int((~thresholds.beyond(rows.noise_cost, thresholds.HARM.value)).sum())
        return out

    def plotted(self, name: str) -> dict:
        """A setting's plotted run at its end: attention per token type, the median samples' shares."""
        end = self.ends.loc[name]
        return {**{f"{name}_{key}": float(end[key]) for key in SCORES},
                f"{name}_noisy_on_irrelevant": 1 - float(end[list(NOISY_NAMED)].sum()),
                **{f"{name}_{key}": float(end[key]) for key in ("shown_noisy_on_irrelevant", "shown_clean_relevant")}}

    def regime_words(self, m: dict, name: str) -> dict:
        """A setting by the theory's orders and by what its runs do, in words, from its numbers in `m`."""
        d, mu = self.settings[name]
        observed, paper = theory.observed_regime(m[f"{name}_train_acc"], m[f"{name}_test_acc"]), NAMED_REGIME[name]
        out = {f"{name}_n_snr2": float(theory.n_snr2(mu, d, self.n)),
               f"{name}_regime_by_order_words": reader_name(theory.regime(mu, d, self.n)),
               f"{name}_observed_words": f"{reader_name(observed)} by what they do" + (
                   ", as the paper names it" if observed == paper else
                   f", where the paper names it {reader_name(paper)}"),
               f"{name}_fitted_words": verdicts.fitted(m, name),  # as the claims ledger says them
               f"{name}_test_acc_words": verdicts.spread(m, f"{name}_test_acc")}
        return out | {f"{name}_{key}_words": verdicts.spread(m, f"{name}_{key}", "+.3f")
                      for key in ("test_gain", "noise_cost")}

    def metrics(self) -> dict:
        out = {"replicates": len(self.seeds), "harm_threshold": thresholds.HARM.value,  # on the synthetic pages
               "real_cost_points": thresholds.REAL_COST.value,  # and on the real-data pages, in points and a share
               "real_cost_threshold": thresholds.REAL_COST.value / 100, "authors_max_d": self.authors_max_d}
        for name in self.settings:
            out |= self.per_seed(name) | self.plotted(name)
            out |= {f"authors_{name}_{key}": float(self.authors[name][key]) for key in FINAL if name in self.authors}
        out |= self.draws.metrics()
        for name in self.settings:
            out |= self.regime_words(out, name)
        out["large_noise_clean_labels_test_acc_words"] = verdicts.spread(out, "large_noise_clean_labels_test_acc")
        costs = self.seed_runs[self.seed_runs.setting == "large_noise"].noise_cost  # judged as the ledger judges
        out["large_noise_cost_source"] = draws.cost_by_seed_words(list(costs), self.seeds, out["harm_threshold"])
        gap = out["balanced_test_acc"] - out["large_noise_test_acc"]  # the paper's contrast: benign against harmful
        out["large_noise_head_share_of_gap"] = ((out["balanced_test_acc"] - out["large_noise_test_acc_step0"]) / gap
                                                if gap > 0 else float("nan"))
        out["comparison_misses_words"] = expected.misses_words(expected.compare(NAME, out))
        return out
