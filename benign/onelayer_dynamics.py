"""Figure 6, the one-layer encoder's dynamics, as a typed result (`EncoderDynamics`): each setting's runs over its
seeds read against their clean-label twins and by the paper's threshold, the [CLS] attention of the plotted samples
and of every training sample, and the authors' script at the same settings; `metrics()` gives every number and
sentence the page glues and the claims ledger reads (`rules.encoder_rule`). The readings and sentences themselves are
`benign.onelayer`'s, shared with Figure 7; nothing here keys a cache.

The plotted seed's run of a setting is labelled by the setting's name ('balanced'), as the page makes it.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import pandas as pd

from . import tables, theory, thresholds
from .data import IRRELEVANT, RELEVANT, token_types
from .onelayer import (CHANCE_GAP, NAMED_REGIME, attention_shift, claim_words, cost_words, fitted_words, landed_words,
                       per_setting, readings_words, seed_reading, value_span)
from .words import count, reader_name, signed, span

QUANTITIES = ("train_acc", "test_acc", "train_loss", "test_loss", "attention_clean_relevant",
              "attention_noisy_relevant")  # each plotted run's, and the authors' script's where it ran


@dataclass(frozen=True)
class EncoderDynamics:
    """Figure 6's runs as its page and the claims ledger read them. Every dict is keyed by setting ('balanced',
    'harmful', 'not_overfitting'), in the page's order."""

    sims: dict  # its `encoder.simulate`: every seed's run with flipped labels and its clean-label twin
    costs: dict  # `encoder.noise_costs` of its runs with flipped labels, one row per seed, the plotted seed first
    settings: dict  # (d, ‖μ‖, …) as run
    paper_settings: dict  # (d, ‖μ‖) in the paper
    n: int  # training samples
    test_threshold: float  # the paper's rule (`theory.observed_regime`)
    theirs: pd.DataFrame | None = None  # the authors' script's runs (`authors.one_layer_chunk`), None where not run

    @cached_property
    def every_seed(self) -> pd.DataFrame:
        """Every run with flipped labels, every seed (its `final` row): the paper's reading (`regime`), the reading
        against its clean-label twin (`regime_trained`, `onelayer.seed_reading`) and the mean attention of its clean
        and of its noisy training samples on their relevant token at the last step."""
        out = pd.concat([sim.final[sim.final.run.isin(self.costs[name].run)] for name, sim in self.sims.items()],
                        ignore_index=True)
        out["regime"] = theory.observed_regime(out.train_acc, out.test_acc, self.test_threshold)
        control = pd.concat(self.costs.values()).set_index("run").clean_test_acc.loc[out.run].to_numpy()
        out["regime_trained"] = seed_reading(out.train_acc, out.test_acc, control)
        last = pd.concat([sim.history[sim.history.step == sim.history.step.max()]
                          for sim in self.sims.values()]).set_index("run")
        for group in ("clean", "noisy"):
            out[f"attention_{group}_relevant"] = last.loc[out.run, f"score_{group}_relevant"].to_numpy()
        return out

    def plotted(self) -> pd.DataFrame:
        """The plotted seed's run of each setting (`runs`' rows), indexed by setting."""
        return self.every_seed[self.every_seed.run.isin(list(self.sims))].set_index("run")

    def seeds_of(self, name: str) -> pd.DataFrame:
        """A setting's runs over its seeds (`runs`' rows)."""
        return self.every_seed[self.every_seed.run.isin(self.costs[name].run)]

    def shown(self, name: str) -> tuple[int, int]:
        """The plotted clean and noisy training sample of a setting's plotted run: each the median of its group by
        its final attention on the relevant token (`tables.median_sample`)."""
        scores = self.sims[name].scores
        noisy = scores[scores.run == name].groupby("sample").noisy.first()
        return (tables.median_sample(scores, name, noisy.index[~noisy]),
                tables.median_sample(scores, name, noisy.index[noisy]))

    @cached_property
    def authors(self) -> pd.DataFrame:
        """The authors' script's run at each setting's (d, ‖μ‖), indexed by setting, with the paper's reading
        (`regime`); empty where it did not run."""
        if self.theirs is None:
            return pd.DataFrame()
        table = self.theirs.assign(regime=theory.observed_regime(self.theirs.train_acc, self.theirs.test_acc,
                                                                 self.test_threshold))
        by_cell = {(row["d"], row["signal_norm"]): row for row in table.to_dict("records")}
        return pd.DataFrame.from_dict({name: by_cell[(d, mu)] for name, (d, mu, *_) in self.settings.items()},
                                      orient="index")

    def plotted_metrics(self, name: str, row) -> dict:
        """The plotted seed's numbers of a setting, the authors' beside them where their script ran."""
        theirs = self.authors.loc[name] if name in self.authors.index else None
        out = {}
        for key in QUANTITIES:
            out[f"{name}_{key}"] = float(row[key])
            if theirs is not None:
                out[f"authors_{name}_{key}"] = float(theirs[key])
        clean_id, noisy_id = self.shown(name)  # of the plotted run only (not its seed replicates)
        types = token_types(int(row["T"]))
        for key, (sample, kind) in {"noisy_on_irrelevant": (noisy_id, IRRELEVANT),
                                    "clean_relevant": (clean_id, RELEVANT)}.items():
            out[f"{name}_shown_{key}"] = tables.final_share(self.sims[name].scores, name, sample,
                                                            (types == kind).nonzero().flatten().tolist())
        out |= {f"{name}_regime": reader_name(row["regime"]),
                f"{name}_as_named": float(row["regime"] == NAMED_REGIME[name])}
        if theirs is not None:
            out |= {f"authors_{name}_regime": reader_name(theirs["regime"]),
                    f"authors_{name}_as_named": float(theirs["regime"] == NAMED_REGIME[name])}
        return out

    def seed_metrics(self, name: str) -> dict:
        """A setting's numbers over its seeds, against its two controls: its own step 0 (a random head) and the same
        runs on clean labels, seed by seed."""
        runs, costs, history = self.seeds_of(name), self.costs[name], self.sims[name].history
        (d, mu, *_), (d0, mu0) = self.settings[name], self.paper_settings[name]
        out = {f"{name}_as_named_share": float((runs.regime == NAMED_REGIME[name]).mean()),
               f"{name}_as_named_trained_share": float((runs.regime_trained == NAMED_REGIME[name]).mean()),
               f"{name}_regime_trained_words": readings_words(runs.regime_trained)}
        tables.seed_spread(out, f"{name}_test_acc", runs.test_acc)
        out |= {f"{name}_test_acc_span": value_span(runs.test_acc),
                f"{name}_clean_test_acc_span": value_span(costs.clean_test_acc),
                f"{name}_n_snr2": float(theory.n_snr2(mu, d, self.n)),
                f"{name}_paper_n_snr2": float(theory.n_snr2(mu0, d0, self.n)),
                # the random head's, before training
                f"{name}_test_acc_step0": float(history[(history.run == name) & (history.step == 0)].test_acc.iloc[0]),
                f"{name}_clean_test_acc": float(costs.clean_test_acc.iloc[0]),
                f"{name}_noise_cost": float(costs.noise_cost.iloc[0])}
        tables.seed_spread(out, f"{name}_clean_test_acc", costs.clean_test_acc)
        tables.seed_spread(out, f"{name}_noise_cost", costs.noise_cost)
        return out | {f"{name}_costly_share": float(costs.costly.mean()),
                      f"{name}_cost_spread_words": span(*(signed(out[f"{name}_noise_cost_{end}"], "+.3f")
                                                          for end in ("min", "max"))),
                      f"{name}_cost_words": cost_words(costs, self.test_threshold)}

    def metrics(self) -> dict:
        plotted, out = self.plotted(), {}
        for name in self.sims:
            out |= self.plotted_metrics(name, plotted.loc[name])
        for name in self.sims:
            out |= self.seed_metrics(name)
        names = list(self.sims)
        seeds = len(self.costs[names[0]])
        out |= {"landed_words": landed_words({name: out[f"{name}_as_named_trained_share"] for name in names}),
                "train_acc_words": fitted_words({name: out[f"{name}_train_acc"] for name in names}),
                "test_acc_step0_words": per_setting({name: out[f"{name}_test_acc_step0"] for name in names}, ".3f"),
                "n_snr2_factor": out["balanced_n_snr2"] / out["balanced_paper_n_snr2"],  # √scale, up to rounding
                # where a plotted run overfits benignly against its clean-label twin (the verdict's reading), do clean
                # samples' means rise and noisy samples' fall?
                "claim_seen_words": claim_words(
                    {name: {"reading": plotted.regime_trained[name], "test_acc": out[f"{name}_test_acc"],
                            "cost": out[f"{name}_noise_cost"],
                            "clean": attention_shift(self.sims[name].scores, name, False),
                            "noisy": attention_shift(self.sims[name].scores, name, True)} for name in names}),
                "replicates": seeds, "seed_count_words": count(seeds, "seed"),
                "harm_threshold": thresholds.HARM.value, "near_chance_threshold": thresholds.NEAR_CHANCE.value,
                "chance_gap_threshold": CHANCE_GAP.value}
        return out
