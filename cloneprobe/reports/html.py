"""One self-contained HTML page that answers the question first: a summary (per model, how
many tasks memorized, suspected, with no evidence, uninformative; the strongest cases linked;
what the words mean), the per-task view with the verdict first, then the tables behind the
counts, a plot of clone rate against temperature (when there are several temperatures), the
positive control's section when it has one, a sample file's own verdicts against
cloneprobe's (the samples that differ, their code folded), and every clone pair shown: the
code as written side by side, the compared (renamed) lines folded under it. No external
assets."""

from __future__ import annotations

from cloneprobe.audit.audit_report import AuditReport
from cloneprobe.audit.verdict_summary import pair_counts, pair_standing, task_entries
from cloneprobe.reports.safe_text import html_text as escape

from . import evidence_tables as ev
from .control_html import control_section
from .evidence_html import display_order, pair_html
from .file_verdicts_view import file_verdicts_html, file_verdicts_pointer
from .glossary import CLONE_TYPE_MEANING
from .page import page
from .page import plain_table as _table
from .plots import COLOURS, axis_ticks
from .summary_html import summary_section
from .tables import (
    COMPARISON_HEADER,
    CORRECTNESS_HEADER,
    CORRECTNESS_TITLE,
    GROUP_HEADER,
    display_comparison_rows,
    display_correctness_rows,
    display_group_rows,
    isolation_line,
    repair_line,
    runs_line,
    settings_line,
)
from .task_view import SORT_SCRIPT, sortable_table, task_section

__all__ = ["page", "rate_plot", "render_html"]

DASHES = ("", "6 3", "2 3", "8 3 2 3")
"""Line patterns, so that series lying on one another stay apart (the legend shows each)."""


def rate_plot(report: AuditReport, width: int = 560, height: int = 300) -> str:
    """SVG lines: Type-3 (cumulative) task clone rate against temperature, per model and
    prompt set; both axes labelled and ticked, a legend naming each line by colour and
    pattern. Points are groups (model x temperature x prompt set), each named on hover."""
    series: dict[str, list[tuple[float, float]]] = {}
    for g in report.groups:
        key = f"{g['label']} / {g['prompt_set']}"
        series.setdefault(key, []).append((g["temperature"], g["task_rate"]["3"]))
    if not series:
        return "<p>No groups to plot.</p>"
    temperatures = [t for points in series.values() for t, _ in points]
    low, high = min(temperatures), max(temperatures)
    span = (high - low) or 1.0
    top = max(max(r for points in series.values() for _, r in points), 1.0)
    ticks = axis_ticks(0.0, top)
    top = max(top, ticks[-1])
    left, bottom, right, upper = 56, height - 40, width - 190, 24

    def x(t: float) -> float:
        return left + (t - low) / span * (right - left) if high > low else (left + right) / 2

    def y(rate: float) -> float:
        return bottom - rate / top * (bottom - upper)

    middle = (upper + bottom) / 2
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" role="img" aria-label="clone rate against temperature">',
        f'<line x1="{left}" y1="{bottom}" x2="{right}" y2="{bottom}" stroke="#333"/>',
        f'<line x1="{left}" y1="{upper}" x2="{left}" y2="{bottom}" stroke="#333"/>',
        f'<text class="axis" x="{(left + right) / 2}" y="{height - 6}" font-size="11" '
        'text-anchor="middle">temperature</text>',
        f'<text class="axis" x="14" y="{middle:.1f}" font-size="11" text-anchor="middle" '
        f'transform="rotate(-90 14 {middle:.1f})">tasks with a Type-3 clone (%)</text>',
    ]
    for tick in ticks:
        parts.append(f'<line x1="{left}" y1="{y(tick):.1f}" x2="{right}" y2="{y(tick):.1f}" '
                     'stroke="#eee"/>')  # fmt: skip
        parts.append(f'<text x="{left - 6}" y="{y(tick) + 4:.1f}" text-anchor="end" '
                     f'font-size="10">{tick:g}</text>')  # fmt: skip
    for t in sorted(set(temperatures)):
        parts.append(f'<text x="{x(t):.1f}" y="{bottom + 15}" text-anchor="middle" '
                     f'font-size="10">{t:g}</text>')  # fmt: skip
    for number, (name, points) in enumerate(sorted(series.items())):
        colour = COLOURS[number % len(COLOURS)]
        dash = DASHES[number % len(DASHES)]
        pattern = f' stroke-dasharray="{dash}"' if dash else ""
        points.sort()
        path = " ".join(f"{x(t):.1f},{y(r):.1f}" for t, r in points)
        parts.append(f'<polyline points="{path}" fill="none" stroke="{colour}" '
                     f'stroke-width="2"{pattern}/>')  # fmt: skip
        parts += [f'<circle cx="{x(t):.1f}" cy="{y(r):.1f}" r="3" fill="{colour}">'
                  f"<title>{escape(name)}, t={t:g}: {r:.1f}%</title></circle>"
                  for t, r in points]  # fmt: skip
        row = upper + 16 * number + 6
        parts.append(f'<g class="legend"><line x1="{right + 10}" y1="{row}" x2="{right + 34}" '
                     f'y2="{row}" stroke="{colour}" stroke-width="2"{pattern}/>'
                     f'<text x="{right + 40}" y="{row + 4}" font-size="11" fill="{colour}">'
                     f"{escape(name)}</text></g>")  # fmt: skip
    parts.append("</svg>")
    return "".join(parts)


def temperatures(report: AuditReport) -> list[float]:
    return sorted({g["temperature"] for g in report.groups})


def evidence_heading(report: AuditReport) -> str:
    """How many clone pairs, in how many tasks, and how many of each are evidence."""
    counts = pair_counts(report)
    return (f"Clone pairs: {counts.pairs} pairs of a canonical solution and a sample, in "
            f"{counts.tasks} task(s); {counts.evidence_pairs} of them, in "
            f"{counts.evidence_tasks} task(s), are candidate evidence; memorized (rare under "
            f"convergence): {counts.memorized_tasks} task(s)")  # fmt: skip


def render_html(report: AuditReport) -> str:
    """The page: the answer first (summary, verdicts, strongest cases, what the words mean),
    then the per-task view, the tables behind the counts, and every clone pair shown."""
    entries = task_entries(report)
    groups, comparisons = display_group_rows(report), display_comparison_rows(report)
    summary = summary_section(report, entries, _table)
    answered = next(i for i, part in enumerate(summary) if 'class="answer"' in part)
    summary[answered + 1:answered + 1] = file_verdicts_pointer(report.file_verdicts)
    body = ["<h1>cloneprobe audit</h1>", *summary]
    body += task_section(report, _table)
    body += [
        f"<h2>{escape(ev.EVIDENCE_TITLE)}</h2>",
        _table(ev.EVIDENCE_HEADER, ev.display_evidence_rows(report)),
        f"<p>{escape(ev.uninformative_line(report))}</p>",
        f"<p>{escape(ev.chance_line(report))}</p>",
        f"<p>{escape(ev.convergence_rule_line(report))}</p>",
        *(f"<p>{escape(line)}</p>" for line in ev.convergence_lines(report)),
        "<h2>Tasks with a clone of the canonical solution (cumulative)</h2>",
        "<p>" + escape(". ".join(CLONE_TYPE_MEANING.values())) + ". Cumulative: a Type-1 clone "
        "counts as Type-2 and Type-3 too. A clone is not by itself evidence of memorization: "
        "see the summary.</p>",
        _table(GROUP_HEADER, groups),
    ]  # fmt: skip
    if len(temperatures(report)) > 1:
        body += ["<h2>Clone rate against temperature</h2>", rate_plot(report)]
    if comparisons:
        body += [
            "<h2>Original against other prompts</h2>",
            _table(COMPARISON_HEADER, comparisons),
        ]  # fmt: skip
    evidence_comparisons = ev.display_evidence_comparison_rows(report)
    if evidence_comparisons:
        body += ["<h2>Original against other prompts, on evidence</h2>",
                 _table(ev.EVIDENCE_COMPARISON_HEADER, evidence_comparisons)]  # fmt: skip
    correctness = display_correctness_rows(report)
    if correctness:
        body += [f"<h2>{CORRECTNESS_TITLE}</h2>", _table(CORRECTNESS_HEADER, correctness),
                 f"<p>{escape(isolation_line(report))}</p>"]  # fmt: skip
        body += [f"<p>{escape(line)}</p>" for line in repair_line(report).splitlines()]
    body += file_verdicts_html(report.file_verdicts)
    if report.control:
        body += control_section(report.control, _table, sortable_table)
        if not entries:
            body.append(SORT_SCRIPT)
    body += ['<h2 id="evidence">' + escape(evidence_heading(report)) + "</h2>"]
    if report.evidence_total > len(report.evidence):
        body.append(
            f"<p>Showing {len(report.evidence)}: at most {report.evidence_per_task} per "
            f"group and task, evidence first. Every pair is in {escape(report.evidence_file)} "
            "beside this page.</p>"
        )
    body += [pair_html(pair, index, ev.pair_convergence_lines(report, pair),
                       pair_standing(report, pair))
             for index, pair in display_order(report.evidence)]
    body += ["<h2>How this was measured</h2>", f"<p>{escape(settings_line(report))}</p>",
             f"<p>{escape(runs_line(report))}</p>"]  # fmt: skip
    return page("cloneprobe audit", body)
