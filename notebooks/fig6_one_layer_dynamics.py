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
# # Figure 6 — token selection in a standard one-layer Transformer encoder
#
# **Claim.** The token-selection picture is not an artefact of the analysed model. A standard one-layer encoder — a
# learnable [CLS] token, pre-LayerNorm single-head attention, a GELU MLP, residual connections, a final LayerNorm and a
# linear head, *every* parameter trained by gradient descent — fits data with 20 % flipped labels, and its [CLS]
# attention shows how: where the fit generalizes, clean samples move their attention towards the relevant token,
# whose signal carries the clean label, and noisy samples move it away, onto a token whose noise they memorise.
# Whether the fit generalizes depends, as for the analysed model, on how the signal $\|\mu\|$ compares with the
# dimension $d$.
#
# We follow the [CLS] row of the attention over the $T = 8$ input tokens of one clean and one noisy training sample
# during 1000 steps of full-batch SGD ($\alpha = 5\cdot10^{-3}$, logistic loss), in the paper's three settings
# $(d, \|\mu\|)$ = (2000, 20), (5000, 5) and (1000, 100), with train and test accuracy.
#
# **What this page shows.** The paper's scale (MLP width 2000, $d$ up to 5000) takes most of an hour on a 2-core
# CPU, so the book runs each setting shrunk by `scale` = 10: $d$ and the MLP width divided by 10 and $\|\mu\|$ by
# $10^{1/4}$, which keeps $\|\mu\|/d^{1/4}$ (the SNR measured against the harmful boundary
# $\mathrm{SNR} \asymp d^{-1/4}$). Everything else — $n$, $T$, $\rho$, $\eta$, $\alpha$, 1000 steps, 1000 test
# samples — is the paper's. The table below the figure lists the exact values run. The `paper` profile
# (`benign run fig6_one_layer_dynamics --profile paper`) runs the paper's scale; it is meant for a GPU.

# %% tags=["parameters"]
seed = 42  # data, label noise and the initialisation of every parameter
num_steps = 1000  # SGD steps
learning_rate = 0.005  # α
noise_ratio = 0.2  # η, share of flipped training labels
n = 20  # training samples
n_test = 1000  # clean test samples
T = 8  # tokens per input
rho = 0.1  # scale of the weakly relevant tokens
log_every = 20  # test metrics every this many steps
hidden = 2000  # MLP width at the paper scale
skip = True  # residual connections (False: the variant without)
scale = 10  # d and hidden divided by this, signal norms by its fourth root; 1 is the paper scale
d_balanced = 2000  # settings at the paper scale
signal_norm_balanced = 20.0  # ‖μ‖ of that setting
d_harmful = 5000  # the harmful setting
signal_norm_harmful = 5.0  # ‖μ‖ of that setting
d_not_overfitting = 1000  # the not-overfitting setting
signal_norm_not_overfitting = 100.0  # ‖μ‖ of that setting
test_threshold = 0.9  # test accuracy separating benign from harmful in the observed regime
label_noise = "deterministic"  # ceil(n η) flips, half per class, as the authors did; or bernoulli
authors_test_seed = False  # True: the test set reuses the training seed, as the authors did
dtype = "float32"  # float32 or float64
device = "auto"  # auto: cuda, then mps, then cpu
cpu_threads = 0  # 0: $BENIGN_CPU_THREADS, else one per core
progress = False  # progress bars (benign run turns them on in a terminal)
authors_code = True  # also run the authors' main_one_layer.py (benign.authors) at the settings run here
use_cache = True  # reuse the authors' runs from results/.cache/sweeps
out_dir = ""  # empty: results/fig6_one_layer_dynamics/book

# %%
import matplotlib.pyplot as plt
import pandas as pd

from benign import authors, data, encoder, notebooks, paths, plots, sweep, theory

nb = notebooks.start("fig6_one_layer_dynamics", globals())
paper_settings = {"balanced": (d_balanced, signal_norm_balanced), "harmful": (d_harmful, signal_norm_harmful),
                  "not_overfitting": (d_not_overfitting, signal_norm_not_overfitting)}
settings = {name: encoder.reduced(d, mu, hidden, scale) for name, (d, mu) in paper_settings.items()}
pd.DataFrame([{"setting": name, "paper d": paper_settings[name][0], "paper ‖μ‖": paper_settings[name][1],
               "paper MLP width": hidden, "run here: d": d, "‖μ‖": mu, "MLP width": width,
               "‖μ‖ / d^(1/4)": round(mu / d ** 0.25, 3), "n·SNR²": round(float(theory.n_snr2(mu, d, n)), 2)}
              for name, (d, mu, width) in settings.items()])

# %% [markdown]
# ## Training
#
# `benign.encoder.simulate` trains the encoder with full-batch SGD on every parameter. Only the [CLS] position
# reaches the head, so it computes the [CLS] query, the attention row and the MLP for that position alone, with
# the products reassociated — the same function and gradients as the literal module `benign.models.OneLayerEncoder`
# (the test suite checks agreement with autograd SGD on the module to $10^{-10}$ in float64). Runs of one $d$ are
# batched with `torch.func.vmap`; here each setting has its own $d$, so each is one call.

# %%
sims = {name: encoder.simulate([data.make_run(d, mu, seed=seed, n=n, n_test=n_test, T=T, rho=rho,
                                              noise_ratio=noise_ratio, label_noise=label_noise,
                                              authors_test_seed=authors_test_seed, W_init="identity", label=name)],
                               hidden=width, skip=skip, learning_rate=learning_rate, num_steps=num_steps,
                               log_every=log_every, dtype=dtype, device=device, progress=progress)
        for name, (d, mu, width) in settings.items()}
types = data.token_types(T)
wall_s = sum(sim.info["wall_s"] for sim in sims.values())

# %% [markdown]
# ## The figure
#
# Left and middle: the [CLS] attention on every input token of one clean and one noisy training sample (relevant
# token in blue, the weakly relevant token aligned with the true class in green, the one aligned with the *flipped*
# label in red, irrelevant tokens in grey; the rest of the row goes to the [CLS] token itself). Right: train and
# test accuracy.

# %%
titles = {"balanced": "balanced", "harmful": "harmful", "not_overfitting": "not overfitting"}
fig, axes = plt.subplots(3, 3, figsize=(13, 10), sharex=True)
for row, (name, sim) in enumerate(sims.items()):
    clean_id, noisy_id = sim.info["track"][0], sim.info["track"][-1]
    d, mu, _ = settings[name]
    plots.score_dynamics(axes[row, 0], sim.scores, name, clean_id, types,
                         f"{titles[name]} (d={d}, ‖μ‖={mu:g}): clean sample")
    plots.score_dynamics(axes[row, 1], sim.scores, name, noisy_id, types, "noisy sample")
    plots.accuracy_curves(axes[row, 2], sim.history, name, "accuracy")
    axes[row, 0].set_ylabel("[CLS] attention")
    axes[row, 1].set_ylabel("[CLS] attention")
axes[0, 0].legend(loc="upper right", fontsize=8)
axes[0, 2].legend(loc="lower right")
fig.tight_layout()
nb.save_figure(fig)
plt.show()

# %%
final = pd.concat([sim.final for sim in sims.values()], ignore_index=True)
final["regime"] = theory.observed_regime(final.train_acc, final.test_acc, test_threshold)
attention = pd.concat([sim.history[sim.history.step == num_steps] for sim in sims.values()])
final["attention_clean_relevant"] = attention.score_clean_relevant.to_numpy()
final["attention_noisy_relevant"] = attention.score_noisy_relevant.to_numpy()
final

# %% [markdown]
# In the book run every setting ends with every training label fitted (train accuracy
# {glue:text}`balanced_train_acc:.2f`, {glue:text}`harmful_train_acc:.2f`, {glue:text}`not_overfitting_train_acc:.2f`).
# In the balanced and strong-signal settings the noisy sample fits its flipped label by moving its attention away
# from its relevant token and onto an irrelevant one — memorising that token's noise — rather than onto the weakly
# relevant token that carries the flipped class, as the analysed model does. The settings differ in what the clean
# samples do and in the test accuracy. The mean attention of clean samples on their relevant token ends at
# {glue:text}`balanced_attention_clean_relevant:.2f` (balanced), {glue:text}`harmful_attention_clean_relevant:.2f`
# (harmful) and {glue:text}`not_overfitting_attention_clean_relevant:.2f` (not overfitting), against 1/9 for a
# uniform row; for noisy samples it is {glue:text}`balanced_attention_noisy_relevant:.2f`,
# {glue:text}`harmful_attention_noisy_relevant:.2f` and {glue:text}`not_overfitting_attention_noisy_relevant:.2f`.
# With the strong signal the clean sample attends to its relevant token, the noisy labels are fitted only
# late, and test accuracy stays near 1 — the encoder's MLP and value path memorise even where the analysed model
# would not, so the setting the paper calls *not overfitting* overfits benignly here. In the balanced setting the
# labels are fitted early and test accuracy keeps climbing afterwards, the delayed generalization of the theory.
# With the weak signal clean samples attend to noise too, and test accuracy stays at chance.
#
# Measured once at the paper scale (`paper` profile on this CPU, about 25 minutes, with 200 test samples instead of
# 1000): balanced train 1.000 / test 0.885 (still rising at step 1000), harmful 1.000 / 0.535, not overfitting
# 1.000 / 1.000 — the same three pictures.

# %% [markdown]
# ## The authors' code
#
# `benign.authors.one_layer` transcribes the authors' main_one_layer.py as they published it last (commit c563aae, May
# 2025; its config's seed is 42, this page's default), independently of the trainer above: their module (every token
# position computed, [CLS] included), every parameter trained by full-batch SGD through autograd, on data drawn as
# their main.py's `CustomDataset`, which it imports, draws them (`np.random.default_rng(seed)`, float32, their
# label-noise pattern, the test set drawn with the training seed), from the initialisation their code draws, here
# right after `torch.manual_seed(seed)` (theirs is unseeded). Run that way, it gives the numbers their real script
# gives (checked at three settings by the tests `pytest -m slow` runs). Its losses are theirs as logged,
# $\log(1 + e^{-yf})$ in float32: 0 once every margin exceeds about 16.6. It runs at the settings run above — shrunk
# by `scale` like them (the paper's scale is a GPU job for it too) — and is evaluated once, after the last step (their
# script also evaluates every 10 steps, which changes nothing at the end). Its runs are cached like sweeps and shared
# with {doc}`Figure 7 <fig7_one_layer_heatmap>`.

# %%
theirs = {}
if authors_code:
    points = [dict(d=d, signal_norm=mu, seed=seed, n=n, n_test=n_test, T=T, rho=rho, noise_ratio=noise_ratio,
                   learning_rate=learning_rate, num_steps=num_steps, hidden=width, skip=skip)
              for d, mu, width in settings.values()]
    table = sweep.run(authors.one_layer_chunk, points, cache=paths.SWEEP_CACHE if use_cache else None)
    table["regime"] = theory.observed_regime(table.train_acc, table.test_acc, test_threshold)
    by_cell = {(row["d"], row["signal_norm"]): row for row in table.to_dict("records")}
    theirs = {name: by_cell[(d, mu)] for name, (d, mu, _) in settings.items()}
    print(sweep.describe(table))
    display(table[["d", "signal_norm", "train_acc", "test_acc", "train_loss", "test_loss", "regime"]])

# %%
expected_regime = {"balanced": "benign", "harmful": "harmful", "not_overfitting": "not_overfitting"}
metrics = {}
for row in final.itertuples():
    for key in ("train_acc", "test_acc", "train_loss", "test_loss", "attention_clean_relevant",
                "attention_noisy_relevant"):
        metrics[f"{row.run}_{key}"] = float(getattr(row, key))
        if row.run in theirs:
            metrics[f"authors_{row.run}_{key}"] = float(theirs[row.run][key])
    metrics[f"{row.run}_regime"] = row.regime
    metrics[f"{row.run}_as_named"] = float(row.regime == expected_regime[row.run])
    if row.run in theirs:
        metrics[f"authors_{row.run}_regime"] = theirs[row.run]["regime"]
        metrics[f"authors_{row.run}_as_named"] = float(theirs[row.run]["regime"] == expected_regime[row.run])
nb.save_metrics(metrics, extra={"trainer_wall_s": round(wall_s, 2),
                                "settings_run": {k: list(v) for k, v in settings.items()}})

# %% [markdown]
# ## Paper vs here
#
# Balanced: train accuracy {glue:text}`balanced_train_acc:.3f`, test accuracy {glue:text}`balanced_test_acc:.3f`.
# Harmful: train {glue:text}`harmful_train_acc:.3f`, test {glue:text}`harmful_test_acc:.3f`.
# Not overfitting: train {glue:text}`not_overfitting_train_acc:.3f`, test
# {glue:text}`not_overfitting_test_acc:.3f`. The paper shows Figure 6 as curves and names the settings by their
# regime; it gives no numbers, so the rows below check only whether the regime observed here (test accuracy
# threshold `test_threshold`) is the one the setting is named after.
#
# The authors' script, at the same shrunk settings, ends the same way: train accuracy
# {glue:text}`authors_balanced_train_acc:.3f` / {glue:text}`authors_harmful_train_acc:.3f` /
# {glue:text}`authors_not_overfitting_train_acc:.3f` and test accuracy
# {glue:text}`authors_balanced_test_acc:.3f` / {glue:text}`authors_harmful_test_acc:.3f` /
# {glue:text}`authors_not_overfitting_test_acc:.3f` (balanced / harmful / not overfitting). In particular it fits
# every noisy label of the setting the paper calls *not overfitting* (final train loss
# {glue:text}`authors_not_overfitting_train_loss:.4f`), as our trainer does: that miss is not ours, the
# published code with all parameters trained by SGD does not leave the noisy labels unfitted. At the paper's scale
# the same holds (measured once at $(d, \|\mu\|) = (1000, 100)$, MLP width 2000, on their final data stream from
# their initialisation at seeds 0 and 42, with our trainer, which the tests show computes their script: every noisy
# label fitted from step 77 and 93 on, final train loss $1.2$ and $1.4 \cdot 10^{-3}$, test accuracy 0.998); only
# early in training does it look like no overfitting (at step 50, three noisy labels were still unfitted at both
# seeds).
# %%
nb.compare(metrics)
