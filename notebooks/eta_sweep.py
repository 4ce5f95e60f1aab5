# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # How much label noise can token selection absorb?
#
# **Claim.** Benign overfitting needs the clean samples to drive training: the cumulative softmax slack
# $\sum_\tau\sum_{i\in\mathcal C}\mathfrak S^{(i)}(\tau)$ (the figures' titles say *slack*) of the clean samples
# must exceed that of the noisy ones
# (Eq. 9 of the paper). The paper's appendix sweeps the label-noise rate $\eta$ at $d = 12000$, $\|\mu\| = 120$ with
# two relevant tokens, training $p$ only: the ratio stays above one up to $\eta = 0.6$ with test accuracy at least
# 0.986, then collapses — 0.78 at $\eta = 0.65$ (test accuracy 0.579) and 0.50 at $\eta = 0.7$ (0.505).
#
# With the authors' deterministic label noise ($k = \lceil n\eta\rceil$ flips, $\lfloor k/2\rfloor$ per class) and
# $n = 20$, several values of $\eta$ flip the same samples — $\eta = 0.6$ and $0.65$ both flip 12 of 20 — so the
# table below also shows the share of labels actually flipped. The paper does not state $n$ for this sweep; the
# section *The sweep over n* runs it again at several $n$ and says whether any of them gives the paper's collapse.

# %% tags=["parameters"]
profile = "book"  # smoke (seconds), book or paper: the presets of benign.settings.EtaSweep
overrides = {}  # settings that differ from the profile, by name, e.g. {"seed": 7}
out_dir = ""  # empty: results/eta_sweep/<profile>

# %%
import numpy as np
import torch
from matplotlib import colormaps
from matplotlib.lines import Line2D
from matplotlib.ticker import LogLocator, NullFormatter

from benign import authors, data, etasweep, expected, notebooks, paths, plots, sweep, synthetic, thresholds

nb = notebooks.start("eta_sweep", globals())
cache = paths.cache_dir("sweeps") if use_cache else None
etas = sweep.arange("noise_ratio_grid", noise_ratio_grid)  # η of every sweep on this page
ns = sorted(set(n_values) | {n})  # the sweep over n; the page's own sweep is its n = n part
every_point = sweep.grid_points(synthetic.GRID_DEFAULTS, nb.parameters, n=ns, noise_ratio=etas)
page_points = [point for point in every_point if point["n"] == n]  # this page's model at its n
top_points = etasweep.replicate_points(page_points, [seed + k for k in range(replicates)], max(etas))  # over seeds
by_n = {"": sweep.run(synthetic.grid_chunk, every_point, by=("d", "seed", "n"), cache=cache, progress=progress)}
at_top = {"": sweep.run(synthetic.grid_chunk, top_points, cache=cache)}
if authors_code and etasweep.in_authors_setting(page_points[0]):  # their script, in its own section below
    their_points = sweep.grid_points(synthetic.GRID_DEFAULTS, nb.parameters, n=sorted(set(n_values_authors) | {n}),
                                     noise_ratio=etas)
    by_n["authors_"] = sweep.run(authors.math_frak_chunk, etasweep.authors_points(their_points),
                                 by=("d", "seed", "n"), cache=cache)
    at_top["authors_"] = sweep.run(authors.math_frak_chunk, etasweep.authors_points(top_points), cache=cache)
# the fixed head under uniform attention (p = 0, step 0): the test accuracy before any training
test_set = data.make_run(d, signal_norm, noise_ratio=0.0, seed=seed, n=n, n_test=n_test, T=T, rho=rho,  # clean test set
                         n_relevant=n_relevant, n_weak=n_weak, authors_test_seed=authors_test_seed,
                         W_init="identity").test
result = etasweep.EtaSweep({k: etasweep.with_ratio(v) for k, v in by_n.items()},
                           {k: etasweep.with_ratio(v) for k, v in at_top.items()}, n, label_noise, seed,
                           synthetic.attend(test_set, torch.zeros(d, dtype=test_set.X.dtype))["acc"])
runs = result.runs("")

# %%
paper = {e.key: e.target for e in expected.EXPECTED["eta_sweep"]}  # the appendix's numbers, drawn as black stars
paper_eta = [etasweep.PAPER_FIRST_BELOW, etasweep.PAPER_SECOND_BELOW]
paper_ratios = [paper[f"noise_ratio_{eta:.2f}_frak_ratio"] for eta in paper_eta]
paper_test = ([etasweep.PAPER_LAST_ABOVE] + paper_eta,
              [paper["min_test_acc_ratio_above_1"]] + [paper[f"noise_ratio_{eta:.2f}_test_acc"] for eta in paper_eta])
fig, (left, right) = plots.figure(1, 2, row_height=3.4)
left.semilogy(runs.noise_ratio, runs.frak_ratio, "o-", color="#1f77b4", label=f"here, n = {n}")
left.plot(paper_eta, paper_ratios, "k*", ms=9, label="paper")
left.axhline(1.0, color="black", ls="--", lw=1)
left.set(title="Eq. 9 ratio: clean slack / noisy slack", xlabel="η (label-noise rate asked for)",
         ylabel="ratio")
plots.plain_log_ticks(left.yaxis)
left.yaxis.set_major_locator(LogLocator(subs=(1, 2, 5)))  # 1, 2 and 5 of each decade labelled, not crowded
left.yaxis.set_minor_formatter(NullFormatter())
plots.legend_clear(left)
right.plot(runs.noise_ratio, runs.test_acc, "o-", label="test accuracy", color="#ff7f0e")
right.plot(runs.noise_ratio, runs.train_acc, "s--", label="train accuracy", color="#444444")
right.plot(runs.noise_ratio, runs.flipped_share, ":", label="share of labels flipped", color="#7f7f7f")
right.plot(*paper_test, "k*", ms=9, label="paper's test accuracy")
right.set(title="accuracy", xlabel="η (label-noise rate asked for)", ylim=(0, 1.12))  # room above the lines at 1
plots.legend_clear(right)
nb.save_figure(fig)
result.shown("")

# %% [markdown]
# ## The authors' code
#
# A transcription of the authors' main_math_frak.py, written independently of the trainer above, runs here. That
# script exists only on their expt branch (commit 492715f, January 2025; their final commit deleted it), so this
# column is their January code, not the final version the other pages run: $p$ alone trained by autograd on data
# drawn as it draws them (`np.random.seed(seed)` then `np.random.randn`, float32, their label-noise pattern, the test
# set drawn with the training seed; its config's seed was 0, as here), the four cumulative sums of $\mathfrak S$ kept
# as their script keeps them. The sweep's runs go side by side in one program (each run's $p$ gets exactly its own
# gradient); they are trained in batches (*chunks*), each saved on disk once finished so that a later build reads it
# back instead of training it again. It runs only where this page runs their script's setting: $p$ alone and as
# many weakly relevant tokens of each kind as relevant ones.

# %%
if "authors_" in result.by_n:
    display(result.shown("authors_"))

# %% [markdown]
# ## The sweep over n
#
# The same sweep at several numbers of training samples $n$ — this page's trainer at {glue:md}`n_values_words`,
# the authors' script at {glue:md}`n_values_authors_words` (at $d = 12000$ it costs minutes per $n$ from
# $n = 50$ on a 2-core CPU) — each at the page's seed. For each $n$: the largest $\eta$ up to which the Eq. 9 ratio
# stays above one, the ratio and test accuracy at $\eta = 0.65$ and $0.7$, and whether $\eta = 0.6$ and $0.65$ flip
# the same samples (then they are one run). An $n$ reproduces the paper's collapse when the largest $\eta$ up to
# which its ratio stays above one (its edge) lies within {glue:text}`eta_band:g` of the paper's $0.6$ (one step of
# the appendix's $\eta$ grid) and its ratio stays below one at every $\eta$ after the edge up to $0.7$ (the ratio's
# collapse), with test accuracy below {glue:text}`near_chance:g` at $\eta = 0.65$ and $0.7$, where the paper reports
# its collapse (0.579 and 0.505, against at least 0.986 up to 0.6); both thresholds are the package's, each with its
# reason, and this rule was written after a build's sweep had been read (the thresholds' list says so). The ledger's
# verdict rests on these $n$ alone: the paper does not state its $n$ or its seed, and nothing here says what an $n$
# not run would give.

# %%
fig, (left, right) = plots.figure(1, 2, row_height=3.4)
every_n = sorted({m for label in result.by_n for m in result.ns(label)})
colors = dict(zip(every_n, colormaps["viridis"](np.linspace(0, 0.9, len(every_n)))))
for label, table in result.by_n.items():
    for m in result.ns(label):
        rows = table[table.n == m].sort_values("noise_ratio")
        style = dict(color=colors[m], ls="-" if not label else "--", marker="o" if not label else "x", ms=3)
        left.semilogy(rows.noise_ratio, rows.frak_ratio, label=f"n = {m}" if not label else None, **style)
        right.plot(rows.noise_ratio, rows.test_acc, **style)
left.plot(paper_eta, paper_ratios, "k*", ms=9, label="paper")
right.plot(*paper_test, "k*", ms=9)
band = thresholds.ETA_BAND.value  # an n's edge within it of the paper's counts as the paper's
left.axvspan(etasweep.PAPER_LAST_ABOVE - band, etasweep.PAPER_LAST_ABOVE + band, color="grey", alpha=0.15, lw=0,
             label=f"paper's edge ± {band:g}")
left.axhline(1.0, color="black", ls=":", lw=1)
left.set(title="Eq. 9 ratio: clean slack / noisy slack", xlabel="η", ylabel="ratio")
plots.plain_log_ticks(left.yaxis)
right.set(title="test accuracy", xlabel="η", ylim=(0, 1.02))
handles, labels = left.get_legend_handles_labels()  # one key, in the test accuracy's empty lower left
right.legend(handles + [Line2D([], [], color="black", ls="-", marker="o", ms=3)]
             + ([Line2D([], [], color="black", ls="--", marker="x", ms=3)] if len(result.by_n) > 1 else []),
             labels + [etasweep.TRAINERS[label] for label in result.by_n], loc="lower left")
nb.save_figure(fig, "eta_sweep_by_n")
result.collapse_table()

# %% [markdown]
# {glue:md}`collapse_by_n`

# %%
metrics = {"replicates": replicates, **result.metrics()}
nb.save_metrics(metrics)

# %% [markdown]
# ## Paper vs here
#
# Here, with $n =$ {glue:text}`n_train:.0f` training samples, the ratio stays above one up to
# $\eta =$ {glue:text}`largest_eta_ratio_above_1:.2f`, with test accuracy {glue:md}`test_acc_above_1_words` at every
# $\eta$ up to there; at $\eta = 0.65$ the ratio is
# {glue:text}`noise_ratio_0.65_frak_ratio:.2f` (test accuracy {glue:text}`noise_ratio_0.65_test_acc:.3f`), at
# $\eta = 0.7$ {glue:text}`noise_ratio_0.70_frak_ratio:.2f` ({glue:text}`noise_ratio_0.70_test_acc:.3f`). The
# authors' script at the same setting gives {glue:text}`authors_noise_ratio_0.65_frak_ratio:.2f`
# ({glue:text}`authors_noise_ratio_0.65_test_acc:.3f`) and {glue:text}`authors_noise_ratio_0.70_frak_ratio:.2f`
# ({glue:text}`authors_noise_ratio_0.70_test_acc:.3f`): no collapse either. {glue:md}`same_run_said`
#
# **The largest η.** At $\eta =$ {glue:text}`noise_ratio_max:.2f` most labels are flipped. Over
# {glue:text}`replicates:.0f` seeds our ratio spans {glue:md}`top_eta_frak_ratio_span` with test accuracy
# {glue:md}`top_eta_test_acc_span`; the authors' script spans {glue:md}`authors_top_eta_frak_ratio_span` with
# {glue:md}`authors_top_eta_test_acc_span`. The two differ in
# their random streams and in their test sets: theirs reuses the training seed, so its first n/2 inputs are the first
# n/2 training inputs, with their clean labels, and such an input scores the label the model fitted; ours is
# independent. Which of the two differences moves the ratio at this η is not separated here.
#
# **Why the test accuracy stays high under heavy noise.** The head $\nu$ is fixed and reads the class signal:
# with $p = 0$ the attention is uniform and the test accuracy is already
# {glue:text}`test_acc_step0:.3f` before any step. Training moves only $p$, i.e. which tokens each
# input attends to; as long as the signal part of $p$ does not turn against the true class, fresh inputs keep the
# head's answer, so the test accuracy says little about the flipped labels until the Eq. 9 ratio drops below one.
#
# **The table's misses.** The table below scores this page's $n$ = {glue:text}`n_train:.0f`; the paper does not
# state $n$ (nor the seed) for this sweep. {glue:md}`unstated_n_said` A run at the paper's profile
# (`benign run eta_sweep --profile paper`) runs $n = 500$ with the authors' test-seed reuse, ours and theirs.
# %%
nb.compare(metrics)
