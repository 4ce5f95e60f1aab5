"""Parameter rules shared by the package, the notebooks and the CLI.

One rule per parameter name; a name ending in ``_<setting>`` (``d_balanced``) follows the rule of its stem (``d``).
A broken rule raises :class:`ParameterError` whose message is one line: what is wrong and what is allowed.
An argument of the wrong kind (one Run where a list of runs goes, a string where a flag goes, an unknown keyword)
raises :class:`ParameterTypeError`, which is both: a TypeError for a user of the API, a ParameterError (a one-line
error, exit code 2) for the command line. `keywords` makes a public function refuse unknown keywords that way.
"""

from __future__ import annotations

import ast
import functools
import inspect
import math
import numbers
import reprlib
from collections.abc import Iterable, Mapping


class ParameterError(ValueError):
    """A parameter value outside what the model, the data or a notebook allows."""


class ParameterTypeError(ParameterError, TypeError):
    """An argument of the wrong kind: what was given and what is wanted, in one line."""


def _is_int(x) -> bool:
    return isinstance(x, numbers.Integral) and not isinstance(x, bool)


def _is_real(x) -> bool:
    return isinstance(x, numbers.Real) and not isinstance(x, bool) and math.isfinite(float(x))


def _int_at_least(lo):
    return (lambda x: _is_int(x) and x >= lo), f"an integer >= {lo}"


def _real(lo, hi=None, lo_open=False, hi_open=False):
    def ok(x):
        if not _is_real(x):
            return False
        above = x > lo if lo_open else x >= lo
        below = True if hi is None else (x < hi if hi_open else x <= hi)
        return above and below

    left = "(" if lo_open else "["
    right = "inf)" if hi is None else (f"{hi})" if hi_open else f"{hi}]")
    return ok, f"a number in {left}{lo}, {right}"


DEVICES = ("auto", "cpu", "cuda", "mps")
DTYPES = ("float32", "float64")

RULES = {
    "n": _int_at_least(2),
    "n_test": _int_at_least(1),
    "outcome_draws": _int_at_least(1),
    "n_relevant": _int_at_least(1),
    "n_weak": _int_at_least(0),
    "T": _int_at_least(3),
    "d": _int_at_least(3),
    "seed": _int_at_least(0),
    "replicates": _int_at_least(1),
    "test_seed": _int_at_least(0),
    "num_steps": _int_at_least(1),
    "log_every": _int_at_least(1),
    "noise_ratio": _real(0.0, 1.0, hi_open=True),
    "learning_rate": _real(0.0, lo_open=True),
    "signal_norm": _real(0.0, lo_open=True),
    "rho": _real(0.0),
    "sigma": _real(0.0, lo_open=True),
    "c": _real(0.0),
    "device": ((lambda x: isinstance(x, str) and (x in DEVICES or x.startswith("cuda:"))),
               "one of auto, cpu, cuda, cuda:N, mps"),
    "dtype": ((lambda x: x in DTYPES), "float32 or float64"),
    "W_init": ((lambda x: x in ("kaiming", "identity")), "kaiming or identity"),
    "train_W": ((lambda x: isinstance(x, bool)), "True or False"),
    "progress": ((lambda x: isinstance(x, bool)), "True or False"),
    "authors_test_seed": ((lambda x: isinstance(x, bool)), "True or False"),
    "authors_code": ((lambda x: isinstance(x, bool)), "True or False"),  # also run the authors' script (benign.authors)
    "authors_stream": ((lambda x: x in ("final", "january")), "final or january"),  # their data stream's version
    "authors_max_d": _int_at_least(0),  # run the authors' main.py (cost ∝ d²) only for settings with d up to this
    "authors_grid_every": _int_at_least(1),  # run the authors' script at every k-th grid value of each axis
    "label_noise": ((lambda x: x in ("deterministic", "bernoulli")), "deterministic or bernoulli"),
    "out_dir": ((lambda x: isinstance(x, str)), "a folder path (empty: results/<notebook>/<profile>)"),
    "use_cache": ((lambda x: isinstance(x, bool)), "True or False"),
    "test_threshold": _real(0.0, 1.0),  # test accuracy that separates benign from harmful in an observed regime
    "signal_norm_values": ((lambda x: isinstance(x, list) and len(x) > 0 and all(_is_real(v) and v > 0 for v in x)),
                           "a non-empty list of positive numbers"),
    # real-data fine-tuning (Table 2, Figures 8/9)
    "datasets": ((lambda x: isinstance(x, list) and len(x) > 0 and all(isinstance(v, str) and v for v in x)
                  and len(set(x)) == len(x)),
                 "a non-empty list of distinct data set names or folders, e.g. [rotten_tomatoes, mnist_5k]"),
    "text_backbone": ((lambda x: isinstance(x, str) and x != ""), "a backbone name, hub id or local folder"),
    "image_backbone": ((lambda x: isinstance(x, str) and x != ""), "a backbone name, hub id or local folder"),
    "noise_ratios": ((lambda x: isinstance(x, list) and len(x) > 0 and all(_is_real(v) and 0 <= v < 1 for v in x)
                      and len(set(x)) == len(x)), "a non-empty list of distinct numbers in [0, 1)"),
    "sample_sizes": ((lambda x: isinstance(x, list) and len(x) > 0 and all(_is_int(v) and v >= 1 for v in x)
                      and len(set(x)) == len(x)), "a non-empty list of distinct integers >= 1"),
    "seeds": ((lambda x: isinstance(x, list) and len(x) > 0 and all(_is_int(v) and v >= 0 for v in x)
               and len(set(x)) == len(x)), "a non-empty list of distinct integers >= 0"),
    "num_epochs": _int_at_least(1),
    "max_epochs": _int_at_least(0),  # 0: num_epochs
    "stop_when_fitted": ((lambda x: isinstance(x, bool)), "True or False"),
    "pretrain_num_epochs": _int_at_least(1),
    "pretrain_size": _int_at_least(0),
    "max_test": _int_at_least(0),
    "batch_size": _int_at_least(1),
    "optimizer": ((lambda x: x in ("adamw", "sgd")), "adamw or sgd"),
    "add_special_tokens": ((lambda x: isinstance(x, bool)), "True or False"),
    "vit_pretrain_epochs": _int_at_least(1),
    "vit_layers": ((lambda x: _is_int(x) and 1 <= x <= 12), "an integer in [1, 12] (the image backbone's depth)"),
    "vit_depths": ((lambda x: isinstance(x, list) and len(x) > 0 and all(_is_int(v) and 1 <= v <= 12 for v in x)),
                   "a non-empty list of integers in [1, 12] (image backbones' depths)"),
    "vit_widths": ((lambda x: isinstance(x, list) and all(_is_int(v) and 8 <= v <= 512 and v % 4 == 0 for v in x)),
                   "a list of multiples of 4 (the heads) in [8, 512] (widths of further image backbones)"),
    "vit_pretrain_samples": ((lambda x: _is_int(x) and 10 <= x <= 2000), "an integer in [10, 2000] (the MNIST "
                             "digits kept for pre-training the image backbone)"),
}


GRID_RULE = ((lambda x: isinstance(x, list) and len(x) == 3 and all(_is_real(v) for v in x)
              and x[0] <= x[1] and x[2] > 0), "[start, stop, step] with start <= stop and step > 0")


def rule_for(name: str):
    """The (predicate, description) pair governing `name`, or None if the name has no rule."""
    if name in RULES:
        return RULES[name]
    if name.endswith("_grid"):
        return GRID_RULE
    stem = name.rsplit("_", 1)[0]
    while stem:
        if stem in RULES:
            return RULES[stem]
        if "_" not in stem:
            return None
        stem = stem.rsplit("_", 1)[0]
    return None


def check(name: str, value):
    """Return `value` if it satisfies the rule for `name`; raise ParameterError otherwise."""
    rule = rule_for(name)
    if rule is not None and not rule[0](value):
        raise ParameterError(f"{name} = {value!r} is not allowed: {name} must be {rule[1]}")
    return value


def check_all(**params):
    """Check every keyword argument; return them as a dict."""
    for name, value in params.items():
        check(name, value)
    return params


# Paper 2 (Magen et al.): per-step step sizes β and the n values of the SNR map (its flip rate is noise_ratio, its
# signal norm ρ is signal_norm: one name per concept across both papers).
def _list_of(rule):
    ok, description = rule
    return (lambda x: isinstance(x, list) and len(x) > 0 and all(ok(e) for e in x)), \
        f"a non-empty list, each {description}"


RULES.update({
    "step_sizes": _list_of(_real(0.0, lo_open=True)),  # β₁, β₂, … one step size per GD step
    "step_size_factors": _list_of(_real(0.0, lo_open=True)),  # β_t = c_t·n/d on the SNR map
    "n_values": _list_of(_int_at_least(2)),
    "num_seeds": _int_at_least(1),
    "min_test_acc": _real(0.0, 1.0),
})

# The one-layer encoder (paper 1's appendix, Figures 6 and 7).
RULES.update({
    "hidden": _int_at_least(1),  # MLP hidden size
    "skip": ((lambda x: isinstance(x, bool)), "True or False"),  # residual connections
    "scale": _int_at_least(1),  # d and the MLP width divided by this, ‖μ‖ by its fourth root (CPU book profiles)
})
RULES["cpu_threads"] = _int_at_least(0)  # torch's CPU threads (0: $BENIGN_CPU_THREADS, else torch's default)
RULES["processes"] = _int_at_least(1)  # worker processes side by side (the real-data rows)

# The theorem's clock (benign.clock, notebook theory_clock): event thresholds and the long-run mode.
RULES.update({
    "delta": _real(0.0, 1.0, lo_open=True, hi_open=True),  # δ: test error below δ
    "epsilon": _real(0.0, lo_open=True),  # ε: training loss below ε
    "history_points": _int_at_least(2),  # log-spaced history steps
    "block": _int_at_least(1),  # steps per block of the long-run mode (1: the test error evaluated at every step)
    "learning_rate_factors": _list_of(_real(0.0, lo_open=True)),  # α = factor · n / d
    "d_values": _list_of(_int_at_least(3)),
    "n_snr2_values": _list_of(_real(0.0, lo_open=True)),  # n·SNR²
    "attention_level": _real(0.0, 1.0, lo_open=True, hi_open=True),  # mean test attention on the relevant token
    # steps at which Figure 5's map is drawn from the clock's events (benign.regimes)
    "snapshot_steps": ((lambda x: isinstance(x, list) and len(x) > 0 and all(_is_int(v) and v >= 0 for v in x)
                        and len(set(x)) == len(x)), "a non-empty list of distinct integers >= 0"),
})

# Names the project used before: a notebook parameter given by its old name is a one-line error naming the new one.
RENAMED = {"eta": "noise_ratio", "rho": "signal_norm", "rho_values": "signal_norm_values",
           "beta_scale": "step_size_factors", "beta_seed_steps": "step_sizes_seed",
           "beta_benign_steps": "step_sizes_benign", "beta_harmful_steps": "step_sizes_harmful",
           "reuse_train_seed": "authors_test_seed"}


# Parameters the project dropped for a different mechanism: what to use instead.
GEOMETRIC = ("the signal-norm grid of the SNR map is geometric now: use 'signal_norm_min', 'signal_norm_max' and "
             "'signal_norm_steps_per_doubling'")
REPLACED = {"max_steps": "phase 2 is bounded in epochs now: use 'stop_when_fitted', 'max_epochs' and 'max_epochs_from_n'",
            "signal_norm_values": GEOMETRIC, "rho_values": GEOMETRIC}


def _describe(default) -> str:
    return {bool: "True or False", int: "an integer", float: "a number", str: "a string",
            list: "a list, e.g. [1, 2]"}.get(type(default), type(default).__name__)


def coerce(name: str, raw, default):
    """A value given for a field: a command-line string read as the type of the field's default, and any value of
    another type refused in one line."""
    if not isinstance(raw, str):
        value = raw
    elif isinstance(default, bool):
        lowered = raw.lower()
        if lowered not in ("true", "false", "1", "0"):
            raise ParameterError(f"{name} = {raw!r} is not allowed: {name} must be True or False")
        value = lowered in ("true", "1")
    elif isinstance(default, (int, float, list)):
        try:
            value = ast.literal_eval(raw)
        except (ValueError, SyntaxError):
            value = raw
    else:
        value = raw
    ok = (isinstance(value, type(default)) and not (isinstance(value, bool) and not isinstance(default, bool))) or (
        isinstance(default, float) and isinstance(value, int) and not isinstance(value, bool))
    if not ok:
        raise ParameterError(f"{name} = {raw!r} is not allowed: {name} must be {_describe(default)}"
                             f" (default {default!r})")
    return float(value) if isinstance(default, float) else value


def unknown_parameter(name: str, known, where: str) -> ParameterError:
    """The error for a parameter `where` does not know: names its new name if it was renamed or what replaced it,
    else the known ones."""
    new = RENAMED.get(name)
    if new in known:
        return ParameterError(f"parameter {name!r} was renamed: use {new!r} (one name per concept across both papers)")
    if name in REPLACED:
        return ParameterError(f"parameter {name!r} was removed: {REPLACED[name]}")
    return ParameterError(f"unknown parameter {name!r} for {where}: use one of {', '.join(known)}")


def keywords(fn):
    """`fn`, refusing an unknown keyword with one line naming `fn` and, as the command line does
    (`unknown_parameter`), the new name of a renamed parameter or the keywords `fn` takes: a ParameterTypeError.
    Its signature stays `fn`'s (`inspect.signature`, `help`)."""
    where = f"{fn.__module__}.{fn.__qualname__}"
    known = [name for name, p in inspect.signature(fn).parameters.items()
             if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)]

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        for name in kwargs:
            if name not in known:
                message = str(unknown_parameter(name, known, where))
                raise ParameterTypeError(message if where in message else f"{where}: {message}")
        return fn(*args, **kwargs)

    return wrapper


def check_flags(**flags):
    """Refuse a flag that is not a bool (`train_W="no"` would read as True) with a ParameterTypeError."""
    for name, value in flags.items():
        if not isinstance(value, bool):
            raise ParameterTypeError(f"{name} = {value!r} is not allowed: {name} must be True or False (a bool)")
    return flags


def _kind(value, wanted: type) -> str:
    """'a' or 'an' and the name of `value`'s type, module-qualified where it shares `wanted`'s name (paper 1's and
    paper 2's Run)."""
    kind = type(value)
    name = f"{kind.__module__}.{kind.__qualname__}" if kind.__name__ == wanted.__name__ else kind.__name__
    return f"{'an' if name[0].lower() in 'aeiou' else 'a'} {name}"


def check_list_of(name: str, value, wanted: type, made_by: str, one: str) -> list:
    """`value` as a list if it is a list (or tuple) of `wanted`; a ParameterTypeError naming what was given
    otherwise. `made_by` says where one comes from, `one` is the name of a single one in the hint '[one]'."""
    need = f"{name} must be a list of {wanted.__name__} ({made_by})"
    if isinstance(value, wanted):
        raise ParameterTypeError(f"{need}; got one {wanted.__name__}: pass [{one}]")
    if not isinstance(value, (list, tuple)):
        raise ParameterTypeError(f"{need}; got {_kind(value, wanted)}")
    for i, item in enumerate(value):
        if not isinstance(item, wanted):
            raise ParameterTypeError(f"{need}; got {_kind(value, wanted)} whose item {i} is {_kind(item, wanted)}")
    return list(value)


def check_indices(name: str, value, size: int, what: str) -> list[int]:
    """`value` as a list of indices into `size` `what` (a list, tuple, range or array of integers in
    [0, size − 1]): a ParameterTypeError for anything else, a ParameterError for an index out of range."""
    listed = isinstance(value, Iterable) and not isinstance(value, (str, bytes, Mapping))
    if not listed or not all(_is_int(i) for i in value):
        raise ParameterTypeError(f"{name} = {reprlib.repr(value)} is not allowed: {name} must be a list of {what} "
                                 f"indices (integers in [0, {size - 1}])")
    indices = [int(i) for i in value]
    if any(not 0 <= i < size for i in indices):
        raise ParameterError(f"{name} = {indices} is not allowed: {what} indices must lie in [0, {size - 1}]")
    return indices
