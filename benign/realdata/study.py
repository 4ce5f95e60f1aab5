"""The backbone study: image backbones made here that differ in depth (and width), each through Table 2's phase 2,
placed on the paper's axes — how much of the label noise attention can reach (and fits) against what fitting it
costs.

Each backbone of the family (`shapes`: `image_backbone.recipe(layers=…, width=…)`) is made once and cached under the
code that makes it; its runs are Table 2's runs (`runs.run_grid`, the same cache), so the backbone Table 2 uses is
read back, not run twice. Text rows are plotted beside them from Table 2's runs where this machine has them cached
(`runs.cached_grid`), never computed here: they are Table 2's to compute.

The y axis mixes two costs, which `noise_costs` splits: phase 2 on clean labels (it learns the last layer's query and
key again from n samples) and the flipped labels on top. Runs with noise that never fit train every epoch where
clean ones stop once fitted, so a control (`whole_schedule`) trains the clean runs at the smallest n for every epoch
too; it shares the frozen layers and phase 1 with the backbone's grid (`runs.run_grids`).

A backbone's regime over its cells with noise (means over cells and seeds), with the book's thresholds for real data
(`benign.thresholds`, the same as Table 2's ledger rule): *not overfitting* if phase 2 fits less than `REAL_FITTED` of
the flipped labels; else *harmful* if the test accuracy minus that of the clean-label cell (the same backbone, n and
seed on clean labels: what the flipped labels cost, `test_minus_clean`) is `REAL_COST` points or more below zero on
average, *benign* if not — the three regions of the paper's Figure 5, read on real backbones. Phase 2 moves the test
accuracy away from the base accuracy even on clean labels, so the base accuracy is the paper's y axis here, not the
control of harm.
"""

from __future__ import annotations

from dataclasses import replace

import pandas as pd

from .. import thresholds
from ..checks import ParameterError
from ..device import cpu_threads, stop_workers, worker_processes
from ..words import reader_name
from . import image_backbone, runs
from .image_backbone import NAME as IMAGE_BACKBONE
from .findings import REACH_TESTS_CLAIM
from .report import summarize

FITTED = thresholds.REAL_FITTED.value  # a backbone overfits if phase 2 fits at least this share of its flipped labels
COST = thresholds.REAL_COST.value  # points lost against the clean-label cell from which overfitting is harmful
BENIGN, HARMFUL, NOT_OVERFITTING = "benign", "harmful", "not overfitting"
UNREAD = "no clean cell"  # fitted noise with no clean-label cell to read its cost against (a text row cached in part)


WIDTH = image_backbone.ARCHITECTURE["hidden_size"]  # the family's width, unless vit_widths names others


def shapes(p: dict) -> list[tuple[int, int]]:
    """The family's backbones as (layers, width): every depth of `vit_depths` at the default width, deepest first,
    then the deepest of them at each other width of `vit_widths`."""
    depths = sorted(set(p["vit_depths"]), reverse=True)
    return [(d, WIDTH) for d in depths] + [(depths[0], w) for w in sorted(set(p["vit_widths"]) - {WIDTH})]


def backbone_label(layers: int, width: int = WIDTH) -> str:
    return f"ViT, {layers} layer{'s' if layers != 1 else ''}" + (f", width {width}" if width != WIDTH else "")


def recipe_of(parameters: dict, layers: int, width: int = WIDTH) -> dict:
    """The image backbone's recipe overrides for a notebook's parameters at another depth (and width)."""
    return {**runs.recipe_from({**parameters, "vit_layers": layers}), **({"width": width} if width != WIDTH else {})}


def _make(p: dict, shape: tuple[int, int]) -> None:
    """One backbone of the family made (or found) in the cache, nothing run."""
    with cpu_threads(p["cpu_threads"]):
        image_backbone.make(recipe_of(p, *shape), p["progress"])


def whole_schedule(protocol: runs.Protocol) -> runs.Protocol:
    """The control's protocol: phase 2 never stopped once fitted, every epoch of its schedule run."""
    return replace(protocol, stop_when_fitted=False)


def _shape_grid(p: dict, shape: tuple[int, int]) -> pd.DataFrame:
    """One backbone of the family: made (or read back), then its runs and the control's (clean runs at the smallest
    n trained the whole schedule), computed where the cache lacks them."""
    protocol = runs.protocol_from(p)
    with cpu_threads(p["cpu_threads"]):
        task = runs.prepare(p["dataset"], p["text_backbone"], IMAGE_BACKBONE, recipe_of(p, *shape), p["progress"],
                            p["device"])
        grid, control = runs.run_grids(task, [(protocol, p["seeds"], p["noise_ratios"], p["sample_sizes"]),
                                              (whole_schedule(protocol), p["seeds"], [0.0], [min(p["sample_sizes"])])],
                                       p["progress"])
    grid = pd.concat([grid.assign(control=False), control.assign(control=True)], ignore_index=True)
    layers, width = shape
    return grid.assign(layers=layers, width=width, backbone_label=backbone_label(*shape), kind="image")


def cost(shape: tuple[int, int]) -> int:
    """What making a backbone of this shape costs, up to a factor: layers × width² (its products per token)."""
    return shape[0] * shape[1] ** 2


def jobs(p: dict, family) -> list[tuple]:
    """The worker processes' jobs (function, shape) in the order they take them. A backbone's runs (phase 2 for
    2000 epochs where the noise is not fitted) take about twice as long as making the deepest one, so: the
    cheapest missing backbone made and run first, so that its runs start early; meanwhile the other missing
    backbones made, dearest first; then the other backbones' runs, dearest first (cached ones only read)."""
    missing = sorted((s for s in family if not image_backbone.cached(recipe_of(p, *s))), key=cost)
    first = missing[:1]
    return ([(_shape_grid, s) for s in first] + [(_make, s) for s in sorted(missing[1:], key=cost, reverse=True)] +
            [(_shape_grid, s) for s in sorted(set(family) - set(first), key=cost, reverse=True)])


def study_runs(parameters: dict, beside_sizes=()) -> pd.DataFrame:
    """Every run of the study, one per row: the image backbones of `shapes` on `dataset` (computed side by side in
    `processes` worker processes where the cache lacks them, in the order of `jobs`), and the text rows of
    `datasets_beside` that the cache holds, at the study's n and at `beside_sizes` (Table 2's n: `text_beside_words`
    reads them; the study's own reading keeps its n). Columns: `runs.run_grid`'s, with layers, width,
    backbone_label, kind and control (the control's runs)."""
    p = parameters
    protocol = runs.protocol_from(p)  # bad protocol values fail here, before any backbone is made
    if runs.load(p["dataset"]).kind != "image":
        raise ParameterError(f"dataset {p['dataset']!r} holds text: the backbone study needs an image data set")
    family = shapes(p)
    for layers, width in family:
        image_backbone.recipe(**recipe_of(p, layers, width))  # a bad shape fails here, in one line, before any job
    if p["processes"] > 1 and len(family) > 1:
        pool = worker_processes(min(p["processes"], len(family)))
        try:
            futures = {(f, s): pool.submit(f, p, s) for f, s in jobs(p, family)}
            done = {job: future.result() for job, future in futures.items()}  # a job's error, raised here
            parts = [done[_shape_grid, s] for s in family]
        except KeyboardInterrupt:
            stop_workers(pool)  # Ctrl-C: now, not when the running backbones finish; finished runs stay cached
            raise
        finally:
            pool.shutdown(wait=True, cancel_futures=True)
    else:
        parts = [_shape_grid(p, s) for s in family]
    with cpu_threads(p["cpu_threads"]):
        for name in p["datasets_beside"]:
            task = runs.prepare(name, p["text_backbone"], IMAGE_BACKBONE, None, p["progress"], p["device"])
            found = runs.cached_grid(task, protocol, p["seeds"], p["noise_ratios"],
                                     sorted(set(p["sample_sizes"]) | set(beside_sizes)))
            if len(found):
                parts.append(found.assign(control=False, layers=task.bb.model.config.num_hidden_layers,
                                          width=task.bb.model.config.hidden_size,
                                          backbone_label=text_label(name), kind="text"))
    return pd.concat(parts, ignore_index=True)


def text_label(dataset: str) -> str:
    """A text row of Table 2 as the study names it: 'Rotten Tomatoes (3 classes) · text' (no comma: the pages list
    backbones, whose names hold one, with commas and semicolons)."""
    return f"{reader_name(dataset)} · text"


def test_minus_clean(study: pd.DataFrame) -> pd.Series:
    """Per run with noise (the control's runs left out), what the flipped labels cost: its test accuracy minus that
    of its clean-label cell — the run of the same backbone, seed and n on clean labels — in points (NaN where that
    cell was not run); indexed as `study`."""
    main = study[~study.control]
    cell = ["backbone_label", "seed", "n"]
    clean_test = main[main.noise_ratio == 0].set_index(cell).test_acc
    noisy = main[main.noise_ratio > 0]
    return pd.Series(100 * (noisy.test_acc.to_numpy()
                            - clean_test.reindex(pd.MultiIndex.from_frame(noisy[cell])).to_numpy()),
                     index=noisy.index, name="test_minus_clean")


def placed(study: pd.DataFrame) -> pd.DataFrame:
    """Per backbone (and text row) and n, with noise: the paper's axes — shares of the flipped labels within reach
    (free attention) and fitted by phase 2, and test accuracy minus base accuracy (points) — means over seeds, with
    the base accuracy, the test accuracy minus the clean-label cell's (`test_minus_clean`, points) and where that
    cell sits on the y axis (`clean_minus_base`: its test accuracy minus the base accuracy, points), and the most
    epochs a seed of it ran (`epochs`)."""
    noisy = study[(study.noise_ratio > 0) & ~study.control].assign(test_minus_clean=test_minus_clean(study))
    g = noisy.groupby(["backbone_label", "kind", "layers", "width", "n"], sort=False)
    out = g.agg(reach=("reach_free", "mean"), token=("reach_token", "mean"), fitted=("fitted_noisy", "mean"),
                test_acc=("test_acc", "mean"), base_acc=("base_acc", "mean"),
                test_minus_clean=("test_minus_clean", "mean"), seeds=("seed", "count"),
                epochs=("epochs_run", "max")).reset_index()
    out["test_minus_base"] = 100 * (out.test_acc - out.base_acc)
    out["clean_minus_base"] = out.test_minus_base - out.test_minus_clean
    return out


def noise_costs(study: pd.DataFrame) -> pd.DataFrame:
    """Per backbone (and text row), what phase 2 costs in test accuracy and to what, in points, means over seeds and
    n: on clean labels (`clean`: test − base at η = 0, runs stopped once fitted); then the flipped labels on top
    (`noise`: test at η > 0 minus test at η = 0 of the same seed and n), with the share of the clean training labels
    still fitted beside the noise (`clean_fitted`) and of the flipped ones (`flipped_fitted`); and at the control's
    n, test − base of the clean runs stopped once fitted (`stopped`, after `stopped_epochs` on average), of the same
    trained every epoch (`whole`, after `whole_epochs`; NaN where the control was not run) and of the runs with noise
    (`noisy`, after `noisy_epochs`)."""
    main = study[~study.control]
    clean = main[main.noise_ratio == 0]
    noisy = main[main.noise_ratio > 0]
    kept = noisy.train_acc * noisy.n - noisy.fitted_noisy.fillna(0) * noisy.n_flipped
    per_noisy = pd.DataFrame({
        "backbone_label": noisy.backbone_label, "noise": test_minus_clean(study),
        "clean_fitted": kept / (noisy.n - noisy.n_flipped),
        "flipped_fitted": noisy.fitted_noisy})
    by = lambda frame: frame.groupby("backbone_label", sort=False)
    out = pd.DataFrame({"clean": by(clean.assign(gain=100 * (clean.test_acc - clean.base_acc))).gain.mean()})
    out = out.join(by(per_noisy).mean(), how="outer")
    at = study.n.min()  # the control's n
    small = study[study.n == at]
    for name, rows in (("stopped", small[(small.noise_ratio == 0) & ~small.control]),
                       ("whole", small[small.control]), ("noisy", small[(small.noise_ratio > 0) & ~small.control])):
        out[name] = by(rows.assign(gain=100 * (rows.test_acc - rows.base_acc))).gain.mean()
        out[f"{name}_epochs"] = by(rows).epochs_run.mean()
    out["control_n"] = at
    order = list(dict.fromkeys(study.backbone_label))
    return out.reindex([b for b in order if b in out.index]).rename_axis("backbone_label").reset_index()


def regimes(points: pd.DataFrame) -> pd.DataFrame:
    """Per backbone: the means over its cells with noise (`worst`: its lowest cell of test − base; `epochs`: the
    most a seed ran), its regime, and whether it can test the paper's claim (most flipped labels within reach)."""
    g = points.groupby(["backbone_label", "kind", "layers", "width"], sort=False)
    out = g.agg(reach=("reach", "mean"), token=("token", "mean"), fitted=("fitted", "mean"),
                test_minus_base=("test_minus_base", "mean"), worst=("test_minus_base", "min"),
                test_minus_clean=("test_minus_clean", "mean"), base_acc=("base_acc", "mean"),
                epochs=("epochs", "max")).reset_index()
    out["regime"] = [regime(f, c) for f, c in zip(out.fitted, out.test_minus_clean)]
    out["tests_claim"] = out.reach >= REACH_TESTS_CLAIM
    return out


def regime(fitted: float, test_minus_clean: float) -> str:
    """A backbone's regime from the share of its flipped labels phase 2 fits and its test accuracy minus its
    clean-label cells' (points; means over its cells with noise and seeds)."""
    if not fitted >= FITTED:
        return NOT_OVERFITTING
    if test_minus_clean != test_minus_clean:
        return UNREAD
    return HARMFUL if test_minus_clean <= -COST else BENIGN


def rule_words() -> str:
    """Glued words: the rule that decides a backbone's regime, with the book's thresholds."""
    return (f"a backbone overfits when phase 2 fits at least {100 * FITTED:.0f}% of its flipped labels (means over "
            f"its cells with noise and seeds), and overfits harmfully when its test accuracy is on average "
            f"{COST:g} points or more below that of its clean-label cells (the same backbone, n and seed "
            f"trained on clean labels), benignly when it is not")


def choose(found: pd.DataFrame) -> pd.Series:
    """The image backbone this evidence picks as Table 2's default: one that can test the claim (most flipped labels
    within reach); among those, the highest base accuracy; if none can, the one reaching the most."""
    images = found[found.kind == "image"]
    if images.empty:
        raise ParameterError("the backbone study ran no image backbone: give vit_depths")
    testing = images[images.tests_claim]
    pick = testing.base_acc.idxmax() if len(testing) else images.reach.idxmax()
    return images.loc[pick]


def study_metrics(found: pd.DataFrame, chosen: pd.Series) -> dict:
    """Flat metrics: per image backbone vit<L>_reach, _token, _fitted, _test_minus_base, _test_minus_clean (points
    against the clean-label cells), _base_acc (shares in %; vit<L>w<W>_… at another width than the family's), the
    count of backbones in each regime, of those not overfitting whose flipped labels free attention reaches enough
    to overfit (`FITTED` or more: `backbones_not_overfitting_reachable`), and the chosen backbone's depth and width."""
    out = {}
    for _, r in found[found.kind == "image"].iterrows():
        key = f"vit{r.layers}" + (f"w{r.width}" if r.width != WIDTH else "")
        out.update({f"{key}_reach": 100 * r.reach, f"{key}_token": 100 * r.token, f"{key}_fitted": 100 * r.fitted,
                    f"{key}_test_minus_base": r.test_minus_base, f"{key}_test_minus_clean": r.test_minus_clean,
                    f"{key}_base_acc": 100 * r.base_acc})
    images = found[found.kind == "image"]
    for name in (BENIGN, HARMFUL, NOT_OVERFITTING):
        out[f"backbones_{name.replace(' ', '_')}"] = float((images.regime == name).sum())
    out["backbones_not_overfitting_reachable"] = float(((images.regime == NOT_OVERFITTING)
                                                        & (images.reach >= FITTED)).sum())
    out["backbones"] = float(len(images))
    out["chosen_layers"], out["chosen_width"] = float(chosen.layers), float(chosen.width)
    return {k: float(v) for k, v in out.items() if v == v}
