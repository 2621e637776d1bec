"""The measured warm-up of a generation the store has no history of: once the first wave of
samples is back (a local model's first batch, a server's first `concurrency` requests), the
seconds per sample measured on this machine and the samples left, which the plan prints as
its revised estimate (`reports.durations.measured_text`). Nothing is generated for it: it
times the samples the plan asked for anyway."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field


def first_wave(backend, n: int) -> int:
    """Samples one wave of `backend` holds: its batch (a local model) or its concurrent
    requests of `n` samples each (a server)."""
    return wave_size(getattr(backend, "batch_size", None), getattr(backend, "concurrency", None),
                     n)  # fmt: skip


def wave_size(batch: object, concurrency: object, n: int) -> int:
    """Samples one wave holds: a local model's `batch`, else a server's `concurrency`
    requests of `n` samples each (1 when neither is known)."""
    if isinstance(batch, int) and batch > 0:
        return batch
    return concurrency * max(n, 1) if isinstance(concurrency, int) and concurrency > 0 else 1


@dataclass(frozen=True)
class Measured:
    seconds_per_sample: float
    made: int
    elapsed: float
    left: int


@dataclass
class WarmUp:
    """Times a generation from its first progress report (the model already loaded)."""

    wave: int
    to_make: int | None = None
    started: float | None = None
    said: bool = False
    clock: Callable[[], float] = field(default=time.monotonic, repr=False)

    def measure(self, already: int, planned: int, made: int) -> Measured | None:
        """The measured rate, once: when the first wave is back (`made` samples of this run,
        failures not counted) and samples remain; None before, after, and when the whole plan
        was one wave."""
        now = self.clock()
        if self.started is None:
            self.started, self.to_make = now, planned - already
        if self.said or not self.to_make or made < min(self.wave, self.to_make):
            return None
        self.said = True
        left, elapsed = self.to_make - made, now - self.started
        if left <= 0 or elapsed <= 0:
            return None
        return Measured(elapsed / made, made, elapsed, left)


class MeasuredProgress:
    """Advances a progress task (`advance`) and, once the first `wave` items after its first
    report are done, hands the rate measured on this machine and the items left to `say`
    (once), as a generation's first wave does. The first report is not timed: it may be
    results read back from the store, or a first batch with a model's loading in it."""

    def __init__(self, advance: Callable[[int], None], total: int, wave: int,
                 say: Callable[[Measured], None]) -> None:  # fmt: skip
        self._advance, self.total, self.say = advance, total, say
        self.warm = WarmUp(wave)
        self.done, self.first = 0, None

    def advance(self, count: int = 1) -> None:
        self._advance(count)
        self.done += count
        if self.first is None:
            self.first = self.done
            self.warm.measure(self.first, self.total, 0)
            return
        measured = self.warm.measure(self.first, self.total, self.done - self.first)
        if measured is not None:
            self.say(measured)
