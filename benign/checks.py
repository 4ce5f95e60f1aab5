"""Parameter rules shared by the package, the notebooks and the CLI.

One rule per parameter name; a name ending in ``_<setting>`` (``d_balanced``) follows the rule of its stem (``d``).
A broken rule raises :class:`ParameterError` whose message is one line: what is wrong and what is allowed.
"""

from __future__ import annotations

import math
import numbers


class ParameterError(ValueError):
    """A parameter value outside what the model, the data or a notebook allows."""


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
    "T": _int_at_least(3),
    "d": _int_at_least(3),
    "seed": _int_at_least(0),
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
    "progress": ((lambda x: isinstance(x, bool)), "True or False"),
    "authors_test_seed": ((lambda x: isinstance(x, bool)), "True or False"),
    "label_noise": ((lambda x: x in ("deterministic", "bernoulli")), "deterministic or bernoulli"),
    "out_dir": ((lambda x: isinstance(x, str)), "a folder path (empty: results/<notebook>/<profile>)"),
}


def rule_for(name: str):
    """The (predicate, description) pair governing `name`, or None if the name has no rule."""
    if name in RULES:
        return RULES[name]
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
