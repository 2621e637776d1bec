"""The report as files: JSON, CSV, Markdown, LaTeX (Table VI layout) and self-contained HTML."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

from ..aggregate import TYPES
from . import evidence_tables as ev
from .html import render_html
from .tables import (
    COMPARISON_COLUMNS,
    COMPARISON_HEADER,
    CORRECTNESS_HEADER,
    GROUP_COLUMNS,
    GROUP_HEADER,
    comparison_rows,
    display_comparison_rows,
    display_correctness_rows,
    display_group_rows,
    group_rows,
    settings_line,
)


def render_json(report: dict) -> str:
    return json.dumps(report, indent=2)


def _csv(header: list[str], rows: list[list]) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(header)
    writer.writerows(rows)
    return out.getvalue()


def render_csv(report: dict) -> str:
    return _csv(GROUP_COLUMNS, group_rows(report))


def render_comparisons_csv(report: dict) -> str:
    return _csv(COMPARISON_COLUMNS, comparison_rows(report))


def _markdown_table(header: list[str], rows: list[list]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(cell) for cell in row) + " |" for row in rows]
    return "\n".join(lines)


def render_markdown(report: dict) -> str:
    parts = [
        "# cloneprobe audit",
        f"Settings: {settings_line(report)}.",
        f"## {ev.EVIDENCE_TITLE}",
        _markdown_table(ev.EVIDENCE_HEADER, ev.display_evidence_rows(report)),
        ev.uninformative_line(report),
        ev.chance_line(report),
    ]
    evidence_comparisons = ev.display_evidence_comparison_rows(report)
    if evidence_comparisons:
        parts += [
            "## Original against other prompts, on evidence",
            _markdown_table(ev.EVIDENCE_COMPARISON_HEADER, evidence_comparisons),
        ]
    parts += [
        "## Tasks with a clone of the canonical solution (cumulative)",
        _markdown_table(GROUP_HEADER, display_group_rows(report)),
    ]
    comparisons = display_comparison_rows(report)
    if comparisons:
        parts += [
            "## Original against other prompts",
            _markdown_table(COMPARISON_HEADER, comparisons),
        ]
    correctness = display_correctness_rows(report)
    if correctness:
        table = _markdown_table(CORRECTNESS_HEADER, correctness)
        parts += ["## pass@k (percent) beside memorization", table]
    parts.append(f"{len(report['evidence'])} clone pairs as evidence (see the HTML report).")
    reasons = [
        f"- {p['model']} t={p['temperature']:g} {p['prompt_set']} {p['task_id']} sample "
        f"{p['sample']} (type {p['type']}, {p['similarity']}%): {ev.pair_reason_line(p)}"
        for p in report["evidence"]
        if ev.pair_reason_line(p)
    ]
    if reasons:
        parts += ["## Why each clone pair is or is not evidence", "\n".join(reasons)]
    return "\n\n".join(parts) + "\n"


LATEX_SPECIAL = {
    "\\": r"\textbackslash{}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}",
    "_": r"\_", "%": r"\%", "&": r"\&", "#": r"\#", "$": r"\$", "{": r"\{", "}": r"\}",
}  # fmt: skip


def _latex_escape(text: str) -> str:
    return "".join(LATEX_SPECIAL.get(char, char) for char in text)


def render_latex(report: dict) -> str:
    """Table VI of the reference study: per model (and temperature), tasks with Type-1/2/3
    clones under the original and under each other prompt set."""
    labels = list(dict.fromkeys(g["prompt_set"] for g in report["groups"]))
    rows: dict[tuple, dict] = {}
    for g in report["groups"]:
        rows.setdefault((g["label"], g["temperature"]), {})[g["prompt_set"]] = g
    columns = "l" + "rrr" * len(labels)
    header = " & ".join(
        rf"\multicolumn{{3}}{{c}}{{{_latex_escape(label.capitalize())}}}" for label in labels
    )
    lines = [
        r"\begin{table}[t]",
        r"\centering",
        rf"\caption{{Tasks whose samples include a clone of the canonical solution "
        rf"(cloneprobe, profile {_latex_escape(report['profile'])}).}}",
        r"\label{tab:clones}",
        rf"\begin{{tabular}}{{{columns}}}",
        r"\hline",
        rf"Model & {header} \\",
        " & " + " & ".join(["T1 & T2 & T3"] * len(labels)) + r" \\",
        r"\hline",
    ]
    temperatures = {t for _, t in rows}
    for (model, temperature), by_label in rows.items():
        name = _latex_escape(model) + (f" ($t={temperature:g}$)" if len(temperatures) > 1 else "")
        cells = []
        for label in labels:
            group = by_label.get(label)
            cells += [str(group["tasks_with_clone"][t]) for t in TYPES] if group else ["--"] * 3
        lines.append(f"{name} & " + " & ".join(cells) + r" \\")
    lines += [r"\hline", r"\end{tabular}", r"\end{table}"]
    return "\n".join(lines) + "\n"


REPORT_RENDERERS = {
    "report.json": render_json,
    "groups.csv": render_csv,
    "comparisons.csv": render_comparisons_csv,
    "report.md": render_markdown,
    "table6.tex": render_latex,
    "report.html": render_html,
}
REPORT_FILES = frozenset(REPORT_RENDERERS)
"""The files `--report DIR` writes."""


def write_reports(report: dict, folder: Path) -> list[Path]:
    """Write every format into `folder`; returns the paths written."""
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for name, render in REPORT_RENDERERS.items():
        path = folder / name
        path.write_text(render(report), encoding="utf-8")
        paths.append(path)
    return paths
