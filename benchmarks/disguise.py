"""Disguised prompts: the task unchanged, its surface refactored so that memory of the original
prompt is not triggered (the semantic operators Cao et al. found most disruptive).

Deterministically, from each prompt:
- the entry point, its parameters and the names its docstring uses are renamed consistently to
  other apt names (`disguised_names`: synonyms of their word parts, a verb prefix where none
  fits; never a name the prompt or the canonical already uses);
- unused `*args, **kwargs` are appended to the entry point's parameters;
- the entry point gets a no-op decorator (defined just above it);
- the doctest examples get other argument values (integers moved by one), their outputs
  recomputed by running the canonical in a separate interpreter (`reference_run`, only when the
  data is built: `python -m cloneprobe.benchmarks.build_disguised`); an example whose output
  cannot be recomputed is kept as it was.
The wording is otherwise kept. A sample written for a disguised prompt is mapped back through
the renaming (`map_back`) before it is compared with the canonical; it is executed under the
disguised name. A disguised sample that writes one of the original names the disguised prompt
no longer shows (`leaked_names`) remembers the original prompt: evidence by itself.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from .entry_points import rename_identifier
from .tasks import Task

SYNONYMS = {
    "count": "tally", "sum": "total", "list": "seq", "string": "text", "strings": "texts",
    "number": "value", "numbers": "values", "num": "value", "nums": "values", "find": "locate",
    "get": "fetch", "is": "check", "check": "verify", "sort": "order", "sorted": "ordered",
    "max": "largest", "min": "smallest", "maximum": "largest", "minimum": "smallest",
    "remove": "drop", "filter": "select", "make": "build", "create": "build", "add": "plus",
    "largest": "biggest", "smallest": "tiniest", "closest": "nearest", "close": "near",
    "elements": "items", "element": "item", "words": "terms", "word": "term", "array": "seq",
    "arr": "seq", "lst": "items", "l": "items", "s": "text", "n": "k", "x": "v", "y": "w",
    "a": "p", "b": "q", "c": "r", "threshold": "tolerance", "text": "phrase", "grades": "scores",
    "grade": "score", "operator": "ops", "operand": "args", "prefix": "head", "substring": "part",
    "delimiter": "separator", "digits": "figures", "digit": "figure", "letter": "char",
    "letters": "chars", "vowels": "vowel_set", "paren": "bracket", "brackets": "parens",
    "string_list": "texts", "nested": "deep", "unique": "distinct", "common": "shared",
    "decimal": "base_ten", "triangle": "trigon", "area": "surface", "encode": "encipher",
    "decode": "decipher", "shift": "rotate", "fib": "fibo", "prime": "prime", "even": "even",
    "odd": "odd", "intersperse": "interleave", "rolling": "running", "below": "under",
    "zero": "nil", "message": "msg", "file": "doc", "name": "label", "values": "items",
    "value": "item", "date": "day", "planet": "world", "planet1": "world_a", "planet2": "world_b",
}  # fmt: skip
"""Word parts and their replacement (a part without one is kept)."""
VERB_PREFIX = "compute_"


@dataclass(frozen=True)
class Disguise:
    task_id: str
    prompt: str
    entry_point: str
    renames: dict[str, str] = field(default_factory=dict)
    """Original name -> disguised name (the entry point and its parameters)."""
    examples_changed: int = 0


def _identifiers(text: str) -> set[str]:
    """The name tokens of `text` up to where it stops tokenizing (a sample cut inside its
    docstring: the words of that docstring are prose, never names it writes)."""
    names: set[str] = set()
    try:
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            if token.type == tokenize.NAME:
                names.add(token.string)
    except (tokenize.TokenError, IndentationError, SyntaxError):
        pass
    return names


def _replace_parts(name: str) -> str:
    if name in SYNONYMS:
        return SYNONYMS[name]
    return "_".join(SYNONYMS.get(part, part) for part in name.split("_"))


def disguised_names(entry_point: str, parameters: list[str], taken: set[str]) -> dict[str, str]:
    """Original -> new name for the entry point and each parameter, all distinct and new."""
    renames: dict[str, str] = {}
    used = set(taken)
    for number, name in enumerate([entry_point, *parameters]):
        new = _replace_parts(name)
        if new == name or new in used:
            new = f"{VERB_PREFIX}{name}" if number == 0 else f"{name}_in"
        while new in used:
            new += "_"
        renames[name] = new
        used.add(new)
    return renames


def _entry_function(tree: ast.Module, entry_point: str) -> ast.FunctionDef | None:
    return next((n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == entry_point),
                None)  # fmt: skip


def _docstring_span(function: ast.FunctionDef) -> tuple[int, int] | None:
    first = function.body[0] if function.body else None
    if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(
            first.value.value, str):  # fmt: skip
        return first.lineno, first.end_lineno or first.lineno
    return None


def _rename_in_docstring(lines: list[str], span: tuple[int, int], renames: dict[str, str]) -> None:
    """Rename in the docstring's lines: an example's call (`>>>`) as code (its strings kept);
    its output line not at all; prose outside quotes, a one-letter name only where it reads as
    code (`f(n)`, `n-1`, `n <= 3`: a lone `a` is also a word)."""
    after_example = False
    for index in range(span[0] - 1, span[1]):
        line = lines[index]
        if ">>>" in line:
            head, _, call = line.rstrip("\n").partition(">>>")
            code = call.lstrip()
            space = call[: len(call) - len(code)]
            for old, new in renames.items():
                code = rename_identifier(code, old, new)
            lines[index] = f"{head}>>>{space}{code}" + (
                "\n" if line.endswith("\n") else "")  # fmt: skip
            after_example = True
            continue
        if after_example and line.strip():
            after_example = False
            continue
        after_example = False
        paired = (line.count("'") + line.count('"')) % 2 == 0
        pieces = re.split(r"('[^'\n]*'|\"[^\"\n]*\")", line) if paired else [line]
        for number, piece in enumerate(pieces):
            if number % 2:
                continue  # a quoted string: a value, not a name
            for old, new in renames.items():
                name = re.escape(old)
                if len(old) > 1:
                    piece = re.sub(rf"(?<![\w.]){name}(?!\w)", new, piece)
                else:
                    code = rf"(?<![\w.'])(?:(?<=[(\[,])\s*)?{name}(?=\s*[-+*/%)\],=<>])"
                    piece = re.sub(code, new, piece)
            pieces[number] = piece
        lines[index] = "".join(pieces)


def _add_varargs(source: str, entry_point: str) -> str:
    """Append `*args, **kwargs` to the entry point's parameters."""
    lines = source.splitlines(keepends=True)
    tokens = list(tokenize.generate_tokens(io.StringIO(source).readline))
    for index, token in enumerate(tokens[:-1]):
        if token.string == "def" and tokens[index + 1].string == entry_point:
            depth, empty = 0, True
            for inner in tokens[index + 2 :]:
                if inner.string == "(":
                    depth += 1
                elif inner.string == ")":
                    depth -= 1
                    if depth == 0:
                        row, col = inner.start
                        line = lines[row - 1]
                        head = line[:col].rstrip()
                        comma = "" if empty or head.endswith(",") or head.endswith("(") else ", "
                        lines[row - 1] = f"{head}{comma}*args, **kwargs{line[col:]}"
                        return "".join(lines)
                elif depth == 1 and inner.type not in (tokenize.NL, tokenize.COMMENT):
                    empty = False
    return source


DECORATOR = "_as_given"


def _add_decorator(source: str, entry_point: str) -> str:
    tree = ast.parse(source)
    function = _entry_function(tree, entry_point)
    if function is None:
        return source
    lines = source.splitlines(keepends=True)
    row = (function.decorator_list[0].lineno if function.decorator_list else function.lineno) - 1
    helper = f"def {DECORATOR}(function):\n    return function\n\n\n@{DECORATOR}\n"
    lines.insert(row, helper)
    return "".join(lines)


def _moved(node: ast.expr) -> ast.expr:
    """The example's arguments with every integer literal other than 0 and 1 moved up by one
    (booleans, strings, floats kept)."""

    class Move(ast.NodeTransformer):
        def visit_Constant(self, constant: ast.Constant) -> ast.Constant:
            value = constant.value
            if type(value) is int and value not in (0, 1):
                return ast.copy_location(ast.Constant(value + 1), constant)
            return constant

    return Move().visit(node)


Evaluate = Callable[[str, list[str]], list]
"""(reference source, calls) -> repr of each call's result or None (run outside this
process: `reference_run.evaluate_calls`)."""


def _changed_examples(task: Task, lines: list[str], span: tuple[int, int],
                      evaluate: Evaluate | None) -> int:  # fmt: skip
    """Give each `>>> entry(...)` example of the docstring other integer arguments, with the
    output the canonical computes for them; returns how many changed."""
    if evaluate is None:
        return 0
    found = []
    for index in range(span[0] - 1, min(span[1], len(lines) - 1)):
        arrow = re.match(rf"^(\s*)({re.escape(task.entry_point)}\(.*\))(\s*(?:==>|=>|➞|->)\s*)"
                         r"(.*?)\s*$", lines[index])  # fmt: skip
        if arrow:  # `f(-12) ==> (1, 1)`: call and output on one line
            found.append((index, arrow.groups()))
            continue
        match = re.match(r"^(\s*>>>\s*)(.*?)\s*$", lines[index])
        if not match or not match.group(2).startswith(f"{task.entry_point}("):
            continue
        try:
            call = ast.parse(match.group(2), mode="eval")
        except SyntaxError:
            continue
        found.append((index, (match.group(1), match.group(2))))
    calls, moves = [], []
    for index, parts in found:
        try:
            call = ast.parse(parts[1], mode="eval")
        except SyntaxError:
            continue
        moved = ast.unparse(_moved(ast.parse(parts[1], mode="eval")))
        if moved != ast.unparse(call):
            calls.append(parts[1])
            moves.append((index, parts, moved))
    if not moves:
        return 0
    results = evaluate(task.prompt + task.canonical_solution, calls + [m for *_, m in moves])
    changed = 0
    for number, (index, parts, moved) in enumerate(moves):
        before, after = results[number], results[len(moves) + number]
        if after is None or before is None or "\n" in after:
            continue
        if len(parts) == 4:  # one line: indent, call, arrow, output
            if before != parts[3]:
                continue
            lines[index] = f"{parts[0]}{moved}{parts[2]}{after}\n"
        else:
            shown = lines[index + 1]
            if before != shown.strip():
                continue
            indent = shown[: len(shown) - len(shown.lstrip())]
            lines[index] = f"{parts[0]}{moved}\n"
            lines[index + 1] = f"{indent}{after}\n"
        changed += 1
    return changed


def disguise_task(task: Task, evaluate: Evaluate | None = None) -> Disguise:
    """The disguised prompt of a Python task (`evaluate`: recompute changed examples)."""
    tree = ast.parse(task.prompt)
    function = _entry_function(tree, task.entry_point)
    if function is None:
        return Disguise(task.task_id, task.prompt, task.entry_point)
    arguments = function.args
    parameters = [a.arg for a in arguments.posonlyargs + arguments.args + arguments.kwonlyargs]
    taken = _identifiers(task.prompt) | _identifiers(task.canonical_solution) | {DECORATOR}
    renames = disguised_names(task.entry_point, parameters, taken | {"args", "kwargs"})
    lines = task.prompt.splitlines(keepends=True)
    span = _docstring_span(function)
    changed = _changed_examples(task, lines, span, evaluate) if span else 0
    if span:
        _rename_in_docstring(lines, span, renames)
    text = "".join(lines)
    for old, new in renames.items():
        text = rename_identifier(text, old, new)
    new_entry = renames[task.entry_point]
    text = _add_varargs(text, new_entry)
    text = _add_decorator(text, new_entry)
    return Disguise(task.task_id, text, new_entry, renames, changed)


def map_back(program: str, renames: Mapping[str, str]) -> str:
    """A disguised-prompt sample with the disguised names renamed back to the original ones
    (name tokens only: strings and comments kept)."""
    for old, new in renames.items():
        program = rename_identifier(program, new, old)
    return program


def leaked_names(program: str, renames: Mapping[str, str], disguised_prompt: str,
                 natural: Callable[[str], bool] = lambda name: False) -> list[str]:  # fmt: skip
    """Original names the sample writes that the disguised prompt no longer shows (and that the
    disguised prompt's words do not make natural), in the order of `renames`."""
    used = _identifiers(program)
    shown = _identifiers(disguised_prompt) | set(re.findall(r"\w+", disguised_prompt))
    return [old for old in renames
            if old in used and old not in shown and len(old) > 1 and not natural(old)]  # fmt: skip
