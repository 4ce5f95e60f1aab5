"""Every experiment's settings in one place: presets, overrides, checks, the paper's values written once, and how a
notebook receives them."""

import dataclasses

import pytest

from benign import notebooks, settings
from benign.checks import ParameterError


def test_every_notebook_has_a_settings_type():
    assert set(settings.SETTINGS) == set(notebooks.names())
    assert settings.SETTINGS["fig8_finetune_attention"] is settings.Table2Finetune  # Figures 8/9 read Table 2's runs


def test_a_preset_is_the_book_defaults_with_the_profiles_changes_then_the_overrides():
    book, smoke, paper = (settings.Fig3Dynamics.preset(p) for p in ("book", "smoke", "paper"))
    assert (book.seed, book.num_steps, book.d_balanced, book.learning_rate) == (42, 1000, 2000, 0.005)
    assert (smoke.num_steps, smoke.d_balanced, smoke.seed) == (60, 200, 42)
    assert (paper.seed, paper.authors_test_seed, paper.authors_max_d, paper.num_steps) == (0, True, 5000, 1000)
    mine = settings.Fig3Dynamics.preset("smoke", {"seed": "7", "learning_rate": "1", "authors_code": "false"})
    assert (mine.seed, mine.learning_rate, mine.authors_code, mine.num_steps) == (7, 1.0, False, 60)
    assert type(mine.learning_rate) is float
    grid = settings.Fig5Heatmap.preset("paper")
    assert len(grid.d_values_long) == len(grid.signal_norm_values_long) == 39
    assert grid.d_values_long[-1] == 5000 and grid.signal_norm_values_long[-1] == 100.0


@pytest.mark.parametrize("overrides,message", [
    ({"noise_ratio": 1.5}, "noise_ratio = 1.5 is not allowed: noise_ratio must be a number in [0.0, 1.0)"),
    ({"seed": "abc"}, "seed = 'abc' is not allowed: seed must be an integer (default 42)"),
    ({"eta": 0.1}, "parameter 'eta' was renamed: use 'noise_ratio'"),
    ({"dimension": 5}, "unknown parameter 'dimension' for fig3_dynamics: use one of "),
    ({"n": 4}, "n = 4 with noise_ratio = 0.2 flips 0 of the 2 labels of each class"),
])
def test_a_bad_setting_is_one_line_saying_what_is_allowed(overrides, message):
    with pytest.raises(ParameterError) as err:
        settings.Fig3Dynamics.preset("book", overrides, where="fig3_dynamics")
    assert message in str(err.value) and "\n" not in str(err.value)
    with pytest.raises(ParameterError, match="unknown profile 'Book': use one of smoke, book, paper"):
        settings.Fig3Dynamics.preset("Book")


def test_paper_2_draws_its_flips_at_random_so_any_n_runs():
    assert settings.Paper2TwoSteps.preset("book", {"n": 4}).n == 4


def test_settings_are_frozen_and_their_values_are_copies():
    table2 = settings.Table2Finetune()
    with pytest.raises(dataclasses.FrozenInstanceError):
        table2.seeds = [1]
    table2.values()["seeds"].append(1)
    assert table2.seeds == [42, 314, 2718] and settings.Table2Finetune().seeds == [42, 314, 2718]


def test_the_papers_values_are_written_once():
    """Paper 1's model settings (n = 20, n_test = 1000, T = 8, ρ = 0.1, η = 0.2, α = 0.005, 1000 steps) are declared
    by one class each, which the experiments that use them inherit."""
    paper1 = [kind for kind in vars(settings).values()
              if isinstance(kind, type) and issubclass(kind, settings.Settings) and kind.PAPER == 1]
    for name, value in dict(n=20, n_test=1000, T=8, rho=0.1, noise_ratio=0.2, learning_rate=0.005,
                            num_steps=1000).items():
        declaring = [kind.__name__ for kind in paper1
                     if name in kind.__dict__.get("__annotations__", {}) and kind.__dict__.get(name) == value]
        assert len(declaring) == 1, (name, declaring)
    using = [k for k, kind in settings.SETTINGS.items() if kind().values().get("learning_rate") == 0.005]
    assert len(using) >= 5


def test_backbone_study_runs_the_table2_settings_of_its_profile():
    for profile in settings.PROFILE_NAMES:
        study = settings.BackboneReach.preset(profile)
        assert study.table2() == settings.Table2Finetune.preset(study.table2_profile)
    assert settings.BackboneReach.preset("smoke").table2().num_epochs == 3


def test_a_notebook_receives_its_settings_as_names(tmp_path):
    """`start` makes the settings from the parameters cell, gives each to the notebook by name, and takes a setting
    assigned by name (plain papermill's `-p n 60`) as an override, but not one it set itself on an earlier run."""
    ns = {"profile": "smoke", "overrides": {"n_test": 60}, "out_dir": str(tmp_path / "out")}
    nb = notebooks.start("paper2_two_steps", ns)
    assert (ns["n_test"], ns["d"], ns["n"]) == (60, 2000, 40) and nb.settings.n_test == 60
    assert nb.parameters == nb.settings.values()
    ns["profile"] = "book"  # the cells run again at another profile: start's own values do not stick
    notebooks.start("paper2_two_steps", ns)
    assert (ns["n_test"], ns["d"], ns["n"]) == (60, 40000, 200)
    ns["n"] = 100  # as papermill's injected cell assigns it
    assert notebooks.start("paper2_two_steps", ns).settings.n == 100
    with pytest.raises(ParameterError, match="overrides must be a dict of setting names to values"):
        notebooks.start("paper2_two_steps", {"overrides": [("n", 3)], "out_dir": str(tmp_path / "out")})
