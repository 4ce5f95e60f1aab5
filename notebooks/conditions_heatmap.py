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
# # The conditions of the convergence theorem, checked on a grid
#
# **Claim.** The paper's convergence theorem needs two conditions on the training dynamics, stated through
# $\mathfrak S^{(i)}(\tau) = \big(\sum_{t\in\mathcal R} s^{(i)}_t(\tau)\big)\big(1 - \sum_{t\in\mathcal R} s^{(i)}_t(\tau)\big)$,
# the softmax "slack" of sample $i$ on its relevant tokens $\mathcal R$ at step $\tau$, cumulated over training:
#
# - **Eq. 9** — clean samples dominate: $\sum_\tau \sum_{i\in\mathcal C} \mathfrak S^{(i)}(\tau)$ exceeds the same sum
#   over the noisy samples $\mathcal N$;
# - **Eq. 10** — the two classes stay balanced: the ratio of the cumulative $\mathfrak S$ of clean $+1$ and clean $-1$
#   samples stays bounded.
#
# The paper reports that Eq. 9 holds in every setting of its $20 \times 20$ grid and that the Eq. 10 ratio stays
# between about 0.5 and 2.5. We recompute both maps.
#
# Following the authors' script for these checks, the defaults train **only $p$** (no $W$, i.e. $W = I$) on inputs
# with two relevant, two aligned and two opposite weakly relevant tokens; set `train_W = True` and
# `W_init = "kaiming"` for the main model. The sums run over training samples and over the steps
# $\tau = 0, \dots, 999$, as the authors accumulate them; which exact normalisation the paper's plots use is not
# stated (unverified).

# %% tags=["parameters"]
seed = 0  # data, label noise and initialisation
d_grid = [250, 5000, 250]  # d from, to, step (inclusive)
signal_norm_grid = [5.0, 100.0, 5.0]  # ‖μ‖ from, to, step (inclusive)
n = 20  # training samples
n_test = 1000  # clean test samples
T = 8  # tokens per input
n_relevant = 2  # relevant tokens, the set R
n_weak = 2  # weakly relevant tokens of each kind
rho = 0.1  # ρ, scale of the weakly relevant tokens
noise_ratio = 0.2  # η, share of flipped training labels
learning_rate = 0.005  # α, gradient-descent step size
num_steps = 1000  # gradient-descent steps
train_W = False  # False trains p only, the analysed model
W_init = "identity"  # identity or kaiming
dtype = "float32"  # float32 or float64
device = "auto"  # auto: cuda, then mps, then cpu
cpu_threads = 0  # 0: $BENIGN_CPU_THREADS, else one per core
progress = False  # progress bars (benign run turns them on in a terminal)
use_cache = True  # reuse finished chunks from results/.cache/sweeps
out_dir = ""  # empty: results/conditions_heatmap/book

# %%
import matplotlib.pyplot as plt
import numpy as np

from benign import notebooks, paths, plots, sweep, synthetic

nb = notebooks.start("conditions_heatmap", globals())
points = sweep.grid_points(synthetic.GRID_DEFAULTS, nb.parameters, d=sweep.arange("d_grid", d_grid),
                           signal_norm=sweep.arange("signal_norm_grid", signal_norm_grid))
cells = sweep.run(synthetic.grid_chunk, points, cache=paths.SWEEP_CACHE if use_cache else None, progress=progress)
cells["eq9_ratio"] = cells.frak_clean / cells.frak_noisy  # clean over noisy cumulative 𝔖
cells["eq10_ratio"] = cells.frak_clean_pos / cells.frak_clean_neg  # class +1 over class −1 (clean samples)
print(sweep.describe(cells))

# %%
d_values, mu_values, maps = sweep.maps(cells, ("eq9_ratio", "eq10_ratio", "test_acc", "train_acc"))
fig, axes = plt.subplots(1, 3, figsize=(17, 4.8))
plots.heatmap(axes[0], d_values, mu_values, np.log10(maps["eq9_ratio"]),
              r"Eq. 9: $\log_{10}$ (clean $\mathfrak{S}$ / noisy $\mathfrak{S}$)", cmap="RdBu", vmin=-2, vmax=2,
              label="> 0: clean samples dominate")
plots.heatmap(axes[1], d_values, mu_values, np.log10(maps["eq10_ratio"]),
              r"Eq. 10: $\log_{10}$ (class +1 $\mathfrak{S}$ / class −1 $\mathfrak{S}$)", cmap="PuOr", vmin=-1,
              vmax=1, label="0: balanced classes")
plots.heatmap(axes[2], d_values, mu_values, maps["test_acc"], "test accuracy", vmin=0.5, vmax=1.0)
for ax in axes:
    plots.theory_overlay(ax, d_values, n)
fig.tight_layout()
nb.save_figure(fig)
plt.show()

# %%
eq9, eq10 = cells.eq9_ratio, cells.eq10_ratio
metrics = {"grid_d": d_values, "grid_signal_norm": mu_values,
           "eq9_ratio": maps["eq9_ratio"], "eq10_ratio": maps["eq10_ratio"],
           "eq9_share_holds": float((eq9 > 1).mean()), "eq9_min_ratio": float(eq9.min()),
           "eq10_min_ratio": float(eq10.min()), "eq10_max_ratio": float(eq10.max()),
           "eq10_share_within_0.5_2.5": float(((eq10 >= 0.5) & (eq10 <= 2.5)).mean())}
nb.save_metrics(metrics)

# %% [markdown]
# ## Paper vs here
#
# Eq. 9 holds (ratio above one) in a share {glue:text}`eq9_share_holds:.2f` of the cells, the smallest ratio being
# {glue:text}`eq9_min_ratio:.2f`. The Eq. 10 ratio ranges from {glue:text}`eq10_min_ratio:.2f` to
# {glue:text}`eq10_max_ratio:.2f`.

# %%
nb.compare(metrics)
