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

import numpy as np
import pandas as pd

from .. import thresholds
from ..checks import ParameterError
from ..device import cpu_threads, stop_workers, worker_processes
from ..words import and_list, count, percent, reader_name, share_words, signed, span
from . import image_backbone, runs
from .image_backbone import NAME as IMAGE_BACKBONE
from .report import REACH_TESTS_CLAIM, cost_points, decimals, fitted_percent, summarize

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
    return (f"a backbone overfits when phase 2 fits at least {100 * FITTED:.0f} % of its flipped labels (means over "
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


def listing(names) -> str:
    """Names for a sentence: "A", "A and B", "A; B and C" (a backbone's name holds a comma)."""
    names = list(names)
    return " and ".join(names) if len(names) < 3 else "; ".join(names[:-1]) + " and " + names[-1]


def regime_words(found: pd.DataFrame) -> dict[str, str]:
    """Glued words: the rule (`rule_words`), per regime which backbones (or "none"), one sentence per backbone (its
    cost against the clean cell as `cost_points` writes it), what reach says of the backbones that do not overfit
    (`reach_words`) and of width (`width_words`)."""
    words = {"rule_words": rule_words()}
    for name in (BENIGN, HARMFUL, NOT_OVERFITTING):
        names = found[found.regime == name].backbone_label.tolist()
        words[f"regime_{name.replace(' ', '_')}"] = listing(names) if names else "none"
    lines = []
    for _, r in found.iterrows():
        lines.append(f"{r.backbone_label}: {_share(r.reach)} of the flipped labels within reach, {_share(r.fitted)} "
                     f"fitted, test minus base {_points(r.test_minus_base)} points and minus its clean cell "
                     f"{cost_points(r.test_minus_clean)} points ({r.regime})")
    words["backbone_lines"] = "; ".join(lines)
    words["reach_words"] = reach_words(found)
    words["width_words"] = width_words(found)
    return words


def reach_words(found: pd.DataFrame) -> str:
    """What reach says of the backbones that do not overfit: where free attention itself fits fewer than `FITTED` of
    the flipped labels, no query and key could overfit them, and the backbone decides; where it reaches `FITTED` or
    more, phase 2 could have overfitted and did not in its schedule (its most epochs), and reach does not decide."""
    quiet = found[found.regime == NOT_OVERFITTING]
    if quiet.empty:
        return "every backbone fits its flipped labels, so reach leaves none of them unfitted"
    barred, open_ = quiet[quiet.reach < FITTED], quiet[quiet.reach >= FITTED]
    parts = []
    if len(barred):
        parts.append(f"on {listing(barred.backbone_label)}, free attention itself reaches only "
                     f"{and_list([_share(v) for v in barred.reach])} of the flipped labels, short of the "
                     f"{_share(FITTED)} that overfitting needs: no query and key could overfit them, so the backbone, "
                     "not the optimizer or the schedule, keeps these from overfitting")
    if len(open_):
        parts.append(f"on {listing(open_.backbone_label)}, free attention reaches "
                     f"{and_list([_share(v) for v in open_.reach])} of them, enough to overfit, yet phase 2 fits "
                     f"{and_list([_share(v) for v in open_.fitted])} in runs of up to "
                     f"{count(int(open_.epochs.max()), 'epoch')}: there reach does not decide, what phase 2's query "
                     "and key learn in the schedule does")
    return "; ".join(parts)


def text_beside_words(text: pd.DataFrame, sizes) -> str:
    """The text rows beside the image backbones, against Table 2: read here at the study's n (`sizes`); at the other
    n of Table 2's runs (`text`: Table 2's text runs at every n the cache holds), test accuracy minus the clean
    cell's per row; over all of them, each row's mean and its regime by this page's rule, and the mean over the rows
    and every n (what Table 2's ledger row reads)."""
    if text.empty:
        return "this build holds none of them"
    points = placed(text)
    extra = sorted(set(points.n) - set(sizes))
    if not extra:
        return "at every n of Table 2's runs, the n of the image backbones"
    name = dict(zip(text.backbone_label, text.dataset.map(reader_name)))

    def costs(rows) -> str:
        return and_list([f"{cost_points(r.test_minus_clean)} points in {name[r.backbone_label]}"
                         for r in rows.itertuples()])

    every = regimes(points)
    said = (f"{every.regime.iloc[0]} by this rule" if every.regime.nunique() == 1 else
            f"by this rule {and_list(list(every.regime))}, in that order")
    return (f"at n = {and_list([str(n) for n in sorted(sizes)])}, the n of the image backbones; Table 2 also runs "
            f"them at n = {and_list([str(n) for n in extra])}, where test accuracy minus "
            f"the clean cell's is {costs(points[points.n.isin(extra)])}. Over every n of Table 2 it averages "
            f"{costs(every)}: {said}; over the rows together, as Table 2's ledger row reads them, "
            f"{cost_points(points.test_minus_clean.mean())} points")


def width_words(found: pd.DataFrame) -> str:
    """Each backbone of another width than the family's against the family's backbone of its depth."""
    images = found[found.kind == "image"]
    default = images[images.width == WIDTH].set_index("layers")
    said = []
    for _, r in images[images.width != WIDTH].iterrows():
        line = (f"at {count(r.layers, 'layer')} and width {r.width}, {_share(r.reach)} of the flipped labels are "
                f"within reach and phase 2 fits {_share(r.fitted)} of them ({r.regime}, test − clean cell "
                f"{cost_points(r.test_minus_clean)} points)")
        if r.layers in default.index:
            d = default.loc[r.layers]
            line += (f", against {_share(d.reach)} and {_share(d.fitted)} at width {WIDTH} ({d.regime}, "
                     f"{cost_points(d.test_minus_clean)} points)")
        said.append(line)
    if not said:
        return (f"this build made every backbone at width {WIDTH}, so it does not measure width (the paper profile "
                "adds the deepest at another width)")
    return "width is another: " + "; ".join(said)


def _range(values, said, to: str = "–") -> str:
    """The range of `values` (NaN left out) as `said` writes each end, one number where both read the same."""
    values = values.dropna()
    return "n/a" if values.empty else span(said(values.min()), said(values.max()), to)


def cost_words(costs: pd.DataFrame, found: pd.DataFrame) -> dict[str, str]:
    """Glued words on `noise_costs`, true of any results: what the flipped labels do to the backbones that do not
    overfit (`unfitted_cost`: against clean runs, and how many lose `COST` points or more, which the paper's
    not-overfitting region does not); how much a clean run trained as long as the noisy ones loses beside what the
    noise costs at the control's n (`control_reading`); and how the drop below the base accuracy splits between
    phase 2 on clean labels and the noise for the backbones that overfit harmfully (`harmful_split`) and benignly
    (`benign_split`)."""
    regime_of = dict(zip(found.backbone_label, found.regime))
    of = lambda name: costs[costs.backbone_label.map(regime_of) == name]  # noqa: E731
    quiet = of(NOT_OVERFITTING)
    return {"unfitted_cost": unfitted_cost(quiet), "control_reading": control_reading(quiet),
            "harmful_split": _split(of(HARMFUL), "harmfully"), "benign_split": _split(of(BENIGN), "benignly")}


def unfitted_cost(quiet: pd.DataFrame) -> str:
    """`noise_costs` of the backbones that do not overfit, in words: the shares of flipped and clean labels they
    fit, what the noise costs them against clean runs, and how many lose `COST` points or more — what the rule calls
    harmful where the noise is fitted, and what the paper's not-overfitting region, which keeps its test accuracy,
    does not lose."""
    if quiet.empty:
        return "no backbone leaves most of the flipped labels unfitted"
    share = lambda v: f"{100 * v:.0f}"  # noqa: E731
    lost = int((quiet.noise <= -COST).sum())
    said = (f"the backbones that do not overfit ({listing(quiet.backbone_label)}) fit "
            f"{_range(quiet.flipped_fitted, share)} % of the flipped labels and {_range(quiet.clean_fitted, share)} % "
            f"of the clean ones beside them, and the noise moves their test accuracy by "
            f"{_range(quiet.noise, cost_points, ' to ')} points against clean runs; ")
    if not lost:
        return said + (f"none of them loses {COST:g} points: like the paper's not-overfitting region, they keep their "
                       "test accuracy")
    return said + (f"{share_words(lost, len(quiet), 'backbone', 'backbones')} {'loses' if lost == 1 else 'lose'} "
                   f"{COST:g} points or more, what the "
                   "rule calls harmful where the noise is fitted: unlike the paper's not-overfitting region, "
                   + ("it does not keep its" if len(quiet) == 1 else
                      f"{'they' if lost == len(quiet) else 'those'} do not keep their") + " test accuracy")


def _split(rows: pd.DataFrame, how: str) -> str:
    return (f"no backbone overfits {how}" if rows.empty else
            f"where the noise is overfitted {how} ({listing(rows.backbone_label)}), phase 2 on clean labels moves "
            f"the test accuracy by {_range(rows.clean, _points, ' to ')} points against the base accuracy and the "
            f"flipped labels by {_range(rows.noise, cost_points, ' to ')} points more")


def control_reading(costs: pd.DataFrame) -> str:
    """What the control shows for the backbones of `costs` (the page gives those that do not overfit, whose runs
    with noise train longer than their clean ones), backbone by backbone: what a clean run trained every epoch loses
    against one stopped once fitted, beside what the noise costs at the control's n (stopped clean runs against
    noisy ones); the largest such part decides whose the loss is."""
    ran = costs[costs.whole.notna()]
    longer = ran[ran.whole_epochs > ran.stopped_epochs]  # the control trained longer than the stopped clean runs
    if ran.empty:
        return "no backbone that leaves the noise unfitted ran the control"
    if longer.empty:
        return ("the clean runs trained every epoch already (this protocol does not stop them earlier), so the "
                "control has no longer training to separate")
    costly = longer[longer.noisy < longer.stopped]
    if costly.empty:
        return (f"at n = {ran.control_n.iloc[0]:.0f} the noise costs no test accuracy on the backbones the control "
                f"can test, so there is nothing to split")
    lost = (costly.stopped - costly.whole).clip(lower=0)  # what training every epoch costs a clean run (a gain: 0)
    noise = costly.stopped - costly.noisy
    said = (f"on {listing(costly.backbone_label)}, where the control trained longer and the noise cost accuracy at "
            f"n = {costly.control_n.iloc[0]:.0f}, clean runs trained every epoch ")
    if lost.max() <= 0:
        return said + ("lose nothing against those stopped once fitted: the loss is the noise's, not the longer "
                       "training's")
    worst = (lost / noise).idxmax()
    part = float(lost[worst] / noise[worst])
    several = len(costly) > 1
    rest = "; the others lose nothing" if several and int((lost == 0).sum()) == len(costly) - 1 else ""
    return said + (f"lose {'up to ' if several else ''}{100 * part:.0f} % of what the noise costs, against those "
                   f"stopped once fitted ({costly.backbone_label[worst] + ': ' if several else ''}"
                   f"{lost[worst]:.1f} of {noise[worst]:.1f} points{rest}): " +
                   ("most of the loss is the noise's, not the longer training's" if part < 1 / 3 else
                    "most of the loss is the longer training's, not the noise's" if part > 2 / 3 else
                    "the longer training and the noise share it"))


def _percent(v, digits: int = 0) -> str:  # in a table
    return "—" if v != v else f"{100 * v:.{digits}f} %"


def _fitted(v) -> str:  # in a table: whole, or to as many decimals as keep it on its side of FITTED (`decimals`):
    return "—" if v != v else f"{fitted_percent(v)} %"  # 94.97 % never reads as the 95 % it falls short of


def _share(v) -> str:  # in prose: 'none', 'all', '63%'; as many decimals near FITTED as `_fitted`
    return "an unmeasured share" if v != v else percent(v, f".{decimals(100 * v, 100 * FITTED, 0)}%")


def _points(v) -> str:
    return "—" if v != v else signed(v, "+.1f")


def regime_table(found: pd.DataFrame) -> pd.DataFrame:
    """`regimes` as the page shows it: shares in %, test − base and test − clean cell in signed points."""
    return pd.DataFrame({
        "backbone": found.backbone_label, "layers": found.layers, "width": found.width,
        "flipped labels within reach": found.reach.map(_percent), "given by one token": found.token.map(_percent),
        "fitted by phase 2": found.fitted.map(_fitted), "test − base (points)": found.test_minus_base.map(_points),
        "worst cell": found.worst.map(_points), "test − clean cell (points)": found.test_minus_clean.map(cost_points),
        "base accuracy": found.base_acc.map(lambda v: _percent(v, 1)),
        "regime": found.regime, "can test the claim": found.tests_claim})


def points_table(points: pd.DataFrame) -> pd.DataFrame:
    """`placed` as the page shows it: one row per backbone and n."""
    return pd.DataFrame({
        "backbone": points.backbone_label, "n": points.n, "flipped labels within reach": points.reach.map(_percent),
        "given by one token": points.token.map(_percent), "fitted by phase 2": points.fitted.map(_fitted),
        "test accuracy": points.test_acc.map(lambda v: _percent(v, 1)),
        "base accuracy": points.base_acc.map(lambda v: _percent(v, 1)),
        "test − base (points)": points.test_minus_base.map(_points),
        "test − clean cell (points)": points.test_minus_clean.map(cost_points), "seeds": points.seeds})


def cost_tables(costs: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """`noise_costs` as the page shows it: the split of the drop, and the control at its n (test − base, after
    how many epochs on average)."""
    split = pd.DataFrame({
        "backbone": costs.backbone_label, "clean labels: test − base": costs.clean.map(_points),
        "the noise on top: test with it − without": costs.noise.map(cost_points),
        "clean labels fitted, with noise": costs.clean_fitted.map(_percent),
        "flipped labels fitted": costs.flipped_fitted.map(_percent)})
    at = lambda value, epochs: "—" if value != value else f"{_points(value)} (epoch {epochs:.0f})"
    control = pd.DataFrame({
        "backbone": costs.backbone_label,
        "clean, stopped once fitted": [at(v, e) for v, e in zip(costs.stopped, costs.stopped_epochs)],
        "clean, every epoch (the control)": [at(v, e) for v, e in zip(costs.whole, costs.whole_epochs)],
        "with noise": [at(v, e) for v, e in zip(costs.noisy, costs.noisy_epochs)]})
    return split, control


def axis_limits(points: pd.DataFrame) -> tuple[float, float]:
    """The y-axis span of the picture, with room around the points, their clean cells and the harmful levels below
    those (points of test accuracy minus base)."""
    y, clean = points.test_minus_base.to_numpy(dtype=float), points.clean_minus_base.to_numpy(dtype=float)
    lo, hi = np.nanmin(np.concatenate([y, clean - COST])), np.nanmax(np.concatenate([y, clean, [0.0]]))
    return float(lo) - 3, float(hi) + 3
