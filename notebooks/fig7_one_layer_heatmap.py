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
# # Figure 7 — the one-layer encoder over the (d, ‖μ‖) map
#
# **Claim.** A standard one-layer Transformer encoder trained end to end (see
# {doc}`Figure 6 <fig6_one_layer_dynamics>`) shows, over the grid of {doc}`Figure 5 <fig5_heatmap>` —
# $d \in \{250, 375, \dots, 5000\}$ against $\|\mu\| \in \{5, 7.5, \dots, 100\}$ — the same three regions as
# the analysed model, where the theory puts them: harmful overfitting towards large $d$ and weak signal, noisy labels
# left unfitted (not overfitting) towards strong signal and small $d$, benign overfitting between. The paper shows it
# by the final train and test losses over the grid.
#
# The claims ledger ({doc}`../book/summary`) tests both parts. First, which regimes the map holds: a regime counts as
# a region on at least {glue:md}`region_share_words` of the cells. Second, whether the test loss is ordered as the
# theory orders harm, growing towards large $d$ and falling towards strong signal. That order is read from
# least-squares slopes of the cells' test loss against $\log d$ and $\log \|\mu\|$, a direction only beyond
# {glue:text}`trend_errors:g` standard errors.
# The encoder's head starts at random, so a run's own step 0 is at chance and says nothing of what training adds;
# the control is the same run on clean labels — same data draw, same initialisation, every label its true one — as
# {doc}`Figure 6 <fig6_one_layer_dynamics>` reads its three settings. A cell is harmful when it fits every label and
# tests more than {glue:md}`harm_words` of accuracy below its clean-label run, benign when it fits every label and
# does not, not overfitting when it leaves a label unfitted — and, as on Figure 6, *near chance* (neither benign nor
# harmful) when it fits every label but ends below {glue:text}`near_chance_value:g` with a loss its test set cannot
# tell from sampling: there the clean-label run is near chance too, and there was nothing to lose.
# Here {glue:md}`share_fitted_words` of the cells fit every training label ({glue:md}`share_not_overfitting_words`
# leave a noisy label unfitted). Against the clean-label control, {glue:md}`share_benign_trained_words` of the cells
# are benign, {glue:md}`share_harmful_trained_words` harmful and {glue:md}`share_near_chance_trained_words` near
# chance; the paper's test threshold alone would call
# {glue:md}`harmful_by_rule_words` harmful, {glue:md}`harmful_clean_below_words`. The test loss
# {glue:md}`test_loss_trend_d` and {glue:md}`test_loss_trend_signal_norm`; the largest test loss,
# {glue:text}`test_loss_max:.3f`, lies at {glue:md}`test_loss_max_cell`.
#
# The paper draws the train loss with colour limits 0.405–0.55 and the test loss with 0.41–0.64. The loss panels
# below take their colour scale from the data, so no value is clipped: the paper's limits are drawn in cyan on the
# colour bar where they fall inside its range, and named above or below the bar where they fall outside it.
#
# **What this page shows.** The paper's grid is 1521 runs of an encoder with MLP width 2000 and $d$ up to 5000: a GPU
# job (the `paper` profile, `benign run fig7_one_layer_heatmap --profile paper`). The book runs a coarser grid — every
# 750 in $d$ from 500, every 15 in $\|\mu\|$ from 5 — shrunk tenfold like Figure 6's book profile: $d$ and the MLP
# width divided by 10, $\|\mu\|$ by $10^{1/4}$ (which keeps $\|\mu\|/d^{1/4}$). The axes show the values actually
# run, {glue:md}`grid_words`; multiply $d$ by 10 and $\|\mu\|$ by $10^{1/4} \approx 1.78$ to read them on the
# paper's axes.

# %% tags=["parameters"]
profile = "book"  # smoke (seconds), book or paper: the presets of benign.settings.Fig7OneLayerHeatmap
overrides = {}  # settings that differ from the profile, by name, e.g. {"seed": 7}
out_dir = ""  # empty: results/fig7_one_layer_heatmap/<profile>

# %%
from benign import authors, encoder, heatmaps, notebooks, onelayer, paths, plots, sweep, theory, thresholds, words

nb = notebooks.start("fig7_one_layer_heatmap", globals())
d_paper, mu_paper = sweep.arange("d_grid", d_grid), sweep.arange("signal_norm_grid", signal_norm_grid)
d_run = [encoder.reduced(d, mu_paper[0], hidden, scale)[0] for d in d_paper]  # the cells as run: shrunk by scale
mu_run = [encoder.reduced(d_paper[0], mu, hidden, scale)[1] for mu in mu_paper]
width = encoder.reduced(d_paper[0], mu_paper[0], hidden, scale)[2]
etas = list(dict.fromkeys([noise_ratio, 0.0]))  # η, and the control: the same runs on clean labels
points = sweep.grid_points(encoder.GRID_DEFAULTS, nb.parameters, d=d_run, signal_norm=mu_run, hidden=width,
                           noise_ratio=etas)

# %% [markdown]
# ## The sweep
#
# The sweep splits the grid by $d$ and trains all $\|\mu\|$ values of one $d$, with flipped labels and on clean
# labels — same noise draws, same initialisation — as one batch (the runs vectorised into one computation), for 1000
# SGD steps on every parameter, and evaluates each on its clean test set at the end. Finished chunks are cached,
# keyed by every parameter and by the source code that computes them. Each cell's regime is then read twice: by
# the paper's rule (test accuracy against a threshold) and by what training with the flipped labels adds (against
# the clean-label run, read as Figure 6 reads its seeds).

# %%
runs = sweep.run(encoder.grid_chunk, points, cache=paths.cache_dir("sweeps") if use_cache else None, progress=progress)
cells = onelayer.against_clean_runs(runs, noise_ratio, test_threshold)  # the cost, the paper's rule, the reading

# %% [markdown]
# ## The map
#
# Eight panels over the grid as run ($d$ across, $\|\mu\|$ up), one cell per run, each titled by what it shows. On
# the two loss panels the paper's colour limits are cyan marks on the colour bar, or a note beside it ("paper: …
# above" or "below") where they fall outside the data's range. The panel titled *paper's rule* colours each cell by
# the paper's rule (keyed above the figure): every training label fitted and test accuracy at least
# {glue:text}`test_threshold_value:g`, benign; every label fitted and less, harmful; a label left unfitted, not
# overfitting. The panel titled *against clean labels* reads the same cells against the clean-label run (harmful:
# more than {glue:md}`harm_words` lost to the flipped labels), and the panel titled *test accuracy lost to the flipped
# labels* shows what they cost: the clean-label run's test accuracy minus the noisy run's. The last panel gives the noisy training samples' mean final [CLS]
# attention on their relevant token. On every panel the two white lines are the theory's boundaries,
# keyed above the figure: $n\,\mathrm{SNR}^2 = 1$ (dashed) and $\mathrm{SNR} = d^{-1/4}$ (dotted); at the $d$ of
# this grid both lie at $\|\mu\|$ of about 2 to 5, so both run along its bottom row. Stars mark Figure 6's three
# settings, named as the paper names them (not as this map reads them), where they lie on the grid:
# {glue:md}`marked_words`.

# %%
d_values, mu_values, maps = sweep.maps(cells, ("train_loss", "test_loss", "train_acc", "test_acc", "regime",
                                                  "regime_trained", "noise_cost", "attention_noisy_relevant"))
named = {"balanced": (2000, 20.0), "harmful": (5000, 5.0), "not_overfitting": (1000, 100.0)}
named_run = {name: encoder.reduced(d, mu, hidden, scale)[:2] for name, (d, mu) in named.items()}
marked = {words.reader_name(name): cell for name, cell in onelayer.on_grid(named_run, d_values, mu_values).items()}
reading_colors = {**heatmaps.REGIME_COLORS, onelayer.NEAR_CHANCE: heatmaps.NEAR_CHANCE_COLOR}  # against clean runs
fig, axes = plots.figure(4, 2, row_height=3.2)
paper_limits = onelayer.PAPER_LOSS_LIMITS  # Figure 7's colour limits, marked in cyan
panels = [(axes[0, 0], "train_loss", "final train loss", "magma", (None, None)),
          (axes[0, 1], "test_loss", "final test loss", "magma", (None, None)),
          (axes[1, 0], "train_acc", "train accuracy", "viridis", (0.5, 1.0)),
          (axes[1, 1], "test_acc", "test accuracy", "viridis", (0.5, 1.0)),
          (axes[3, 0], "noise_cost", "test accuracy lost to the flipped\nlabels (clean run − noisy run)", "magma_r",
           (None, None)),
          (axes[3, 1], "attention_noisy_relevant", "noisy samples: attention on\nthe relevant token", "viridis",
           (0.0, None))]
for ax, key, title, cmap, (vmin, vmax) in panels:
    heatmaps.heatmap(ax, d_values, mu_values, maps[key], title, cmap=cmap, vmin=vmin, vmax=vmax,
                  marks=paper_limits.get(key, ()))
heatmaps.regime_map(axes[2, 0], d_values, mu_values, maps["regime"], f"paper's rule (test ≥ {test_threshold:g}: benign)",
                 legend=False)  # its key above the figure, with the theory's lines: on the map it covers cells
heatmaps.category_map(axes[2, 1], d_values, mu_values, maps["regime_trained"], reading_colors,
                      f"against clean labels (harmful: > {words.percent(thresholds.HARM.value)} lost)", legend=False)
for ax in axes.flat:  # the raised label above the d = 500 column's change of regime (about 0.5 of the map)
    heatmaps.theory_overlay(ax, d_values, n, settings=marked, label_box=True, raised_at=0.75)
plots.legend_above(fig, axes[0, 0], ncols=5, extra=heatmaps.category_key(reading_colors),
                   **plots.OVERLAY_LEGEND)
nb.save_figure(fig)

# %%
result = onelayer.EncoderMap(cells, d_values, mu_values, named_run, test_threshold)
metrics = {"grid_d": d_values, "grid_signal_norm": mu_values,
           **{key: maps[key] for key in ("train_loss", "test_loss", "train_acc", "test_acc")},
           "sweep_wall_s": round(cells.attrs["wall_s"], 2), "computed_chunks": cells.attrs["computed_chunks"],
           **result.metrics()}

if authors_code:
    their_points = [dict(d=d, signal_norm=mu, seed=seed, n=n, n_test=n_test, T=T, rho=rho, noise_ratio=noise_ratio,
                         learning_rate=learning_rate, num_steps=num_steps, hidden=width, skip=skip)
                    for d, mu in named_run.values()]
    theirs = sweep.run(authors.one_layer_chunk, their_points, cache=paths.cache_dir("sweeps") if use_cache else None)
    theirs["regime"] = theory.observed_regime(theirs.train_acc, theirs.test_acc, test_threshold)
    their_cell = theirs.set_index(["d", "signal_norm"])
    for name, key in named_run.items():
        for column in ("train_acc", "test_acc", "train_loss", "test_loss"):
            metrics[f"authors_{name}_{column}"] = float(their_cell.loc[key, column])
        metrics[f"authors_{name}_as_named"] = float(their_cell.loc[key, "regime"] == onelayer.NAMED_REGIME[name])
    for key in ("train_loss", "test_loss"):  # over the three cells their script ran (the comparison rows say so)
        metrics[f"authors_{key}_min"] = float(theirs[key].min())
        metrics[f"authors_{key}_max"] = float(theirs[key].max())
    metrics["train_loss_ranges_words"] = onelayer.ranges_words(
        metrics["train_loss_against_paper"],
        onelayer.against(theirs.train_loss.min(), theirs.train_loss.max(), paper_limits["train_loss"]), "train")
nb.save_metrics(metrics)

# %% [markdown]
# The cells of one $d$ share their noise draws and initialisation (one seed), so the map has column structure: a
# column whose draw is unlucky stays harmful up to a stronger signal than its neighbours.
#
# ## Paper vs here
#
# By the paper's rule {glue:md}`share_benign_words` of the cells are benign, {glue:md}`share_harmful_words` harmful
# and {glue:md}`share_not_overfitting_words` leave noisy labels unfitted (against the clean-label control,
# {glue:md}`share_benign_trained_words` benign, {glue:md}`share_harmful_trained_words` harmful and
# {glue:md}`share_near_chance_trained_words` near chance). The encoder's final train losses
# ({glue:md}`train_loss_span`) lie {glue:md}`train_loss_against_paper` the paper's train-loss colour range
# 0.405–0.55 (named on its colour bar): {glue:md}`share_train_loss_in_paper_limits_words` of the cells lie inside
# it. Its test losses ({glue:md}`test_loss_span`) lie inside the paper's test-loss range in
# {glue:md}`test_loss_in_paper_limits_words`. The paper's limits are settings of its plot, not values it reports, so
# the table below asks only whether each end of our range lies inside the paper's.
#
# The authors' script (transcribed, see {doc}`Figure 6 <fig6_one_layer_dynamics>`) at the three named cells, shrunk
# like this page, ends with train losses from {glue:text}`authors_train_loss_min:.4f` to
# {glue:text}`authors_train_loss_max:.4f` and test losses from {glue:text}`authors_test_loss_min:.3f` to
# {glue:text}`authors_test_loss_max:.3f`: {glue:md}`train_loss_ranges_words`. That range is the *analysed*
# model's of {doc}`Figure 5 <fig5_heatmap>`: its output is $\sum_t s_t\, x_t^\top\nu$ with
# $\nu^\top\mu_\pm = \pm 1/\sqrt2$, so its train loss cannot go much below $\log(1 + e^{-1/\sqrt2}) = 0.401$; a
# noisy sample left unfitted costs $\log(1 + e^{1/\sqrt2}) = 1.108$, so fitting only the 16 clean samples of 20
# gives a mean of $(16 \cdot 0.401 + 4 \cdot 1.108)/20 = 0.542$. The paper's Figure 7 limits fit that
# model (see {doc}`Figure 5 <fig5_heatmap>`'s loss panels), not the encoder their script trains. (The setting the
# paper calls *not overfitting* is fitted by their script too: see {doc}`Figure 6 <fig6_one_layer_dynamics>`.)

# %%
nb.compare(metrics)
