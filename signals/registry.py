"""The signals by name, and parsing a user's comma-separated choice of them."""

from __future__ import annotations

from .base import Signal, SignalError
from .cdd import CDDSignal
from .likelihood import MinKPlusPlusSignal, MinKSignal, PerplexitySignal, ZlibSignal
from .surface import SurfaceSignal

SIGNALS: dict[str, Signal] = {
    signal.name: signal
    for signal in (
        PerplexitySignal(),
        ZlibSignal(),
        MinKSignal(),
        MinKPlusPlusSignal(),
        CDDSignal(),
        SurfaceSignal(),
    )
}
"""Every signal with its default settings, in report order."""
LIKELIHOOD_SIGNALS = tuple(name for name, s in SIGNALS.items() if s.needs_scorer)
SAMPLE_SIGNALS = tuple(name for name, s in SIGNALS.items() if not s.needs_scorer)


def short_name(name: str) -> str:
    """A signal's column label; an unknown name (a stored score of a removed signal) as is."""
    signal = SIGNALS.get(name)
    return signal.short if signal is not None else name


def is_log_scale(name: str) -> bool:
    signal = SIGNALS.get(name)
    return bool(signal is not None and signal.log_scale)


def signals_help() -> str:
    """The signals as help texts list them: `perplexity, zlib, ...`."""
    return ", ".join(SIGNALS)


def get_signal(name: str) -> Signal:
    try:
        return SIGNALS[name]
    except KeyError:
        raise SignalError(
            f"unknown signal {name!r}; the signals are {', '.join(SIGNALS)} (or 'all')"
        ) from None


def parse_signal_names(spec: str | None) -> tuple[str, ...]:
    """'all' (or an empty spec) -> every signal; else a comma-separated list, checked."""
    if spec is None or spec.strip() in ("", "all"):
        return tuple(SIGNALS)
    names = [part.strip().replace("-", "_") for part in spec.split(",") if part.strip()]
    if not names:
        raise SignalError(f"--signals {spec!r} names no signal; give signal names, comma-"
                          f"separated ({', '.join(SIGNALS)}), or all")  # fmt: skip
    for name in names:
        get_signal(name)
    return tuple(dict.fromkeys(names))
