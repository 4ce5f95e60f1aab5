"""What the Table-2 and Figure-8/9 pages show: the table, the paper beside it, the curves, what differs from the
paper's protocol, and the numbers the text quotes."""

from __future__ import annotations

import numpy as np
import pandas as pd

from .. import thresholds, timing
from ..words import and_list, count, percent, reader_name, share_words, signed, slope_words, span
from ..expected import TABLE2_NEAREST, table2_key
from .backbones import BACKBONE_LABELS
from .image_backbone import record as backbone_record
from .datasets import HUB, MEDMNIST, take
from .runs import PAPER_GRID, Protocol, Task, pretrain_size


def summarize(runs: pd.DataFrame) -> pd.DataFrame:
    """Mean ± std over seeds per (dataset, η, n): train loss, test accuracy, base accuracy (std with ddof 0), the
    training accuracy, the share of flipped labels fitted, the shares within reach (`reach`: free scores, a single
    token) and the phase-2 epochs run."""
    std = lambda v: float(np.std(v))  # noqa: E731
    g = runs.groupby(["dataset", "backbone", "noise_ratio", "n"], sort=False)
    out = g.agg(train_loss=("train_loss", "mean"), train_loss_std=("train_loss", std),
                test_acc=("test_acc", "mean"), test_acc_std=("test_acc", std), train_acc=("train_acc", "mean"),
                fitted_noisy=("fitted_noisy", "mean"), reach_free=("reach_free", "mean"),
                reach_token=("reach_token", "mean"), base_acc=("base_acc", "mean"),
                epochs_min=("epochs_run", "min"), epochs_max=("epochs_run", "max"), fitted=("fitted", "sum"),
                seeds=("seed", "count"))
    return out.reset_index()


def _column(n: int) -> str:
    return f"n = {n}"


def _size_of(column: str) -> int:
    return int(column.split("= ")[1])


def _layout(summary: pd.DataFrame, cell, first: dict | None = None) -> pd.DataFrame:
    """Table 2's layout: a row per data set and η (data sets in the order they come, η rising), the `first` columns
    (each a function of the row's cells) and a column per n, its cell `cell` of the row's summary."""
    rows = {}
    for ds in dict.fromkeys(summary.dataset):
        for eta, part in summary[summary.dataset == ds].groupby("noise_ratio"):
            rows[(ds, eta)] = {**{k: f(part) for k, f in (first or {}).items()},
                               **{_column(r.n): cell(r) for r in part.itertuples()}}
    frame = pd.DataFrame.from_dict(rows, orient="index").fillna("n/a")
    frame.index = pd.MultiIndex.from_tuples(frame.index, names=["data set", "η"])
    return frame[[*(first or {}), *sorted((c for c in frame.columns if c not in (first or {})), key=_size_of)]]


def _full_schedule(r, num_epochs: int) -> bool:
    """Every seed of the cell ran the whole schedule: its last epoch's loss is the paper's kind of number."""
    return r.epochs_min >= num_epochs


def table(summary: pd.DataFrame, num_epochs: int) -> pd.DataFrame:
    """Table 2 (`_layout`: a row per data set and η): base, and per n the cell 'loss, acc ± std' (accuracy in %).

    Losses are compared like with like: a cell whose seeds ran all `num_epochs` shows its final loss, as the paper's;
    a cell whose seeds all stopped because they fitted shows "fitted by epoch k" (the most epochs a seed ran), not
    the higher loss of the epoch it stopped in; any other cell (stopped by the epoch cap, or some seeds fitted and
    the others not), its loss "at epoch k", or "at epochs j–k" where its seeds stopped at different epochs."""
    def cell(r):
        if _full_schedule(r, num_epochs):
            loss = f"{r.train_loss:.2f}"
        elif r.fitted == r.seeds:
            loss = f"fitted by epoch {r.epochs_max}"
        else:
            loss = f"{r.train_loss:.2f} at {epochs_said(r.epochs_min, r.epochs_max)}"
        return f"{loss}, {100 * r.test_acc:.1f}±{100 * r.test_acc_std:.1f}"

    return _layout(summary, cell, {"base": lambda part: f"{100 * part.base_acc.iloc[0]:.2f}"})


def epochs_said(low: int, high: int) -> str:
    """The last epochs of a cell's seeds: 'epoch 300', 'epochs 1286–2000'."""
    return f"epoch {low}" if low == high else f"epochs {span(str(low), str(high), '–')}"


def epochs_table(summary: pd.DataFrame) -> pd.DataFrame:
    """Per cell: the phase-2 epochs the seeds ran (min–max) and how many of them stopped because they fitted."""
    def cell(r):
        return f"{span(str(r.epochs_min), str(r.epochs_max), '–')} ({r.fitted}/{r.seeds} fitted)"

    return _layout(summary, cell)


def with_paper(ours: pd.DataFrame, paper: dict, nearest: dict) -> pd.DataFrame:
    """Our table (`table`: a row per data set and η) with the paper's rows for the same data set (or the nearest
    ones) under each of our data sets, named for a reader: 'Rotten Tomatoes, here', then 'SST-2, paper (nearest)'
    ('MNIST, paper' for the same data set), short enough that the first column stays narrow."""
    def said(c) -> str:
        return "n/a" if c is None else f"{c[0]:.2f}, {c[1]:.1f}" + (f"±{c[2]:.1f}" if c[2] is not None else "")

    rows = {}
    for ds in dict.fromkeys(ours.index.get_level_values("data set")):
        mine = ours.xs(ds, level="data set")
        rows.update({(f"{reader_name(ds)}, here", eta): row for eta, row in mine.iterrows()})
        for ref in ([ds] if ds in paper else nearest.get(ds, ())):
            base, cells = paper[ref]
            for eta in mine.index:
                rows[(f"{reader_name(ref)}, paper" + ("" if ref == ds else " (nearest)"), eta)] = pd.Series(
                    {"base": f"{base:.2f}", **{col: said(cells.get((eta, _size_of(col)))) for col in ours.columns[1:]}})
    out = pd.DataFrame.from_dict(rows, orient="index")[ours.columns]
    out.index = pd.MultiIndex.from_tuples(out.index, names=["data set", "η"])
    return out


def curves(runs: pd.DataFrame) -> pd.DataFrame:
    """The max-attention curves in long form: dataset, noise_ratio, n, seed, epoch, max_attention, loss."""
    parts = []
    for _, r in runs.iterrows():
        e = np.arange(1, len(r.max_attention) + 1)
        parts.append(pd.DataFrame({"dataset": r.dataset, "noise_ratio": r.noise_ratio, "n": r.n, "seed": r.seed,
                                   "epoch": e, "max_attention": r.max_attention, "loss": r.loss[:len(e)]}))
    return pd.concat(parts, ignore_index=True)


def attention_ends(runs: pd.DataFrame) -> pd.DataFrame:
    """Per data set, η and n: the mean over seeds of the max attention after the first and after the last epoch
    each seed ran (seeds may stop at different epochs)."""
    ends = runs.assign(first=runs.max_attention.map(lambda v: v[0]), last=runs.max_attention.map(lambda v: v[-1]))
    return ends.groupby(["dataset", "noise_ratio", "n"], sort=False)[["first", "last"]].mean().reset_index()


def sharpening(ends: pd.DataFrame) -> pd.DataFrame:
    """`attention_ends` with, per curve, `factor` = last over first (the effective number of tokens attended, one
    over the largest score, shrinks by this factor) and `sharpened`, whether it reached `thresholds.SHARPER`."""
    factor = ends["last"] / ends["first"]
    return ends.assign(factor=factor, sharpened=factor >= thresholds.SHARPER.value)


def noisy_against_clean(ends: pd.DataFrame) -> pd.DataFrame:
    """The clean-label control of `attention_ends`: per data set and n with a clean curve, each noisy curve's last
    score over the clean curve's (`ratio`; above 1: fitting flipped labels ended sharper than fitting clean ones)."""
    key = ["dataset", "n"]
    clean = ends[ends.noise_ratio == 0].set_index(key)["last"]
    noisy = ends[ends.noise_ratio > 0]
    control = clean.reindex(pd.MultiIndex.from_frame(noisy[key])).to_numpy()
    return noisy.assign(ratio=noisy["last"].to_numpy() / control).dropna(subset=["ratio"])[key + ["noise_ratio",
                                                                                                    "ratio"]]


def factor_said(factor: float) -> str:
    """A curve's last largest score over its first, as the page writes it: '×1.18', to the hundredth, or to as many
    decimals as keep it on its side of `thresholds.SHARPER` (`decimals`: ×1.996 never reads ×2.00)."""
    return f"×{factor:.{decimals(factor, thresholds.SHARPER.value, 2)}f}"


def ends_table(ends: pd.DataFrame) -> pd.DataFrame:
    """`sharpening` as the page shows it: per data set, η and n, the largest score after the first and the last
    epoch (three decimals), their ratio (`factor_said`) and whether it reached `thresholds.SHARPER`."""
    return pd.DataFrame({
        "data set": ends.dataset, "η": ends.noise_ratio, "n": ends.n,
        "largest score, first epoch": ends["first"].map(lambda v: f"{v:.3f}"),
        "largest score, last epoch": ends["last"].map(lambda v: f"{v:.3f}"),
        "last over first": ends.factor.map(factor_said),
        f"sharpened (×{thresholds.SHARPER.value:g} or more)": ends.sharpened})


def sharpening_words(ends: pd.DataFrame, control: pd.DataFrame) -> str:
    """What `sharpening` and `noisy_against_clean` measured, in words: the factor's range, how many curves reached
    `thresholds.SHARPER` and which did not (factors as `factor_said` writes them), and the clean-label control."""
    low, high = factor_said(ends.factor.min()), factor_said(ends.factor.max())
    out = (f"By the end of phase 2 the largest score was {span(low, high)} its first epoch's; "
           f"{share_words(int(ends.sharpened.sum()), len(ends), 'curve', 'curves')} at least "
           f"{'doubled' if thresholds.SHARPER.value == 2 else f'multiplied by {thresholds.SHARPER.value:g}'} it, "
           "the threshold for *sharpened onto fewer tokens* (the effective number of tokens attended halves)")
    flat = ends[~ends.sharpened]
    if 0 < len(flat) < len(ends):
        out += " — not " + and_list([f"{reader_name(r.dataset)} at η = {r.noise_ratio:g}, n = {r.n} "
                                     f"({factor_said(r.factor)})" for r in flat.itertuples()])
    out += "."
    if len(control):
        out += (f" Against the same fine-tuning on clean labels, the curve with flipped labels ended sharper in "
                f"{share_words(int((control.ratio > 1).sum()), len(control), 'pair', 'pairs')} of data set and n "
                f"(last score with noise over last score without: "
                f"{span(f'{control.ratio.min():.2f}', f'{control.ratio.max():.2f}')}).")
    return out


CAP_KEYS = ("max_epochs", "max_epochs_from_n")  # read together: phase 2's epoch cap and the n it applies to


def epoch_cap(max_epochs: int, max_epochs_from_n: int) -> str:
    """Phase 2's epoch cap in words: 'no cap' (0), '300' (every n), '300 for n ≥ 1000'."""
    if not max_epochs:
        return "no cap"
    return f"{max_epochs}" if not max_epochs_from_n else f"{max_epochs} for n ≥ {max_epochs_from_n}"


SETTINGS = {  # a protocol setting as the page names it, and its value in words (0 and booleans are code conventions)
    "pretrain_num_epochs": ("phase 1 epochs", str),
    "num_epochs": ("phase 2 epochs (the learning-rate schedule)", str),
    "stop_when_fitted": ("phase 2 stops a run once it fits every training label", lambda v: "yes" if v else "no"),
    CAP_KEYS: ("phase 2 epochs at most", lambda v: epoch_cap(*v)),
    "batch_size": ("batch size", str),
    "optimizer": ("optimizer", lambda v: {"adamw": "AdamW", "sgd": "SGD"}.get(v, v)),
    "add_special_tokens": ("BERT's CLS and SEP tokens in its inputs", lambda v: "yes" if v else "no"),
    "pretrain_size": ("pretrain subset", lambda v: f"{v} samples" if v else "the data set's"),
    "max_test": ("test samples", lambda v: f"{v}" if v else "the whole test split"),
    "seeds": ("seeds", lambda v: and_list([str(s) for s in v])),
    "noise_ratios": ("η", lambda v: and_list([f"{x:g}" for x in v])),
    "sample_sizes": ("n", lambda v: and_list([str(x) for x in v])),
}


def differences(protocol: Protocol, seeds, noise_ratios, sample_sizes) -> pd.DataFrame:
    """Where the protocol departs from the paper's: setting, paper, here, values in words (one row saying so if
    nowhere)."""
    paper = {**Protocol().__dict__, **PAPER_GRID}
    here = {**protocol.__dict__, "seeds": list(seeds), "noise_ratios": [float(v) for v in noise_ratios],
            "sample_sizes": list(sample_sizes)}
    value = lambda run, key: tuple(run[k] for k in key) if isinstance(key, tuple) else run[key]  # noqa: E731
    rows = [{"setting": label, "paper": said(value(paper, key)), "here": said(value(here, key))}
            for key, (label, said) in SETTINGS.items() if said(value(paper, key)) != said(value(here, key))]
    if not rows:
        rows = [{"setting": "none", "paper": "the authors' protocol", "here": "the authors' protocol"}]
    return pd.DataFrame(rows)


def paper_pretrain_size(dataset: str) -> str:
    """The paper's pretrain subset for a data set, or for an offline row its nearest paper row's (named)."""
    sizes = {**{k: v.pretrain_size for k, v in HUB.items()}, **{k: v[0] for k, v in MEDMNIST.items()}}
    if dataset in sizes:
        return str(sizes[dataset])
    near = TABLE2_NEAREST.get(dataset, ())
    return ", ".join(f"{reader_name(n)}: {sizes[n]}" for n in near) or "n/a"


def made_summary(record: dict) -> str:
    """How a backbone made here was made, from its record's recipe: 'ViT, 2 layers of width 128, 4 heads, 7×7
    patches, 30 epochs on 2000 digits'."""
    made, a = record["recipe"], record["recipe"]["architecture"]
    return (f"ViT, {count(a['num_hidden_layers'], 'layer')} of width {a['hidden_size']}, "
            f"{count(a['num_attention_heads'], 'head')}, {a['patch_size']}×{a['patch_size']} patches, "
            f"{count(made['epochs'], 'epoch')} on {made['samples']} digits")


def assets(tasks: list[Task], protocol: Protocol, sample_sizes) -> pd.DataFrame:
    """What each row ran on: data, backbone, sizes (the pretrain subset beside the paper's) and where they came from."""
    rows = []
    for t in tasks:
        record = backbone_record(t.bb.folder)
        made = ""
        if record:
            made = (f"made here: {made_summary(record)}, its own test accuracy on {record['test_split']} "
                    f"{100 * record['test_accuracy']:.1f} %")
        rows.append({"dataset": t.dataset, "source": t.data.source, "classes": t.data.num_classes,
                     "train pool": len(t.data.train_labels), "test split": len(t.data.test_labels),
                     "pretrain subset": pretrain_size(t.data, protocol, sample_sizes),
                     "paper's pretrain subset": paper_pretrain_size(t.dataset),
                     "backbone": BACKBONE_LABELS.get(t.backbone, t.backbone),
                     "layers": t.bb.model.config.num_hidden_layers, "hidden": t.bb.hidden, "heads": t.bb.heads,
                     "made": made})
    return pd.DataFrame(rows)


def table_metrics(summary: pd.DataFrame, num_epochs: int) -> dict:
    """Flat metrics.json keys: <dataset>_base_acc and <dataset>_noise<η>_n<n>_<quantity>. The train loss only where
    every seed ran the whole schedule of `num_epochs` (what the paper's final loss is): a run stopped early is
    recorded by the epochs it ran, its loss left uncompared."""
    metrics = {}
    for _, r in summary.iterrows():
        metrics[f"{r.dataset}_base_acc"] = float(r.base_acc)
        for q in ("train_loss", "test_acc", "test_acc_std", "train_acc", "fitted_noisy", "reach_free", "reach_token",
                  "epochs_max"):
            if pd.notna(r[q]) and (q != "train_loss" or _full_schedule(r, num_epochs)):
                metrics[table2_key(r.dataset, r.noise_ratio, r.n, q)] = float(r[q])
    return metrics


REACH_TESTS_CLAIM = thresholds.MAJORITY.value  # a row tests the paper's claim only if free scores reach most flipped
CLEAN_FITTED = thresholds.REAL_FITTED.value  # labels … and phase 2 fits (nearly) all its clean labels


def row_checks(summary: pd.DataFrame) -> pd.DataFrame:
    """Per data set: can its runs test the paper's claim at all? Columns: dataset, clean_train_acc (mean over its
    cells without noise), reach_free and reach_token (mean over its cells with noise: shares of the flipped labels
    free scores can fit and a single token gives), fitted_noisy (the share phase 2 fitted), test_minus_base (points,
    mean over its cells with noise), tests_claim and why not.

    A row whose clean labels phase 2 does not fit, or most of whose flipped labels no attention over the last
    layer's tokens can fit, does not test "attention fits the noise and stays accurate": it is not a miss of the
    claim but a backbone that cannot show it."""
    rows = []
    for ds, part in summary.groupby("dataset", sort=False):
        clean, noisy = part[part.noise_ratio == 0], part[part.noise_ratio > 0]
        acc = float(clean.train_acc.mean()) if len(clean) else np.nan
        reach = float(noisy.reach_free.mean()) if len(noisy) and noisy.reach_free.notna().any() else np.nan
        why = ""
        if acc == acc and acc < CLEAN_FITTED:
            why = "phase 2 does not fit its clean labels"
        elif reach == reach and reach < REACH_TESTS_CLAIM:
            why = "most flipped labels are out of reach of any attention over its last layer's tokens"
        rows.append({"dataset": ds, "clean_train_acc": acc, "reach_free": reach,
                     "reach_token": float(noisy.reach_token.mean()) if len(noisy) else np.nan,
                     "fitted_noisy": float(noisy.fitted_noisy.mean()) if len(noisy) else np.nan,
                     "test_minus_base": float(100 * (noisy.test_acc - noisy.base_acc).mean()) if len(noisy) else np.nan,
                     "tests_claim": not why, "why": why})
    return pd.DataFrame(rows)


def check_metrics(checks: pd.DataFrame) -> dict:
    """<dataset>_clean_train_acc, _reach_free_mean, _reach_token_mean, _tests_claim (1 or 0): what
    `expected.untestable` reads."""
    out = {}
    for _, r in checks.iterrows():
        out.update({f"{r.dataset}_clean_train_acc": r.clean_train_acc, f"{r.dataset}_reach_free_mean": r.reach_free,
                    f"{r.dataset}_reach_token_mean": r.reach_token, f"{r.dataset}_tests_claim": float(r.tests_claim)})
    return {k: float(v) for k, v in out.items() if v == v}


def clean_fit_words(clean_train_acc: float) -> str:
    """How much of its clean labels phase 2 fits (training accuracy at η = 0), against `thresholds.REAL_FITTED`:
    'on clean labels phase 2 fits 92% of the training labels, fewer than the 95% that count as fitted'."""
    if clean_train_acc != clean_train_acc:
        return "this profile runs no cell without noise, so whether phase 2 fits clean labels is not measured"
    side = "at least" if clean_train_acc >= CLEAN_FITTED else "fewer than"
    return (f"on clean labels phase 2 fits {percent(clean_train_acc)} of the training labels, {side} the "
            f"{percent(CLEAN_FITTED)} that count as fitted")


def why_words(r) -> str:
    """Why a `row_checks` row does not test the claim, with its measured numbers and the thresholds ('' if it does)."""
    if r.tests_claim:
        return ""
    if r.clean_train_acc == r.clean_train_acc and r.clean_train_acc < CLEAN_FITTED:
        return clean_fit_words(r.clean_train_acc)
    return (f"free attention over its last layer's tokens reaches {percent(r.reach_free)} of its flipped labels, "
            f"below the {percent(REACH_TESTS_CLAIM)} a test of the claim needs")


def check_words(checks: pd.DataFrame, kinds: dict[str, str]) -> dict[str, str]:
    """Glued words of the page (numbers in them are measured, never typed): <kind>_rows_reading, per row of a kind,
    what is within reach, what phase 2 fitted and whether it tests the claim (and why not, once); fashion_reading,
    whether the Fashion-MNIST row is counted (its clean fit against `thresholds.REAL_FITTED` where it is; where it is
    not, the row's reading has said why), or that this profile does not run it."""
    share = lambda v: "an unmeasured share" if v != v else percent(v)  # noqa: E731
    words = {}
    for kind in sorted(set(kinds.values())):
        parts = []
        for _, r in checks[checks.dataset.map(kinds) == kind].iterrows():
            verdict = "tests the claim" if r.tests_claim else f"not testable with this backbone: {why_words(r)}"
            parts.append(f"{reader_name(r.dataset)}: {share(r.reach_free)} of the flipped labels within reach, "
                         f"{share(r.reach_token)} given by a single token, {share(r.fitted_noisy)} fitted by phase 2, "
                         f"test minus base {signed(r.test_minus_base, '+.1f')} points ({verdict})")
        words[f"{kind}_rows_reading"] = "; ".join(parts) or "no row of this kind at this profile"
    fashion = checks[checks.dataset == "fashion_mnist"]
    if fashion.empty:
        words["fashion_reading"] = "this profile does not run it"
    else:
        r = fashion.iloc[0]
        words["fashion_reading"] = (
            f"{clean_fit_words(r.clean_train_acc)}, and the row tests the claim and is counted" if r.tests_claim else
            "as its reading above says, the row does not test the claim: it stays in the table for what it shows, "
            "outside the paper-vs-here count")
    return words


def row_title(task: Task) -> str:
    """A row's title on a figure: the data set's reader name and the backbone's short name (its label up to the
    parenthesis: 'Rotten Tomatoes · all-MiniLM-L6-v2')."""
    return f"{reader_name(task.dataset)} · {BACKBONE_LABELS.get(task.backbone, task.backbone).split(' (')[0]}"


def findings(summary: pd.DataFrame, tasks: list[Task], checks: pd.DataFrame | None = None) -> pd.DataFrame:
    """Per data set and n, with label noise: were the noisy labels fitted, and what did it cost the test accuracy?

    Columns: dataset, kind (text or image), η, n, whether the row tests the claim (`row_checks`), the shares of
    flipped labels within reach (free scores; a single token) and fitted (means over seeds), the
    training accuracy, the phase-2 epochs (most of the seeds), and the test accuracy minus the base accuracy and
    minus the same cell without noise (percentage points).
    """
    kind = {t.dataset: t.data.kind for t in tasks}
    testable = dict(zip(checks.dataset, checks.tests_claim)) if checks is not None else {}
    clean = summary[summary.noise_ratio == 0].set_index(["dataset", "n"]).test_acc
    rows = []
    pct = lambda v: 100 * v if pd.notna(v) else np.nan  # noqa: E731
    for _, r in summary[summary.noise_ratio > 0].iterrows():
        rows.append({"dataset": r.dataset, "kind": kind[r.dataset], "η": r.noise_ratio, "n": r.n,
                     "tests the claim": testable.get(r.dataset, True),
                     "within reach of free attention (%)": pct(r.reach_free),
                     "a single token gives it (%)": pct(r.reach_token),
                     "flipped labels fitted (%)": pct(r.fitted_noisy),
                     "train accuracy (%)": 100 * r.train_acc, "epochs": r.epochs_max,
                     "test − base (points)": 100 * (r.test_acc - r.base_acc),
                     "test − clean cell (points)": 100 * (r.test_acc - clean.get((r.dataset, r.n), np.nan))})
    return pd.DataFrame(rows)


def finding_metrics(found: pd.DataFrame) -> dict:
    """The numbers the page's reading quotes, per kind of row (text, image), over all its rows: how many rows and how
    many of them test the claim (`row_checks`), the shares of flipped labels within reach (free scores, a single
    token), cells with noise, how many fitted every flipped label in every seed, the share of flipped labels fitted,
    the most epochs a cell ran, and the test accuracy's change against the base accuracy (mean, worst, and at the
    largest n) and against the clean cell; the same over the rows that test the claim alone as <kind>_testing_….
    """
    out = {}
    for kind, every in found.groupby("kind"):
        testing = every[every["tests the claim"].astype(bool)]
        out.update({f"{kind}_rows": float(every.dataset.nunique()),
                    f"{kind}_rows_testing": float(testing.dataset.nunique()),
                    f"{kind}_reach_free_mean": float(every["within reach of free attention (%)"].mean()),
                    f"{kind}_reach_token_mean": float(every["a single token gives it (%)"].mean())})
        for prefix, part in ((kind, every), (f"{kind}_testing", testing)):
            if part.empty:
                continue
            fitted, drop = part["flipped labels fitted (%)"], part["test − base (points)"]
            largest = part[part.n == part.n.max()]
            out.update({f"{prefix}_noisy_cells": float(len(part)),
                        f"{prefix}_noisy_cells_all_fitted": float((fitted >= 100 - 1e-9).sum()),
                        f"{prefix}_flipped_fitted_mean": float(fitted.mean()),
                        f"{prefix}_epochs_max": float(part.epochs.max()),
                        f"{prefix}_test_vs_base_mean": float(drop.mean()),
                        f"{prefix}_test_vs_base_worst": float(drop.min()),
                        f"{prefix}_test_vs_base_largest_n": float(largest["test − base (points)"].mean()),
                        f"{prefix}_test_vs_clean_mean": float(part["test − clean cell (points)"].mean()),
                        f"{prefix}_test_vs_clean_worst": float(part["test − clean cell (points)"].min()),
                        **cost_trend(part, prefix)})
    return out


def finding_words(found: pd.DataFrame, num_epochs: int) -> dict[str, str]:
    """The page's reading of `findings` in words, per kind of row (text, image), numbers measured: <kind>_cells_fitted
    ('all 6 cells with noise', '4 of the 6 …'), <kind>_epochs_left (how many more epochs the schedule of `num_epochs`
    had at least after each cell: `epochs_left` after the longest), <kind>_test_vs_base_by_n (test minus base
    accuracy per n, mean over the rows) and <kind>_cost_trend (how the cost against the clean cell moves with n:
    `cost_trend` read by `words.trend`), the mean shares of flipped labels within reach, given by a single token and
    fitted ('none', 'all', '49%': <kind>_reach_free_words, _reach_token_words, _flipped_fitted_words), the mean test
    accuracy against base and clean cell in points with a true minus sign (<kind>_test_vs_base_words,
    _test_vs_clean_words) and the latter per row and n (<kind>_cost_by_row: `cost_by_row_words`)."""
    out = {}
    for kind, part in found.groupby("kind"):
        fitted = int((part["flipped labels fitted (%)"] >= 100 - 1e-9).sum())
        by_n = part.groupby("n")["test − base (points)"].mean()
        slope, se = cost_trend(part, kind).values()
        share = lambda column: percent(part[column].mean() / 100)  # noqa: E731
        out.update({f"{kind}_cells_fitted": share_words(fitted, len(part), "cell with noise", "cells with noise"),
                    f"{kind}_epochs_left": epochs_left(num_epochs - int(part.epochs.max())),
                    f"{kind}_test_vs_base_by_n": and_list([f"{signed(v, '+.1f')} points at n = {n}"
                                                           for n, v in by_n.items()]),
                    f"{kind}_cost_trend": ("is measured at one n only" if slope != slope else
                                           slope_words(-slope, se, "grows with n", "shrinks as n grows",
                                                       "does not change measurably with n")),  # the cost: −(test − clean)
                    f"{kind}_reach_free_words": share("within reach of free attention (%)"),
                    f"{kind}_reach_token_words": share("a single token gives it (%)"),
                    f"{kind}_flipped_fitted_words": share("flipped labels fitted (%)"),
                    f"{kind}_test_vs_base_words": signed(part["test − base (points)"].mean(), ".1f"),
                    f"{kind}_test_vs_clean_words": signed(part["test − clean cell (points)"].mean(), ".1f"),
                    f"{kind}_cost_by_row": cost_by_row_words(part)})
    return out


def epochs_left(left: int) -> str:
    """What the schedule had left after the longest of the cells: 'at least 1894 more epochs', 'no more epochs'."""
    return "no more epochs" if left <= 0 else f"at least {count(left, 'more epoch', 'more epochs')}"


def cost_trend(part: pd.DataFrame, prefix: str) -> dict:
    """How test − clean cell (points; the flipped labels' cost is its negative) moves with n: a least-squares slope against log n
    over the cells, with its standard error (`timing.line_fit`: NaN below two values of n, the error below three
    cells)."""
    cost = part["test − clean cell (points)"].to_numpy(dtype=float)
    keep = np.isfinite(cost)
    slope, se = timing.line_fit(np.log(part.n.to_numpy(dtype=float))[keep], cost[keep])
    return {f"{prefix}_cost_slope_log_n": slope, f"{prefix}_cost_slope_log_n_se": se}


HARM_COST = thresholds.REAL_COST.value  # points below the clean cell from which fitting flipped labels is harmful


def decimals(value: float, threshold: float, digits: int) -> int:
    """The decimals to show `value` with beside a rule that compares it with `threshold`: `digits`, or more where
    `digits` would show it on the threshold, or past it, when it is not: 94.97 against 95 reads '94.97', never '95'
    (a share fitted), −4.97 against −5 reads '−4.97', never '−5.0' (a cost); 95.27 reads '95.3', not the
    threshold."""
    for d in range(digits, digits + 3):
        shown = float(f"{value:.{d}f}")
        if (shown >= threshold) == (value >= threshold) and (shown <= threshold) == (value <= threshold):
            return d
    return digits + 3


def fitted_percent(share: float) -> str:
    """A share of labels fitted in % as a table shows it: whole, or to as many decimals as keep it on its side of
    `thresholds.REAL_FITTED` (`decimals`); '—' for NaN."""
    return "—" if share != share else f"{100 * share:.{decimals(100 * share, 100 * CLEAN_FITTED, 0)}f}"


def cost_points(points: float) -> str:
    """Test accuracy minus the clean cell's, in signed points to the tenth, or to as many decimals as keep it on its
    side of the harmful line −`thresholds.REAL_COST` (`decimals`): '−2.8', '−4.97', '+0.4'; '—' for NaN."""
    return "—" if points != points else signed(points, f"+.{decimals(points, -HARM_COST, 1)}f")


def findings_table(found: pd.DataFrame) -> pd.DataFrame:
    """`findings` as the page shows it: shares in whole % (fitted: `fitted_percent`), points signed with a true minus
    sign (the cost: `cost_points`)."""
    share = lambda v: "—" if v != v else f"{v:.0f}"  # noqa: E731
    return pd.DataFrame({
        "data set": found.dataset, "kind": found.kind, "η": found["η"], "n": found.n,
        "tests the claim": found["tests the claim"],
        "within reach of free attention (%)": found["within reach of free attention (%)"].map(share),
        "a single token gives it (%)": found["a single token gives it (%)"].map(share),
        "flipped labels fitted (%)": (found["flipped labels fitted (%)"] / 100).map(fitted_percent),
        "train accuracy (%)": (found["train accuracy (%)"] / 100).map(fitted_percent), "epochs": found.epochs,
        "test − base (points)": found["test − base (points)"].map(lambda v: "—" if v != v else signed(v, "+.1f")),
        "test − clean cell (points)": found["test − clean cell (points)"].map(cost_points)})


def cap_words(max_epochs: int, max_epochs_from_n: int) -> str:
    """Where the epoch cap stops a run, for the protocol's sentence: 'a run at n ≥ 1000 also stops after 300 epochs
    at the latest, what a CPU can afford for every row', 'every run also stops …', 'no epoch cap cuts a run
    short'."""
    if not max_epochs:
        return "no epoch cap cuts a run short"
    runs = f"a run at n ≥ {max_epochs_from_n}" if max_epochs_from_n else "every run"
    return f"{runs} also stops after {count(max_epochs, 'epoch')} at the latest, what a CPU can afford for every row"


def _cell_shares(r) -> str:
    return (f"{reader_name(r.dataset)} at n = {r.n} ({percent(r.reach / 100)} within reach, "
            f"{percent(r.fitted / 100)} fitted)")


def unfitted_words(found: pd.DataFrame, num_epochs: int, max_epochs: int, max_epochs_from_n: int) -> str:
    """What stopped the cells of `found` that fit fewer than `thresholds.REAL_FITTED` of their flipped labels, each
    with its shares within reach of free attention and fitted: most flipped labels out of reach of any attention
    (`REACH_TESTS_CLAIM`); or within reach and the run stopped by the epoch cap (`max_epochs` for n ≥
    `max_epochs_from_n`), so what the schedule would fit is not measured; or within reach after the whole schedule
    of `num_epochs`."""
    cells = found.rename(columns={"within reach of free attention (%)": "reach",
                                  "flipped labels fitted (%)": "fitted"})
    short = cells[cells.fitted < 100 * CLEAN_FITTED]
    if cells.empty:
        return "no such cell runs at this profile"
    if short.empty:
        return "every cell fits its flipped labels"
    out = short.reach < 100 * REACH_TESTS_CLAIM
    capped = ~out & bool(max_epochs) & (short.n >= max_epochs_from_n) & (short.epochs <= max_epochs)
    whole = ~out & ~capped & (short.epochs >= num_epochs)
    named = lambda rows: and_list([_cell_shares(r) for r in rows.itertuples()])  # noqa: E731
    parts = []
    if out.any():
        parts.append(f"in {named(short[out])} most flipped labels are out of reach of any attention over the last "
                     "layer's tokens, so no query and key can fit them")
    if capped.any():
        parts.append(f"{named(short[capped])} stopped at the {max_epochs}-epoch cap with most of them within reach: "
                     f"how many the whole schedule of {num_epochs} epochs would fit is not measured")
    if whole.any():
        parts.append(f"{named(short[whole])} ran the whole schedule of {num_epochs} epochs with most of them within "
                     "reach, and phase 2 still left some unfitted")
    if (rest := short[~out & ~capped & ~whole]).size:
        parts.append(f"{named(rest)} stopped at epoch {and_list([str(e) for e in rest.epochs])} with most of them "
                     "within reach")
    return "; ".join(parts) + ("" if out.any() else ": in none of them are most flipped labels out of reach")


def cost_by_row_words(found: pd.DataFrame) -> str:
    """Per row of `found`, test accuracy minus the clean cell's at each n (`cost_points`): 'Rotten Tomatoes −1.6,
    −4.0 and −8.6 points at n = 20, 200 and 1000; …'."""
    return "; ".join(f"{reader_name(ds)} {and_list([cost_points(v) for v in part['test − clean cell (points)']])} "
                     f"points at n = {and_list([str(n) for n in part.n])}"
                     for ds, part in found.groupby("dataset", sort=False))


def study_words(found: pd.DataFrame, sizes: list[int]) -> str:
    """How the backbone study, which reads the runs of `found` at its own `sizes` of n only, sees their test accuracy
    against the clean cell: its means per row there, against its harmful line (−`thresholds.REAL_COST`), and what the
    cells at the n it leaves out give, beside the page's mean over every n."""
    cost = "test − clean cell (points)"
    at = found[found.n.isin(sizes)]
    if at.empty:
        return "at none of the n of this run, so it does not read them at this profile"
    means = at.groupby("dataset", sort=False)[cost].mean()
    above = int((means > -HARM_COST).sum())
    out = (f"at n = {and_list([str(n) for n in sorted(sizes)])} only, the n of its image backbones: there test "
           "accuracy minus the clean cell's averages " +
           and_list([f"{cost_points(v)} points in {reader_name(ds)}" for ds, v in means.items()]) +
           f", {share_words(above, len(means), 'row', 'rows')} above {signed(-HARM_COST, 'g')}, the line at or below "
           "which its rule calls fitting the flipped labels harmful")
    left = found[~found.n.isin(sizes)]
    if left.empty:
        return out
    return out + (f"; the cells it leaves out, at n = {and_list([str(n) for n in sorted(set(left.n))])}, give "
                  f"{and_list([cost_points(v) for v in left[cost]])} points, and over every n of this page the "
                  f"rows average {cost_points(found[cost].mean())} points")


def study_sizes(parameters: dict) -> list[int]:
    """The n at which the backbone study reads the runs of these Table-2 `parameters`: the sample sizes of the
    study's profile whose `table2_profile` resolves to them (the protocol and the rows; how the runs are computed
    aside), or none when no profile does."""
    from .. import notebooks

    how = {"device", "processes", "progress", "cpu_threads", "out_dir"}
    same = lambda a, b: all(a[k] == b.get(k) for k in a if k not in how)  # noqa: E731
    for name in notebooks.PROFILE_NAMES:
        study = notebooks.resolve("backbone_reach", name)
        if same(notebooks.resolve("table2_finetune", study["table2_profile"]), parameters):
            return list(study["sample_sizes"])
    return []


def uniform_attention(task: Task) -> float:
    """The mean over a few training inputs of 1 / (the input's number of tokens): the largest score of uniform
    attention, averaged as the plotted max-attention is."""
    sample = take(task.data.train_inputs, np.arange(min(256, len(task.data.train_labels))))
    batch = task.bb.model_inputs(sample)
    if "attention_mask" in batch:
        return float((1 / batch["attention_mask"].sum(1).float()).mean())
    h, _ = task.bb.last_layer_inputs(batch)
    return 1 / h.shape[1]


PARTS = {  # the parts of a row's computation: the time and counted-work fields of the runs' records
    "encoding (the frozen layers)": ("encode_s", "encode_flops"),
    "phase 1 (the head)": ("phase1_s", "phase1_flops"),
    "phase 2's training steps": ("phase2_s", "phase2_flops"),
    "phase 2's epoch ends (attention, the fit check)": ("phase2_epoch_end_s", None),
    "evaluation (test and training predictions)": ("evaluate_s", None),
    "reach diagnostic": ("reach_s", None),
}
PER_ROW = ("encode_s", "phase1_s")  # measured once per computation of a row; the others once per group of equal n


def time_split(runs: pd.DataFrame, tasks: list[Task]) -> pd.DataFrame:
    """Where the rows' time went, as their records say: per data set and part, the wall seconds of the process that
    computed it (each of its measurements counted once: per computation of the row, or per group of runs trained
    together), its counted work where it is counted (`firsttoken.frozen_flops`, `head_flops`, `step_flops` at each
    group's mean length: an estimate for phase 2, whose runs leave at different epochs) and the rate that work ran
    at; the image backbone's pre-training from its record. A part no record of the row times reads NaN."""
    rows = []
    for task in tasks:
        mine = runs[runs.dataset == task.dataset]
        for part, (seconds, work) in PARTS.items():
            by = "computation" if seconds in PER_ROW else "phase2_group"
            timed = seconds in mine and by in mine and mine[by].notna().any()
            done = mine.dropna(subset=[by]).drop_duplicates(by) if timed else mine
            rows.append({"data set": reader_name(task.dataset), "part": part,
                         "time (s)": done[seconds].sum() if timed else np.nan,
                         "counted work (GFLOP)": done[work].sum() / 1e9 if timed and work else np.nan})
    for folder in sorted({t.bb.folder for t in tasks if t.bb.kind == "image"}):
        rows.append({"data set": "the image backbone", "part": "pre-training (made once, kept in the cache)",
                     "time (s)": backbone_record(folder).get("wall_s", np.nan), "counted work (GFLOP)": np.nan})
    split = pd.DataFrame(rows)
    split["rate (GFLOP/s)"] = split["counted work (GFLOP)"] / split["time (s)"]
    return split
