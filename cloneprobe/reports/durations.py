"""Durations as a person reads them: a clock for what was measured, a rounded figure for an
estimate."""

from __future__ import annotations

import math


def estimate_text(seconds: float) -> str:
    """An estimate, rounded as one: 40 s, 12 min, 2.5 h."""
    if seconds < 90:
        return f"{max(1, math.ceil(seconds))} s"
    if seconds < 5400:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


def measured_text(model: str, seconds_per_sample: float, made: int, elapsed: float,
                  left: int, unit: str = "sample") -> str:  # fmt: skip
    """The plan's estimate revised from what a run measured on its first samples (or, with
    `unit`, other items: the task rows `signals` scores)."""
    return (f"measured: {seconds_per_sample:.2g} s/{unit} for {model} on this machine (the "
            f"first {made} back took {elapsed:.1f} s); about "
            f"{estimate_text(seconds_per_sample * left)} left for the other {left:,}")
