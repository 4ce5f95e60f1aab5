"""The paper's reported numbers, with the tolerance within which a rerun here counts as a match.

Sources are in ../shared/paper-facts.md. Tolerances are wide where the paper reports one seed or one draw
(our seeds and independent test sets differ from the authors'); `note` says when a number is unverified.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd


@dataclass(frozen=True)
class Expected:
    key: str  # the metrics.json key it is compared with
    quantity: str
    paper: float
    tolerance: float
    note: str = ""


PAPER = {
    "fig1_token_selection": [
        Expected("harmful_train_acc", "harmful (c = 1): train accuracy", 1.0, 0.0),
        Expected("harmful_test_acc", "harmful (c = 1): test accuracy", 0.62, 0.15, "read off the figure (≈)"),
        Expected("benign_train_acc", "benign (c = 0.06): train accuracy", 1.0, 0.0),
        Expected("benign_test_acc", "benign (c = 0.06): test accuracy", 1.0, 0.02),
        Expected("not_overfitting_train_acc", "not overfitting (c = 0.001): train accuracy", 0.8, 0.0,
                 "= 1 − η: the noisy samples are not fitted"),
        Expected("not_overfitting_test_acc", "not overfitting (c = 0.001): test accuracy", 1.0, 0.02),
    ],
    "fig3_dynamics": [
        Expected("balanced_train_acc", "balanced (2000, 20): train accuracy", 1.0, 0.0),
        Expected("balanced_test_acc", "balanced (2000, 20): test accuracy", 0.996, 0.02),
        Expected("balanced_train_loss", "balanced (2000, 20): final train loss", 0.4526, 0.01,
                 "the authors' code, seed 42, measured on this machine"),
        Expected("large_noise_train_acc", "large noise (4500, 5): train accuracy", 1.0, 0.0),
        Expected("large_noise_test_acc", "large noise (4500, 5): test accuracy", 0.867, 0.05,
                 "a summary of the paper says 0.91"),
        Expected("large_signal_train_acc", "large signal (1000, 80): train accuracy", 0.8, 0.1,
                 "setting unverified; a summary says 0.9"),
        Expected("large_signal_test_acc", "large signal (1000, 80): test accuracy", 1.0, 0.01),
    ],
}


def compare(notebook: str, metrics: dict) -> pd.DataFrame:
    """The paper-vs-here table of a notebook: quantity, paper, here, tolerance, match (True/False/None)."""
    rows = []
    for e in PAPER[notebook]:
        here = metrics.get(e.key)
        match = None if here is None else bool(abs(here - e.paper) <= e.tolerance + 1e-12)
        rows.append({"quantity": e.quantity, "paper": e.paper, "here": here, "tolerance": e.tolerance,
                     "match": match, "note": e.note})
    return pd.DataFrame(rows)
