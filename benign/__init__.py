"""benign: the companion package to Sakamoto & Sato, "Benign Overfitting in Token Selection of Attention Mechanism"
(ICML 2025), and Magen et al., "Benign Overfitting in Single-Head Attention".

`import benign` is light (no torch): each module below is imported on first use, `benign.synthetic` as well as
`from benign import synthetic`.

Paper 1, its data and trainers:
    data        synthetic token-selection data under label noise: `data.make_run` makes one setting
    synthetic   exact, fast gradient descent of the token-selection model, many runs at once
    encoder     the one-layer Transformer encoder (appendix), many runs at once
    models      the literal models as the papers write them: the reference the fast trainers are tested against
    grams       Gram matrices of the tokens, as the exact trainers use them
    tables      the trainers' tidy tables (history, scores, final)
    theory      what the theory predicts: SNR, regime boundaries, time scales
    clock       the theorem's clock: long runs at constant memory, timing its events
    timing      reading the clock's runs: crossing steps, slopes, delayed generalization
    clockread   what the clock page reads off its runs, as one typed result
    regimes     Figure 5's regime map over training time
    regionmap   what Figure 5's map shows, at its step and over training time, as typed results
    etasweep    the label-noise sweep of the appendix, as one typed result
    draws       outcomes over many draws of the data
    onelayer    Figures 6 and 7: the encoder's runs read against their clean-label controls, Figure 7's map typed
    onelayer_dynamics  Figure 6's runs, their plotted samples and the authors' script, as one typed result
    conditions  the appendix's conditions (Eq. 9, Eq. 10) over Figure 5's grid, against their step-0 controls
    dynamics    Figure 3's runs, their controls and draws, and the authors' rows, as one typed result
    authors     the authors' experiment scripts, transcribed as executable references
Paper 2:
    paper2      two-token data and exact, fast gradient descent of single-head attention
    paper2_edge where benign overfitting starts on an SNR sweep
Real data:
    realdata    noisy-label fine-tuning of a pretrained Transformer's last attention layer
Running and recording:
    checks      parameter rules and one-line errors shared by the package, the notebooks and the command line
    device      the compute device, the float type and the CPU threads
    sweep       grids of runs: chunked, cached, resumable, on any concurrent.futures executor
    progress    progress bars for long work
    records     what every run leaves next to its results (metrics.json)
    settings    every experiment's settings: the papers' values once, each notebook's presets (smoke, book, paper)
    notebooks   the notebooks as runnable programs: settings from a profile, headless execution
    cli         the command line: benign list | run | book
    book        build the Jupyter Book at one profile
    speed       the benchmarks' records and the book's Speed page
    paths       every path the project uses
The book's verdicts and words:
    expected    the papers' reported numbers with tolerances
    thresholds  every threshold a verdict rests on, with its reason
    rules       the claims ledger's rules
    paper2_rules the ledger's rules for the second paper's claims
    realdata_rules the ledger's rules for the real-data claims (Table 2, Figures 8 and 9, the backbone study)
    verdicts    what a ledger rule returns and reads
    ledger      the claims ledger: every tested claim with its verdict
    pages       tables as a reader reads them
    plots       one visual style for every figure, its layout checks and its phone version
    heatmaps    the maps of the figures: a measure or a regime per grid cell, and the theory's lines on them
    words       words built from numbers
    textcheck   the rendered-text check: the words a reader sees on the built pages
"""

import importlib

__version__ = "0.1.0"

__all__ = ["authors", "book", "checks", "cli", "clock", "clockread", "conditions", "data", "device", "draws",
           "dynamics", "encoder", "etasweep", "expected", "grams", "heatmaps", "ledger", "models", "notebooks",
           "onelayer", "onelayer_dynamics", "pages", "paper2", "paper2_edge", "paper2_rules", "paths", "plots",
           "progress", "realdata", "realdata_rules", "records", "regimes", "regionmap", "rules", "settings", "speed",
           "sweep", "synthetic", "tables", "textcheck", "theory", "thresholds", "timing", "verdicts", "words"]


def __getattr__(name: str):
    """A module of the package, imported on first access (PEP 562)."""
    if name in __all__:
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
