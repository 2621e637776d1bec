"""Renaming and the compared items: what of a fragment the comparison actually sees.

Renaming follows NiCad: `blind` makes every identifier `x`, `consistent` numbers identifiers
`x1, x2, ...` in order of first occurrence within the fragment, and both abstract literals
(integer `1`, float `1.0`, string `"x"`, character `'x'`). `none` keeps every token.
"""

from __future__ import annotations

from typing import Literal

from .fragment import Fragment, Line, is_compared

RenameMode = Literal["none", "blind", "consistent"]
Grain = Literal["line", "token"]
RENAME_MODES: tuple[RenameMode, ...] = ("none", "blind", "consistent")

LITERALS = {"int": "1", "float": "1.0", "str": '"x"', "char": "'x'"}
BLIND = {"id": "x", **LITERALS}


def rename_lines(lines: tuple[Line, ...], mode: RenameMode) -> list[list[str]]:
    """Token texts of each line after renaming."""
    if mode == "none":
        return [[text for _, text in line] for line in lines]
    if mode == "blind":
        return [[BLIND.get(kind, text) for kind, text in line] for line in lines]
    numbering: dict[str, str] = {}
    renamed = []
    for line in lines:
        out = []
        for kind, text in line:
            if kind == "id":
                text = numbering.setdefault(text, f"x{len(numbering) + 1}")
            else:
                text = LITERALS.get(kind, text)
            out.append(text)
        renamed.append(out)
    return renamed


def compared_lines(fragment: Fragment, mode: RenameMode, header: bool) -> list[list[str]]:
    """The renamed lines the comparison sees: closing-brace lines dropped, the signature
    dropped unless `header`, and a renamed string's later rows (`str_row`) folded into the
    line the string starts on (NiCad renames the raw string to one `"x"`). Consistent
    numbering always starts at the signature, so a parameter keeps its number whether or not
    the signature is compared."""
    renamed = rename_lines(fragment.lines, mode)
    start = 0 if header else fragment.body_start
    compared: list[list[str]] = []
    for index, (line, tokens) in enumerate(zip(fragment.lines, renamed, strict=True)):
        if index < start or not is_compared(line):
            continue
        if mode != "none" and line and line[0][0] == "str_row":
            # a renamed string is one `"x"`: its later rows fold into the line it started on
            if compared:
                compared[-1].extend(tokens[1:])
                continue
            tokens = tokens[1:]
        compared.append(tokens)
    return compared


def compared_items(fragment: Fragment, mode: RenameMode, grain: Grain, header: bool) -> list[str]:
    """The sequence compared by LCS: one string per line, or one per token."""
    lines = compared_lines(fragment, mode, header)
    if grain == "line":
        return [" ".join(tokens) for tokens in lines]
    return [token for tokens in lines for token in tokens]
