"""The positive control's report: a table of every score's separation per model, and ROC
plots (SVG, no external assets), written as control.html beside control.json."""

from __future__ import annotations

import json
import os
from html import escape
from pathlib import Path

from .html import COLOURS, STYLE, _table

HEADER = ["model", "score", "AUROC", "95% CI", "contaminated", "held out",
          "clone rate contaminated", "clone rate held out"]  # fmt: skip


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


def roc_plot(model: str, scores: dict, size: int = 300, legend: int = 230) -> str:
    """ROC curves of a model's scores in one square plot, the diagonal for chance."""
    low, high = 30, size - 30

    def x(fpr: float) -> float:
        return low + fpr * (high - low)

    def y(tpr: float) -> float:
        return high - tpr * (high - low)

    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{size + legend}" height="{size}" '
        f'role="img" aria-label="ROC curves of {escape(model)}">',
        f'<rect x="{low}" y="{low}" width="{high - low}" height="{high - low}" fill="none" '
        'stroke="#333"/>',
        f'<line x1="{low}" y1="{high}" x2="{high}" y2="{low}" stroke="#bbb" stroke-dasharray="4"/>',
        f'<text x="{size / 2}" y="{size - 8}" text-anchor="middle" font-size="11">false '
        "positive rate (held-out tasks flagged)</text>",
        f'<text x="12" y="{size / 2}" font-size="11" transform="rotate(-90 12 {size / 2})" '
        'text-anchor="middle">true positive rate</text>',
        f'<text x="{low}" y="18" font-size="12">{escape(model)}</text>',
    ]
    shown = [(n, s) for n, s in scores.items() if s.get("available")]
    for number, (name, s) in enumerate(shown):
        colour = COLOURS[number % len(COLOURS)]
        dash = "" if number < len(COLOURS) else ' stroke-dasharray="3"'
        path = " ".join(f"{x(f):.1f},{y(t):.1f}" for f, t in s["roc"])
        parts.append(f'<polyline points="{path}" fill="none" stroke="{colour}" '
                     f'stroke-width="1.5"{dash}/>')  # fmt: skip
        parts.append(f'<text x="{size + 5}" y="{low + 13 * number + 8}" font-size="11" '
                     f'fill="{colour}">{escape(name)} {s["auroc"]:.2f}</text>')  # fmt: skip
    parts.append("</svg>")
    return "".join(parts)


def control_html(report: dict) -> str:
    settings = report["settings"]
    summary = (
        f"Base model {settings['base_model']}, {settings['mode']} mode; {settings['tasks']} "
        f"tasks split with seed {settings['seed']} into {len(report['split']['contaminated'])} "
        f"contaminated and {len(report['split']['held_out'])} held out; doses (epochs) "
        f"{settings['doses']}; top {settings['finetune']['top_layers']} layers trained at "
        f"learning rate {settings['finetune']['learning_rate']}; n={settings['n']} samples per "
        f"task at temperature {settings['temperature']}."
    )
    plots = "".join(roc_plot(model, scores) for model, scores in report["models"].items())
    return (
        "<!DOCTYPE html><html><head><meta charset='utf-8'><title>cloneprobe positive control"
        f"</title><style>{STYLE}</style></head><body><h1>Positive control</h1>"
        f"<p>{escape(summary)}</p><p>Each score is oriented so that higher means more "
        "memorization-like; AUROC is the chance that a contaminated task scores above a "
        "held-out one (0.5 = chance), with a 95% bootstrap interval over tasks. clone_typeK_P "
        "is the share of a task's samples with a Type-K (or closer) clone under profile P; its "
        "clone rate is the share of tasks with at least one.</p>"
        f"<h2>Separation of the halves</h2>{_table(HEADER, control_rows(report), left=2)}"
        f"<h2>ROC curves</h2>{plots}</body></html>"
    )


def write_control_report(report: dict, folder: Path) -> None:
    """control.json and control.html in `folder`, each written under a temporary name and
    renamed, so a reader never sees half a file."""
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in (("control.json", json.dumps(report, indent=1)),
                       ("control.html", control_html(report))):  # fmt: skip
        temporary = folder / f".{name}.tmp"
        temporary.write_text(text, encoding="utf-8")
        os.replace(temporary, folder / name)
