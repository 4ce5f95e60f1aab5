"""Every experiment's settings, written once: one frozen dataclass per notebook, named in the papers' symbols, with its
presets beside it.

A field's default is the `book` profile (what the book shows, affordable on a 2-core CPU); `PRESETS` holds what the
`smoke` (seconds, for CI) and `paper` (the paper's scale, the authors' quirks where they matter) profiles change.
Each value is checked when a settings object is made (the rule of its name in `benign.checks`: a one-line
ParameterError). A notebook's parameters cell holds only its profile and overrides:

    profile = "book"
    overrides = {}  # e.g. {"n": 40}
    out_dir = ""

and `benign.notebooks.start` makes the settings (`SETTINGS[name].preset(profile, overrides)`). Shared groups of
fields are mixins, so the paper's values (n = 20, α = 0.005, ρ = 0.1, …) are written once, and a setting that names
a verdict's threshold (`test_threshold`, `attention_level`) takes it from `benign.thresholds`; a notebook that reads
another's runs uses that notebook's settings (Figure 8 Table 2's).
"""

from __future__ import annotations

import math
from copy import copy
from dataclasses import dataclass, field, fields
from typing import ClassVar

from .checks import ParameterError, check, coerce, unknown_parameter
from .thresholds import SELECTED, TEST_GOOD

PROFILE_NAMES = ("smoke", "book", "paper")


def check_profile(profile: str) -> str:
    """`profile` if it is one of PROFILE_NAMES; a one-line ParameterError otherwise."""
    if profile not in PROFILE_NAMES:
        raise ParameterError(f"unknown profile {profile!r}: use one of {', '.join(PROFILE_NAMES)}")
    return profile


def listed(*values):
    """A list-valued field's default (each settings object gets its own list)."""
    return field(default_factory=lambda: list(values))


@dataclass(frozen=True)
class Settings:
    """The base of every experiment's settings: making one checks each value and the values together."""

    PRESETS: ClassVar[dict] = {}  # profile → the fields it changes (book: none)
    PAPER: ClassVar[int] = 1  # whose model: 1 Sakamoto & Sato's (deterministic flips), 2 Magen et al.'s

    def __post_init__(self):
        for f in fields(self):
            check(f.name, getattr(self, f.name))
        self.check_together()

    @classmethod
    def preset(cls, profile: str = "book", overrides: dict | None = None, where: str = ""):
        """The settings of a profile with `overrides` (values, or command-line strings read as the field's type);
        `where` names them in an error (default: the type's name)."""
        book = cls().values()
        chosen = {**cls.PRESETS.get(check_profile(profile), {}), **(overrides or {})}
        for name, raw in chosen.items():
            if name not in book:
                raise unknown_parameter(name, list(book), where or cls.__name__)
            book[name] = coerce(name, raw, book[name])
        return cls(**book)

    def values(self) -> dict:
        """Every field by name (lists copied): the experiment's own first, then those of the groups it takes."""
        own = {f.name for f in fields(self)}  # the class-level annotations hold ClassVars too
        names = dict.fromkeys(name for kind in type(self).__mro__ for name in kind.__dict__.get("__annotations__", {})
                              if name in own)
        return {name: copy(getattr(self, name)) for name in names}

    def check_together(self) -> None:
        """Settings that pass their own rules but cannot run together. Paper 1's label noise (deterministic, the
        authors') flips ⌈n·η⌉ // 2 labels of each class: a positive η must flip at least one label of each class
        and leave one of each clean, or the page has no noisy sample to show (paper 2 draws its flips at random)."""
        values = self.values()
        eta = values.get("noise_ratio")
        if self.PAPER != 1 or not eta or values.get("label_noise", "deterministic") != "deterministic":
            return
        for key, value in values.items():
            if key == "n" or key.startswith("n_values"):
                for n in value if isinstance(value, list) else [value]:
                    if not flips_both_ways(n, eta):
                        least = next(m for m in range(2, 10**6) if flips_both_ways(m, eta))
                        which = f"each of {key}" if isinstance(value, list) else key
                        raise ParameterError(
                            f"{key} = {value!r} with noise_ratio = {eta} flips {math.ceil(n * eta) // 2} of the "
                            f"{n // 2} labels of each class (⌈n·η⌉/2, rounded down): {which} must be at least "
                            f"{least} at this noise ratio")


def flips_both_ways(n: int, eta: float) -> bool:
    flips = math.ceil(n * eta) // 2
    return flips >= 1 and n // 2 - flips >= 1


# ------------------------------------------------------------------------------- where and how the work runs
@dataclass(frozen=True)
class Device(Settings):
    device: str = "auto"  # auto: cuda, then mps, then cpu


@dataclass(frozen=True)
class Threads(Device):
    dtype: str = "float32"  # float32 or float64
    cpu_threads: int = 0  # 0: each block of work takes the cores free of other work (benign.device), a number fixes it


@dataclass(frozen=True)
class Runs(Threads):
    progress: bool = False  # progress bars (benign run turns them on in a terminal)
    use_cache: bool = True  # reuse finished chunks and runs from .cache/sweeps


# ------------------------------------------------------------------- Sakamoto & Sato's synthetic model (paper 1)
@dataclass(frozen=True)
class Tokens(Settings):
    T: int = 8  # tokens per input
    rho: float = 0.1  # ρ, scale of the weakly relevant tokens


@dataclass(frozen=True)
class Samples(Tokens):  # the data of the paper's Figure 3 and heatmaps
    n: int = 20  # training samples
    n_test: int = 1000  # clean test samples


@dataclass(frozen=True)
class Flips(Settings):
    noise_ratio: float = 0.2  # η, share of flipped training labels


@dataclass(frozen=True)
class Steps(Settings):
    learning_rate: float = 0.005  # α, gradient-descent step size
    num_steps: int = 1000  # gradient-descent steps


@dataclass(frozen=True)
class Training(Steps, Flips, Samples):
    pass


@dataclass(frozen=True)
class AuthorsData(Settings):
    label_noise: str = "deterministic"  # ⌈nη⌉ flips, half per class, as the authors did; or bernoulli
    authors_test_seed: bool = False  # True: the test set reuses the training seed, as the authors did


@dataclass(frozen=True)
class AuthorsMain(Settings):
    authors_code: bool = True  # also run the authors' main.py (benign.authors) for the paper-vs-here table
    authors_max_d: int = 2000  # ... for the settings with d up to this (its cost grows as d², about 10 s at d 1000)
    authors_stream: str = "final"  # ... on their final main.py's data stream (c563aae), or "january" (492715f)


@dataclass(frozen=True)
class TokenSets(Settings):
    n_relevant: int = 2  # relevant tokens, the set R
    n_weak: int = 2  # weakly relevant tokens of each kind
    train_W: bool = False  # False trains p only, the analysed model
    W_init: str = "identity"  # identity (W is I) or kaiming


@dataclass(frozen=True)
class Fig1TokenSelection(AuthorsData, Flips, Samples):
    seed: int = 0  # data and label noise of the plotted draw
    replicates: int = 3  # data draws, seeds seed, seed + 1, …, whose spread the record keeps
    d: int = 10000  # token dimension
    signal_norm: float = 20.0  # ‖μ‖
    n: int = 100  # training samples
    n_test: int = 100  # clean test samples
    rho: float = 0.2  # ρ, scale of the weakly relevant tokens
    c_harmful: float = 1.0  # memorisation scale c of the harmful column
    c_benign: float = 0.06  # memorisation scale c of the benign column
    c_not_overfitting: float = 0.001  # memorisation scale c of the not overfitting column
    authors_code: bool = True  # also build the query with the authors' data generation (benign.authors)
    outcome_draws: int = 50  # data draws per column, seeds seed, seed + 1, …, in "How often does each column land"

    PRESETS: ClassVar[dict] = {
        "smoke": dict(d=500, n=40, n_test=40, outcome_draws=4),
        # the book already runs the paper's scale. Not the authors' test-seed reuse: the first n/2 test inputs would
        # be the first n/2 training inputs with their clean labels, so the benign column's test accuracy would be
        # 0.8, not the paper's 1.0 — Figure 1's test set cannot have been drawn that way
        "paper": {},
    }


@dataclass(frozen=True)
class Fig3Dynamics(AuthorsMain, Runs, AuthorsData, Training):
    seed: int = 42  # data, label noise and the initialisation of W of the plotted runs
    replicates: int = 3  # runs per setting, seeds seed, seed + 1, …: the verdicts rest on all of them
    log_every: int = 10  # test metrics every this many steps
    d_balanced: int = 2000  # the balanced setting (d, ‖μ‖)
    signal_norm_balanced: float = 20.0  # ‖μ‖ of that setting
    d_large_noise: int = 4500  # the large-noise setting
    signal_norm_large_noise: float = 5.0  # ‖μ‖ of that setting
    d_large_signal: int = 1000  # the large-signal setting
    signal_norm_large_signal: float = 80.0  # ‖μ‖ of that setting
    outcome_draws: int = 50  # draws of (data, W₀) per setting (seeds seed, seed + 1, …) in "How often does …"

    PRESETS: ClassVar[dict] = {
        "smoke": dict(num_steps=60, log_every=20, n_test=50, d_balanced=200, d_large_noise=300, d_large_signal=100,
                      outcome_draws=4),
        # the paper's scale (the book already runs it) with the authors' test-seed reuse, their main.py at all three
        # settings (about 5 min at d = 4500 on a 2-core CPU) and seed 0, not their final config's 42: the seed of
        # their configs until their final commit, and the only one of the two at which their main.py gives Figure
        # 3(c)'s train accuracy 0.8 (how often a draw does: the page's section "How often does each setting land")
        "paper": dict(authors_test_seed=True, seed=0, authors_max_d=5000),
    }


@dataclass(frozen=True)
class Fig5Heatmap(AuthorsMain, Runs, AuthorsData, Training):
    seed: int = 42  # one seed for every cell: cells of one d share data noise and the initialisation of W
    d_grid: list = listed(250, 5000, 125)  # d from, to, step (inclusive)
    signal_norm_grid: list = listed(5.0, 100.0, 2.5)  # ‖μ‖ from, to, step (inclusive)
    test_threshold: float = TEST_GOOD.value  # test accuracy separating benign from harmful in the observed regime map
    # the same cells over training time (benign.regimes through the theorem's clock, benign.clock)
    d_values_long: list = listed(250, 500, 1000, 1500, 2000, 3000, 4500)  # d of the long runs (values of the grid)
    signal_norm_values_long: list = listed(5.0, 7.5, 10.0, 15.0, 20.0, 40.0, 60.0, 80.0)  # ‖μ‖ of the long runs
    num_steps_long: int = 100000  # gradient-descent steps of every long run
    snapshot_steps: list = listed(1000, 10000, 100000)  # steps at which the map is drawn again (1000: the paper's)
    attention_level: float = SELECTED.value  # mean test attention on the relevant token that counts as "selected"
    history_points: int = 60  # log-spaced logged steps per long run
    block: int = 512  # steps per block of the long runs (their buffers: block × runs × 4nT numbers)

    PRESETS: ClassVar[dict] = {
        "smoke": dict(d_grid=[200, 400, 100], signal_norm_grid=[5.0, 25.0, 10.0], num_steps=50, n_test=100,
                      d_values_long=[200, 400], signal_norm_values_long=[5.0, 25.0], num_steps_long=300,
                      snapshot_steps=[50, 300], history_points=20, block=64),
        # the same grid with the authors' test-seed reuse, their main.py at all three checked cells (shared with
        # Figure 3's paper profile) and seed 0 as there; all 39 × 39 cells run for 10⁶ steps
        "paper": dict(authors_test_seed=True, seed=0, authors_max_d=5000,
                      d_values_long=list(range(250, 5001, 125)),
                      signal_norm_values_long=[5.0 + 2.5 * i for i in range(39)],
                      num_steps_long=1000000, snapshot_steps=[1000, 10000, 100000, 1000000]),
    }


@dataclass(frozen=True)
class ConditionsHeatmap(Runs, TokenSets, Training):
    seed: int = 0  # data, label noise and initialisation
    d_grid: list = listed(250, 5000, 250)  # d from, to, step (inclusive)
    signal_norm_grid: list = listed(5.0, 100.0, 5.0)  # ‖μ‖ from, to, step (inclusive)
    authors_code: bool = True  # also run the authors' main_math_frak.py (benign.authors) over the grid
    authors_grid_every: int = 2  # ... at every k-th d and ‖μ‖ of the grid (1: all 400 cells, minutes here)

    PRESETS: ClassVar[dict] = {
        "smoke": dict(d_grid=[200, 400, 200], signal_norm_grid=[5.0, 25.0, 20.0], num_steps=50, n_test=100),
        # the book already runs the paper's grid; here the authors' script runs at all of its 400 cells too
        "paper": dict(authors_grid_every=1),
    }


@dataclass(frozen=True)
class EtaSweep(Runs, AuthorsData, TokenSets, Steps, Samples):
    seed: int = 0  # data, label noise and initialisation
    replicates: int = 3  # seeds seed, seed + 1, … for the largest η, ours and the authors' script
    d: int = 12000  # token dimension
    signal_norm: float = 120.0  # ‖μ‖, norm of each class signal
    noise_ratio_grid: list = listed(0.0, 0.9, 0.05)  # η from, to, step (inclusive)
    n_values: list = listed(20, 50, 100, 200, 500)  # n of the sweep over n (this page's trainer), n among them
    n_values_authors: list = listed(20)  # n of the sweep over n run by the authors' script (minutes each from 50)
    authors_code: bool = True  # also run the authors' main_math_frak.py (benign.authors) for the table

    PRESETS: ClassVar[dict] = {
        "smoke": dict(d=300, signal_norm=20.0, noise_ratio_grid=[0.3, 0.7, 0.05], num_steps=50, n_test=100,
                      n_values=[20, 40]),
        # the paper's sweep at n = 500, where the authors' script gives the paper's collapse at η = 0.65 and 0.7 (n is
        # not stated in the paper), with their test-seed reuse; the sweep over n through both trainers at every n
        # (the authors' script: about 20 minutes at n = 500 on a 2-core CPU, 17 s per η value at n = 50)
        "paper": dict(n=500, authors_test_seed=True, n_values_authors=[20, 50, 100, 200, 500]),
    }


@dataclass(frozen=True)
class TheoryClock(Runs, Flips, Tokens):
    # the analysed model: only p trained, W = I
    d_values: list = listed(2000, 20000)  # dimensions
    n_values: list = listed(10, 20)  # training samples
    n_snr2_values: list = listed(0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 20.0)  # n·SNR²; ‖μ‖ = σ √(n·SNR²·d/n)
    seeds: list = listed(0, 1, 2)  # one run per seed and cell
    learning_rate_factors: list = listed(5.0)  # α = factor·n/d (αd/n: the theorem's unit of time, W₀ = I)
    num_steps: int = 50000  # gradient-descent steps of every run
    # the same grid at a second step size, to test τ ∝ 1/α (one d and n)
    learning_rate_factors_small: list = listed(0.5)  # a tenth of the step size
    d_values_small: list = listed(20000)  # dimensions at that step size
    n_values_small: list = listed(20)  # training samples at that step size
    # the experiments' model: W and p trained from kaiming W₀ (d² memory: smaller d)
    d_values_trained_W: list = listed(2000)  # dimensions with W trained
    n_values_trained_W: list = listed(20)  # training samples with W trained
    num_steps_trained_W: int = 10000  # gradient-descent steps with W trained
    n_test: int = 300  # clean test samples per run
    delta: float = 0.01  # the theorem's δ: test error below δ
    epsilon: float = 0.5  # the training-loss level γ of the clock's event *train loss* (not the token noise ε)
    attention_level: float = SELECTED.value  # mean test attention on the relevant token that counts as "selected"
    history_points: int = 120  # log-spaced logged steps per run
    block: int = 1024  # steps per block of the long-run mode (its buffers: block × runs × 2nT numbers)
    dtype: str = "float64"  # float32 or float64

    PRESETS: ClassVar[dict] = {
        "smoke": dict(d_values=[2000], n_values=[20], n_snr2_values=[0.5, 1.0, 5.0], seeds=[0, 1], num_steps=2000,
                      d_values_small=[2000], num_steps_trained_W=1000, n_test=100, history_points=40),
        # wide and long: three d and n, five seeds, 10⁶ steps, three step sizes
        "paper": dict(d_values=[2000, 20000, 100000], n_values=[10, 20, 40],
                      n_snr2_values=[0.05, 0.1, 0.2, 0.3, 0.5, 0.7, 1.0, 1.5, 2.0, 5.0, 10.0, 20.0],
                      seeds=[0, 1, 2, 3, 4], num_steps=1000000, learning_rate_factors_small=[0.5, 0.05],
                      d_values_small=[20000], n_values_small=[20], d_values_trained_W=[1000, 2000, 4000],
                      num_steps_trained_W=200000, n_test=1000, history_points=200),
    }


# ------------------------------------------------------------------------- the one-layer encoder (paper 1, App.)
@dataclass(frozen=True)
class Encoder(Runs, AuthorsData, Training):
    seed: int = 42  # data, label noise and the initialisation of every parameter
    hidden: int = 2000  # MLP width at the paper scale
    skip: bool = True  # residual connections (False: the variant without)
    scale: int = 10  # d and hidden divided by this, signal norms by its fourth root; 1 is the paper scale
    test_threshold: float = TEST_GOOD.value  # test accuracy separating benign from harmful in the observed regime
    authors_code: bool = True  # also run the authors' main_one_layer.py (benign.authors) at the settings run here


@dataclass(frozen=True)
class Fig6OneLayerDynamics(Encoder):
    replicates: int = 3  # runs per setting, seeds seed, seed + 1, …: the verdicts rest on all of them
    log_every: int = 20  # test metrics every this many steps
    d_balanced: int = 2000  # settings at the paper scale
    signal_norm_balanced: float = 20.0  # ‖μ‖ of that setting
    d_harmful: int = 5000  # the harmful setting
    signal_norm_harmful: float = 5.0  # ‖μ‖ of that setting
    d_not_overfitting: int = 1000  # the not-overfitting setting
    signal_norm_not_overfitting: float = 100.0  # ‖μ‖ of that setting

    PRESETS: ClassVar[dict] = {
        "smoke": dict(scale=50, num_steps=40, log_every=10, n_test=50),
        # the paper's scale (MLP width 2000, d up to 5000): most of an hour on a 2-core CPU, minutes on a GPU
        "paper": dict(scale=1, log_every=10),
    }


@dataclass(frozen=True)
class Fig7OneLayerHeatmap(Encoder):
    d_grid: list = listed(500, 5000, 750)  # d from, to, step (inclusive), at the paper scale
    signal_norm_grid: list = listed(5.0, 95.0, 15.0)  # ‖μ‖ from, to, step (inclusive)

    PRESETS: ClassVar[dict] = {
        "smoke": dict(d_grid=[500, 1000, 500], signal_norm_grid=[5.0, 20.0, 15.0], scale=20, num_steps=30,
                      n_test=50),
        # the paper's full 39 × 39 grid at its scale (MLP width 2000, d up to 5000): for a GPU
        "paper": dict(d_grid=[250, 5000, 125], signal_norm_grid=[5.0, 100.0, 2.5], scale=1),
    }


# ----------------------------------------------------------------------- Magen et al.'s single head (paper 2)
@dataclass(frozen=True)
class Paper2(Threads):
    PAPER: ClassVar[int] = 2
    seed: int = 0  # signal directions, labels, flips, token order and noise (the first of the seeds)
    d: int = 40000  # token dimension
    noise_ratio: float = 0.05  # η, probability that a training label is flipped


@dataclass(frozen=True)
class Paper2SnrHeatmap(Paper2):
    num_seeds: int = 3  # data draws per cell
    n_values: list = listed(50, 100, 200, 400, 800, 1600)  # training samples, one column each
    signal_norm_min: float = 2.0  # smallest ‖μ‖ of the grid (paper 2's ρ)
    signal_norm_max: float = 256.0  # largest ‖μ‖ of the grid
    signal_norm_steps_per_doubling: int = 8  # m: the ‖μ‖ grid's ratio is 2^(1/m), the resolution of the edge
    n_tail_min: int = 200  # the edge's slope is fitted over n ≥ this (fixed before the run); smaller n apart
    n_test: int = 500  # clean test samples per draw
    step_size_factors: list = listed(2.0, 200.0)  # c, step t has step size β_t of c_t times n/d
    min_test_acc: float = 0.95  # a cell is benign if it interpolates with at least this test accuracy

    PRESETS: ClassVar[dict] = {
        "smoke": dict(num_seeds=1, d=2000, n_values=[20, 40, 80], signal_norm_min=4.0, signal_norm_max=32.0,
                      signal_norm_steps_per_doubling=2, n_tail_min=40, n_test=50),
        # the paper's heatmap axes were not recovered: the book's grid, finer, to n = 3200, more seeds and tests
        "paper": dict(num_seeds=10, n_test=2000, n_values=[50, 100, 200, 400, 800, 1600, 3200],
                      signal_norm_steps_per_doubling=16),
    }


@dataclass(frozen=True)
class Paper2TwoSteps(Paper2):
    n: int = 200  # training samples
    signal_norm: float = 30.0  # ‖μ‖, the norm of μ₊ and μ₋ (paper 2's ρ)
    n_test: int = 1000  # clean test samples
    step_sizes_seed: list = listed(0.01, 0.01)  # β, one step size per GD step: small steps, the public notebook's
    step_sizes_benign: list = listed(0.01, 1.0)  # a small first and a large second step
    step_sizes_harmful: list = listed(0.5, 1.0)  # a large first step

    PRESETS: ClassVar[dict] = {
        "smoke": dict(n=40, d=2000, signal_norm=13.0, n_test=100),  # n SNR² = 3.4, as benign as the book's 4.5
        # the paper's own setting for this experiment is not recovered: the book's, with a larger test set
        "paper": dict(n_test=4000),
    }


# ------------------------------------------------------------------ real backbones (Table 2, Figures 8 and 9)
@dataclass(frozen=True)
class Table2Finetune(Device):
    datasets: list = listed("rotten_tomatoes", "rotten_tomatoes_3class", "mnist_5k", "fashion_mnist")  # offline rows
    text_backbone: str = "all-minilm-l6-v2"  # offline; online bert-base-uncased, or a local folder
    image_backbone: str = "vit-mnist-digits"  # small ViT pre-trained here; online google/vit-base-patch16-224-in21k
    noise_ratios: list = listed(0.0, 0.2)  # η, share of labels replaced by a different class
    sample_sizes: list = listed(20, 200, 1000)  # n, size of the noisy finetune subset
    seeds: list = listed(42, 314, 2718)  # one run per seed, as the paper's three
    pretrain_num_epochs: int = 300  # phase 1 epochs, as the paper
    num_epochs: int = 2000  # phase 2's schedule: the learning rate decays linearly to 0 over this many epochs
    stop_when_fitted: bool = True  # phase 2 stops a run once it predicts every training label, the noisy ones too
    max_epochs: int = 300  # phase 2 runs at most this many epochs for n of max_epochs_from_n or more; 0: no cap
    max_epochs_from_n: int = 1000  # the epoch cap applies to these n (the CPU's budget); 0: to every n
    batch_size: int = 16  # the authors' batch size
    optimizer: str = "adamw"  # adamw as the authors ran it, or sgd as they configured it
    add_special_tokens: bool = False  # the authors fed BERT without CLS and SEP tokens
    pretrain_size: int = 0  # clean phase 1 subset; 0: the data set's size (the paper's for its data sets)
    max_test: int = 0  # 0: the whole test split
    vit_pretrain_epochs: int = 30  # how the small ViT is pre-trained on the MNIST digits kept for it
    vit_pretrain_samples: int = 2000  # digits it is pre-trained on, none drawn by the protocol
    vit_layers: int = 2  # the small ViT's depth, chosen by the backbone study (backbone_reach) from 1 to 4
    cpu_threads: int = 1  # per process: 1 is far faster than 2 on a busy 2-core CPU (benchmarks/under_load.py)
    processes: int = 2  # rows computed side by side in this many processes
    progress: bool = False  # progress bars (benign run turns them on in a terminal)

    PRESETS: ClassVar[dict] = {
        "smoke": dict(datasets=["rotten_tomatoes", "mnist_5k"], sample_sizes=[20], seeds=[42, 314],
                      pretrain_num_epochs=2, num_epochs=3, stop_when_fitted=False, pretrain_size=32, max_test=32,
                      vit_pretrain_epochs=1, vit_pretrain_samples=64, processes=1),
        # the authors' full protocol on their data and backbones (needs the Hugging Face hub, and a GPU to be quick)
        "paper": dict(datasets=["mnist", "cifar10", "stl10", "pneumoniamnist", "breastmnist", "sst2", "agnews",
                                "trec"],
                      text_backbone="bert-base-uncased", image_backbone="google/vit-base-patch16-224-in21k",
                      stop_when_fitted=False, max_epochs=0, max_epochs_from_n=0, cpu_threads=0, processes=1),
    }


@dataclass(frozen=True)
class BackboneReach(Device):
    dataset: str = "mnist_5k"  # the image data set every backbone of the family fine-tunes on (Table 2's digits row)
    vit_depths: list = listed(1, 2, 3, 4)  # depths of the small ViTs made here, width 128 (Table 2's is one of them)
    vit_widths: list = listed()  # widths of further ViTs at the deepest depth (another axis of reach)
    datasets_beside: list = listed("rotten_tomatoes", "rotten_tomatoes_3class")  # text rows read from Table 2's runs
    sample_sizes: list = listed(20, 200)  # n, size of the noisy finetune subset
    table2_profile: str = "book"  # Table 2's profile: the protocol, seeds, noise and pre-training
    processes: int = 2  # backbones made and run side by side in this many processes
    progress: bool = False  # progress bars (benign run turns them on in a terminal)

    PRESETS: ClassVar[dict] = {
        # seconds, for CI: Table 2's smoke protocol, two depths and one other width (the width path too)
        "smoke": dict(vit_depths=[1, 2], vit_widths=[64], datasets_beside=["rotten_tomatoes"], sample_sizes=[20],
                      table2_profile="smoke", processes=1),
        # the paper's grid of n and Table 2's paper protocol (every epoch of phase 2), and a narrower 4-layer ViT:
        # width is a second axis of reach; it does not fit the book profile's 5 minutes
        "paper": dict(sample_sizes=[20, 200, 1000], table2_profile="paper", vit_widths=[64]),
    }

    def table2(self) -> Table2Finetune:
        """The Table-2 settings every backbone runs with (its protocol, seeds, noise and pre-training)."""
        return Table2Finetune.preset(self.table2_profile)


# One settings type per notebook; Figures 8 and 9 plot Table 2's runs, so they take its settings (and its runs).
SETTINGS = {
    "fig1_token_selection": Fig1TokenSelection,
    "fig3_dynamics": Fig3Dynamics,
    "fig5_heatmap": Fig5Heatmap,
    "conditions_heatmap": ConditionsHeatmap,
    "eta_sweep": EtaSweep,
    "theory_clock": TheoryClock,
    "fig6_one_layer_dynamics": Fig6OneLayerDynamics,
    "fig7_one_layer_heatmap": Fig7OneLayerHeatmap,
    "paper2_snr_heatmap": Paper2SnrHeatmap,
    "paper2_two_steps": Paper2TwoSteps,
    "table2_finetune": Table2Finetune,
    "fig8_finetune_attention": Table2Finetune,
    "backbone_reach": BackboneReach,
}
