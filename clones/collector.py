"""Bulk allocation without the cyclic garbage collector looking on.

Extraction and comparison allocate millions of small tuples (tokens, lines, sequences) that
hold no reference cycles. CPython's collector runs a young-generation pass every 700
allocations and, as the heap grows, full passes over every tracked object; on the
paper-scale workload a fifth of detection's time went to passes that found nothing. Paused
for one call, the collector looks at that call's allocations once, in its first pass after
the call; nothing goes uncollected (a cycle made meanwhile is found by that pass).
"""

from __future__ import annotations

import gc
from collections.abc import Callable
from functools import wraps
from typing import ParamSpec, TypeVar

P = ParamSpec("P")
R = TypeVar("R")


def collector_paused(function: Callable[P, R]) -> Callable[P, R]:
    """`function` with the cyclic collector paused while it runs (restored after, also on an
    exception; left alone when the caller has paused it)."""

    @wraps(function)
    def paused(*args: P.args, **kwargs: P.kwargs) -> R:
        if not gc.isenabled():
            return function(*args, **kwargs)
        gc.disable()
        try:
            return function(*args, **kwargs)
        finally:
            gc.enable()

    return paused
