"""What a signal is, said once in its class: name, column label, direction, log scale, what a
group summary adds; reports, help and the relative views read it from the registry."""

from __future__ import annotations

import math

from cloneprobe.audit.audit_report import empty_report
from cloneprobe.audit.signal_table import signal_groups
from cloneprobe.reports.task_rows import task_header
from cloneprobe.signals import SignalScore
from cloneprobe.signals.flow import TaskSignals
from cloneprobe.signals.registry import SIGNALS, short_name
from cloneprobe.signals.relative import evidence


def test_every_signal_says_how_it_is_shown():
    shorts = [signal.short for signal in SIGNALS.values()]
    assert len(set(shorts)) == len(shorts)
    for name, signal in SIGNALS.items():
        assert signal.name == name and signal.description
        assert isinstance(signal.log_scale, bool) and isinstance(signal.plot_distribution, bool)
    assert short_name("min_k_plus_plus") == "min-k%++"
    assert short_name("a_removed_signal") == "a_removed_signal"


def test_report_columns_come_from_the_registry():
    report = empty_report(signals={"names": list(SIGNALS)}, tasks=[])
    header = task_header(report)
    assert [h for h in header if h in {s.short for s in SIGNALS.values()}] == [
        s.short for s in SIGNALS.values()
    ]


def test_a_log_scale_signal_is_compared_on_the_log_scale():
    # perplexity: lower is more memorization-like, compared as -log(ppl)
    assert evidence("perplexity", math.e) == -1.0
    assert evidence("zlib", 2.0) == 2.0  # higher is more memorization-like, as is


def row(task: str, cdd: float, contaminated: bool, surface: list[float]) -> TaskSignals:
    return TaskSignals("m", "k", 0.8, "original", "original", task, "completion", 3, {
        "cdd": SignalScore("cdd", cdd, None, {"contaminated": contaminated}),
        "surface": SignalScore("surface", max(surface), None, {"per_sample": surface}),
    })  # fmt: skip


def test_a_group_summary_holds_what_each_signal_adds():
    [group] = signal_groups([row("T/0", 0.5, True, [0.2, 0.9]), row("T/1", 0.0, False, [0.4])])
    assert group["signals"]["cdd"]["tasks_over_xi"] == 1
    assert group["signals"]["surface"]["samples"]["count"] == 3
    assert group["signals"]["surface"]["samples"]["min"] == 0.2
