"""What a ledger rule returns and reads: the five verdicts, a `Finding`, and a `Record` (a notebook's metrics.json
that remembers which keys a rule read), with the formatters every rule's evidence shares."""

from __future__ import annotations

from dataclasses import dataclass

from .words import signed

HOLDS, PART, NOT_SEEN, CONTRADICTED, UNTESTABLE = (
    "holds", "holds in part", "not seen at these sizes", "contradicted", "not testable here")
VERDICTS = (HOLDS, PART, NOT_SEEN, CONTRADICTED, UNTESTABLE)


class AbsentKey(LookupError):
    """A rule read a key its notebook's record does not hold at all: a name the notebook never writes (misspelt, or
    renamed on one side). Not a KeyError, so no rule's fallback and no 'not computed' can swallow it."""


class Record(dict):
    """A notebook's metrics record that remembers which keys were read. A key held as null or NaN (not computed at
    this profile) raises KeyError, which a rule may meet with 'not seen' and the ledger by leaving the claim out; a
    key not held at all does too, except in a `strict` record (a build's), where it raises AbsentKey."""

    def __init__(self, values: dict, strict: bool = False):
        super().__init__(values)
        self.read: list[str] = []
        self.strict = strict

    def __getitem__(self, key):
        if self.strict and not super().__contains__(key):
            raise AbsentKey(f"{key!r}, which the record does not hold")
        value = super().__getitem__(key)
        if value is None or value != value:  # null or NaN: not computed at this profile
            raise KeyError(key)
        if key not in self.read:
            self.read.append(key)
        return value

    @property
    def parameters(self) -> dict:
        """The run's parameters (settings, not measurements: not counted among the keys read)."""
        return dict.get(self, "parameters", {})

    def maybe(self, key: str) -> float:
        """`key` as a float, NaN where the record lacks it or holds null (a fit with too few points): for rules whose
        verdict on missing evidence is 'not seen', not leaving the claim out."""
        try:
            return float(self[key])
        except KeyError:
            return float("nan")


@dataclass(frozen=True)
class Finding:
    verdict: str
    evidence: str
    cause: str = ""


def spread(m: Record, key: str, fmt: str = ".3f") -> str:
    """`key` of the plotted run, with the range over the seeds where the record holds it (`key_min`, `key_max`)."""
    value = signed(m[key], fmt)
    if f"{key}_min" in m and f"{key}_max" in m:
        low, high = signed(m[f"{key}_min"], fmt), signed(m[f"{key}_max"], fmt)  # as read: ends that read alike agree
        return f"{value} on the plotted seed (seeds: {low} to {high})" if low != high else f"{value} (every seed)"
    return value


def fitted(m: Record, prefix: str) -> str:
    """'k of K' noisy labels fitted, with the range over seeds."""
    k, total = m[f"{prefix}_noisy_fitted"], m[f"{prefix}_noisy_count"]
    low, high = m[f"{prefix}_noisy_fitted_min"], m[f"{prefix}_noisy_fitted_max"]
    return f"{k:.0f} of {total:.0f} " + (f"on the plotted seed (seeds: {low:.0f} to {high:.0f})" if low != high
                                          else "(every seed)")


def seeds_fit_every_label(m: Record, prefix: str) -> tuple[bool, bool]:
    """(every seed fits every training label, no seed does)."""
    every = (m[f"{prefix}_noisy_fitted_min"] == m[f"{prefix}_noisy_count"]
             and m[f"{prefix}_clean_fitted_min"] == m[f"{prefix}_clean_count"])
    return every, m[f"{prefix}_noisy_fitted_max"] < m[f"{prefix}_noisy_count"]
