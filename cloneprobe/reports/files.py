"""The report as files: JSON, CSV, Markdown, LaTeX (Table VI layout) and self-contained HTML."""

from __future__ import annotations

import contextlib
import csv
import io
import os
from pathlib import Path

from cloneprobe.atomic import write_atomically
from cloneprobe.audit.aggregate import TYPES
from cloneprobe.audit.audit_report import AuditReport
from cloneprobe.audit.spool import RowSpool
from cloneprobe.audit.verdict_summary import pair_standing
from cloneprobe.evidence.verdict import calibration_line
from cloneprobe.reports.safe_text import csv_cell, latex_text, markdown_text

from . import evidence_tables as ev
from .file_verdicts_view import (
    FILE_VERDICTS_HEADER,
    FILE_VERDICTS_TITLE,
    file_verdict_rows,
    file_verdicts_sentence,
)
from .html import render_html
from .summary_lines import summary_lines
from .tables import (
    COMPARISON_COLUMNS,
    COMPARISON_HEADER,
    CORRECTNESS_HEADER,
    CORRECTNESS_TITLE,
    GROUP_COLUMNS,
    GROUP_HEADER,
    comparison_rows,
    display_comparison_rows,
    display_correctness_rows,
    display_group_rows,
    group_rows,
    isolation_line,
    pair_count_line,
    repair_line,
    runs_line,
    settings_line,
)
from .task_rows import VERDICT_HEADER, VERDICT_TITLE, verdict_group_rows


def render_json(report: AuditReport) -> str:
    return report.to_json()


def render_evidence_jsonl(report: AuditReport) -> str:
    return "".join(line + "\n" for line in _all_evidence(report).lines())


def _all_evidence(report: AuditReport) -> RowSpool:
    if isinstance(report.all_evidence, RowSpool):
        return report.all_evidence
    spool = RowSpool()
    for row in report.every_pair():
        spool.append(row)  # type: ignore[arg-type]
    return spool


def _csv(header: list[str], rows: list[list]) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(header)
    writer.writerows([csv_cell(cell) for cell in row] for row in rows)
    return out.getvalue()


def render_csv(report: AuditReport) -> str:
    return _csv(GROUP_COLUMNS, group_rows(report))


def render_comparisons_csv(report: AuditReport) -> str:
    return _csv(COMPARISON_COLUMNS, comparison_rows(report))


def _markdown_table(header: list[str], rows: list[list]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(markdown_text(cell) for cell in row) + " |" for row in rows]
    return "\n".join(lines)


def render_markdown(report: AuditReport) -> str:
    summary = summary_lines(report)
    parts = [
        "# cloneprobe audit",
        *([f"**{markdown_text(summary[0])}**",
           "\n".join("- " + markdown_text(line) for line in summary[1:])] if summary else []),
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
        parts += [f"## {CORRECTNESS_TITLE}", table, isolation_line(report),
                  repair_line(report).replace("\n", "\n\n")]
    if report.file_verdicts and report.file_verdicts.get("samples"):
        section = report.file_verdicts
        parts += [f"## {FILE_VERDICTS_TITLE}", markdown_text(file_verdicts_sentence(section))]
        if section["differ"]:
            parts += [_markdown_table(FILE_VERDICTS_HEADER, file_verdict_rows(section)),
                      "The code of each is in report.html and report.json."]  # fmt: skip
    verdicts = verdict_group_rows(report)
    if verdicts:
        parts += [f"## {VERDICT_TITLE}", _markdown_table(VERDICT_HEADER, verdicts),
                  markdown_text(calibration_line())]  # fmt: skip
    if runs_line(report):
        parts.append(markdown_text(runs_line(report)))
    parts.append(f"{pair_count_line(report)} (see the HTML report and "
                 f"{report.evidence_file}).")  # fmt: skip
    reasons = [
        "- " + markdown_text(
            f"{p['model']} t={p['temperature']:g} {p['prompt_set']} {p['task_id']} sample "
            f"{p['sample']} (type {p['type']}, {p['similarity']}%): "
            f"{ev.pair_reason_line(p, pair_standing(report, p))}"
        )
        for p in report.evidence
        if ev.pair_reason_line(p)
    ]
    if reasons:
        parts += ["## Why each clone pair shown is or is not evidence", "\n".join(reasons)]
    return "\n\n".join(parts) + "\n"


def _latex_escape(text: str) -> str:
    return latex_text(text)


def _heading(label: str) -> str:
    """A prompt-set label as a column heading: first letter up, the rest as written
    (`fixed:P1` -> `Fixed:P1`, where str.capitalize would give `Fixed:p1`)."""
    return label[:1].upper() + label[1:]


def render_latex(report: AuditReport) -> str:
    """Table VI of the reference study: per model (and temperature), tasks with Type-1/2/3
    clones under the original and under each other prompt set."""
    labels = list(dict.fromkeys(g["prompt_set"] for g in report.groups))
    rows: dict[tuple, dict] = {}
    for g in report.groups:
        rows.setdefault((g["label"], g["temperature"]), {})[g["prompt_set"]] = g
    columns = "l" + "rrr" * len(labels)
    header = " & ".join(
        rf"\multicolumn{{3}}{{c}}{{{_latex_escape(_heading(label))}}}" for label in labels
    )
    lines = [
        r"\begin{table}[t]",
        r"\centering",
        rf"\caption{{Tasks whose samples include a clone of the canonical solution "
        rf"(cloneprobe, profile {_latex_escape(report.profile)}).}}",
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
    "evidence.jsonl": render_evidence_jsonl,
}
STREAMED = {"report.json": AuditReport.json_chunks, "evidence.jsonl": lambda r: (
    line + "\n" for line in _all_evidence(r).lines())}  # fmt: skip
"""Files written piece by piece (they grow with the number of samples)."""
REPORT_FILES = frozenset(REPORT_RENDERERS)
"""The files `--report DIR` writes."""


def write_reports(report: AuditReport, folder: Path) -> list[Path]:
    """Write every format into `folder`; returns the paths written.

    Every file is rendered under a hidden temporary name first and the set renamed into place
    only when all are whole, so an interrupt or an error while rendering leaves the folder as
    it was (an earlier run's report stays one run's report, never a mix), and a folder this
    call made is removed again."""
    made = not folder.exists()
    folder.mkdir(parents=True, exist_ok=True)
    staged: list[tuple[Path, Path]] = []
    try:
        for name, render in REPORT_RENDERERS.items():
            temporary = folder / f".{name}.{os.getpid()}.partial"
            staged.append((temporary, folder / name))
            write_atomically(temporary, STREAMED[name](report) if name in STREAMED
                             else render(report), errors="replace")  # fmt: skip
    except BaseException:
        for temporary, _ in staged:
            temporary.unlink(missing_ok=True)
        if made:
            with contextlib.suppress(OSError):
                folder.rmdir()
        raise
    try:
        for temporary, path in staged:
            os.replace(temporary, path)
    finally:  # a name that could not be taken (e.g. a folder there): no hidden file left
        for temporary, _ in staged:
            temporary.unlink(missing_ok=True)
    return [path for _, path in staged]
