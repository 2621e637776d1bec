"""The verifying lexer: tokens with their kind, text and place, for the few documents that the
scanning lexer made candidates. Slower than `lexer` (one Python step per token) and more exact:
string prefixes, numbers with exponents, multi-character operators; it never raises.

Renaming follows the clone detector's `blind` mode (cloneprobe.clones.normalize): every name
(attributes and builtins too) becomes `x`, integers `1`, floats `1.0`, strings `"x"`; keywords
and operators stay. Comments and string statements (docstrings) are dropped.
"""

from __future__ import annotations

import keyword
import re
from typing import NamedTuple

from ..clones.normalize import BLIND

_PREFIX = r"(?:[rRbBuUfF]{1,2}(?=['\"]))?"
_TOKEN = re.compile(
    # blanks before a token are part of its match, and a match may be blanks alone (the
    # empty last alternative): the engine does not try every alternative at every blank
    r"[ \t\f\r]*(?:"
    r"(?P<comment>#[^\n]*)"
    r"|(?P<string>" + _PREFIX + r'(?:"""[^"\\]*(?:(?:\\.|"(?!""))[^"\\]*)*"""'
    r"|'''[^'\\]*(?:(?:\\.|'(?!''))[^'\\]*)*'''"
    r'|"[^"\\\n]*(?:\\.[^"\\\n]*)*"'
    r"|'[^'\\\n]*(?:\\.[^'\\\n]*)*'))"
    r"|(?P<float>(?:\d[\d_]*\.[\d_]*|\.\d[\d_]*)(?:[eE][+-]?\d[\d_]*)?[jJ]?"
    r"|\d[\d_]*[eE][+-]?\d[\d_]*[jJ]?)"
    r"|(?P<int>0[xXoObB][\da-fA-F_]+[lL]?|\d[\d_]*[lLjJ]?)"
    r"|(?P<name>[^\W\d]\w*)"
    r"|(?P<newline>\n[ \t\f\r\n]*)"
    r"|(?P<op>\*\*=?|//=?|>>=?|<<=?|->|:=|\.\.\.|[-+*/%&|^@<>!=]=|[^\s\w])"
    r"|)",
    re.S,
)
KEYWORDS = frozenset(keyword.kwlist) | {"print", "exec"}
"""Kept by renaming (`print` and `exec` are keywords in Python 2 and in NiCad's grammar)."""


class Token(NamedTuple):
    """One token (a named tuple: the verifier makes one per token of every candidate region,
    and a tuple is made several times faster than a frozen dataclass)."""

    kind: str
    """name, keyword, int, float, string, op."""
    text: str
    start: int
    end: int

    @property
    def blind(self) -> str:
        return _BLIND_OF_KIND.get(self.kind, self.text)


_BLIND_OF_KIND = {"name": BLIND["id"], "int": BLIND["int"], "float": BLIND["float"],
                  "string": BLIND["str"]}  # fmt: skip


def blind_texts(tokens: list[Token]) -> list[str]:
    """Each token's text after blind renaming (`Token.blind`, for a whole list at once)."""
    blind = _BLIND_OF_KIND.get
    return [blind(kind, text) for kind, text, _, _ in tokens]


_GROUPS = {index: name for name, index in _TOKEN.groupindex.items()}


def tokenize(text: str) -> list[Token]:
    """Tokens of the text, comments and string statements left out."""
    tokens: list[Token] = []
    append = tokens.append
    make = tuple.__new__  # Token._make without its length check: a third of the time here
    groups = _GROUPS
    comment, string, name, newline, op = (
        _TOKEN.groupindex[g] for g in ("comment", "string", "name", "newline", "op")
    )
    line_start = True  # no token yet on this logical line
    depth = 0
    pending_string: Token | None = None  # a string that began a line: a statement if alone
    for match in _TOKEN.finditer(text):
        group = match.lastindex
        if group is None or group == comment:  # blanks alone, a comment
            continue
        if group == newline:
            if depth == 0:
                pending_string = None  # it stood alone on its line: drop it
                line_start = True
            continue
        if pending_string is not None:
            append(pending_string)
            pending_string = None
        value = match.group(group)
        kind = groups[group]
        if group == name:
            if value in KEYWORDS:
                kind = "keyword"
        elif group == string:
            if line_start and depth == 0:
                pending_string = make(Token, (kind, value, match.start(group), match.end(group)))
                line_start = False
                continue
        elif group == op:
            if value in "([{":
                depth += 1
            elif value in ")]}":
                if depth:
                    depth -= 1
            elif value == ";" and depth == 0:
                line_start = True
                continue
        line_start = False
        append(make(Token, (kind, value, match.start(group), match.end(group))))
    return tokens


WORD = re.compile(r"[a-z0-9]+")


def words(text: str) -> list[tuple[str, int, int]]:
    """Lower-cased alphanumeric words with their place, for comparing prose (docstrings)."""
    return [(m.group(), m.start(), m.end()) for m in WORD.finditer(text.lower())]
