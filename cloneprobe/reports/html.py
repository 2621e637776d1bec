"""One self-contained HTML page: tables, a plot of clone rate against temperature, the
per-task view (verdicts, signals, plots) when the report has signals, the positive control's
section when it has one, and the side-by-side evidence of every clone pair. No external
assets."""

from __future__ import annotations

from cloneprobe.reports.align import align_lines
from cloneprobe.reports.safe_text import html_text as escape

from . import evidence_tables as ev
from .control_html import control_section
from .plots import COLOURS
from .tables import (
    COMPARISON_HEADER,
    CORRECTNESS_HEADER,
    CORRECTNESS_TITLE,
    GROUP_HEADER,
    display_comparison_rows,
    display_correctness_rows,
    display_group_rows,
    isolation_line,
    runs_line,
    settings_line,
)
from .task_view import SORT_SCRIPT, sortable_table, task_section

STYLE = """
body{font-family:system-ui,sans-serif;margin:2em;color:#222}
table{border-collapse:collapse;margin:1em 0}
th,td{border:1px solid #ccc;padding:.25em .6em;text-align:right}
th{background:#f3f3f3} td.l,th.l{text-align:left}
.pair{margin:1.5em 0} .pair table td{font-family:monospace;text-align:left;white-space:pre-wrap}
.diff{background:#fff3cd} h3{font-size:1em}
table.tasks td.why{font-size:.8em;max-width:28em} svg{display:block;margin:.5em 0}
"""


def _table(header: list[str], rows: list[list], left: int = 3) -> str:
    head = "".join(f'<th class="{"l" if i < left else ""}">{escape(h)}</th>'
                   for i, h in enumerate(header))  # fmt: skip
    body = "".join(
        "<tr>" + "".join(f'<td class="{"l" if i < left else ""}">{escape(str(c))}</td>'
                         for i, c in enumerate(row)) + "</tr>"
        for row in rows
    )  # fmt: skip
    return f"<table><tr>{head}</tr>{body}</table>"


def rate_plot(report: dict, width: int = 560, height: int = 300) -> str:
    """SVG lines: Type-3 (cumulative) task clone rate against temperature, per model and
    prompt set."""
    series: dict[str, list[tuple[float, float]]] = {}
    for g in report["groups"]:
        key = f"{g['label']} / {g['prompt_set']}"
        series.setdefault(key, []).append((g["temperature"], g["task_rate"]["3"]))
    if not series:
        return "<p>No groups to plot.</p>"
    temperatures = [t for points in series.values() for t, _ in points]
    low, high = min(temperatures), max(temperatures)
    span = (high - low) or 1.0
    top = max(max(r for points in series.values() for _, r in points), 1.0)
    left, bottom, right, upper = 50, height - 40, width - 180, 20

    def x(t: float) -> float:
        return left + (t - low) / span * (right - left) if high > low else (left + right) / 2

    def y(rate: float) -> float:
        return bottom - rate / top * (bottom - upper)

    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        'role="img" aria-label="clone rate against temperature">',
        f'<line x1="{left}" y1="{bottom}" x2="{right}" y2="{bottom}" stroke="#333"/>',
        f'<line x1="{left}" y1="{upper}" x2="{left}" y2="{bottom}" stroke="#333"/>',
        f'<text x="{(left + right) / 2}" y="{height - 5}" text-anchor="middle">temperature</text>',
        f'<text x="12" y="{upper - 6}" font-size="12">% tasks (Type-3)</text>',
        f'<text x="{left - 6}" y="{upper + 4}" text-anchor="end" font-size="11">{top:.0f}</text>',
        f'<text x="{left - 6}" y="{bottom}" text-anchor="end" font-size="11">0</text>',
    ]
    for t in sorted(set(temperatures)):
        parts.append(f'<text x="{x(t):.1f}" y="{bottom + 15}" text-anchor="middle" '
                     f'font-size="11">{t:g}</text>')  # fmt: skip
    for number, (name, points) in enumerate(sorted(series.items())):
        colour = COLOURS[number % len(COLOURS)]
        points.sort()
        path = " ".join(f"{x(t):.1f},{y(r):.1f}" for t, r in points)
        parts.append(f'<polyline points="{path}" fill="none" stroke="{colour}" stroke-width="2"/>')
        parts += [f'<circle cx="{x(t):.1f}" cy="{y(r):.1f}" r="3" fill="{colour}"/>'
                  for t, r in points]  # fmt: skip
        parts.append(f'<text x="{right + 10}" y="{upper + 14 * number + 10}" font-size="11" '
                     f'fill="{colour}">{escape(name)}</text>')  # fmt: skip
    parts.append("</svg>")
    return "".join(parts)


def _evidence_html(pair: dict, report: dict | None = None) -> str:
    rows = "".join(
        f'<tr class="{"" if same else "diff"}"><td>{escape(a)}</td><td>{escape(b)}</td></tr>'
        for same, a, b in align_lines(pair["compared"]["canonical"], pair["compared"]["sample"])
    )
    title = (
        f"{pair['model']}, t={pair['temperature']:g}, {pair['prompt_set']}: {pair['task_id']} "
        f"sample {pair['sample']} — type {pair['type']}, {pair['similarity']}% "
        f"(canonical of {pair['canonical_task']})"
    )
    reasons = ev.pair_reason_line(pair)
    why = f'<p class="why">{escape(reasons)}</p>' if reasons else ""
    if reasons and report is not None:
        why += "".join(f'<p class="why">{escape(line)}</p>'
                       for line in ev.pair_convergence_lines(report, pair))  # fmt: skip
    return (
        f'<div class="pair"><h3>{escape(title)}</h3>{why}<table><tr><th class="l">canonical '
        f"(lines {pair['canonical_lines'][0]}-{pair['canonical_lines'][1]})</th>"
        f'<th class="l">sample (lines {pair["sample_lines"][0]}-{pair["sample_lines"][1]})</th>'
        f"</tr>{rows}</table></div>"
    )


def render_html(report: dict) -> str:
    groups, comparisons = display_group_rows(report), display_comparison_rows(report)
    body = [
        "<h1>cloneprobe audit</h1>",
        f"<p>{escape(settings_line(report))}</p>",
        f"<p>{escape(runs_line(report))}</p>",
        f"<h2>{escape(ev.EVIDENCE_TITLE)}</h2>",
        _table(ev.EVIDENCE_HEADER, ev.display_evidence_rows(report)),
        f"<p>{escape(ev.uninformative_line(report))}</p>",
        f"<p>{escape(ev.chance_line(report))}</p>",
        f"<p>{escape(ev.convergence_rule_line(report))}</p>",
        *(f"<p>{escape(line)}</p>" for line in ev.convergence_lines(report)),
        "<h2>Tasks with a clone of the canonical solution (cumulative)</h2>",
        _table(GROUP_HEADER, groups),
        "<h2>Clone rate against temperature</h2>",
        rate_plot(report),
    ]  # fmt: skip
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
    body += task_section(report, _table)
    if report.get("control"):
        body += control_section(report["control"], _table, sortable_table)
        if not report.get("tasks"):
            body.append(SORT_SCRIPT)
    total = report.get("evidence_total", len(report["evidence"]))
    body.append(f"<h2>Evidence: {total} clone pairs</h2>")
    if total > len(report["evidence"]):
        body.append(
            f"<p>Showing {len(report['evidence'])}: at most {report['evidence_per_task']} per "
            f"group and task. Every pair is in {escape(report['evidence_file'])} beside this "
            "page.</p>"
        )
    body += [_evidence_html(pair, report) for pair in report["evidence"]]
    return page("cloneprobe audit", body)


def page(title: str, body: list[str]) -> str:
    """The report's page around its sections."""
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>{escape(title)}</title><style>{STYLE}</style></head><body>"
        + "\n".join(body)
        + "</body></html>\n"
    )


def render_control_page(control: dict) -> str:
    """The positive control's report.html: the report page with the control's section."""
    body = ["<h1>cloneprobe positive control</h1>",
            *control_section(control, _table, sortable_table), SORT_SCRIPT]  # fmt: skip
    return page("cloneprobe positive control", body)
