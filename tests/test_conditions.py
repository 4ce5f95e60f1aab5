"""The conditions page's reading (`benign.conditions`) on hand-built cells: the ratios from both scripts' sums, the
step-0 controls from the label split, and the authors' cells set beside ours at the same cells."""

import numpy as np
import pandas as pd
import pytest

from benign import conditions, synthetic


def grid(eq9, eq10) -> pd.DataFrame:
    """Four cells (d 250/500 × ‖μ‖ 5/10) whose sums give the Eq. 9 and Eq. 10 ratios asked for."""
    cell = pd.DataFrame({"d": [250, 250, 500, 500], "signal_norm": [5.0, 10.0, 5.0, 10.0]})
    pos = np.asarray(eq10, dtype=float)
    return conditions.ratios(cell.assign(frak_clean=(pos + 1) * np.asarray(eq9), frak_noisy=pos + 1,
                                         frak_clean_pos=pos * np.asarray(eq9), frak_clean_neg=np.asarray(eq9)))


def test_the_ratios_come_from_either_scripts_sums():
    ours = grid([4.0, 2.0, 0.5, 8.0], [1.0, 2.0, 3.0, 0.4])
    assert ours.eq9_ratio.tolist() == pytest.approx([4.0, 2.0, 0.5, 8.0])
    assert ours.eq10_ratio.tolist() == pytest.approx([1.0, 2.0, 3.0, 0.4])
    theirs = conditions.ratios(pd.DataFrame({"frak_clean_1": [3.0], "frak_clean_2": [1.0], "frak_noisy_1": [1.0],
                                             "frak_noisy_2": [1.0]}))
    assert (theirs.eq9_ratio[0], theirs.eq10_ratio[0]) == (2.0, 3.0)


def test_the_conditions_read_against_their_step_0_controls_and_the_authors_cells():
    point = {**synthetic.GRID_DEFAULTS, "n": 20, "noise_ratio": 0.2, "seed": 0, "label_noise": "deterministic"}
    clean_labels, noisy = conditions.label_split(point)
    assert noisy == 4 and len(clean_labels) == 16 and set(clean_labels.tolist()) == {-1.0, 1.0}
    cells = grid([4.0, 2.0, 0.5, 8.0], [1.0, 2.0, 3.0, 0.4])
    theirs = conditions.ratios(pd.DataFrame({"d": [250, 500], "signal_norm": [5.0, 10.0], "frak_clean_1": [1.0, 1.0],
                                             "frak_clean_2": [1.0, 0.25], "frak_noisy_1": [1.0, 1.0],
                                             "frak_noisy_2": [1.0, 1.0]}))
    m = conditions.Conditions(cells, clean_labels, noisy, theirs).metrics()
    assert m["eq9_ratio_step0"] == 4.0  # 16 clean samples over 4 flipped: the majority before any step
    assert m["eq10_ratio_step0"] == (clean_labels > 0).sum() / (clean_labels < 0).sum()
    assert m["eq9_share_holds"] == 0.75 and m["eq9_holds_words"] == "3 of the 4 cells"
    assert m["eq9_below_step0_words"] == "2 of the 4 cells"  # 2.0 and 0.5 fall below the step-0 ratio 4
    assert m["eq9_control_words"].startswith("below one in 1 of the 4 cells: there training overturns")
    assert m["eq10_share_within_0.5_2.5"] == 0.5 and m["eq10_span"] == "0.40 to 3.00"
    assert m["eq10_bar_words"] == "reaches below its lower end 0.5 and reaches above its upper end 2.5"
    assert m["authors_cells_words"] == "2 cells" and m["authors_eq10_span"] == "1.00 to 4.00"
    assert m["ours_on_their_cells_eq10_span"] == "0.40 to 1.00"  # ours at (250, 5) and (500, 10) only
    assert m["eq10_smallest_words"] == "at different cells: ours at (d, ‖μ‖) = (500, 10), theirs at (d, ‖μ‖) = (250, 5)"
    assert "authors_cells" not in conditions.Conditions(cells, clean_labels, noisy).metrics()
