"""The backbone study read for its page: per backbone, whether what attention can reach keeps it from overfitting,
its regime by the book's rule for real data, what the flipped labels cost it against its controls, the text rows of
Table 2 beside it, and the tables and the axis the page shows them in (`benign.realdata.study` measures them)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..words import and_list, count, reader_name, share_words, signed, span_of
from .findings import cost_points, fitted_percent, share_said
from .study import (BENIGN, COST, FITTED, HARMFUL, NOT_OVERFITTING, WIDTH, choose, noise_costs, placed, regimes,
                    rule_words, study_metrics, test_minus_clean)


@dataclass(frozen=True)
class StudyReading:
    """What the backbone-study page reads off its runs: the runs at its own n (`runs`, `sizes`) and Table 2's text
    runs at every n the cache holds (`text_runs`), per backbone and n on the paper's axes (`points`: `placed`), per
    backbone its regime (`found`: `regimes`) and what the noise costs it against its controls (`costs`:
    `noise_costs`), the backbone this evidence picks (`chosen`: `choose`) and Table 2's default depth beside it.
    `metrics()` gives every number and sentence the page saves, under the keys it glues and the ledger reads."""

    runs: pd.DataFrame
    text_runs: pd.DataFrame
    sizes: list[int]
    points: pd.DataFrame
    found: pd.DataFrame
    costs: pd.DataFrame
    chosen: pd.Series
    default_layers: int

    def choice_words(self) -> str:
        """The chosen backbone, and whether it is Table 2's default (`default_layers` at the family's width)."""
        chosen = self.chosen
        return (f"this evidence picks the {chosen.backbone_label}" +
                (", which is Table 2's default" if (chosen.layers, chosen.width) == (self.default_layers, WIDTH) else
                 f", not Table 2's default of {self.default_layers} layers at width {WIDTH}"))

    def metrics(self) -> dict:
        """The record's numbers, then the page's words."""
        found = self.found
        return {**study_metrics(found, self.chosen), **text_regime_metrics(found),  # the text rows listed beside
                "default_layers": float(self.default_layers), **regime_words(found),
                **cost_words(self.costs, found), "text_beside": text_beside_words(self.text_runs, self.sizes),
                "margin_words": margin_words(self.runs, found), "choice_words": self.choice_words()}


def read_study(every: pd.DataFrame, sizes: list[int], default_layers: int) -> StudyReading:
    """The page's reading of the study's runs (`every`: `study.study_runs`, its text rows at Table 2's n too) at its
    n (`sizes`), beside Table 2's default depth (`default_layers`)."""
    runs = every[every.n.isin(sizes)]
    points = placed(runs)
    found = regimes(points)
    return StudyReading(runs, every[every.kind == "text"], list(sizes), points, found, noise_costs(runs),
                        choose(found), default_layers)


def dodge_words(shift: float, crowded: bool) -> str:
    """How far the figure moved points sideways so that none hides another (`plots.study_points`' shift), and where
    more points crowd than that can set apart (`crowded`), that some still overlap."""
    moved = f"by at most {shift:.2f} of a share" if shift else "none on this run"
    return moved + ("; near a share of one, more points crowd than that shift can set apart, and some still overlap "
                    "there: the table of every point, further down, gives each value" if crowded else "")


def regime_words(found: pd.DataFrame) -> dict[str, str]:
    """Glued words: the rule (`rule_words`), per regime which backbones (or "none"), one sentence per backbone (its
    cost against the clean cell as `cost_points` writes it), what reach says of the backbones that do not overfit
    (`reach_words`) and of width (`width_words`)."""
    words = {"rule_words": rule_words()}
    for name in (BENIGN, HARMFUL, NOT_OVERFITTING):
        names = found[found.regime == name].backbone_label.tolist()
        words[f"regime_{name.replace(' ', '_')}"] = and_list(names, "; ") if names else "none"
    lines = []
    for _, r in found.iterrows():
        lines.append(f"{r.backbone_label}: {_share(r.reach)} of the flipped labels within reach, {_share(r.fitted)} "
                     f"fitted, test minus base {_points(r.test_minus_base)} points and minus its clean cell "
                     f"{cost_points(r.test_minus_clean)} points ({r.regime})")
    words["backbone_lines"] = "; ".join(lines)
    words["reach_words"] = reach_words(found)
    words["width_words"] = width_words(found)
    return words


def margin_words(study_runs: pd.DataFrame, found: pd.DataFrame) -> str:
    """Which verdicts of the cost line lie within their seeds' spread: for each backbone that overfits (benign or
    harmful by its mean cost against the clean cell, `found`), the cost per seed (mean over its n, from the runs
    `study_runs`: `study.test_minus_clean`); where the line −`COST` lies within that span, the margin and the span,
    said plainly: the verdict is the fixed rule's, and other seeds could turn it."""
    cost = study_runs.assign(cost=test_minus_clean(study_runs)).dropna(subset=["cost"])
    per_seed = cost.groupby(["backbone_label", "seed"], sort=False).cost.mean()
    close = []
    for _, r in found[found.regime.isin([BENIGN, HARMFUL])].iterrows():
        seeds = per_seed.get(r.backbone_label, pd.Series(dtype=float))
        if len(seeds) > 1 and seeds.min() <= -COST <= seeds.max():
            margin = abs(r.test_minus_clean + COST)  # said no finer than the tenth of a point a cost is read to
            by = "by under a tenth of a point" if margin < 0.1 else f"by {margin:.1f} points"
            close.append(f"{r.backbone_label} reads {r.regime} {by} "
                         f"({cost_points(r.test_minus_clean)} against {signed(-COST, 'g')}), a margin within its "
                         f"seeds' spread: per seed it averages {span_of(seeds, cost_points, ' to ')} points, on both "
                         "sides of the line")
    if not close:
        return "no verdict of the cost line lies within its seeds' spread of the line"
    return "; ".join(close) + (": the verdict is the fixed rule's on the mean over seeds, and other seeds could "
                               "turn it")


def text_regime_metrics(found: pd.DataFrame) -> dict:
    """Table 2's text rows as the page reads them beside the image backbones (`found`, one row per backbone or text
    row): text_rows, and per regime text_rows_<regime>, counts the claims ledger adds to the image backbones'."""
    text = found[found.kind == "text"]
    return {"text_rows": float(len(text)),
            **{f"text_rows_{name.replace(' ', '_')}": float((text.regime == name).sum())
               for name in (BENIGN, HARMFUL, NOT_OVERFITTING)}}


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
        parts.append(f"on {and_list(barred.backbone_label, '; ')}, free attention itself reaches only "
                     f"{and_list([_share(v) for v in barred.reach])} of the flipped labels, short of the "
                     f"{_share(FITTED)} that overfitting needs: no query and key could overfit them, so the backbone, "
                     "not the optimizer or the schedule, keeps these from overfitting")
    if len(open_):
        parts.append(f"on {and_list(open_.backbone_label, '; ')}, free attention reaches "
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
    said = (f"the backbones that do not overfit ({and_list(quiet.backbone_label, '; ')}) fit "
            f"{span_of(quiet.flipped_fitted, share)}% of the flipped labels and {span_of(quiet.clean_fitted, share)}% "
            f"of the clean ones beside them, and the noise moves their test accuracy by "
            f"{span_of(quiet.noise, cost_points, ' to ')} points against clean runs; ")
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
            f"where the noise is overfitted {how} ({and_list(rows.backbone_label, '; ')}), phase 2 on clean labels moves "
            f"the test accuracy by {span_of(rows.clean, _points, ' to ')} points against the base accuracy and the "
            f"flipped labels by {span_of(rows.noise, cost_points, ' to ')} points more")


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
    said = (f"on {and_list(costly.backbone_label, '; ')}, where the control trained longer and the noise cost accuracy at "
            f"n = {costly.control_n.iloc[0]:.0f}, clean runs trained every epoch ")
    if lost.max() <= 0:
        return said + ("lose nothing against those stopped once fitted: the loss is the noise's, not the longer "
                       "training's")
    worst = (lost / noise).idxmax()
    part = float(lost[worst] / noise[worst])
    several = len(costly) > 1
    rest = "; the others lose nothing" if several and int((lost == 0).sum()) == len(costly) - 1 else ""
    return said + (f"lose {'up to ' if several else ''}{100 * part:.0f}% of what the noise costs, against those "
                   f"stopped once fitted ({costly.backbone_label[worst] + ': ' if several else ''}"
                   f"{lost[worst]:.1f} of {noise[worst]:.1f} points{rest}): " +
                   ("most of the loss is the noise's, not the longer training's" if part < 1 / 3 else
                    "most of the loss is the longer training's, not the noise's" if part > 2 / 3 else
                    "the longer training and the noise share it"))


def _percent(v, digits: int = 0) -> str:  # in a table
    return "—" if v != v else f"{100 * v:.{digits}f} %"


def _fitted(v) -> str:  # in a table: whole, or to as many decimals as keep it on its side of FITTED (`decimals`):
    return "—" if v != v else f"{fitted_percent(v)} %"  # 94.97 % never reads as the 95 % it falls short of


_share = share_said  # in prose: 'none', 'all', '63%'; as many decimals near FITTED as `_fitted`


def _points(v) -> str:
    return "—" if v != v else signed(v, "+.1f")


def regime_table(found: pd.DataFrame) -> pd.DataFrame:
    """`regimes` as the page shows it: shares in %, test − base (mean, and its worst cell) and test − clean cell in
    signed points."""
    return pd.DataFrame({
        "backbone": found.backbone_label, "layers": found.layers, "width": found.width,
        "flipped labels within reach": found.reach.map(_percent), "given by one token": found.token.map(_percent),
        "fitted by phase 2": found.fitted.map(_fitted), "test − base (points)": found.test_minus_base.map(_points),
        "test − base, worst cell": found.worst.map(_points),
        "test − clean cell (points)": found.test_minus_clean.map(cost_points),
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
        "flipped labels fitted": costs.flipped_fitted.map(_fitted)})  # as the regime table shows it
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
