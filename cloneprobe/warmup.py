"""The measured warm-up of a generation the store has no history of: once the first wave of
samples is back (a local model's first batch, a server's first `concurrency` requests), the
seconds per sample measured on this machine and the time left, as one revised line of the
plan. Nothing is generated for it: it times the samples the plan asked for anyway."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

from .reports.durations import estimate_text


def first_wave(backend, n: int) -> int:
    """Samples one wave of `backend` holds: its batch (a local model) or its concurrent
    requests of `n` samples each (a server)."""
    batch = getattr(backend, "batch_size", None)
    if isinstance(batch, int) and batch > 0:
        return batch
    concurrency = getattr(backend, "concurrency", None)
    return concurrency * max(n, 1) if isinstance(concurrency, int) and concurrency > 0 else 1


@dataclass
class WarmUp:
    """Times a generation from its first progress report (the model already loaded)."""

    model: str
    wave: int
    to_make: int | None = None
    started: float | None = None
    said: bool = False
    clock: Callable[[], float] = field(default=time.monotonic, repr=False)

    def line(self, already: int, planned: int, made: int) -> str | None:
        """The revised estimate, once: when the first wave is back (`made` samples of this
        run, failures not counted) and samples remain; None before, after, and when the
        whole plan was one wave."""
        now = self.clock()
        if self.started is None:
            self.started, self.to_make = now, planned - already
        if self.said or not self.to_make or made < min(self.wave, self.to_make):
            return None
        self.said = True
        left = self.to_make - made
        elapsed = now - self.started
        if left <= 0 or elapsed <= 0:
            return None
        rate = elapsed / made
        return (f"measured: {rate:.2g} s/sample for {self.model} on this machine (the first "
                f"{made} back took {elapsed:.1f} s); about {estimate_text(rate * left)} left for "
                f"the other {left:,}")  # fmt: skip
