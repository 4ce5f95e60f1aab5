"""Words built from numbers, shared by every page: a list as a reader says it, a signed number with a true minus
sign, a share ('none', 'all', '49%'), a count out of a total, a fitted slope's direction computed from the slope and
its standard error, and a name from code (a table's column, a regime, a data set) as a reader reads it.

A direction word for prose ('rises', 'falls', 'does not change measurably') is glued marked with the number it was
computed from (`marked`), so that `benign.textcheck`'s rule `direction` can read the word against its number."""

import math
import re
from decimal import ROUND_HALF_UP, Decimal

from . import thresholds


def and_list(parts: list[str], sep: str = ", ") -> str:
    """'a', 'a and b', 'a, b and c' (`sep` between the first ones: '; ' for names that hold a comma)."""
    parts = list(parts)
    return parts[0] if len(parts) == 1 else sep.join(parts[:-1]) + " and " + parts[-1]


def signed(x: float, fmt: str) -> str:
    """`x` formatted with `fmt`, with a true minus sign ('−0.06', not '-0.06') and no sign on a number that reads
    zero ('0.00', not '−0.00' or '+0.00': `minus`)."""
    return minus(format(x, fmt))


HYPHEN_NUMBER = re.compile(r"(?<![\w.\-–−])-(?=\d)")
SIGNED_ZERO = re.compile(r"(?<![\w.])[−+](0(?:\.0+)?)(?![\d.])")


def minus(text: str) -> str:
    """Numbers in `text` as prose and tables write them: a true minus sign ('-0.025' → '−0.025', Python's format
    writes the hyphen) and no sign on a zero ('+0.000', '−0.00' → '0.000', '0.00')."""
    return SIGNED_ZERO.sub(r"\1", HYPHEN_NUMBER.sub("−", text))


def percent(x: float, fmt: str = ".0%") -> str:
    """A share as a reader says it: 'none' for 0, 'all' for 1, else to `fmt`'s digits ('.0%': '49%'); a share that
    rounds to 0 % or 100 % without being it reads 'under 1%' or 'over 99%' (at `fmt`'s precision)."""
    if x == 0 or x == 1:
        return "none" if x == 0 else "all"
    digits = int(fmt[1:-1] or 0)
    step = 10 ** -(digits + 2)  # the smallest share `fmt` shows
    shown = f"{(Decimal(repr(float(x))) * 100).quantize(Decimal(1).scaleb(-digits), ROUND_HALF_UP)}%"  # a half up,
    # as a reader rounds the decimal they see (format's binary half-even made 12.5 % '12%' beside 87.5 % '88%')
    if float(shown.rstrip("%")) == 0:
        return f"under {format(step, fmt)}"
    if float(shown.rstrip("%")) == 100:
        return f"over {format(1 - step, fmt)}"
    return shown


def share_text(x: float) -> str:
    """A share glued for prose: `percent` to the tenth of a percent below 10 % ('2.5%', but '1%', not '1.0%'), else
    whole ('49%'); '—' for NaN."""
    if x != x:
        return "—"
    said = percent(x, ".1%" if x < 0.1 else ".0%")
    return said.replace(".0%", "%") if said[0].isdigit() else said


def trend(slope: float, se: float, rising: str = "rises", falling: str = "falls",
          level: str = "does not change measurably") -> str:
    """A fitted slope's direction as a plain word (a category to compare; prose glues `direction`): `rising` or
    `falling` when it lies more than `thresholds.SLOPE_SE` standard errors from zero, else `level`; 'cannot be fitted'
    when the slope is NaN (fewer than two distinct x)."""
    if math.isnan(slope):
        return "cannot be fitted"
    if math.isnan(se) or abs(slope) <= thresholds.SLOPE_SE.value * se:
        return level
    return rising if slope > 0 else falling


def marked(word: str, value: float, se: float | None = None) -> str:
    """`word` marked with the number it says the direction of, as Markdown with inline HTML: '<span
    class="benign-direction" data-value="-0.08" data-se="0.07">falls</span>'; a value with no standard error (a
    correlation's sign) has no `data-se`, one whose error is unknown (a slope through two points) `data-se="nan"`."""
    se_attr = "" if se is None else f' data-se="{float(se)!r}"'
    return f'<span class="benign-direction" data-value="{float(value)!r}"{se_attr}>{word}</span>'


MARK = re.compile(r'<span class="benign-direction"[^>]*>(.*?)</span>')


def plain(text: str) -> str:
    """`text` without the marks of `marked` (a record keeps the words, the page the marks)."""
    return MARK.sub(r"\1", text)


def direction(slope: float, se: float, rising: str = "rises", falling: str = "falls",
              level: str = "does not change measurably") -> str:
    """`trend`'s word for prose, marked with its slope and standard error (`marked`); 'cannot be fitted' (unmarked:
    no number) when the slope is NaN."""
    word = trend(slope, se, rising, falling, level)
    return word if math.isnan(slope) else marked(word, slope, se)


def slope_words(slope: float, se: float, rising: str = "rises", falling: str = "falls",
                level: str = "does not change measurably") -> str:
    """`direction` with its numbers, rounded to what the error supports (`plus_minus`): 'rises (slope 0.76 ± 0.05)',
    'grows (slope 8.8 ± 0.4)'; 'cannot be fitted (measured at one value only)'."""
    if math.isnan(slope):
        return "cannot be fitted (measured at one value only)"
    numbers = (f"slope {plus_minus(slope, se)}" if not math.isnan(se) else f"slope {signed(slope, '.2f')} from two "
               "points")
    return f"{direction(slope, se, rising, falling, level)} ({numbers})"


def spread_format(spread: float) -> str:
    """The format that rounds a number to its spread's first significant digit ('.1f' for a spread of 0.24, '.0f' for
    3.1); two decimals where the spread is NaN or zero."""
    if math.isnan(spread) or spread <= 0:
        return ".2f"
    return f".{max(0, -math.floor(math.log10(float(f'{spread:.0e}'))))}f"


def plus_minus(value: float, spread: float) -> str:
    """A measured number with its spread, both rounded to the spread's first significant digit (`spread_format`):
    '6.4 ± 0.2', '−0.1 ± 0.3', '12 ± 3'; the number alone where the spread is NaN or zero."""
    fmt = spread_format(spread)
    if math.isnan(spread) or spread <= 0:
        return signed(value, fmt)
    return f"{signed(value, fmt)} ± {spread:{fmt}}"


def count(n: int, one: str, many: str = "") -> str:
    """A count with its noun in the right number: '1 layer', '4 layers' (`many` defaults to `one` + 's')."""
    return f"{n} {one if n == 1 else many or one + 's'}"


def within_words(value: float, se: float, target: float, k: float) -> str:
    """Whether a fitted `value` (standard error `se`) matches `target` within `k` standard errors, as a clause:
    'within 2 standard errors of it', 'more than 2 standard errors from it', or 'no fit' (se NaN)."""
    if se != se or value != value:
        return "no fit"
    return (f"within {k:g} standard errors of it" if abs(value - target) <= k * se else
            f"more than {k:g} standard errors from it")


def decimals(value: float, threshold: float, digits: int) -> int:
    """The decimals to show `value` with beside a rule that compares it with `threshold`: `digits`, or more where
    `digits` would show it on the threshold, or past it, when it is not: 94.97 against 95 reads '94.97', never '95'
    (a share fitted), −4.97 against −5 reads '−4.97', never '−5.0' (a cost); 95.27 reads '95.3', not the
    threshold."""
    for d in range(digits, digits + 3):
        shown = float(f"{value:.{d}f}")
        if (shown >= threshold) == (value >= threshold) and (shown <= threshold) == (value <= threshold):
            return d
    return digits + 3


def estimate(value: float, se: float, n: int, unit: str, fmt: str = ".2f") -> str:
    """A fitted number as a table shows it, with its standard error and what it was fitted over:
    '0.25 ± 0.03 (5 rows)', '3.00 (2 rows, no spread)', '— (1 row)'; never 'nan', never '−0.00'."""
    over = count(n, unit)
    if math.isnan(value):
        return f"— ({over})"
    shown = signed(0.0 if float(format(value, fmt)) == 0 else value, fmt)
    return f"{shown} ({over}, no spread)" if math.isnan(se) else f"{shown} ± {format(se, fmt)} ({over})"


def span(low: str, high: str, to: str = " to ") -> str:
    """A range of two numbers already formatted as the page shows them: '0.80 to 0.95', or the one number when both
    ends read the same ('1.000', never '1.000 to 1.000')."""
    return low if low == high else f"{low}{to}{high}"


def span_of(values, said, to: str = "–") -> str:
    """The range of a series of numbers (NaN left out) as `said` writes each number: 'n/a' for none, one number where
    both ends read the same (`span`)."""
    values = values.dropna()
    return "n/a" if values.empty else span(said(values.min()), said(values.max()), to)


def sweep_said(table) -> str:
    """How a sweep's table (`benign.sweep.run`) was made, as a sentence: '1,521 runs in 39 chunks, all computed in
    this build, in 58.5 s', or '…, every one read from the cache'."""
    a = table.attrs
    runs = f"{len(table):,} {'run' if len(table) == 1 else 'runs'} in {count(a['chunks'], 'chunk')}"
    if a["computed_chunks"] == 0:
        return f"{runs}, every one read from the cache"
    done = ("all computed in this build" if a["computed_chunks"] == a["chunks"] else
            f"{a['computed_chunks']} computed in this build, the rest read from the cache")
    return f"{runs}, {done}, in {a['wall_s']:.1f} s"


def step_count(steps: float) -> str:
    """A number of training steps, or a step, as the book writes it, thousands separated: '1,000', '100,000'."""
    return f"{steps:,.0f}"


def setting(name: str, value) -> str:
    """A notebook's parameter value as a sentence says it: a grid `[from, to, step]` (a name ending in `_grid`) as
    'from 250 to 5000 in steps of 125', a pair of step sizes as '(0.01, 1)', any other list as '42, 314 and 2718',
    a flag as 'yes' or 'no', a number of steps (a name starting `num_steps`) as `step_count` writes it ('50,000'),
    any other number as it reads ('0.2', '1000')."""
    if name.startswith("num_steps"):
        return step_count(value)
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, (list, tuple)):
        shown = [setting("", v) for v in value]
        if name.endswith("_grid") and len(value) == 3:
            return f"from {shown[0]} to {shown[1]} in steps of {shown[2]}"
        return "(" + ", ".join(shown) + ")" if name.startswith("step_sizes") else and_list(shown) if shown else "none"
    return minus(f"{value:g}") if isinstance(value, float) else str(value)


class SettingsSaid(dict):
    """A notebook's recorded settings as `str.format` fills a sentence with them
    (`'{p[seeds]}'.format(p=SettingsSaid(...))`): each value as `setting` says it."""

    def __getitem__(self, name):
        return setting(name, super().__getitem__(name))


def share_words(count: int, total: int, one: str = "run", many: str = "runs") -> str:
    """A count out of a total as a reader says it: 'none of the 12 runs', 'neither run', 'no run' (of one), 'the
    only run', 'both runs', 'all 12 runs', '3 of the 12 runs'."""
    if count == 0:
        return {1: f"no {one}", 2: f"neither {one}"}.get(total, f"none of the {total} {many}")
    if count == total:
        return {1: f"the only {one}", 2: f"both {many}"}.get(total, f"all {total} {many}")
    return f"{count} of the {total} {many}"


NAMES = {  # a name from code as a page's reader reads it; any other identifier reads with spaces for underscores
    "noise_ratio": "η", "signal_norm": "‖μ‖", "rho": "ρ", "n_snr2": "n·SNR²", "train_acc": "train accuracy",
    "test_acc": "test accuracy", "train_loss": "train loss", "test_loss": "test loss",
    "regime_by_order": "regime by the theorem's order", "frak_ratio": "Eq. 9 ratio", "flipped_share": "labels flipped",
    "test_acc_step0": "test accuracy at step 0", "test_gain": "test accuracy gained",
    "attention_clean_relevant": "clean samples' attention on the relevant token",
    "attention_noisy_relevant": "noisy samples' attention on the relevant token",
    "clean_signal_attention": "clean inputs' attention on the signal",
    "noisy_signal_attention": "noisy inputs' attention on the signal",
    "test_signal_attention": "test inputs' attention on the signal", "train_W": "W trained",
    "clean_run": "the same run on clean labels", "clean_test_acc": "test accuracy on clean labels",
    "noise_cost": "cost of the flipped labels", "costly": "cost above the harm threshold",
    "dataset": "data set", "rotten_tomatoes": "Rotten Tomatoes", "rotten_tomatoes_3class": "Rotten Tomatoes (3 classes)",
    "mnist_5k": "MNIST digits", "fashion_mnist": "Fashion-MNIST", "mnist": "MNIST", "cifar10": "CIFAR-10",
    "stl10": "STL-10", "pneumoniamnist": "PneumoniaMNIST", "breastmnist": "BreastMNIST", "sst2": "SST-2",
    "agnews": "AG News", "trec": "TREC",
}
IDENTIFIER = re.compile(r"[a-z][a-z0-9]*(?:_[a-z0-9]+)+")


def reader_name(name) -> str:
    """A name from code as a reader reads it (`NAMES`; 'large_noise_seed43' → 'large noise, seed 43',
    'balanced_seed43_clean' → 'balanced, seed 43, clean labels'; any other snake_case name with spaces); anything
    else unchanged."""
    name = str(name)
    if name in NAMES:
        return NAMES[name]
    if not IDENTIFIER.fullmatch(name):
        return name
    base, seed, clean = re.fullmatch(r"(.*?)(?:_seed(\d+))?(_clean)?", name).groups()
    return (NAMES.get(base, base.replace("_", " ")) + (f", seed {seed}" if seed else "")
            + (", clean labels" if clean else ""))


SUPERSCRIPT = str.maketrans("0123456789−", "⁰¹²³⁴⁵⁶⁷⁸⁹⁻")


def power_of_ten(k: int) -> str:
    """10^k as prose writes it, with superscript digits: '10⁻¹²', '10³'."""
    return "10" + signed(k, "d").translate(SUPERSCRIPT)


def tiny(x: float, floor: float = 1e-12) -> str:
    """A number that may be vanishingly small, as prose says it (never in exponent notation): 'below 10⁻¹²' when
    0 < x < `floor` (a power of ten), 'above −10⁻¹²' when −`floor` < x < 0, '0' for 0, else to three significant
    digits in positional notation ('0.000153', '0.450', '−2.30')."""
    k = round(math.log10(floor))
    if not math.isclose(floor, 10.0 ** k):
        raise ValueError(f"floor = {floor!r} is not a power of ten")
    if x == 0:
        return "0"
    if abs(x) < floor:
        return f"below {power_of_ten(k)}" if x > 0 else f"above −{power_of_ten(k)}"
    x = float(f"{x:.3g}")  # rounded first: 0.9996 reads '1.00', not '1.000'
    digits = max(0, 2 - math.floor(math.log10(abs(x))))
    return signed(x, f".{digits}f")


def correlation_words(r: float, x_low: str, y_high: str, y_low: str) -> str:
    """A correlation's sign as the relation it states, computed from `r`, the sign marked with `r` (`marked`):
    'negative: the smaller d, the later' (x_low, y_high), 'positive: the smaller d, the earlier' (x_low, y_low),
    'zero', or 'not measured' for NaN."""
    if math.isnan(r):
        return "not measured: too few values"
    if r == 0:
        return marked("zero", r)
    return f"{marked('negative', r)}: {x_low}, {y_high}" if r < 0 else f"{marked('positive', r)}: {x_low}, {y_low}"
