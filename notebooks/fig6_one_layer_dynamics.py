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
# CPU, so the book runs each setting shrunk tenfold (`-p scale 10`): $d$ and the MLP width divided by 10 and $\|\mu\|$
# by $10^{1/4}$, which keeps $\|\mu\|/d^{1/4}$ (the SNR measured against the harmful boundary
# $\mathrm{SNR} \asymp d^{-1/4}$). It does not keep $n\,\mathrm{SNR}^2 = n\|\mu\|^2/d$: dividing $d$ by the scale
# and $\|\mu\|^2$ by its square root multiplies $n\,\mathrm{SNR}^2$ by the square root of the scale,
# {glue:text}`n_snr2_factor:.3g` here — the balanced setting runs at $n\,\mathrm{SNR}^2 =$
# {glue:text}`balanced_n_snr2:.3g` against the paper's {glue:text}`balanced_paper_n_snr2:.3g`, and a larger
# $n\,\mathrm{SNR}^2$ lies nearer the side where the analysed model leaves noisy labels unfitted. The table below
# lists the paper's values and those run here. Everything else —
# $n$, $T$, $\rho$, $\eta$, $\alpha$, 1000 steps, 1000 test samples — is the paper's. The `paper` profile
# (`benign run fig6_one_layer_dynamics --profile paper`) runs the paper's scale; it is meant for a GPU.

# %% tags=["parameters"]
profile = "book"  # smoke (seconds), book or paper: the presets of benign.settings.Fig6OneLayerDynamics
overrides = {}  # settings that differ from the profile, by name, e.g. {"seed": 7}
out_dir = ""  # empty: results/fig6_one_layer_dynamics/<profile>

# %%
import dataclasses

import pandas as pd

from benign import authors, data, encoder, notebooks, onelayer, onelayer_dynamics, paths, plots, sweep, theory, words

nb = notebooks.start("fig6_one_layer_dynamics", globals())
paper_settings = {"balanced": (d_balanced, signal_norm_balanced), "harmful": (d_harmful, signal_norm_harmful),
                  "not_overfitting": (d_not_overfitting, signal_norm_not_overfitting)}
settings = {name: encoder.reduced(d, mu, hidden, scale) for name, (d, mu) in paper_settings.items()}
pd.DataFrame([{"setting: paper → run": name, "d": f"{d0} → {d}", "‖μ‖": f"{mu0:g} → {mu:.3g}",
               "MLP width": f"{hidden} → {width}",
               "n·SNR²": f"{theory.n_snr2(mu0, d0, n):.3g} → {theory.n_snr2(mu, d, n):.3g}",
               "‖μ‖ / ∜d, kept": f"{mu / d ** 0.25:.3g}"}
              for (name, (d, mu, width)), (d0, mu0) in zip(settings.items(), paper_settings.values())])

# %% [markdown]
# ## Training
#
# The book's encoder trainer trains the encoder with full-batch SGD on every parameter. Only the [CLS] position
# reaches the head, so it computes the [CLS] query, the attention row and the MLP for that position alone, with
# the products reassociated — the same function and gradients as the literal one-layer encoder module of the package
# (the test suite checks agreement with autograd SGD on the module to $10^{-10}$ in float64). Runs of one $d$ are
# vectorised into one computation; here each setting has its own $d$, so each is one call, holding its seeds' runs and
# the control of each: the same run on clean labels (same inputs, same initialisation, no flipped label).

# %%
seeds = [seed + k for k in range(replicates)]


def make(d, mu, s, eta, label):  # one run of a setting; eta = 0: the same inputs and seed on clean labels
    return data.make_run(d, mu, seed=s, n=n, n_test=n_test, T=T, rho=rho, noise_ratio=eta, label_noise=label_noise,
                         authors_test_seed=authors_test_seed, W_init="identity", label=label)


runs = {name: [make(d, mu, s, noise_ratio, name if s == seed else f"{name}_seed{s}") for s in seeds]
        for name, (d, mu, _) in settings.items()}
# the control: every run again on clean labels (same inputs, same initialisation), trained in the same batch
clean_runs = {name: [make(d, mu, s, 0.0, f"{run.label}_clean") for s, run in zip(seeds, runs[name])]
              for name, (d, mu, _) in settings.items()}
sims = {name: encoder.simulate(runs[name] + clean_runs[name], hidden=width, skip=skip, learning_rate=learning_rate,
                               num_steps=num_steps, log_every=log_every, track=list(range(n)), dtype=dtype,
                               device=device, progress=progress)
        for name, (d, mu, width) in settings.items()}
costs = {name: encoder.noise_costs(sims[name].final, runs[name], clean_runs[name]) for name in settings}
types = data.token_types(T)
wall_s = sum(sim.info["wall_s"] for sim in sims.values())
result = onelayer_dynamics.EncoderDynamics(sims, costs, settings, paper_settings, n, test_threshold)  # theirs below

# %% [markdown]
# ## The figure
#
# One row of panels per setting. The panels titled *median clean sample* and *median noisy sample*: the [CLS]
# attention on every input token of one clean and one noisy training sample, each the median of its group by its
# final attention on the relevant token (half the group ends above it; relevant token in blue, the weakly relevant
# token aligned with the true class in green, the one aligned with the *flipped* label in red, irrelevant tokens in
# grey; the rest of the row goes to the [CLS] token itself). The panel titled *accuracy*: train and test accuracy,
# and, thin and grey, the test accuracy of the same run on clean labels.

# %%
titles = {"balanced": "balanced", "harmful": "harmful", "not_overfitting": "not overfitting"}
fig, axes = plots.figure_rows([f"{titles[name]}: d = {settings[name][0]}, ‖μ‖ = {settings[name][1]:.3g}"
                               for name in sims], 3, sharex=True)
for row, (name, sim) in enumerate(sims.items()):
    clean_id, noisy_id = result.shown(name)
    plots.score_dynamics(axes[row, 0], sim.scores, name, clean_id, types, "median clean sample")
    plots.score_dynamics(axes[row, 1], sim.scores, name, noisy_id, types, "median noisy sample")
    plots.accuracy_curves(axes[row, 2], sim.history, name, "accuracy")
    control = sim.history[(sim.history.run == f"{name}_clean") & sim.history.test_acc.notna()]
    axes[row, 2].plot(control.step, control.test_acc, color="#999999", lw=0.8, label="test, clean labels")
    axes[row, 0].set_ylabel("[CLS] attention")
    axes[row, 1].set_ylabel("[CLS] attention")
plots.legend_above(fig, axes[0, 0], ncols=2)
plots.legend_clear(axes[0, 2])
nb.save_figure(fig)

# %%
onelayer.formatted(result.plotted()[["d", "signal_norm", "train_acc", "test_acc", "regime", "regime_trained",
                                     "attention_clean_relevant", "attention_noisy_relevant"]],
                   {"signal_norm": ".3g", "train_acc": ".3f", "test_acc": ".3f", "regime": words.reader_name,
                    "regime_trained": words.reader_name, "attention_clean_relevant": ".2f",
                    "attention_noisy_relevant": ".2f"}).rename(
    columns={"regime": "regime by the test threshold", "regime_trained": "regime against clean labels"}).T.rename_axis(
    index="quantity", columns=None)  # a row per quantity, a column per setting

# %% [markdown]
# {glue:md}`train_acc_words` The plotted (median) noisy sample puts
# {glue:text}`balanced_shown_noisy_on_irrelevant:.2f` (balanced), {glue:text}`harmful_shown_noisy_on_irrelevant:.2f`
# (harmful) and {glue:text}`not_overfitting_shown_noisy_on_irrelevant:.2f` (not overfitting) of its attention on the
# irrelevant tokens at the end; the plotted clean sample puts {glue:text}`balanced_shown_clean_relevant:.2f`,
# {glue:text}`harmful_shown_clean_relevant:.2f` and {glue:text}`not_overfitting_shown_clean_relevant:.2f` on its
# relevant token. Over all training samples, the mean attention of clean samples on their relevant token ends at
# {glue:text}`balanced_attention_clean_relevant:.2f` (balanced), {glue:text}`harmful_attention_clean_relevant:.2f`
# (harmful) and {glue:text}`not_overfitting_attention_clean_relevant:.2f` (not overfitting), against $1/(T+1)$ for a
# uniform row; for noisy samples it is {glue:text}`balanced_attention_noisy_relevant:.2f`,
# {glue:text}`harmful_attention_noisy_relevant:.2f` and {glue:text}`not_overfitting_attention_noisy_relevant:.2f`.
#
# **Is the claim seen?** {glue:md}`claim_seen_words`
#
# Over {glue:md}`seed_count_words` the test accuracy ends at {glue:md}`balanced_test_acc_span` (balanced),
# {glue:md}`harmful_test_acc_span` (harmful) and {glue:md}`not_overfitting_test_acc_span` (not overfitting). Whether
# a low one is the flipped labels' doing is what the next section measures.

# %% [markdown]
# ## What the flipped labels cost
#
# A low test accuracy is harm only if the flipped labels cause it, and a high one is benign only if fitting them
# costs nothing. The encoder's step 0 cannot tell: its head is random, so it starts near chance (test accuracy
# {glue:md}`test_acc_step0_words` on the plotted seed). The control is the same run on clean labels —
# same inputs, same initialisation, same seed, no flipped label (the thin grey line in the *accuracy* panels, for the
# plotted seed). On the plotted seed the test accuracy with flipped labels against clean labels
# is {glue:text}`balanced_test_acc:.3f` against {glue:text}`balanced_clean_test_acc:.3f` (balanced),
# {glue:text}`harmful_test_acc:.3f` against {glue:text}`harmful_clean_test_acc:.3f` (harmful) and
# {glue:text}`not_overfitting_test_acc:.3f` against {glue:text}`not_overfitting_clean_test_acc:.3f` (not
# overfitting). Over {glue:md}`seed_count_words`, clean labels minus flipped labels, with a cost counted where it
# exceeds {glue:text}`harm_threshold:.2f` of test accuracy — or, where both runs end near chance (below
# {glue:text}`near_chance_threshold:.2f`), {glue:text}`chance_gap_threshold:.2f`: two runs near chance disagree on
# about half of the test samples, so on these 1000 a gap of {glue:text}`harm_threshold:.2f` between them is sampling,
# not the flipped labels:
#
# - balanced ({glue:md}`balanced_test_acc_span` with flipped labels, {glue:md}`balanced_clean_test_acc_span` on
#   clean labels): {glue:md}`balanced_cost_spread_words`; {glue:md}`balanced_cost_words`;
# - harmful ({glue:md}`harmful_test_acc_span`, against {glue:md}`harmful_clean_test_acc_span`):
#   {glue:md}`harmful_cost_spread_words`; {glue:md}`harmful_cost_words`;
# - not overfitting ({glue:md}`not_overfitting_test_acc_span`, against
#   {glue:md}`not_overfitting_clean_test_acc_span`): {glue:md}`not_overfitting_cost_spread_words`;
#   {glue:md}`not_overfitting_cost_words`.

# %%
every_cost = pd.concat(costs.values(), ignore_index=True).set_index("run")  # every seed
every_cost["reading"] = result.every_seed.set_index("run").regime_trained.loc[every_cost.index]
onelayer.formatted(every_cost[["test_acc", "clean_test_acc", "noise_cost", "reading"]],
                   {"test_acc": ".3f", "clean_test_acc": ".3f", "noise_cost": lambda v: words.signed(v, "+.3f"),
                    "reading": words.reader_name}).rename(columns={
    "test_acc": "test accuracy", "clean_test_acc": "on clean labels", "noise_cost": "cost (clean minus flipped)",
    "reading": "reading against clean labels"})

# %% [markdown]
# ## The authors' code
#
# The book transcribes the authors' main_one_layer.py as they published it last (commit c563aae, May 2025; its
# config's seed is 42, this page's default), independently of the trainer above: their module (every token position
# computed, [CLS] included), every parameter trained by full-batch SGD through autograd, on data drawn by the data set
# class of their main.py, which main_one_layer.py imports: `np.random.default_rng(seed)`,
# float32, their label-noise pattern, the test set drawn with the training seed; from the initialisation their code
# draws, here
# right after `torch.manual_seed(seed)` (theirs is unseeded). Run that way, it gives the numbers their real script
# gives (checked at three settings by the tests `pytest -m slow` runs). Its losses are theirs as logged,
# $\log(1 + e^{-yf})$ in float32: 0 once every margin exceeds about $16.6$. It runs at the settings run above — shrunk
# like them (the paper's scale is a GPU job for it too) — and is evaluated once, after the last step (their
# script also evaluates every 10 steps, which changes nothing at the end). Its runs are cached like sweeps and shared
# with {doc}`Figure 7 <fig7_one_layer_heatmap>`.

# %%
if authors_code:
    points = [dict(d=d, signal_norm=mu, seed=seed, n=n, n_test=n_test, T=T, rho=rho, noise_ratio=noise_ratio,
                   learning_rate=learning_rate, num_steps=num_steps, hidden=width, skip=skip)
              for d, mu, width in settings.values()]
    result = dataclasses.replace(result, theirs=sweep.run(authors.one_layer_chunk, points,
                                                          cache=paths.cache_dir("sweeps") if use_cache else None))
    their_rows = result.authors.rename(index=words.reader_name).rename_axis("setting")
    display(onelayer.formatted(their_rows[["d", "signal_norm", "train_acc", "test_acc", "train_loss", "test_loss",
                                      "regime"]],  # as the prose gives them
                               {"signal_norm": ".3g", "train_acc": ".3f", "test_acc": ".3f", "train_loss": ".4f",
                                "test_loss": ".3f", "regime": words.reader_name}
                               ).rename(columns={"regime": "regime by the test threshold"}))

# %%
metrics = result.metrics()
nb.save_metrics(metrics, extra={"trainer_wall_s": round(wall_s, 2),
                                "settings_run": {k: list(v) for k, v in settings.items()}})

# %% [markdown]
# ## Paper vs here
#
# Balanced: train accuracy {glue:text}`balanced_train_acc:.3f`, test accuracy {glue:text}`balanced_test_acc:.3f`.
# Harmful: train {glue:text}`harmful_train_acc:.3f`, test {glue:text}`harmful_test_acc:.3f`.
# Not overfitting: train {glue:text}`not_overfitting_train_acc:.3f`, test
# {glue:text}`not_overfitting_test_acc:.3f`. The paper shows Figure 6 as curves and names the settings by their
# regime. Whether each setting lands in the
# regime it is named after is a claim of the ledger ({doc}`../book/summary`), judged from this page's record against
# the control of the section above, seed by seed: *not overfitting* while a training label is unfitted; *harmful*
# when the flipped labels cost more test accuracy than the test set resolves, as counted above; *near chance* when
# the run ends below {glue:text}`near_chance_threshold:.2f` and they cost no more than that — its clean-label twin
# is then near chance too: nothing generalized, so nothing to lose, which is neither benign nor harmful overfitting;
# *benign* otherwise. By that reading the seeds of each setting read:
#
# - the *balanced* setting: {glue:md}`balanced_regime_trained_words`;
# - the *harmful* setting: {glue:md}`harmful_regime_trained_words`;
# - the *not overfitting* setting: {glue:md}`not_overfitting_regime_trained_words`.
#
# {glue:md}`landed_words` This is the reading the ledger's verdict uses. The paper's own reading, a test accuracy
# threshold of 0.95 alone, calls the plotted seed's runs {glue:md}`balanced_regime`, {glue:md}`harmful_regime` and
# {glue:md}`not_overfitting_regime` (balanced / harmful / not overfitting); the ledger quotes it beside the verdict,
# but it does not decide, since it cannot tell a cost of the flipped labels from an encoder that generalizes nothing
# at that signal on clean labels either.
#
# The authors' script, at the same shrunk settings and by that threshold, ends {glue:md}`authors_balanced_regime`,
# {glue:md}`authors_harmful_regime` and {glue:md}`authors_not_overfitting_regime`: train accuracy
# {glue:text}`authors_balanced_train_acc:.3f` / {glue:text}`authors_harmful_train_acc:.3f` /
# {glue:text}`authors_not_overfitting_train_acc:.3f` and test accuracy
# {glue:text}`authors_balanced_test_acc:.3f` / {glue:text}`authors_harmful_test_acc:.3f` /
# {glue:text}`authors_not_overfitting_test_acc:.3f` (balanced / harmful / not overfitting). In particular it fits
# every noisy label of the setting the paper calls *not overfitting* (final train loss
# {glue:text}`authors_not_overfitting_train_loss:.4f`), as our trainer does: the published code with all parameters
# trained by SGD does not leave the noisy labels unfitted at these settings either.
# The `paper` profile runs both at the paper's scale.
# %%
nb.compare(metrics)
