"""Likelihood signals relative to a reference, as the membership-inference literature reads
them: a canonical's likelihood means little on its own (short, idiomatic code is likely under
any model), but more than the reference gives it is evidence.

Two references:
- the fixed prompt set: the same model and canonical, after the quality-fixed prompt instead
  of the original. A model that memorized the benchmark as published finds its canonical
  likelier after the original prompt than after a fixed one.
- a reference model (`--reference-model`): the same texts under another model that is not
  suspected (the "Ref" attack of Carlini et al. 2021 and the MIA benchmarks).

Both are differences of evidence, oriented so that positive means "more memorization-like
than the reference": log-likelihood scale signals subtract directly, perplexity compares on
the log scale (log ppl_reference - log ppl_target, the mean log-prob difference).
"""

from __future__ import annotations

import math
from collections.abc import Mapping

from .base import SignalScore
from .registry import SIGNALS


def evidence(signal: str, value: float) -> float:
    """A signal's value oriented so that higher is more memorization-like, on a scale where
    differences mean the same everywhere."""
    described = SIGNALS[signal]
    if described.log_scale:
        value = math.log(value)
    return value if described.higher_means_memorized else -value


def relative_score(signal: str, target: SignalScore | None, reference: SignalScore | None):
    """evidence(target) - evidence(reference), or None when either is not available."""
    if target is None or reference is None or target.value is None or reference.value is None:
        return None
    return evidence(signal, target.value) - evidence(signal, reference.value)


def relative_scores(
    target: Mapping[str, SignalScore], reference: Mapping[str, SignalScore]
) -> dict[str, float | None]:
    """Per likelihood signal, the target's evidence over the reference's."""
    return {
        name: relative_score(name, target.get(name), reference.get(name))
        for name, signal in SIGNALS.items()
        if signal.needs_scorer and name in target
    }


def original_vs_fixed(
    original: Mapping[str, SignalScore], fixed: Mapping[str, SignalScore]
) -> dict[str, float | None]:
    """A task's likelihood after the original prompt over after the fixed one."""
    return relative_scores(original, fixed)


def target_vs_reference(
    target: Mapping[str, SignalScore], reference_model: Mapping[str, SignalScore]
) -> dict[str, float | None]:
    """A task's likelihood under the audited model over under the reference model."""
    return relative_scores(target, reference_model)
