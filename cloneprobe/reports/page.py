"""The HTML report's page: its style, a plain table, and the document around the sections
(shared by the audit's report and the positive control's, with no import of either)."""

from __future__ import annotations

from cloneprobe.reports.safe_text import html_text as escape

STYLE = """
body{font-family:system-ui,sans-serif;margin:2em;color:#222}
table{border-collapse:collapse;margin:1em 0}
th,td{border:1px solid #ccc;padding:.25em .6em;text-align:right}
th{background:#f3f3f3} td.l,th.l{text-align:left}
.pair{margin:1.5em 0} .pair table td{font-family:monospace;text-align:left;white-space:pre-wrap}
.diff{background:#fff3cd} h3{font-size:1em}
table.tasks td.why{font-size:.8em;max-width:28em} svg{display:block;margin:.5em 0}
"""


def plain_table(header: list[str], rows: list[list], left: int = 3) -> str:
    head = "".join(f'<th class="{"l" if i < left else ""}">{escape(h)}</th>'
                   for i, h in enumerate(header))  # fmt: skip
    body = "".join(
        "<tr>" + "".join(f'<td class="{"l" if i < left else ""}">{escape(str(c))}</td>'
                         for i, c in enumerate(row)) + "</tr>"
        for row in rows
    )  # fmt: skip
    return f"<table><tr>{head}</tr>{body}</table>"



def page(title: str, body: list[str]) -> str:
    """The report's page around its sections."""
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>{escape(title)}</title><style>{STYLE}</style></head><body>"
        + "\n".join(body)
        + "</body></html>\n"
    )
