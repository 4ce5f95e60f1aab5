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
# # Figures 8/9 — attention sharpens while the last layer fits noisy labels
#
# **Claim.** In the runs of Table 2, fitting the labels through the re-initialised query and key goes together with
# *token selection*: the first token's attention concentrates on fewer tokens over phase 2, with and without label
# noise — here measured against each curve's own first epoch, and the runs with flipped labels against the same
# fine-tuning on clean ones. We follow, per phase-2 epoch, the paper's measure: the largest softmax score in the last layer's
# first-token query row, averaged over heads and training samples (1 means every head attends to a single token,
# $1/L$ means uniform attention over $L$ tokens).
#
# The runs are Table 2's own, read back from the run cache (the two pages share their parameters and profiles): the
# same offline rows — **all-MiniLM-L6-v2** on Rotten-Tomatoes snippets (two and three classes) and a **small ViT
# pre-trained here on MNIST digits** (not ViT-B/16-in21k) on the digits it was not trained on and on Fashion-MNIST —
# and the same phase 2, which stops a run once it fits every training label (see Table 2's page for what differs
# from the paper's protocol). A curve ends where the last of its seeds stopped.

# %% tags=["parameters"]
profile = "book"  # smoke (seconds), book or paper: the presets of benign.settings.Table2Finetune
overrides = {}  # settings that differ from the profile, by name, e.g. {"seeds": [42]}
out_dir = ""  # empty: results/fig8_finetune_attention/<profile>

# %%
from benign import notebooks, plots, thresholds
from benign.realdata import report, runs
from benign.words import reader_name

nb = notebooks.start("fig8_finetune_attention", globals())
protocol, tasks, grid = runs.runs_from(nb.parameters)
curves = report.curves(grid)
ends = report.sharpening(report.attention_ends(grid))  # each curve against its own first epoch
control = report.noisy_against_clean(ends)  # flipped labels against the same fine-tuning on clean ones
report.differences(protocol, seeds, noise_ratios, sample_sizes)

# %% [markdown]
# ## The figure
#
# One row per data set (its name above the row), one panel per finetune size $n$ (titled by it); blue without label
# noise, red with $\eta = 0.2$. Lines are the mean over the seeds, bands span them; a seed that stopped holds its last
# value until the curve's last seed stops, so a line does not jump where a seed stops, and it ends on the mean of the
# seeds' last values, the table's number. The epoch axis is logarithmic, since runs stop after a few epochs or after
# hundreds. The dotted line is uniform attention over the tokens of the input (its largest score, averaged over
# training inputs); the dashed line is twice the panel's first-epoch largest score (the mean of its curves), the
# level a curve must reach to count as *sharpened* (below).
# The table after the figure gives each curve's largest score after its first and its last epoch and their ratio.

# %%
sizes = sorted(curves.n.unique())
fig, axes = plots.figure_rows([reader_name(task.dataset) for task in tasks], len(sizes), sharey=True)
for row, task in enumerate(tasks):
    uniform = report.uniform_attention(task)  # the dotted line: uniform attention over the input's tokens
    for col, n in enumerate(sizes):
        part = curves[(curves.dataset == task.dataset) & (curves.n == n)]
        if part.empty:
            axes[row, col].set_axis_off()
            continue
        plots.max_attention_curves(axes[row, col], part, f"n = {n}")
        axes[row, col].axhline(uniform, color="grey", ls=":", lw=1, label="uniform attention")
        first = ends[(ends.dataset == task.dataset) & (ends.n == n)]["first"].mean()
        axes[row, col].axhline(thresholds.SHARPER.value * first, color="grey", ls="--", lw=1,
                               label=f"×{thresholds.SHARPER.value:g} first epoch")
        axes[row, col].set_xscale("log")
plots.legend_above(fig, axes[0, 0], ncols=4)
nb.save_figure(fig)

# %%
metrics = report.read_sharpening(ends, control, {t.dataset: t.data.kind for t in tasks}).metrics()
nb.save_metrics(metrics)
report.ends_table(ends)

# %% [markdown]
# **Reading it** (the `book` profile's runs; the numbers are this run's). In the text rows the mean largest score
# {glue:md}`text_sharpening_course`; in the image rows it {glue:md}`image_sharpening_course`.
# {glue:md}`sharpening_words`
#
# Which wrong labels a run can fit at all is bounded by what attention can reach among the backbone's tokens
# (Table 2's *within reach* column); sharper attention, read against the same fine-tuning on clean labels, is what
# training does here, not by itself a sign of memorisation.
#
# ## Paper vs here
#
# The paper shows these curves without numbers. What we check is their direction against each curve's own start:
# after the first phase-2 epoch the re-initialised query and key still spread attention almost uniformly, so any
# training raises the largest score a little — a rise alone could not fail. A curve counts as *sharpened* when its
# largest score at least doubles (the effective number of tokens attended, one over the largest score, halves; the
# threshold was fixed before these runs). The claim holds when every curve sharpens and
# is contradicted when at most half of them do; the ledger ({doc}`../book/summary`) gives the verdict.

# %%
nb.compare(metrics)
