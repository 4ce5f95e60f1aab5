"""What the Table-2 and Figure-8/9 pages show: the table, the paper beside it, the curves, what differs from the
paper's protocol, and the numbers the text quotes."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from .. import thresholds
from ..words import and_list, count, reader_name, share_words, span
from ..expected import TABLE2_NEAREST, table2_key
from .backbones import BACKBONE_LABELS
from .image_backbone import record as backbone_record
from .datasets import HUB, MEDMNIST, take
from ..words import decimals
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

    return _layout(summary, cell, {"base": lambda part: f"{100 * part.base_acc.iloc[0]:.1f}"})  # in % as the cells


def epochs_said(low: int, high: int) -> str:
    """The last epochs of a cell's seeds: 'epoch 300', 'epochs 1286–2000'."""
    return f"epoch {low}" if low == high else f"epochs {span(str(low), str(high), '–')}"


def epochs_table(summary: pd.DataFrame) -> pd.DataFrame:
    """Per cell: the phase-2 epochs the seeds ran (min–max) and how many of them stopped because they fitted."""
    def cell(r):
        return f"{span(str(r.epochs_min), str(r.epochs_max), '–')} ({r.fitted}/{r.seeds} fitted)"

    return _layout(summary, cell)


def ended_at_cap(summary: pd.DataFrame, max_epochs: int, max_epochs_from_n: int) -> pd.Series:
    """Which cells of `summary` have a seed that the epoch cap (`max_epochs` for n ≥ `max_epochs_from_n`; 0: no
    cap) stopped unfitted: their last epoch is the cap's, not the schedule's end nor the epoch they fitted in."""
    return (bool(max_epochs) & (summary.n >= max_epochs_from_n) & (summary.fitted < summary.seeds)
            & (summary.epochs_max <= max_epochs))


def cap_label(max_epochs: int) -> str:
    """The figure key's entry for a cell `ended_at_cap`: 'stopped at the 300-epoch cap (open marker)'."""
    return f"stopped at the {max_epochs}-epoch cap (open marker)"


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
                    {"base": f"{base:.1f}", **{col: said(cells.get((eta, _size_of(col)))) for col in ours.columns[1:]}})
    out = pd.DataFrame.from_dict(rows, orient="index")[ours.columns]
    out.index = pd.MultiIndex.from_tuples(out.index, names=["data set", "η"])
    return out


def curves(runs: pd.DataFrame) -> pd.DataFrame:
    """The max-attention curves in long form: dataset, noise_ratio, n, seed, epoch, max_attention, running. A seed
    that stopped before the longest seed of its curve (data set, η and n) holds its last value up to that one's last
    epoch (`running` False there), so the mean over seeds at a curve's end is the mean of each seed's last value,
    the number `attention_ends` gives, and the mean does not jump where a seed stops."""
    longest = runs.max_attention.map(len).groupby([runs.dataset, runs.noise_ratio, runs.n]).transform("max")
    parts = []
    for (_, r), end in zip(runs.iterrows(), longest):
        ran = len(r.max_attention)
        held = np.concatenate([r.max_attention, np.full(end - ran, r.max_attention[-1])])
        parts.append(pd.DataFrame({"dataset": r.dataset, "noise_ratio": r.noise_ratio, "n": r.n, "seed": r.seed,
                                   "epoch": np.arange(1, end + 1), "max_attention": held,
                                   "running": np.arange(1, end + 1) <= ran}))
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


def course_words(first: float, last: float) -> str:
    """The mean largest score's course over phase 2 in words: 'goes from 0.06 after the first epoch to 0.10 by the
    last epoch each run ran', or 'stays at 0.08 …' where the two read alike."""
    a, b = f"{first:.2f}", f"{last:.2f}"
    if a == b:
        return f"stays at {a} from the first epoch to the last each run ran"
    return f"goes from {a} after the first epoch to {b} by the last epoch each run ran"


@dataclass(frozen=True)
class Sharpening:
    """What the Figure-8/9 page reads off its max-attention curves: how many curves, the share that sharpened
    (`sharpening`), the range of their factors, the flipped-against-clean pairs (`noisy_against_clean`) and the share
    ending sharper with flipped labels (NaN without a control), the words of both, and per kind of data (text, image)
    the mean largest score after the first and after the last epoch."""

    curves: int
    sharpened_share: float
    factor_range: tuple[float, float]
    pairs: int
    noisy_sharper_share: float
    words: str
    course: dict[str, tuple[float, float]]
    ends: dict[str, float]  # each curve's first and last score under its record key

    def metrics(self) -> dict:
        """The record's numbers and the page's words, under the keys the page glues and the ledger reads."""
        out = dict(self.ends, sharpening_curves=self.curves, sharpened_share=self.sharpened_share,
                   sharpening_factor_min=self.factor_range[0], sharpening_factor_max=self.factor_range[1],
                   sharpening_pairs=self.pairs, noisy_sharper_share=self.noisy_sharper_share,
                   sharpening_words=self.words)
        for kind, (first, last) in self.course.items():
            out |= {f"{kind}_max_attention_first_mean": first, f"{kind}_max_attention_last_mean": last,
                    f"{kind}_sharpening_course": course_words(first, last)}
        return out


def read_sharpening(ends: pd.DataFrame, control: pd.DataFrame, kinds: dict[str, str]) -> Sharpening:
    """The page's reading of `sharpening(attention_ends(...))` and its clean-label `control`; `kinds` gives each data
    set's kind ("text" or "image"; both are read, NaN where a kind has no curve)."""
    kind = ends.dataset.map(kinds)
    course = {k: (float(ends["first"][kind == k].mean()), float(ends["last"][kind == k].mean()))
              for k in ("text", "image")}
    keys = {f"{r.dataset}_noise{r.noise_ratio:g}_n{r.n}_max_attention_{when}": float(getattr(r, when))
            for r in ends.itertuples() for when in ("first", "last")}
    return Sharpening(len(ends), float(ends.sharpened.mean()), (float(ends.factor.min()), float(ends.factor.max())),
                      len(control), float((control.ratio > 1).mean()) if len(control) else float("nan"),
                      sharpening_words(ends, control), course, keys)


def ends_table(ends: pd.DataFrame) -> pd.DataFrame:
    """`sharpening` as the page shows it: per data set (its reader name), η and n, the largest score after the first
    and the last epoch (three decimals), their ratio (`factor_said`) and whether it reached `thresholds.SHARPER`."""
    return pd.DataFrame({
        "data set": ends.dataset.map(reader_name), "η": ends.noise_ratio, "n": ends.n,
        "first epoch": ends["first"].map(lambda v: f"{v:.3f}"), "last epoch": ends["last"].map(lambda v: f"{v:.3f}"),
        "last ÷ first": ends.factor.map(factor_said),
        f"sharpened (×{thresholds.SHARPER.value:g} or more)": ends.sharpened})


def sharpening_words(ends: pd.DataFrame, control: pd.DataFrame) -> str:
    """What `sharpening` and `noisy_against_clean` measured, in words: the factor's range, how many curves reached
    `thresholds.SHARPER` and which did not (factors as `factor_said` writes them), how many of them on clean and on
    flipped labels, and the clean-label control."""
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
    clean, noisy = ends[ends.noise_ratio == 0], ends[ends.noise_ratio > 0]
    if len(clean) and len(noisy):  # the clean-label runs sharpen too, or not: the control of the effect
        out += (f" Sharpened: {share_words(int(clean.sharpened.sum()), len(clean), 'curve', 'curves')} on clean "
                f"labels, {share_words(int(noisy.sharpened.sum()), len(noisy), 'curve', 'curves')} with flipped "
                "labels.")
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
    """How a backbone made here was made, from its record's recipe: 'ViT made here, 2 layers of width 128, 4 heads,
    7×7 patches, 30 epochs on 2000 digits'."""
    made, a = record["recipe"], record["recipe"]["architecture"]
    return (f"ViT made here, {count(a['num_hidden_layers'], 'layer')} of width {a['hidden_size']}, "
            f"{count(a['num_attention_heads'], 'head')}, {a['patch_size']}×{a['patch_size']} patches, "
            f"{count(made['epochs'], 'epoch')} on {made['samples']} digits")


def assets(tasks: list[Task], protocol: Protocol, sample_sizes) -> pd.DataFrame:
    """What each row ran on: data (its reader name), sizes (the pretrain subset beside the paper's), where they came
    from, and the backbone in one cell: its name and shape ('all-MiniLM-L6-v2: 6 layers of width 384, 12 heads'),
    with, for one made here, how it was made and its own test accuracy."""
    rows = []
    for t in tasks:
        record = backbone_record(t.bb.folder)
        backbone = (made_summary(record) + f", its own test accuracy on {record['test_split']} "
                    f"{100 * record['test_accuracy']:.1f}%" if record else
                    f"{BACKBONE_LABELS.get(t.backbone, t.backbone).split(' (')[0]}: "
                    f"{count(t.bb.model.config.num_hidden_layers, 'layer')} of width {t.bb.hidden}, "
                    f"{count(t.bb.heads, 'head')}")
        rows.append({"data set": reader_name(t.dataset), "source": t.data.source, "classes": t.data.num_classes,
                     "train pool": len(t.data.train_labels), "test split": len(t.data.test_labels),
                     "pretrain subset": pretrain_size(t.data, protocol, sample_sizes),
                     "paper's pretrain subset": paper_pretrain_size(t.dataset), "backbone": backbone})
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
