"""Figure 6's reading (`benign.onelayer_dynamics.EncoderDynamics`) on hand-built runs with known numbers: two settings
of three seeds each, their clean-label twins, the plotted runs' tracked samples and the authors' script's runs."""

import pandas as pd
import pytest

from benign import thresholds, words
from benign.encoder import EncoderSimulation
from benign.onelayer_dynamics import EncoderDynamics

T = 5  # token positions: relevant, weak aligned, weak opposite, two irrelevant
SETTINGS = {"balanced": (200, 10.0, 20), "harmful": (500, 2.0, 20)}  # (d, ‖μ‖, MLP width) as run
PAPER = {"balanced": (2000, 20.0), "harmful": (5000, 5.0)}
# each setting's seeds (the plotted one first): train accuracy, test accuracy, on clean labels, final mean attention
# of clean / noisy samples on their relevant token, and the plotted run's test accuracy at step 0
SEEDS = {"balanced": {"test": [0.99, 0.90, 0.985], "clean": [0.99, 0.99, 0.99], "attention": (0.4, 0.075),
                      "step0": 0.5},
         "harmful": {"test": [0.52, 0.50, 0.51], "clean": [0.51, 0.53, 0.60], "attention": (0.1, 0.2),
                     "step0": 0.49}}
# the plotted runs' tracked samples (0-2 clean, 3-4 noisy): relevant token 0.2 at step 0, then at step 10 these on
# the relevant token and these on the two irrelevant tokens together
RELEVANT_END = [0.5, 0.4, 0.3, 0.05, 0.1]
IRRELEVANT_END = [0.1, 0.2, 0.3, 0.75, 0.5]


def labels(name: str) -> list[str]:
    return [name, f"{name}_seed1", f"{name}_seed2"]


def simulation(name: str) -> EncoderSimulation:
    seeds, d, mu = SEEDS[name], *SETTINGS[name][:2]
    runs = labels(name) + [f"{run}_clean" for run in labels(name)]
    test = seeds["test"] + seeds["clean"]
    final = pd.DataFrame({"run": runs, "d": d, "signal_norm": mu, "T": T, "train_acc": 1.0, "test_acc": test,
                          "train_loss": 0.01, "test_loss": [0.2 + k / 100 for k in range(6)]})
    history = pd.DataFrame([{"run": run, "step": step, "test_acc": seeds["step0"] if step == 0 else acc,
                             "score_clean_relevant": seeds["attention"][0] if step else 0.2,
                             "score_noisy_relevant": seeds["attention"][1] if step else 0.2}
                            for step in (0, 10) for run, acc in zip(runs, test)])
    rows = []
    for sample, (relevant, irrelevant) in enumerate(zip(RELEVANT_END, IRRELEVANT_END)):
        for step, row in ((0, [0.2, 0.2, 0.2, 0.1, 0.1]), (10, [relevant, 0.0, 0.0, irrelevant / 2, irrelevant / 2])):
            rows += [{"run": name, "step": step, "sample": sample, "noisy": sample >= 3, "token": token,
                      "score": score} for token, score in enumerate(row)]
    return EncoderSimulation(history, pd.DataFrame(rows), final, {}, {})


def costs(name: str) -> pd.DataFrame:
    seeds = SEEDS[name]
    out = pd.DataFrame({"run": labels(name), "clean_run": [f"{run}_clean" for run in labels(name)],
                        "test_acc": seeds["test"], "clean_test_acc": seeds["clean"]})
    out["noise_cost"] = out.clean_test_acc - out.test_acc
    return out.assign(costly=out.noise_cost > thresholds.HARM.value)


def result(theirs=None) -> EncoderDynamics:
    return EncoderDynamics({name: simulation(name) for name in SETTINGS}, {name: costs(name) for name in SETTINGS},
                           SETTINGS, PAPER, 100, 0.95, theirs)


def test_figure_6_reads_known_runs_against_their_clean_label_twins():
    r = result()
    # balanced: 0.99, 0.90 (0.09 below its twin), 0.985 (0.005 below); harmful: near chance, twins near chance too
    assert r.every_seed.regime_trained.tolist() == ["benign", "harmful", "benign", "near_chance", "near_chance",
                                                    "harmful"]  # the last 0.09 below its twin, beyond CHANCE_GAP
    assert r.plotted().index.tolist() == ["balanced", "harmful"]
    assert r.shown("balanced") == (1, 3)  # final relevant 0.5, 0.4, 0.3 (median 0.4) and 0.05, 0.1 (lower: 0.05)
    m = r.metrics()
    assert (m["balanced_test_acc"], m["balanced_regime"], m["balanced_as_named"]) == (0.99, "benign", 1.0)
    assert (m["harmful_regime"], m["harmful_as_named"]) == ("harmful", 1.0)  # by the paper's threshold
    assert m["balanced_shown_clean_relevant"] == 0.4 and m["balanced_shown_noisy_on_irrelevant"] == 0.75
    assert (m["balanced_attention_clean_relevant"], m["harmful_attention_noisy_relevant"]) == (0.4, 0.2)
    assert m["balanced_as_named_share"] == m["balanced_as_named_trained_share"] == pytest.approx(2 / 3)
    assert (m["harmful_as_named_share"], m["harmful_as_named_trained_share"]) == (1.0, pytest.approx(1 / 3))
    assert m["balanced_regime_trained_words"] == "2 of the 3 seeds benign and 1 of the 3 seeds harmful"
    assert m["harmful_regime_trained_words"] == "2 of the 3 seeds near chance and 1 of the 3 seeds harmful"
    assert (m["balanced_test_acc_min"], m["balanced_test_acc_max"]) == (0.90, 0.99)
    assert (m["balanced_test_acc_span"], m["balanced_clean_test_acc_span"]) == ("0.900 to 0.990", "0.990")
    assert m["balanced_n_snr2"] == pytest.approx(50.0) and m["balanced_paper_n_snr2"] == pytest.approx(20.0)
    assert m["n_snr2_factor"] == pytest.approx(2.5)  # n‖μ‖²/d: 100 · 100 / 200 against 100 · 400 / 2000
    assert (m["balanced_noise_cost"], m["balanced_noise_cost_max"]) == (0.0, pytest.approx(0.09))
    assert m["balanced_cost_spread_words"] == "0.000 to +0.090" and m["balanced_costly_share"] == pytest.approx(1 / 3)
    assert m["balanced_cost_words"] == "the flipped labels cost more than 0.01 of test accuracy on 1 of the 3 seeds"
    assert m["harmful_cost_words"].startswith("the clean-label runs end near chance too") and (
        "on 1 of the 3 seeds" in m["harmful_cost_words"])
    assert m["test_acc_step0_words"] == "0.500 (balanced) and 0.490 (harmful)"
    assert m["landed_words"] == "Only the balanced setting lands in the regime it is named after on most of its seeds."
    assert m["train_acc_words"].startswith("Every setting's plotted run ends with every training label fitted")
    said = words.plain(m["claim_seen_words"])  # clean samples rise 0.2 → 0.4, all 3; noisy fall 0.2 → 0.075, both
    assert said.startswith("On the plotted seed only the balanced setting's run overfits benignly")
    assert said.endswith("The claim's picture is seen here.")
    assert (m["replicates"], m["seed_count_words"]) == (3, "3 seeds")
    assert m["chance_gap_threshold"] == 0.05 and m["near_chance_threshold"] == thresholds.NEAR_CHANCE.value
    assert not any(key.startswith("authors_") for key in m)  # their script did not run


def test_the_authors_runs_are_matched_to_the_settings_by_cell():
    theirs = pd.DataFrame({"d": [500, 100, 200], "signal_norm": [2.0, 2.0, 10.0], "train_acc": [1.0, 1.0, 0.99],
                           "test_acc": [0.6, 0.97, 0.97], "train_loss": 0.01, "test_loss": [0.9, 0.1, 0.2],
                           "attention_clean_relevant": 0.3, "attention_noisy_relevant": 0.1})
    m = result(theirs).metrics()
    assert (m["authors_balanced_test_acc"], m["authors_balanced_test_loss"]) == (0.97, 0.2)  # not the (100, 2) cell
    assert (m["authors_balanced_regime"], m["authors_balanced_as_named"]) == ("not overfitting", 0.0)
    assert (m["authors_harmful_regime"], m["authors_harmful_as_named"]) == ("harmful", 1.0)
    assert m["balanced_test_acc"] == 0.99  # ours beside theirs
