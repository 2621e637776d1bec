"""Understanding model output: stop sequences, fenced chat answers, repeated or damaged prompts.

Every sample ends as two texts: the `completion` (what the model added, cleaned) and the
`program` (the whole code the clone detector reads: prompt plus continuation, or the model's
own full function).
"""

from __future__ import annotations

import re
import textwrap
from dataclasses import dataclass

FENCE = re.compile(r"```[ \t]*([A-Za-z0-9_+-]*)[^\n]*\n(.*?)(?:```|\Z)", re.DOTALL)
TOP_LEVEL_CODE = re.compile(r"(def |async def |class |@|import |from \S+ import )")
CHAT_INSTRUCTION = (
    "Complete the following Python function. Answer with the whole function, including its "
    "signature, in one ```python code block.\n\n```python\n{prompt}```"
)


@dataclass(frozen=True)
class Understood:
    completion: str
    program: str
    form: str
    """`continuation`, `full` (repeats the prompt), or `fenced` (code from a chat answer)."""


def truncate_at_stops(text: str, stops: tuple[str, ...] | list[str]) -> tuple[str, bool]:
    """Text up to the first stop sequence, and whether one was found."""
    cut = min((i for i in (text.find(s) for s in stops if s) if i >= 0), default=-1)
    return (text[:cut], True) if cut >= 0 else (text, False)


def fenced_blocks(text: str) -> list[str]:
    """Code of every markdown fence, an unterminated last fence included (truncated output)."""
    return [match.group(2) for match in FENCE.finditer(text)]


def keep_definitions(code: str) -> str:
    """Top-level imports, functions (with decorators) and classes; prose, prints, asserts and
    `if __name__ == "__main__":` blocks after or between them are dropped."""
    kept: list[str] = []
    keeping = False
    for line in code.splitlines():
        if line.strip() and not line[0].isspace():
            keeping = bool(TOP_LEVEL_CODE.match(line)) or (keeping and line.startswith((")", "]")))
        if keeping or (not line.strip() and kept):
            kept.append(line)
    return "\n".join(kept).rstrip() + "\n" if kept else ""


def repair_flattened_header(code: str, entry_point: str) -> str:
    """`def f(x): \"\"\"doc\"\"\" return x` (a docstring flattened onto the def line) becomes
    a header, a docstring line and a body line, so the function parses as a block."""
    lines = code.split("\n")
    for number, line in enumerate(lines):
        start = line.find(f"def {entry_point}(")
        if start < 0:
            continue
        colon = _header_colon(line, start)
        rest = line[colon + 1 :].strip() if colon >= 0 else ""
        if not rest or rest.startswith("#"):
            return code
        indent = " " * (len(line) - len(line.lstrip()) + 4)
        parts = [line[: colon + 1]]
        for quote in ('"""', "'''"):
            if rest.startswith(quote):
                end = rest.find(quote, 3)
                if end >= 0:
                    parts.append(indent + rest[: end + 3])
                    rest = rest[end + 3 :].strip()
                break
        if rest:
            parts.append(indent + rest)
        lines[number : number + 1] = parts
        return "\n".join(lines)
    return code


def _header_colon(line: str, start: int) -> int:
    """Index of the colon that ends a one-line `def` header, or -1."""
    depth = 0
    for index in range(start, len(line)):
        char = line[index]
        if char in "([{":
            depth += 1
        elif char in ")]}":
            depth -= 1
        elif char == ":" and depth == 0:
            return index
    return -1


def understand(text: str, prompt: str, entry_point: str, stops: tuple[str, ...] = ()) -> Understood:
    """Make sense of one model output for a prompt: a continuation, a repeated (maybe damaged)
    prompt with its body, or a chat answer with fenced code."""
    definition = f"def {entry_point}("
    blocks = fenced_blocks(text)
    if blocks:
        code = next((b for b in blocks if definition in b), blocks[0])
        if definition in code:
            # a fence inside a markdown list item is indented as a whole
            code = repair_flattened_header(textwrap.dedent(code), entry_point)
            program = keep_definitions(code)
            return Understood(program, program, "fenced")
        return Understood(code, prompt + code, "fenced")
    if definition in text:
        program = keep_definitions(repair_flattened_header(text, entry_point))
        return Understood(program, program, "full")
    completion, _ = truncate_at_stops(text, stops)
    completion = _body_and_helpers(completion)
    program = repair_flattened_header(prompt + completion, entry_point)
    return Understood(completion, program, "continuation")


def _body_and_helpers(continuation: str) -> str:
    """The indented body a continuation adds, then only further definitions (helpers it
    calls): the first other line at column 0 (prose, a print, a test) ends the code."""
    lines = continuation.split("\n")
    for number, line in enumerate(lines):
        if line.strip() and not line[0].isspace():
            body = "\n".join(lines[:number]).rstrip() + "\n"
            helpers = keep_definitions("\n".join(lines[number:]))
            return body + ("\n\n" + helpers if helpers else "")
    return continuation


def chat_message(prompt: str) -> str:
    return CHAT_INSTRUCTION.format(prompt=prompt)
