"""The HTML report's per-task view: the verdicts per group with the rule's measured error
rates, one sortable row per task (pass@1, clone evidence and why, every signal, the relative
views, the verdict and why), and plots: each signal's distribution per group, and each
task's score under the original prompts against the fixed ones."""

from __future__ import annotations

import math

from cloneprobe.audit.audit_report import AuditReport
from cloneprobe.evidence.verdict import calibration_line
from cloneprobe.reports.safe_text import html_text as escape
from cloneprobe.signals.registry import is_log_scale

from . import task_rows as tr
from .glossary import VERDICT_MEANING
from .plots import scatter_plot, strip_plot

SORT_SCRIPT = (
    "<script>document.querySelectorAll('table.sortable').forEach(function(t){"
    "t.querySelectorAll('th').forEach(function(th,i){th.style.cursor='pointer';"
    "th.addEventListener('click',function(){var rows=Array.from(t.rows).slice(1),"
    "up=th.dataset.dir!=='up';th.dataset.dir=up?'up':'down';rows.sort(function(a,b){"
    "var x=a.cells[i].textContent,y=b.cells[i].textContent,nx=parseFloat(x),ny=parseFloat(y),"
    "c=(isNaN(nx)||isNaN(ny))?x.localeCompare(y,undefined,{numeric:true}):nx-ny;"
    "return up?c:-c;});"
    "rows.forEach(function(r){t.tBodies[0].appendChild(r);});});});});</script>"
)
"""Click a column heading to sort by it (numbers as numbers); static, reads no report data."""
TEXT_COLUMNS = {"model", "prompts", "task", "clone", "why (clone)", "verdict", "why (verdict)",
                "half", "T"}  # fmt: skip


def sortable_table(header: list[str], rows: list[list[str]],
                   titles: dict[str, str] | None = None) -> str:  # fmt: skip
    """A table sorted by clicking a heading, one line per row: a long cell (the reasons) is
    cut at the column's width and shown whole on hover. `titles`: heading -> what the column
    counts (shown on hover)."""

    def cell(tag: str, name: str, text: str) -> str:
        css = "l" if name in TEXT_COLUMNS else ""
        css += " why" if name.startswith("why") else ""
        if tag == "th":
            hover = (titles or {}).get(name)
        elif name == "verdict":
            hover = VERDICT_MEANING.get(text)
        else:
            hover = text if name.startswith("why") else None
        title = f' title="{escape(hover)}"' if hover else ""
        return f'<{tag} class="{css.strip()}"{title}>{escape(text)}</{tag}>'

    head = "".join(cell("th", h, h) for h in header)
    body = "".join(
        "<tr>" + "".join(cell("td", h, str(c)) for h, c in zip(header, row, strict=True)) + "</tr>"
        for row in rows
    )
    return (f'<div class="wide"><table class="sortable tasks"><thead><tr>{head}</tr></thead>'
            f"<tbody>{body}</tbody></table></div>")


def _axis(name: str, report: AuditReport) -> str:
    higher = ((report.signals or {}).get("higher_means_memorized") or {}).get(name, True)
    direction = "higher" if higher else "lower"
    scale = "log10 " if is_log_scale(name) else ""
    return f"{scale}{name} ({direction} is more memorization-like)"


def _shown(name: str, value: float | None) -> float | None:
    if value is None:
        return None
    if is_log_scale(name):
        return math.log10(value) if value > 0 else None
    return value


def distribution_plots(report: AuditReport) -> list[str]:
    """Per signal: its values over tasks, one row per model x temperature x prompt set, each
    dot named by its task; a signal with fewer than two values has nothing to show."""
    plots = []
    for name in tr.signal_names(report):
        groups: dict[str, list[float]] = {}
        tasks: dict[str, list[str]] = {}
        for entry in report.tasks or []:
            value = _shown(name, entry["signals"].get(name, {}).get("value"))
            label = f"{entry['model']} t={entry['temperature']:g} {entry['prompt_set']}"
            if value is not None:
                groups.setdefault(label, []).append(value)
                tasks.setdefault(label, []).append(entry["task_id"])
        if sum(len(v) for v in groups.values()) >= 2:
            plots.append(strip_plot(f"{name} per task", list(groups.items()),
                                    _axis(name, report), names=list(tasks.values())))  # fmt: skip
    return [p for p in plots if p]


def original_fixed_plots(report: AuditReport) -> list[str]:
    """Per signal: each task's value under the original prompts (x) against a fixed prompt
    set's (y), one colour per model x temperature x fixed set; points under the diagonal are
    tasks the original prompt makes likelier (for perplexity: over it)."""
    entries = report.tasks or []
    original = {(e["model"], e.get("settings_key"), e["temperature"], e["task_id"]): e
                for e in entries if e["prompt_set"] == "original"}  # fmt: skip
    plots = []
    for name in tr.signal_names(report):
        series: dict[str, list[tuple[float, float]]] = {}
        tasks: dict[str, list[str]] = {}
        for e in entries:
            if not e["prompt_set"].startswith("fixed"):
                continue
            twin = original.get((e["model"], e.get("settings_key"), e["temperature"], e["task_id"]))
            if twin is None:
                continue
            x = _shown(name, twin["signals"].get(name, {}).get("value"))
            y = _shown(name, e["signals"].get(name, {}).get("value"))
            if x is not None and y is not None:
                label = f"{e['model']} t={e['temperature']:g} {e['prompt_set']}"
                series.setdefault(label, []).append((x, y))
                tasks.setdefault(label, []).append(e["task_id"])
        if sum(len(v) for v in series.values()) >= 2:
            plots.append(scatter_plot(f"{name}: original against fixed prompts",
                                      list(series.items()), f"original: {_axis(name, report)}",
                                      "fixed prompts", names=list(tasks.values())))  # fmt: skip
    return [p for p in plots if p]


def task_section(report: AuditReport, table) -> list[str]:
    """The per-task view's HTML parts: the verdict of every task first, then what it rests
    on (with signals when the report has them). `table` renders a plain table (header, rows,
    left-aligned column count)."""
    rows = tr.task_rows(report)
    if not rows:
        return []
    signals = ("Signals are raw values (ppl: lower is more memorization-like, the others "
               "higher); 'vs fixed' and 'vs ref' are relative: evidence under the original "
               "prompt (or the audited model) minus under the fixed prompt (or the reference "
               "model), positive = more memorization-like. ") if report.signals else (
               "No signal was computed for these samples (`cloneprobe signals` adds them), so "
               "each verdict rests on the clone evidence alone. ")  # fmt: skip
    parts = ['<h2 id="tasks">Per task: pass@1, clone evidence, signals, verdict</h2>',
             f"<p>One row per task. Click a heading to sort; hover over a cut reason to read "
             f"it whole. {escape(signals)}</p>",
             sortable_table(tr.task_header(report), rows, tr.COLUMN_TITLES),
             SORT_SCRIPT,
             f"<p>{escape(calibration_line())}</p>"]  # fmt: skip
    distributions = distribution_plots(report)
    if distributions:
        parts += ["<h2>Signal distributions over tasks</h2>", *distributions]
    paired = original_fixed_plots(report)
    if paired:
        parts += ["<h2>Original against fixed prompts, per task</h2>", *paired]
    return parts
