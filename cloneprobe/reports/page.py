"""The HTML report's page: its style, a plain table, and the document around the sections
(shared by the audit's report and the positive control's, with no import of either)."""

from __future__ import annotations

from cloneprobe.reports.safe_text import html_text as escape

STYLE = """
body{font-family:system-ui,sans-serif;margin:1.5em 2em;color:#222;max-width:120em}
table{border-collapse:collapse;margin:1em 0}
th,td{border:1px solid #ccc;padding:.25em .6em;text-align:right}
th{background:#f3f3f3} td.l,th.l{text-align:left} td.l{white-space:nowrap}
h1{margin:.2em 0} #summary{border:1px solid #bbb;border-radius:6px;padding:.2em 1em;
background:#fafafa} p.answer{font-size:1.15em;font-weight:600} ul.groups{margin:.3em 0}
ol.cases .why{color:#555;font-size:.9em} dl{display:grid;grid-template-columns:max-content auto;
gap:.2em 1em;font-size:.9em} dt{font-weight:600} dd{margin:0}
.pair{margin:1.5em 0;border-top:1px solid #ddd} table.code td{font-family:monospace;
text-align:left;white-space:pre-wrap} .pair pre{background:#f6f6f6;padding:.4em}
h3{font-size:1em} p.tier{font-weight:600}
.tier-evidence p.tier{color:#b00} .tier-similar p.tier,.tier-candidate p.tier{color:#555}
div.wide{overflow-x:auto;max-width:100%} table.tasks td{white-space:nowrap;overflow:hidden;
text-overflow:ellipsis;max-width:14em} table.tasks td.why{font-size:.85em;max-width:18em}
.diff{background:#fff3cd} .gap{background:#f4f4f4;color:#777}
p.legend span{padding:0 .4em;font-size:.85em;margin-right:.5em}
td.v-memorized{color:#b00;font-weight:600}
td.v-suspected{color:#a60;font-weight:600}
svg{display:block;margin:.5em 0;max-width:100%;height:auto}
table.file-verdicts td{vertical-align:top} table.file-verdicts td.why{white-space:normal;
min-width:18em;max-width:28em} table.file-verdicts pre{background:#f6f6f6;padding:.4em;
white-space:pre;max-width:60em;overflow-x:auto}
"""

def plain_table(header: list[str], rows: list[list], left: int = 3) -> str:
    head = "".join(f'<th class="{"l" if i < left else ""}">{escape(h)}</th>'
                   for i, h in enumerate(header))  # fmt: skip
    body = "".join(
        "<tr>" + "".join(f'<td class="{"l" if i < left else ""}">{escape(str(c))}</td>'
                         for i, c in enumerate(row)) + "</tr>"
        for row in rows
    )  # fmt: skip
    # in its own scrolling box: a table wider than the window scrolls, not the whole page
    return f'<div class="wide"><table><tr>{head}</tr>{body}</table></div>'



def page(title: str, body: list[str]) -> str:
    """The report's page around its sections."""
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>{escape(title)}</title><style>{STYLE}</style></head><body>"
        + "\n".join(body)
        + "</body></html>\n"
    )
