"""The deterministic fixer for HumanEval's mechanical prompt issues.

- docstring_formatting: trailing blanks on docstring lines, runs of blank lines in a docstring;
- incorrect_example: an example whose stated output disagrees with what the canonical solution
  returns on the example's input (run in a separate, limited process);
- url: URLs in a docstring are removed.

Each fix is a PromptEdit against the text the previous fixes left.
"""

from __future__ import annotations

import ast
import math
import re
from dataclasses import dataclass

from .docstrings import docstring_line_ranges
from .edits import PromptEdit, apply_edit
from .reference_run import evaluate_calls
from .tasks import Task

ARROWS = ("==>", "=>", "➞", "→", "->", "==", "=", "should return", "returns")
URL = re.compile(r"\s*\(?\s*(?:https?://|www\.)[^\s)]+\)?")


def _line_edits(text: str, new_lines: dict[int, str | None], kind: str, why: str):
    """Edits for changed lines (None deletes the line), one per run of adjacent lines."""
    lines = text.splitlines(keepends=True)
    edits, run = [], []
    for number in [*sorted(new_lines), None]:
        if run and (number is None or number != run[-1] + 1):
            start, end = run[0], run[-1]
            before = "".join(lines[start - 1 : end])
            after = "".join(new_lines[n] or "" for n in run)
            edits.append(PromptEdit(kind, start, end, before, after, why))
            run = []
        if number is not None:
            run.append(number)
    return edits


def _apply_all(text: str, edits: list[PromptEdit], where: str) -> str:
    # Edits computed on the same text are applied bottom-up so earlier line numbers hold.
    for edit in sorted(edits, key=lambda e: e.start, reverse=True):
        text = apply_edit(text, edit, where)
    return text


def fix_docstring_layout(text: str) -> list[PromptEdit]:
    lines = text.splitlines(keepends=True)
    changed: dict[int, str | None] = {}
    for start, end in docstring_line_ranges(text):
        blank_run = 0
        for number in range(start, end + 1):
            line = lines[number - 1]
            stripped = line.rstrip(" \t\n") + ("\n" if line.endswith("\n") else "")
            blank_run = blank_run + 1 if not stripped.strip() else 0
            if blank_run > 1:
                changed[number] = None
            elif stripped != line:
                changed[number] = stripped
    return _line_edits(
        text, changed, "docstring_formatting", "trailing blanks or repeated blank lines"
    )


def fix_urls(text: str) -> list[PromptEdit]:
    lines = text.splitlines(keepends=True)
    changed: dict[int, str | None] = {}
    for start, end in docstring_line_ranges(text):
        for number in range(start, end + 1):
            line = lines[number - 1]
            if URL.search(line):
                changed[number] = URL.sub("", line)
    return _line_edits(text, changed, "url", "a prompt should not send the reader to a URL")


@dataclass(frozen=True)
class Example:
    """One input/output example: the call, and where its stated output stands in the text."""

    line: int
    call: str
    expected: str
    column: int
    """Offset of `expected` in the line."""
    loose: bool = False
    """Stated with a bare `=`, which prompts also use for other notation (`tri(4) = 3` names a
    sequence term): only trusted when the stated value is of the kind the function returns."""


def _balanced_call(text: str, entry_point: str) -> str | None:
    """The `entry_point(...)` call at the start of `text`, if its brackets balance."""
    if not text.startswith(entry_point + "("):
        return None
    depth = 0
    for index, char in enumerate(text):
        if char in "([{":
            depth += 1
        elif char in ")]}":
            depth -= 1
            if depth == 0:
                return text[: index + 1]
    return None


def _literal_prefix(text: str) -> str | None:
    """The longest prefix of `text` (trailing punctuation trimmed) that is a Python literal."""
    candidate = text.strip()
    if candidate.endswith(".") and _literal_prefix(candidate[:-1]) is not None:
        return _literal_prefix(candidate[:-1])  # `should return 12.`: a full stop, not 12.0
    while candidate:
        try:
            ast.literal_eval(candidate)
            return candidate
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            if candidate[-1] in ".,;:":
                candidate = candidate[:-1].rstrip()
                continue
            return None
    return None


def find_examples(text: str, entry_point: str) -> list[Example]:
    lines = text.splitlines()
    examples = []
    for start, end in docstring_line_ranges(text):
        for number in range(start, end + 1):
            line = lines[number - 1]
            body = line.strip()
            offset = line.index(body) if body else 0
            doctest = body.startswith(">>>")
            if doctest:
                body = body[3:].lstrip()
                offset = line.index(body, offset + 3) if body else offset
            call = _balanced_call(body, entry_point)
            if call is None:
                continue
            rest = body[len(call) :]
            stated = rest.lstrip()
            for arrow in ARROWS:
                if stated.startswith(arrow):
                    expected = _literal_prefix(stated[len(arrow) :])
                    if expected is not None:
                        column = line.index(expected, offset + len(call))
                        examples.append(Example(number, call, expected, column, arrow == "="))
                    break
            else:
                if doctest and not stated and number < end:
                    following = lines[number]
                    expected = _literal_prefix(following)
                    if expected is not None and not following.strip().startswith(">>>"):
                        examples.append(
                            Example(number + 1, call, expected, following.index(expected))
                        )
    return examples


def _kind(value) -> str:
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, (list, tuple)):
        return "sequence"
    return type(value).__name__


def _same(actual, expected, expected_text: str) -> bool:
    if isinstance(actual, float) or isinstance(expected, float):
        if not isinstance(actual, (int, float)) or not isinstance(expected, (int, float)):
            return False
        decimals = len(expected_text.split(".")[1]) if "." in expected_text else 0
        return math.isclose(actual, expected, rel_tol=1e-9, abs_tol=0.5 * 10 ** -max(decimals, 1))
    if isinstance(actual, (list, tuple)) and isinstance(expected, (list, tuple)):
        return len(actual) == len(expected) and all(
            _same(a, e, repr(e)) for a, e in zip(actual, expected, strict=True)
        )
    return (actual == expected and type(actual) is not bool) or actual is expected


def _quoted_like(value_repr: str, stated: str) -> str:
    """Python's repr, with the stated example's double quotes kept where that is safe."""
    if '"' in stated and "'" not in stated and '"' not in value_repr:
        return value_repr.replace("'", '"')
    return value_repr


def fix_examples(task: Task, text: str) -> list[PromptEdit]:
    examples = find_examples(text, task.entry_point)
    if not examples:
        return []
    results = evaluate_calls(f"{text}{task.canonical_solution}", [e.call for e in examples])
    lines = text.splitlines(keepends=True)
    edits = []
    for example, actual_repr in zip(examples, results, strict=True):
        if actual_repr is None:
            continue
        try:
            actual = ast.literal_eval(actual_repr)
        except (ValueError, SyntaxError):
            continue
        expected = ast.literal_eval(example.expected)
        if example.loose and _kind(actual) != _kind(expected):
            continue
        if _same(actual, expected, example.expected):
            continue
        line = lines[example.line - 1]
        end = example.column + len(example.expected)
        fixed = line[: example.column] + _quoted_like(actual_repr, example.expected) + line[end:]
        edits.append(
            PromptEdit(
                "incorrect_example",
                example.line,
                example.line,
                line,
                fixed,
                f"the canonical solution returns {actual_repr} for {example.call}",
            )
        )
    return edits


def mechanical_fixes(task: Task, text: str) -> tuple[str, list[PromptEdit]]:
    """Apply the three mechanical fixers in turn; the fixed text and the edits, in order."""
    edits: list[PromptEdit] = []
    for fixer in (fix_docstring_layout, fix_urls):
        found = fixer(text)
        text = _apply_all(text, found, task.task_id)
        edits.extend(sorted(found, key=lambda e: e.start, reverse=True))
    found = fix_examples(task, text)
    text = _apply_all(text, found, task.task_id)
    edits.extend(sorted(found, key=lambda e: e.start, reverse=True))
    return text, edits
