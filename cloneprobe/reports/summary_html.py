"""The first screen of the HTML report: the answer in a sentence per model, the verdicts
counted, the strongest cases linked to their clone pairs, and what the words mean."""

from __future__ import annotations

from cloneprobe.audit.audit_report import AuditReport
from cloneprobe.audit.verdict_summary import group_verdicts, strongest_cases
from cloneprobe.evidence.verdict import VERDICTS
from cloneprobe.reports.safe_text import html_text as escape

from .glossary import glossary_items
from .summary_lines import answer, group_sentence, shorten


def summary_section(report: AuditReport, entries: list, table) -> list[str]:
    """The summary's HTML parts. `table(header, rows, left)` renders a plain table."""
    groups = group_verdicts(entries)
    if not groups:
        return ['<section id="summary"><h2>Summary</h2><p class="answer">No task was judged.'
                "</p></section>"]
    rows = [[g.model, f"{g.temperature:g}", g.prompt_set, str(g.tasks),
             *(str(g.counts[v]) for v in VERDICTS)] for g in groups]  # fmt: skip
    lines = "".join(f"<li>{escape(group_sentence(g))}</li>" for g in groups)
    # a subset (the bare audit's quick look) says so beside the answer, not only at the foot
    scope = f'<p class="scope">{escape(report.scope["note"])}</p>' if report.scope else ""
    parts = ['<section id="summary">', "<h2>Summary</h2>",
             f'<p class="answer">{escape(answer(groups))}</p>', scope,
             f'<ul class="groups">{lines}</ul>',
             table(["model", "temperature", "prompts", "tasks judged", *VERDICTS], rows, 3)]
    cases = strongest_cases(report, entries)
    if cases:
        items = []
        for case in cases:
            e = case.entry
            what = (f"{e['task_id']}: {e['verdict']} ({e['model']}, t={e['temperature']:g}, "
                    f"{e['prompt_set']})")  # fmt: skip
            why = shorten((e.get("verdict_reasons") or [""])[0])
            link = (f'<a href="#pair-{case.pair}">{escape(what)}</a>' if case.pair is not None
                    else escape(what))  # fmt: skip
            strength = f" strength {case.strength:.2f}:" if case.pair is not None else ""
            items.append(f'<li>{link}<span class="why">{escape(strength)} {escape(why)}</span>'
                         "</li>")  # fmt: skip
        parts += ["<h3>Strongest cases</h3>", f'<ol class="cases">{"".join(items)}</ol>']
    terms = "".join(f"<dt>{escape(term)}</dt><dd>{escape(meaning)}</dd>"
                    for term, meaning in glossary_items())  # fmt: skip
    parts += [f'<details class="glossary" open><summary>What the verdicts and clone types '
              f"mean</summary><dl>{terms}</dl></details>", "</section>"]
    return parts
