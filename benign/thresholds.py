"""Every threshold a verdict rests on, in one place, each with its reason: fixed before the runs it judges, except
where its reason says otherwise (`ETA_BAND`).

The ledger's rules (`benign.ledger`) and the pages that draw a regime read these and nothing else, so one notion
(a harmful cost, a selected token, a fitted set of labels, a slope that matches) has one value across the book.
A notebook's setting that names the same notion as a threshold here (`attention_level`, `test_threshold`) takes
its default from here (`benign.settings`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

ROUNDING = 1e-9  # below any difference two accuracies on a test set can show (1/n_test), above float64's rounding


@dataclass(frozen=True)
class Threshold:
    value: float
    reason: str


def beyond(value, threshold) -> np.ndarray:
    """Whether `value` exceeds `threshold` by more than rounding: a loss of exactly 10 test samples in 1000, which
    0.89 − 0.88 computes as 0.010000000000000009, is not 'more than 0.01'."""
    return np.asarray(value, dtype=float) > np.asarray(threshold, dtype=float) + ROUNDING


HARM = Threshold(0.01, "test accuracy lost against a control (the model's own step 0, or the same run on clean "
                 "labels) that counts as a cost of training: 10 of 1000 clean test samples. Both sides are read on "
                 "the same test set, so its sampling noise cancels; what is left is the run itself")
SELECTED = Threshold(0.5, "mean attention of fresh inputs on their relevant token that counts as selecting it: more "
                     "than all other tokens together (uniform attention puts 1/T = 0.125 there)")
TEST_GOOD = Threshold(0.95, "the paper's Figure 5 rule for 'generalizes' (test accuracy); read beside the head's "
                      "own accuracy at step 0, never alone")
SLOPE_SE = Threshold(2.0, "a measured slope agrees with the theory's when it lies within this many standard errors")
POWER = Threshold(0.5, "a measurement can tell the theory from its alternative when this many times their distance "
                  "exceeds two standard errors; below that power the verdict is 'not seen', never 'holds'")
MAJORITY = Threshold(0.5, "a share of runs, cells or seeds above which a property is said of 'most' of them")
ALPHA_MATCH = Threshold(0.1, "relative change of τ·α between two step sizes within which τ ∝ 1/α holds")
NEAR_CHANCE = Threshold(0.75, "test accuracy below which a model has collapsed to near chance: nearer chance "
                        "(0.5, balanced labels) than perfect (paper 2's harmful overfitting, the η sweep's collapse)")
ETA_BAND = Threshold(0.05, "distance in η from the paper's edge (its Eq. 9 ratio above one up to η = 0.6, below "
                     "it from 0.65) within which a run's edge counts as the paper's: one step of the appendix's η grid, "
                     "the resolution at which the paper reports it. Unlike the others, set after a build's η sweep had "
                     "been read (2026-11-27, when the rule was rewritten), from the grid's step, not from its edges")
REGION = Threshold(0.01, "share of a map's cells a regime must hold to count as a region (15 of Figure 5's 1521 "
                   "cells): a handful of cells is a draw, not a region")
VANISHED = Threshold(0.1, "a score 'goes to zero' when it ends below this fraction of its step-0 value 1/T")
SHARPER = Threshold(2.0, "factor by which the largest attention score must grow over fine-tuning to count as "
                   "'sharpened onto fewer tokens': the effective number of tokens attended (one over the largest "
                   "score) halves. Re-initialised attention starts near uniform, so any training raises the largest "
                   "score a little: a rise alone cannot fail")
REAL_FITTED = Threshold(0.95, "share of real-data training labels (clean or flipped) that counts as 'fitted' (the "
                        "same notion as every label fitted on the synthetic pages, allowing one label in twenty)")
DELAY_MIN_RUNS = Threshold(10, "benign runs below which delayed generalization is 'not seen': too few to fit how the "
                           "gap grows")
REAL_COST = Threshold(5.0, "test-accuracy points lost against the clean-label cell of the same backbone and n that "
                      "count as harmful on real data (the spread over seeds of the paper's own Table 2 cells is "
                      "up to about 2 points, so 5 is a cost beyond it)")
