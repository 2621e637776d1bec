"""Understanding model output: stop sequences, fenced chat answers, repeated or damaged prompts.

Every sample ends as two texts: the `completion` (what the model added, cleaned) and the
`program` (the whole code the clone detector reads: prompt plus continuation, or the model's
own full function).
"""

from __future__ import annotations

import ast
import re
import textwrap
from dataclasses import dataclass, field

from .repair import (
    add_missing_context,
    body_base_indent,
    defines_body,
    expand_tab_indentation,
    parse_or_problem,
    renumber_function_body,
    renumber_indentation,
    repeated_prompt_lost_line_breaks,
    restore_repeated_prompt,
    select_answer,
    split_flattened_header,
)

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
    repairs: tuple[str, ...] = ()
    """What was done to the output so it is the program the model meant."""
    unrepairable: str | None = None
    """Why the program cannot run as the model meant it (None: it can)."""


@dataclass
class _Parses:
    """Each text parsed once while one output is understood: the repairs ask whether the same
    program parses several times, and parsing is most of the cost of understanding a sample."""

    seen: dict[str, tuple[ast.Module | None, str | None]] = field(default_factory=dict)

    def tree(self, code: str) -> ast.Module | None:
        if code not in self.seen:
            self.seen[code] = parse_or_problem(code)
        return self.seen[code][0]

    def problem(self, code: str) -> str | None:
        self.tree(code)
        return self.seen[code][1]


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
    return split_flattened_header(code, entry_point)


def is_whole_program(text: str, entry_point: str) -> bool:
    """Whether the output is a program of its own rather than a continuation of the prompt: it
    starts at column 0 (a continuation starts inside the function's body) and defines the
    entry point at the top level."""
    first = next((line for line in text.split("\n") if line.strip()), "")
    if not first or first[0] in " \t":
        return False
    return any(
        line.startswith((f"def {entry_point}(", f"async def {entry_point}("))
        for line in text.split("\n")
    )


def understand(text: str, prompt: str, entry_point: str, stops: tuple[str, ...] = ()) -> Understood:
    """Make sense of one model output for a prompt: a continuation, a repeated (maybe damaged)
    prompt with its body, or a chat answer with fenced code; repaired into the program the
    model meant where it does not parse as written."""
    parses = _Parses()
    blocks = fenced_blocks(text)
    if blocks:
        definition = f"def {entry_point}("
        code = next((b for b in blocks if definition in b), blocks[0])
        if definition in code:
            # a fence inside a markdown list item is indented as a whole
            return _whole_program(textwrap.dedent(code), prompt, entry_point, "fenced", parses)
        return _continuation(code, prompt, entry_point, "fenced", parses)
    if is_whole_program(text, entry_point):
        return _whole_program(text, prompt, entry_point, "full", parses)
    completion, _ = truncate_at_stops(text, stops)
    return _continuation(completion, prompt, entry_point, "continuation", parses)


def _whole_program(
    code: str, prompt: str, entry_point: str, form: str, parses: _Parses
) -> Understood:
    """The model's own program: its entry point and what it uses, repaired if it does not
    parse, with the prompt's imports, constants and helpers it left out put back."""
    repairs: list[str] = []
    if parses.problem(code) and "\t" in code:
        code = expand_tab_indentation(code)
        repairs.append("tab indentation expanded")
    restored = restore_repeated_prompt(code, prompt) if parses.problem(code) else None
    if restored is not None and restored != code:
        if repeated_prompt_lost_line_breaks(code, prompt):
            repairs.append("repeated prompt with lost line breaks restored from the prompt")
        else:  # the prompt's lines are intact: only its, or the body's, indentation differed
            repairs.append("repeated prompt's indentation restored from the prompt")
        code = restored
    if parses.problem(code):
        split = split_flattened_header(code, entry_point)
        if split != code:
            code = split
            repairs.append("docstring flattened onto the def line split off")
    selected = select_answer(code, entry_point)
    if selected is None:  # the definition is not at the top level: keep what can be kept
        selected = keep_definitions(code) or code
    elif parses.problem(code) and not parses.problem(selected):
        repairs.append("unfinished code after the answer dropped")
    if parses.problem(selected):
        renumbered = renumber_function_body(selected, entry_point)
        if not parses.problem(renumbered):
            selected = renumbered
            repairs.append("indentation renumbered to four spaces a level")
    program, added = add_missing_context(selected, prompt, entry_point)
    if added:
        repairs.append("the prompt's " + ", ".join(added) + " put back")
    unrunnable = _unrunnable(program, entry_point, parses)
    return Understood(program, program, form, tuple(repairs), unrunnable)


def _continuation(
    completion: str, prompt: str, entry_point: str, form: str, parses: _Parses
) -> Understood:
    """Prompt plus the body the model added (and the helpers it defined after it), repaired if
    the two do not parse together."""
    repairs: list[str] = []
    restored = _stripped_first_line(completion, prompt, parses)
    if restored is not None:
        completion = restored
        repairs.append(STRIPPED_FIRST_LINE)
    completion = _body_and_helpers(completion)
    if parses.problem(prompt + completion) and "\t" in completion:
        completion = expand_tab_indentation(completion)
        repairs.append("tab indentation expanded")
    if parses.problem(prompt + completion):
        renumbered = _renumber_body(completion, prompt)
        if not parses.problem(prompt + renumbered):
            completion = renumbered
            repairs.append("indentation renumbered to four spaces a level")
    program = prompt + completion
    if parses.problem(program):
        split = split_flattened_header(program, entry_point)
        if split != program:
            program = split
            repairs.append("docstring flattened onto the def line split off")
    unrunnable = _unrunnable(program, entry_point, parses)
    return Understood(completion, program, form, tuple(repairs), unrunnable)


STRIPPED_FIRST_LINE = "the first line's indentation restored (the text was stripped)"
_NOT_BODY = re.compile(r"(async\s+def|def|class|import|from)\b|@")


def _stripped_first_line(completion: str, prompt: str, parses: _Parses) -> str | None:
    """A continuation whose first code line lost its indentation (sample files that store
    `completion.strip()`: `mean = ...` at column 0, the rest of the body indented) with that
    line put back at the prompt's body level, where the body then parses; None otherwise
    (an indented first line, a definition or import, prose). Without this the first line,
    at column 0, ended the body and the whole answer was dropped."""
    lines = completion.split("\n")
    first = next((i for i, line in enumerate(lines) if line.strip()), None)
    if first is None or lines[first][0].isspace() or _NOT_BODY.match(lines[first]):
        return None
    lines[first] = " " * body_base_indent(prompt) + lines[first]
    restored = "\n".join(lines)
    if parses.problem(prompt + _body_and_helpers(restored)):
        return None
    return restored


def _renumber_body(completion: str, prompt: str) -> str:
    """The continuation's indented body renumbered to the levels of the prompt's function."""
    base = body_base_indent(prompt)
    lines = completion.split("\n")
    end = next(
        (i for i, line in enumerate(lines) if line.strip() and not line[0].isspace()), len(lines)
    )
    return "\n".join(renumber_indentation(lines[:end], base) + lines[end:])


def _unrunnable(program: str, entry_point: str, parses: _Parses) -> str | None:
    """Why the program cannot run as the model meant it, or None."""
    problem = parses.problem(program)
    if problem:
        return f"does not parse even after repair: {problem}"
    if not defines_body(program, entry_point, parses.tree(program)):
        return f"no body: {entry_point}() is left as the prompt gave it"
    return None


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
