"""Turning damaged model output into the program the model meant, or saying why it cannot be.

Pure text functions, nothing run. Each repair is tried only when the program as written does
not parse, and each says what it did, so a stored sample records how it was changed:

- tab indentation expanded to spaces;
- a docstring flattened onto the `def` line (the reference study's CodeGen files write
  `def f(x) -> bool:      \"\"\" Check ...      \"\"\"` and then a body indented by 6) split
  off and indented like the body below it;
- odd or inconsistent indentation of a function body renumbered level by level (a strictly
  increasing map of indentation widths keeps the block structure and makes it standard);
- of a whole program, only the entry point, what it uses and the imports are kept (other
  functions the model went on to write, often cut off mid-line, are dropped);
- the prompt's imports, constants and helper functions that an answer left out are put back.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

IDENTIFIER = re.compile(r"[A-Za-z_]\w*")
CLOSING = (")", "]", "}")


def syntax_problem(code: str) -> str | None:
    """None when `code` parses, else the parser's complaint with its line."""
    return parse_or_problem(code)[1]


def parse_or_problem(code: str) -> tuple[ast.Module | None, str | None]:
    """`code`'s tree and None when it parses, else None and the parser's complaint."""
    try:
        return ast.parse(code), None
    except SyntaxError as error:
        return None, f"{error.msg} (line {error.lineno})"


def indent_of(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def expand_tab_indentation(code: str) -> str:
    """Leading tabs become four spaces each (the rest of a line is left alone)."""
    lines = []
    for line in code.split("\n"):
        stripped = line.lstrip(" \t")
        lines.append(line[: len(line) - len(stripped)].replace("\t", "    ") + stripped)
    return "\n".join(lines)


def renumber_indentation(lines: list[str], base: int) -> list[str]:
    """Lines whose distinct indentation widths become base, base + 4, base + 8, ... in order.
    The map is strictly increasing, so which lines open, stay in or close a block is kept."""
    widths = sorted({indent_of(line) for line in lines if line.strip()})
    new_width = {width: base + 4 * rank for rank, width in enumerate(widths)}
    return [
        " " * new_width[indent_of(line)] + line.lstrip(" ") if line.strip() else ""
        for line in lines
    ]


def header_colon(line: str, start: int) -> int:
    """Index of the colon that ends a one-line `def` header starting at `start`, or -1."""
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


def split_flattened_header(code: str, entry_point: str) -> str:
    """`def f(x): \"\"\"doc\"\"\" return x` becomes a header, a docstring line and a body line,
    indented like the body lines below when there are any."""
    lines = code.split("\n")
    for number, line in enumerate(lines):
        start = line.find(f"def {entry_point}(")
        if start < 0:
            continue
        colon = header_colon(line, start)
        rest = line[colon + 1 :].strip() if colon >= 0 else ""
        if not rest or rest.startswith("#"):
            return code
        below = next((other for other in lines[number + 1 :] if other.strip()), "")
        width = indent_of(line) + 4
        if indent_of(below) > indent_of(line):
            width = indent_of(below)
        parts = [line[: colon + 1]]
        quoted = min((i for i in (rest.find('"""'), rest.find("'''")) if i > 0), default=-1)
        if quoted > 0 and rest[:quoted].strip():  # `def f(x):      import math      """doc"""`
            parts.append(" " * width + rest[:quoted].strip())
            rest = rest[quoted:]
        for quote in ('"""', "'''"):
            if rest.startswith(quote):
                end = rest.find(quote, 3)
                if end >= 0:
                    parts.append(" " * width + rest[: end + 3])
                    rest = rest[end + 3 :].strip()
                break
        if rest:
            parts.append(" " * width + rest)
        lines[number : number + 1] = parts
        return "\n".join(lines)
    return code


def renumber_function_body(code: str, entry_point: str) -> str:
    """The entry point's body (the indented lines after its top-level header) renumbered to
    standard four-space levels."""
    lines = code.split("\n")
    start = next(
        (i for i, line in enumerate(lines) if line.startswith(f"def {entry_point}(")), None
    )
    if start is None:
        return code
    header_end = start
    while header_end < len(lines) and header_colon(lines[header_end], 0) < 0:
        header_end += 1  # a header over several lines
    end = header_end + 1
    while end < len(lines) and (not lines[end].strip() or lines[end][0] in " \t"):
        end += 1
    body = renumber_indentation(lines[header_end + 1 : end], 4)
    return "\n".join(lines[: header_end + 1] + body + lines[end:])


def body_base_indent(prompt: str) -> int:
    """The indentation a continuation of `prompt` has: that of its last line (the docstring's
    closing quotes), or one level in from a last line at column 0 or ending a header."""
    last = next((line for line in reversed(prompt.split("\n")) if line.strip()), "")
    if not last[:1].isspace() or last.rstrip().endswith(":"):
        return indent_of(last) + 4
    return indent_of(last)


def restore_repeated_prompt(code: str, prompt: str) -> str | None:
    """When `code` begins with the prompt repeated with only its whitespace damaged (line
    breaks of the docstring turned into spaces, the reference study's CodeGen files), the
    prompt as given followed by the rest, its body renumbered to the prompt's indentation;
    None when the code does not begin with the prompt."""
    wanted = re.sub(r"\s+", "", prompt)
    if not wanted:
        return None
    lines = code.split("\n")
    seen = ""
    for number, line in enumerate(lines):
        seen += re.sub(r"\s+", "", line)
        if len(seen) < len(wanted):
            if not wanted.startswith(seen):
                return None
            continue
        if seen != wanted:
            return None
        return _prompt_then_body(prompt, lines[number + 1 :])
    return None


def repeated_prompt_lost_line_breaks(code: str, prompt: str) -> bool:
    """Whether `code` begins with the prompt repeated on fewer lines than the prompt has
    (its line breaks turned into spaces), not merely with other whitespace."""
    wanted = re.sub(r"\s+", "", prompt)
    seen = ""
    for number, line in enumerate(code.split("\n")):
        seen += re.sub(r"\s+", "", line)
        if len(seen) >= len(wanted):
            prompt_lines = sum(1 for other in prompt.split("\n") if other.strip())
            used = sum(1 for other in code.split("\n")[: number + 1] if other.strip())
            return seen == wanted and used < prompt_lines
    return False


def _prompt_then_body(prompt: str, rest: list[str]) -> str:
    """The prompt as given, then the lines after its repeat, the body renumbered to the
    prompt's indentation."""
    end = next(
        (i for i, other in enumerate(rest) if other.strip() and not other[0].isspace()),
        len(rest),
    )
    body = renumber_indentation(rest[:end], body_base_indent(prompt))
    return prompt + "\n".join(body + rest[end:])


@dataclass(frozen=True)
class Chunk:
    """One top-level statement of a program (with the blank lines after it)."""

    text: str
    binds: frozenset[str]
    uses: frozenset[str]
    parses: bool
    function: str | None
    """The name when the chunk is a function definition."""
    is_import: bool


def _describe(text: str) -> Chunk:
    try:
        tree = ast.parse(text)
    except SyntaxError:
        match = re.match(r"\s*(?:async\s+)?def\s+([A-Za-z_]\w*)", text)
        name = match.group(1) if match else None
        uses = frozenset(IDENTIFIER.findall(text)) - {name or ""}
        return Chunk(text, frozenset([name] if name else []), uses, False, name, False)
    binds: set[str] = set()
    function, is_import = None, False
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            binds.add(node.name)
            if not isinstance(node, ast.ClassDef):
                function = node.name
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            is_import = True
            binds.update((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                binds.update(n.id for n in ast.walk(target) if isinstance(n, ast.Name))
    uses = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)} - binds
    return Chunk(text, frozenset(binds), frozenset(uses), True, function, is_import)


def top_level_chunks(code: str) -> list[Chunk]:
    """The program's top-level statements, by the parser when it parses, else by lines at
    column 0 (a statement cut off mid-line then stays one chunk that does not parse)."""
    lines = code.split("\n")
    starts: list[int] = []
    try:
        tree = ast.parse(code)
    except SyntaxError:
        tree = None
    if tree is not None:
        for node in tree.body:
            decorators = getattr(node, "decorator_list", [])
            starts.append(min([node.lineno] + [d.lineno for d in decorators]) - 1)
    else:
        inside_string, after_decorator = False, False
        for number, line in enumerate(lines):
            opens_block = line.strip() and line[0] not in " \t#" and not line.startswith(CLOSING)
            if opens_block and not inside_string:
                if not after_decorator:
                    starts.append(number)
                after_decorator = line.startswith("@")
            if (line.count('"""') + line.count("'''")) % 2:
                inside_string = not inside_string
    if not starts:
        return []
    bounds = list(zip(starts, [*starts[1:], len(lines)], strict=True))
    return [_describe("\n".join(lines[a:b])) for a, b in bounds]


def select_answer(code: str, entry_point: str) -> str | None:
    """The first definition of the entry point, the top-level definitions, constants and
    imports it uses (transitively), in their order; None when the code does not define the
    entry point at the top level."""
    chunks = top_level_chunks(code)
    entry = next((c for c in chunks if c.function == entry_point), None)
    if entry is None:
        return None
    kept = {id(entry)}
    wanted = set(entry.uses)
    changed = True
    while changed:
        changed = False
        for chunk in chunks:
            if id(chunk) in kept or not chunk.parses or chunk.function == entry_point:
                continue
            if chunk.binds & wanted:
                kept.add(id(chunk))
                wanted |= chunk.uses
                changed = True
    text = "\n".join(c.text for c in chunks if id(c) in kept)
    return text.rstrip() + "\n"


def prompt_context(prompt: str, entry_point: str) -> list[Chunk]:
    """The prompt's top-level statements other than the entry point: imports, constants and
    helper functions a program may need."""
    return [
        c for c in top_level_chunks(prompt) if c.parses and c.function != entry_point and c.binds
    ]


def add_missing_context(program: str, prompt: str, entry_point: str) -> tuple[str, list[str]]:
    """The program with what it lacks of the prompt put in front: the helper functions
    it does not define itself (a task's tests may call them, as HumanEval/38's call
    `encode_cyclic`), and the imports and constants it uses without defining; and the names
    put back."""
    bound: set[str] = set()
    used: set[str] = set()
    for chunk in top_level_chunks(program):
        bound |= chunk.binds
        used |= chunk.uses
    missing = [
        c
        for c in prompt_context(prompt, entry_point)
        if not c.binds <= bound and (c.function is not None or c.binds & (used - bound))
    ]
    if not missing:
        return program, []
    names = sorted({name for c in missing for name in c.binds - bound})
    head = "".join(c.text.rstrip() + ("\n" if c.is_import else "\n\n\n") for c in missing)
    return head.rstrip() + "\n\n\n" + program.lstrip("\n"), names


def defines_body(program: str, entry_point: str, tree: ast.Module | None = None) -> bool:
    """Whether the program's top-level entry point does something beyond a docstring
    (`tree`: the program's tree, if it was already parsed)."""
    if tree is None:
        tree = parse_or_problem(program)[0]
        if tree is None:
            return True  # cannot tell; the parse failure is reported instead
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == entry_point:
            return any(
                not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))
                and not isinstance(s, ast.Pass)
                for s in node.body
            )
    return False
