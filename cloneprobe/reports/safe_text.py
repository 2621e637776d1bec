"""Making user- and model-controlled text inert for each place it is shown.

Sample text, model names, task ids and paths come from files, servers and models; none of them
may act as markup, a formula, a terminal escape or a command in the output they reach. Each
function here makes text safe for one format and is used wherever that format is written.
"""

from __future__ import annotations

import re
from html import escape as _html_escape

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
"""Control characters other than newline and tab (ESC starts ANSI sequences; CR rewrites the
line; C1 controls include the 8-bit CSI)."""
_BIDI = re.compile("[\u202a-\u202e\u2066-\u2069]")
"""Bidirectional overrides, which reorder what a reader sees."""


def _visible(match: re.Match) -> str:
    return f"\\x{ord(match.group()):02x}" if ord(match.group()) < 0x100 else "\ufffd"


def printable(text: object) -> str:
    """Text with control characters (ANSI escapes, carriage returns, bells) shown as `\\xNN`
    and lone surrogates replaced, so it cannot move the cursor or restyle a terminal."""
    text = str(text)
    text = _BIDI.sub(lambda m: f"\\u{ord(m.group()):04x}", _CONTROL.sub(_visible, text))
    return text.encode("utf-8", "replace").decode("utf-8") if _has_surrogate(text) else text


def _has_surrogate(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def one_line(text: object) -> str:
    """`printable`, with newlines and tabs shown too (an error message stays one line)."""
    return printable(str(text).replace("\n", "\\n").replace("\t", " "))


def terminal_text(text: object, style: str = ""):
    """A rich `Text` that prints `text` literally: no markup, no control characters."""
    from rich.text import Text

    return Text(printable(text), style=style)


def html_text(text: object) -> str:
    """Text for HTML element content and attribute values."""
    return _html_escape(printable(text), quote=True)


LATEX_SPECIAL = {
    "\\": r"\textbackslash{}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}",
    "_": r"\_", "%": r"\%", "&": r"\&", "#": r"\#", "$": r"\$", "{": r"\{", "}": r"\}",
    "\n": " ", "\t": " ", "\r": " ",
}  # fmt: skip


def latex_text(text: object) -> str:
    """Text for a LaTeX table cell: specials escaped, controls dropped, one line."""
    text = _CONTROL.sub("", str(text))
    return "".join(LATEX_SPECIAL.get(char, char) for char in text)


_MARKDOWN_SPECIAL = re.compile(r"([\\`*_\[\]|~])")
"""What can end a cell (|), start code, emphasis, links or images ([ ]), or escape."""


def markdown_text(text: object) -> str:
    """Text for a Markdown table cell: markup characters backslash-escaped, HTML tags and
    entities escaped, one line."""
    text = one_line(text)
    text = _html_escape(text, quote=False)
    return _MARKDOWN_SPECIAL.sub(r"\\\1", text)


FORMULA_PREFIXES = ("=", "+", "-", "@", "\t", "\r")


def csv_cell(value: object) -> object:
    """A CSV cell that a spreadsheet shows as text: strings starting like a formula get a
    leading apostrophe (OWASP's advice); numbers stay numbers."""
    if not isinstance(value, str):
        return value
    value = printable(value)
    return "'" + value if value.startswith(FORMULA_PREFIXES) else value
