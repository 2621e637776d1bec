"""The positive control's section of the HTML report: how every score separates the halves
(AUROC with its interval, clone rates per half), how the combined verdict does (its false-
and true-positive rates), ROC curves, score distributions per half, and the control's tasks.

`cloneprobe control` writes it as report.html (with control.json); `cloneprobe report
--control DIR` puts the same section into an audit's report.html."""

from __future__ import annotations

import json
from pathlib import Path

from cloneprobe.atomic import write_atomically
from cloneprobe.evidence.verdict import VERDICTS, calibration_line
from cloneprobe.reports.safe_text import html_text as escape
from cloneprobe.signals.registry import SIGNALS

from .page import page, plain_table
from .plots import roc_plot, strip_plot
from .task_view import SORT_SCRIPT, sortable_table

HEADER = ["model", "score", "AUROC", "95% CI", "contaminated", "held out",
          "clone rate contaminated", "clone rate held out"]  # fmt: skip
VERDICT_HEADER = ["model", "half", "tasks", "flagged (memorized or suspected) [95% CI]",
                  *VERDICTS]  # fmt: skip
TASK_HEADER = ["model", "task", "half", "clone", "why (clone)", "verdict", "why (verdict)"]
DISTRIBUTED = (*(name for name, s in SIGNALS.items() if s.plot_distribution),
               "clone_type3_default")  # fmt: skip
"""Scores whose per-half distributions are plotted (with each likelihood signal relative to
the base model)."""
HALF_COLOURS = ("#d62728", "#1f77b4")
"""Contaminated red, held out blue."""


def control_rows(report: dict) -> list[list]:
    rows = []
    for model, scores in report["models"].items():
        for name, s in scores.items():
            if not s.get("available"):
                rows.append([model, name, "n/a", s.get("reason", ""), "", "", "", ""])
                continue
            rows.append([
                model, name, f"{s['auroc']:.2f}", f"{s['ci_low']:.2f}-{s['ci_high']:.2f}",
                s["positives"], s["negatives"],
                f"{100 * s['rate_contaminated']:.0f}%" if "rate_contaminated" in s else "",
                f"{100 * s['rate_held_out']:.0f}%" if "rate_held_out" in s else "",
            ])  # fmt: skip
    return rows


def verdict_rows(report: dict) -> list[list[str]]:
    """Per model and half: the verdicts and the share flagged (on held-out tasks and on the
    base model a false-positive rate, on contaminated tasks of a dose a true-positive rate)."""
    rows = []
    for model, halves in (report.get("verdicts") or {}).items():
        for half, h in halves.items():
            shown = "n/a" if h["rate"] is None else (
                f"{h['flagged']} ({100 * h['rate']:.0f}% [{100 * h['ci95'][0]:.0f}, "
                f"{100 * h['ci95'][1]:.0f}])"
            )  # fmt: skip
            counts = [str(h["verdicts"].get(v, 0)) for v in VERDICTS]
            if h.get("memorized_on_disguise"):  # VERDICTS[0] is memorized
                counts[0] += f" ({h['memorized_on_disguise']} on the disguise)"
            rows.append([model, half.replace("_", " "), str(h["tasks"]), shown, *counts])
    return rows


def summary_line(report: dict) -> str:
    settings = report["settings"]
    return (
        f"Base model {settings['base_model']}, {settings['mode']} mode; {settings['tasks']} "
        f"tasks split with seed {settings['seed']} into {len(report['split']['contaminated'])} "
        f"contaminated and {len(report['split']['held_out'])} held out; doses (epochs) "
        f"{settings['doses']}; top {settings['finetune']['top_layers']} layers trained at "
        f"learning rate {settings['finetune']['learning_rate']}; n={settings['n']} samples per "
        f"task at temperature {settings['temperature']}."
    )


def distribution_plots(report: dict) -> list[str]:
    """Per score: its values on the contaminated and the held-out half, per model."""
    names = [n for n in DISTRIBUTED]
    for scores in report["models"].values():
        names += [n for n in scores if n.endswith("_vs_base") and n not in names]
    plots = []
    for name in names:
        rows, ids = [], []
        for model, scores in report["models"].items():
            s = scores.get(name) or {}
            if s.get("available"):
                rows += [(f"{model} contaminated", s["contaminated"]),
                         (f"{model} held out", s["held_out"])]  # fmt: skip
                ids += [_task_ids(s, "contaminated"), _task_ids(s, "held_out")]
        if rows:
            axis = f"{name} (oriented: higher is more memorization-like)"
            colours = [HALF_COLOURS[i % 2] for i in range(len(rows))]
            named = ids if all(n is not None for n in ids) else None
            plots.append(strip_plot(f"{name} per half", rows, axis, colours=colours,
                                    names=named))  # fmt: skip
    return [p for p in plots if p]


def _task_ids(score: dict, half: str) -> list[str] | None:
    """The task of each value of a half (control.json written before they were kept: None,
    and the plot's points go unnamed)."""
    ids = score.get(f"{half}_tasks")
    if isinstance(ids, list) and len(ids) == len(score[half]):
        return [str(i) for i in ids]
    return None


def task_rows(report: dict) -> list[list[str]]:
    rows = []
    for model, entries in (report.get("tasks") or {}).items():
        for e in entries:
            kind = f"Type-{e['best_type']}" if e.get("best_type") else "none"
            clone = f"{e['clone_tier']} ({kind})" if e.get("clone_tier") else kind
            rows.append([model, e["task_id"], e["half"].replace("_", " "), clone,
                         "; ".join(e.get("clone_reasons") or []), e["verdict"],
                         "; ".join(e.get("verdict_reasons") or [])])  # fmt: skip
    return rows


def control_section(report: dict, table, sortable) -> list[str]:
    """The section's HTML parts. `table(header, rows, left)` renders a plain table,
    `sortable(header, rows)` a sortable one."""
    rule = report.get("verdict_rule")
    parts = [
        "<h2>Positive control</h2>",
        f"<p>{escape(summary_line(report))}</p>",
        "<p>Each score is oriented so that higher means more memorization-like; AUROC is the "
        "chance that a contaminated task scores above a held-out one (0.5 = chance), with a 95% "
        "bootstrap interval over tasks. clone_typeK_P is the share of a task's samples with a "
        "Type-K (or closer) clone under profile P; its clone rate is the share of tasks with at "
        "least one. NAME_vs_base is a fine-tuned model's likelihood relative to the base model's "
        "(the control's reference model).</p>",
        "<h3>Separation of the halves</h3>",
        table(HEADER, control_rows(report), 2),
    ]
    if report.get("verdicts"):
        parts += [
            "<h3>The combined verdict on the known halves</h3>",
            f"<p>{escape(f'Rule used here: {rule}.' if rule else '')} Flagged on held-out "
            "tasks and on the base model are false positives; on contaminated tasks of a "
            f"dose, true positives.</p>{table(VERDICT_HEADER, verdict_rows(report), 2)}",
            f"<p>{escape(calibration_line())}</p>",
        ]
    plots = [roc_plot(model, [(n, s["auroc"], s["roc"]) for n, s in scores.items()
                              if s.get("available")])
             for model, scores in report["models"].items()]  # fmt: skip
    parts += ["<h3>ROC curves</h3>", *plots]
    distributions = distribution_plots(report)
    if distributions:
        parts += ["<h3>Score distributions per half</h3>", *distributions]
    if report.get("tasks"):
        parts += ["<h3>The control's tasks</h3>", sortable(TASK_HEADER, task_rows(report))]
    return parts


def write_control_report(report: dict, folder: Path) -> None:
    """control.json and report.html (the HTML report with the control's section) in
    `folder`, each written under a temporary name and renamed, so a reader never sees half
    a file."""
    folder.mkdir(parents=True, exist_ok=True)
    write_atomically(folder / "control.json", json.dumps(report, indent=1), errors="replace")
    write_atomically(folder / "report.html", render_control_page(report), errors="replace")


def render_control_page(control: dict) -> str:
    """The positive control's report.html: the report page with the control's section."""
    body = ["<h1>cloneprobe positive control</h1>",
            *control_section(control, plain_table, sortable_table), SORT_SCRIPT]  # fmt: skip
    return page("cloneprobe positive control", body)
