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
# # Figure 5 — where overfitting is benign: the (d, ‖μ‖) map
#
# **Claim.** Whether token selection overfits benignly is decided by how the dimension $d$ compares with the signal
# strength $\|\mu\|$. Scanning the paper's grid — $d \in \{250, 375, \dots, 5000\}$ against
# $\|\mu\| \in \{5, 7.5, \dots, 100\}$, 1,521 training runs of 1,000 gradient-descent steps on $W$ and $p$ — the final
# train and test losses show three regions: large $d$ with a weak signal fits every label and generalizes poorly
# (harmful), a middle band fits every label and generalizes (benign), and small $d$ with a strong signal leaves the
# noisy labels unfitted (no overfitting).
#
# **Over training time.** The map is a snapshot at the paper's step, {glue:text}`num_steps:,.0f`. The theorem speaks of a time *by which* its conditions
# hold, and {doc}`the theorem's clock <theory_clock>` finds every noisy label fitted in its long runs. The second
# half of this page runs the same cells (same data, same $W_0$) for {glue:text}`num_steps_long:,.0f` steps with that clock
# and draws the map at later steps: which cells leave the not-overfitting region, when, and what the boundaries'
# slopes do.
#
# The theory predicts the boundaries only up to constants: $n\,\mathrm{SNR}^2 \asymp 1$ between benign and no
# overfitting, $\mathrm{SNR} \asymp d^{-1/4}$ between benign and harmful, with $\mathrm{SNR} = \|\mu\|/(\sigma\sqrt d)$.
# Both curves are drawn with constant one, with the three settings of Figure 3 marked.

# %% tags=["parameters"]
profile = "book"  # smoke (seconds), book or paper: the presets of benign.settings.Fig5Heatmap
overrides = {}  # settings that differ from the profile, by name, e.g. {"seed": 7}
out_dir = ""  # empty: results/fig5_heatmap/<profile>

# %%
import json

import numpy as np

import pandas as pd
from IPython.display import HTML

from benign import (authors, clock, heatmaps, notebooks, paths, plots, regimes, regionmap, sweep, synthetic, theory,
                    thresholds, words)

nb = notebooks.start("fig5_heatmap", globals())
points = sweep.grid_points(synthetic.GRID_DEFAULTS, nb.parameters, d=sweep.arange("d_grid", d_grid),
                           signal_norm=sweep.arange("signal_norm_grid", signal_norm_grid))
long_points = regimes.points(d_values_long, signal_norm_values_long, snapshot_steps, num_steps=num_steps_long,
                             test_threshold=test_threshold, seed=seed, n=n, n_test=n_test, T=T, rho=rho,
                             noise_ratio=noise_ratio, learning_rate=learning_rate, label_noise=label_noise,
                             authors_test_seed=authors_test_seed, dtype=dtype, device=device,
                             history_points=history_points, block=block)

# %% [markdown]
# ## The sweep
#
# The sweep splits the grid by $d$: all $\|\mu\|$ values of one $d$ share the noise of every token and
# $W_0$, and differ only in two coordinates of three tokens, so one batch per $d$ (a *chunk*) builds their Gram
# matrices from one $O(d^2 nT)$ product and trains them together with the exact recursion of the
# [model page](../book/model.md). Each finished chunk is saved on disk (the *cache*, keyed by every parameter and by
# the source code that computes it), so rerunning this page with one parameter changed recomputes only what changed.
# Each chunk also trains every cell a second time on clean labels (same inputs, $W_0$ and steps): the control of the
# section *What training adds*. This build: {glue:md}`sweep_words`.

# %%
controls = [dict(p, noise_ratio=0.0) for p in points if p["noise_ratio"]]  # each cell again on clean labels
runs = sweep.run(synthetic.grid_chunk, points + controls, cache=paths.cache_dir("sweeps") if use_cache else None,
                 progress=progress)  # a chunk per d trains both label sets together, sharing its d² work
cells = regimes.against_clean_labels(runs, noise_ratio)  # each cell with its clean-label run's test accuracy
cells["regime"] = theory.observed_regime(cells.train_acc, cells.test_acc, test_threshold)
cells["regime_by_order"] = theory.regime(cells.signal_norm, cells.d, n)
cells["regime_trained"] = regimes.trained_regime(cells.train_acc, cells.test_acc, cells.clean_test_acc)

# %%
d_values, mu_values, maps = sweep.maps(cells, ("train_loss", "test_loss", "train_acc", "test_acc", "regime",
                                                "regime_by_order", "test_acc_step0", "noise_cost", "regime_trained"))
figure3 = {name.replace("_", " "): (d0, mu0) for name, (d0, mu0) in regionmap.PAPER_CELLS.items()
           if min(d_values) <= d0 <= max(d_values) and min(mu_values) <= mu0 <= max(mu_values)}
fig, axes = plots.figure(4, 2, row_height=3.2)
panels = [("train_loss", "final train loss", "magma", None), ("test_loss", "final test loss", "magma", None),
          ("train_acc", "train accuracy", "viridis", (0.5, 1.0)), ("test_acc", "test accuracy", "viridis", (0.5, 1.0))]
for ax, (key, title, cmap, lims) in zip(axes.flat[:4], panels):
    heatmaps.heatmap(ax, d_values, mu_values, maps[key], title, cmap=cmap, vmin=lims and lims[0], vmax=lims and lims[1])
heatmaps.regime_map(axes[2, 0], d_values, mu_values, maps["regime"], f"paper's rule (test ≥ {test_threshold:g}: benign)",
                 legend=False)  # the regimes' key is above the figure, where it covers no cell
heatmaps.regime_map(axes[2, 1], d_values, mu_values, maps["regime_by_order"], "by order (constants = 1)", legend=False)
cost_limit = max(0.02, float(np.nanmax(np.abs(maps["noise_cost"]))))
heatmaps.heatmap(axes[3, 0], d_values, mu_values, maps["noise_cost"], "test accuracy the flipped labels cost",
              cmap="RdBu_r", vmin=-cost_limit, vmax=cost_limit, log_mu=True)  # log ‖μ‖: the costly low rows larger
heatmaps.regime_map(axes[3, 1], d_values, mu_values, maps["regime_trained"],
                 f"against clean labels (harmful: loses > {thresholds.HARM.value:g})", legend=False, log_mu=True)
for ax in axes.flat:  # on the log rows a raised label goes above "balanced", as on the long runs' maps below
    heatmaps.theory_overlay(ax, d_values, n, settings=figure3, color="black" if ax is axes[3, 0] else "white",
                         label_box=True, raised_at=0.75 if ax in axes[3] else heatmaps.RAISED_AT)
plots.legend_above(fig, axes[0, 0], ncols=5, extra=heatmaps.category_key(heatmaps.REGIME_COLORS), **plots.OVERLAY_LEGEND)
nb.save_figure(fig)

# %% [markdown]
# What this run shows. The train loss spans {glue:text}`train_loss_min:.3f` to {glue:text}`train_loss_max:.3f` over
# the map (the fixed head bounds every output by $1/\sqrt2$), the test loss {glue:text}`test_loss_min:.3f` to
# {glue:text}`test_loss_max:.3f`, {glue:md}`test_loss_trend_words` (a plane fitted to the test loss in $\log d$ and
# $\log\|\mu\|$ over every cell). {glue:md}`unfitted_words`, and
# {glue:md}`harmful_reach_words:myst`.
#
# Do the boundaries follow the theory's curves? We locate a boundary between two regimes in each column of the map (one
# $d$) — at the $\|\mu\|$ that misplaces fewest of the column's cells — and fit a line to
# $\log\|\mu^*\|$ against $\log d$; and, since a boundary may run along $\|\mu\|$, also in each row (one $\|\mu\|$),
# fitting $\log d^*$ against $\log\|\mu\|$ (± is a slope's standard error). The theory's curves give ½ and 2 for
# $n\,\mathrm{SNR}^2$ = const (benign / not overfitting) and ¼ and 4 for $\mathrm{SNR} \asymp d^{-1/4}$ (harmful /
# benign). On this map the benign / not-overfitting boundary's slope of $\log d^*$ against $\log\|\mu\|$ is
# {glue:md}`overfit_fit_d_words`, where $n\,\mathrm{SNR}^2$ = const would give 2{glue:md}`overfit_reading_words`. Its
# slope of $\log\|\mu^*\|$ against $\log d$, ½ by the theory, is {glue:md}`overfit_fit_words`. The harmful / benign
# boundary's, ¼ by the theory, is {glue:md}`harmful_fit_words`; by this rule {glue:md}`harmful_head_words` (next
# section). Read by what training adds instead, the harmful / benign boundary is judged in the next section; the second
# half of the page follows both boundaries in time.

# %%
result = regionmap.map_result(cells, maps, d_values, mu_values, n, test_threshold)
metrics = {"grid_d": d_values, "grid_signal_norm": mu_values,
           **{key: maps[key] for key in ("train_loss", "test_loss", "train_acc", "test_acc")},
           "sweep_wall_s": round(runs.attrs["wall_s"], 2), "computed_chunks": runs.attrs["computed_chunks"],
           "sweep_words": words.sweep_said(runs),
           "map_cells": len(cells),
           **result.metrics()}

# The authors' main.py (benign.authors, as on the Figure 3 page: evaluated once at the end, cached, shared with it)
# at Figure 3's cells on the grid with d <= authors_max_d.
chosen = {name: at for name, at in regionmap.PAPER_CELLS.items()
          if name in result.paper_cells and authors_code and at[0] <= authors_max_d}
if chosen:
    points = [dict(d=d0, signal_norm=mu0, seed=seed, stream=authors_stream, n=n, n_test=n_test, T=T, rho=rho,
                   noise_ratio=noise_ratio, learning_rate=learning_rate, num_steps=num_steps)
              for d0, mu0 in chosen.values()]
    authors_table = sweep.run(authors.main_chunk, points, cache=paths.cache_dir("sweeps") if use_cache else None)
    by_cell = {(row["d"], row["signal_norm"]): row for row in authors_table.to_dict("records")}
    for name, at in chosen.items():
        metrics[f"authors_{name}_test_acc"], metrics[f"authors_{name}_train_acc"] = (by_cell[at]["test_acc"],
                                                                                       by_cell[at]["train_acc"])

# %% [markdown]
# ## What training adds
#
# The map's rule calls a cell harmful when its test accuracy ends below {glue:text}`test_threshold_value:.2f`. But the
# fixed head classifies before any training: at step 0, $p = 0$, the attention is uniform and $f(X) = \nu^\top\bar x$,
# whose test accuracy, the head's own, is set before any training (lowest on this grid
# {glue:text}`test_acc_step0_min:.3f`; {glue:md}`head_below_words`). On this grid,
# {glue:md}`harmful_of_words`{glue:md}`harmful_clean_words`. Against that step 0, training changes the test accuracy by
# {glue:md}`test_gain_span` over the cells; but whether a loss is the flipped labels' doing is
# read against the control of the {doc}`model page <../book/model>`: the same cell trained on clean labels, with the
# same inputs, $W_0$ and steps. The panel *test accuracy the flipped labels cost*: that run's final test accuracy
# minus the cell's ({glue:md}`noise_cost_span` over the cells; red where they cost;
# this row draws $\|\mu\|$ on a logarithmic axis, so that the lowest rows, where the cost lies, are not slivers).
# The panel *against clean labels*: the regimes re-read by it,
# harmful where every label is fitted and the flipped labels cost more than {glue:text}`harm_threshold:.2f` of test
# accuracy. Of the {glue:text}`fitted_cells:,.0f` cells that fit every label, {glue:text}`harmful_trained_cells:,.0f`
# lose that much. {glue:md}`harm_rows_words`. Of all {glue:text}`map_cells:,.0f` cells of the map, that reads benign
# {glue:md}`share_benign_trained_pct`, harmful {glue:md}`share_harmful_trained_pct` and not overfitting
# {glue:md}`share_not_overfitting_trained_pct`. Along the harmful / benign boundary of that map, the slope of
# $\log\|\mu^*\|$ against $\log d$, ¼ by the theory, is {glue:md}`harmful_trained_fit_words`; the claims ledger judges
# the boundary there, where harm is what the flipped labels cost, not where the head alone falls short.

# %% [markdown]
# ## The same cells over training time
#
# The long-run trainer of {doc}`the theorem's clock page <theory_clock>` runs {glue:text}`long_runs` of the cells (a run at the paper's profile,
# `benign run fig5_heatmap --profile paper`: all 39 × 39 cells for $10^6$ steps) with
# the data, $W_0$ and step size of the map above for {glue:text}`num_steps_long:,.0f` steps, at constant memory, and records
# every step at which a condition switches: every clean label fitted, every noisy label fitted, the first noisy label
# fitted, the test error below $\delta$. Here $\delta$ = {glue:text}`delta_map:.4f`, so that "test error $< \delta$" on
# the {glue:text}`n_test` test samples is exactly "test accuracy ≥ {glue:text}`test_threshold_value:.2f`", the map's
# rule. The regime of a cell at any step then follows from the switches, exactly, with nothing stored per step; the
# maps below draw it by the paper's rule (there is no clean-label control over time), with $\|\mu\|$ on a logarithmic
# axis where the long runs' rows are unevenly spaced. {glue:md}`agreement_words` (the test suite checks this cell by cell in float64). The same kernel, cache and events serve
# {doc}`the theorem's clock <theory_clock>`, whose runs use other step sizes and sample sizes ($\alpha \propto n/d$,
# several $n$) and so share no cell with this grid.

# %%
long = clock.run(long_points, cache=paths.cache_dir("sweeps") if use_cache else None, progress=progress)
steps_drawn = [t for t in snapshot_steps if t <= num_steps_long]
long = regionmap.annotate_long(long, steps_drawn, attention_level)
over_time = regionmap.time_result(long, steps_drawn, num_steps, num_steps_long, attention_level, cells)
d_long, mu_long, long_maps = sweep.maps(long, [f"regime_{t}" for t in steps_drawn]
                                        + ["course", "first_noisy_step", "noisy_fitted_step"])

# %%
panels = len(steps_drawn) + 3  # the snapshots, then when the noisy labels are fitted and the test error's course
fig, grid = plots.figure(-(-panels // 2), 2, row_height=3.2)
axes = list(grid.flat)
log_mu = heatmaps.uneven(mu_long)  # the long runs' rows, 5 to 80 unevenly spaced: each as tall as its log spacing
for ax, t in zip(axes, steps_drawn):
    heatmaps.regime_map(ax, d_long, mu_long, long_maps[f"regime_{t}"], f"paper's rule at step {t:,}", legend=False,
                        log_mu=log_mu)
    heatmaps.theory_overlay(ax, d_long, n, settings=figure3, label_box=True, raised_at=0.75)  # above "balanced"
fitted_steps = long[["first_noisy_step", "noisy_fitted_step"]].to_numpy(dtype=float)
low, high = max(1.0, np.nanmin(fitted_steps)) if np.isfinite(fitted_steps).any() else 1.0, float(num_steps_long)
rest = axes[len(steps_drawn):]
for ax, key, title in zip(rest, ("first_noisy_step", "noisy_fitted_step"),
                          ("first noisy label fitted", "last noisy label fitted")):
    heatmaps.heatmap(ax, d_long, mu_long, np.clip(long_maps[key], low, None), f"{title} (blank: never)",
                  cmap="magma_r", vmin=low, vmax=high, label="step", log=True, log_mu=log_mu)
courses = {key: color for key, color in heatmaps.COURSE_COLORS.items() if (long.course == key).any()}  # keyed if seen
heatmaps.category_map(rest[2], d_long, mu_long, long_maps["course"], courses,
                   f"test error against δ, {num_steps_long:,} steps", legend="below", log_mu=log_mu)
for ax in rest[3:]:
    ax.axis("off")
plots.legend_above(fig, axes[0], ncols=5, extra=heatmaps.category_key(heatmaps.REGIME_COLORS),  # where it covers no cell
                   **plots.OVERLAY_LEGEND)
nb.save_figure(fig, "fig5_heatmap_over_time")

# %%
fates = pd.DataFrame([{"cell": f"{name.replace('_', ' ')} ({d0}, {mu0:g})",
                       **{f"regime at {t:,}": row[f"regime_{t}"].replace("_", " ") for t in steps_drawn},
                       "first noisy label fitted (step)": regionmap.step_text(row.first_noisy_step),
                       "last noisy label fitted (step)": regionmap.step_text(row.noisy_fitted_step),
                       "test error": row.course.replace("_", " "),
                       f"test attention ≥ {attention_level:g} (between logged steps)": regionmap.step_text(row.select_step)}
                      for name, (d0, mu0) in figure3.items() for _, row in long.iterrows()
                      if (row.d, row.signal_norm) == (d0, mu0)])
slopes = pd.DataFrame([{"step": f"{t:,}", **{f"{regionmap.PAIR_WORDS[key]}: log ‖μ*‖ on log d": regionmap.fit_words(fit)
                                      for key, fit in over_time.fits_at[t].items()},
                        **{f"{regionmap.PAIR_WORDS[key]}: log d* on log ‖μ‖": regionmap.fit_words(fit, "slope_d")
                           for key, fit in over_time.fits_at[t].items()}}
                       for t in steps_drawn])
if len(fates):  # a profile whose long runs hold none of Figure 3's cells shows no empty table
    display(fates)
slopes

# %%
# the long runs for the page's interactive map (benign.regimes.time_map), also a download beside the other results
start_step = min(num_steps, num_steps_long)  # the map opens at the snapshot of the map above
time_payload = regimes.time_map(long, d_long, mu_long, num_steps_long, heatmaps.REGIME_COLORS, test_threshold,
                                start_step=start_step)
(nb.out / f"{nb.name}_regime_time.json").write_text(json.dumps(time_payload, separators=(",", ":")) + "\n")
changed = int((regimes.regime_at(long, start_step) != regimes.regime_at(long, num_steps_long)).sum())
metrics.update(time_map_start_step=start_step, time_map_changed_cells=changed,
               time_map_changed_words=f"{words.share_words(changed, len(long), 'cell', 'cells')} "
                                      f"{'is' if changed == 1 else 'are'}")

# %%
metrics.update(over_time.metrics(), delta_map=float(long_points[0]["delta"]), n_test=n_test,
               long_wall_s=round(float(long.groupby(list(clock.CHUNK_BY)).chunk_wall_s.first().sum()), 1),
               logged_steps=len(long.history.iloc[0]["step"]), authors_max_d=authors_max_d)


def in_cells(share: float) -> str:
    """A share of the long runs' cells as the count it is: 'none', '3', 'all 56'."""
    k = round(share * len(long))
    return "none" if k == 0 else f"all {k}" if k == len(long) else str(k)


# the control of Theorem 4.2's not-overfitting case: the fixed head alone (step 0, uniform attention) in its state,
# every clean label fitted, no noisy one, the test error below δ
head_state = (regimes.condition(long, "clean_fitted", 0) & ~regimes.condition(long, "noisy_fitted", 0)
              & regimes.condition(long, "test_error", 0))
metrics["not_overfitting_at_step0_share"] = float(head_state.mean())
metrics.update({f"course_{key}_cells": in_cells(metrics[f"course_{key}_share"]) for key in heatmaps.COURSE_COLORS},
               test_below_at_step0_cells=in_cells(metrics["test_below_at_step0_share"]),
               not_overfitting_at_step0_cells=in_cells(metrics["not_overfitting_at_step0_share"]))
nb.save_metrics(metrics)
# %% [markdown]
# ## What the map becomes
#
# **Not overfitting is a stage.** {glue:md}`long_grid_words`. Of the long runs,
# {glue:md}`not_overfitting_over_time_words` are not overfitting. {glue:md}`noisy_fitted_words`. {glue:md}`fitted_step_corr_words`; the memorisation speed
# $\alpha d/n$ of {doc}`the clock's page <theory_clock>` predicts a negative correlation. The first noisy label goes
# earlier (the panel *first noisy label fitted*). {glue:md}`not_overfitting_end_words`.
#
# **The boundaries over time** (table above), on the long runs' grid of {glue:text}`long_grid_rows` columns of $d$
# and {glue:text}`long_grid_columns` rows of $\|\mu\|$. {glue:md}`boundaries_over_time_words:myst`
#
# **The fixed head** (the panel *test error against δ*). With $p = 0$ the attention is uniform and the head
# $\nu \propto \mu_+ - \mu_-$ already classifies: of the {glue:text}`long_runs:.0f` long runs' cells, the test error
# is below $\delta$ at step 0 in {glue:md}`test_below_at_step0_cells`. It stays below to the end in
# {glue:md}`course_stays_below_cells`, rises above $\delta$ and comes back in {glue:md}`course_transient_cells` (a
# transient harmful phase), rises above it for good in {glue:md}`course_rises_above_cells` (overfitting that turns
# harmful by the paper's rule after the snapshot), falls below it during training in {glue:md}`course_falls_below_cells`, and is above it
# from step 0 to the end in {glue:md}`course_stays_above_cells`. So "benign" on this map reads: every label fitted
# and the test error still below $\delta$; training did not bring it there, the head did, and fitting the noise did
# not take it away. The same holds of "not overfitting": at step 0 the head alone fits every clean label and no
# noisy one, with the test error below $\delta$, in {glue:md}`not_overfitting_at_step0_cells` of these cells, so
# the time that Theorem 4.2's not-overfitting case names exists there before any training. Where it exists so in most
# cells, the claims ledger reads that case as not testable here, not as something training does.
#
# **The paper's three cells** (table above): their regimes at the snapshot steps and when their events happen (the
# step at which the test attention crosses the level interpolated between the {glue:text}`logged_steps` logged
# steps, log-spaced, so known to within their spacing; the other events are exact to the step).
#
# ```{glue:md} paper_cells_over_time_words
# :format: myst
# ```

# %% [markdown]
# ### The map at any step
#
# Move the slider (or focus it and press the arrow keys, or type a step) to redraw the map at any of the
# {glue:text}`num_steps_long:,.0f` steps of the long runs; it opens at step {glue:text}`time_map_start_step:,.0f`,
# the map above. Each cell's regime is recomputed from its recorded switches, so it is exact to the step. Point at or
# tap a cell to see its train and test accuracy at the {glue:text}`logged_steps` logged steps, with the current step
# marked: a cell leaves not overfitting when its train accuracy reaches one, and is then benign while its test
# accuracy is at or above the dashed threshold, harmful while it is below. Look for the cells that move:
# {glue:md}`time_map_changed_words` in another regime at the last step than at the opening one.
# Its data, the long runs' recorded switches and logged accuracies, are
# {download}`fig5_heatmap_regime_time.json <../downloads/fig5_heatmap/fig5_heatmap_regime_time.json>`.

# %%
HTML(regimes.time_map_html(time_payload))

# %% [markdown]
# ## Paper vs here
#
# On this map, read against the same runs on clean labels, {glue:md}`share_benign_trained_pct` of the cells are benign,
# {glue:md}`share_harmful_trained_pct` harmful and {glue:md}`share_not_overfitting_trained_pct` not overfitting (the
# ledger's rule for the three regions reads these shares). The
# paper gives its heatmaps as pictures, not numbers; the rows below check the cells of Figure 3, which the paper does
# report. The *authors'
# code* column runs their final main.py (commit c563aae; transcribed, see {doc}`Figure 3 <fig3_dynamics>`) at those
# cells with $d \le$ {glue:text}`authors_max_d` (at the paper's profile: all three): one draw of their data stream and
# initialisation, at this page's seed. The book profile uses their final configuration's seed, 42; the paper's profile
# uses 0, the seed of their configurations before that commit, with which their script reaches Figure 3's reported
# numbers at these cells (see that page). Their script that sweeps a grid like this one (main_synthetic.py, January)
# also ran with seed 0.

# %%
nb.compare(metrics)
