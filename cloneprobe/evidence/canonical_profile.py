"""What of a canonical solution could be evidence: its tokens, less what the prompt shows.

A canonical's *details* are the identifiers and literals an independent solver of the task would
not write unprompted: names not shown anywhere in the prompt (parameters, the function's name,
words of the docstring), not a keyword or builtin, not one letter long, not a name any solver
writes (`result`, `ans`, ..., or one many other canonicals of the benchmark use), not a
library's (imported, an attribute, a keyword argument); and string literals whose text the
prompt does not show. Lines of the canonical that the prompt already shows
(`clones.prompt_overlap.shown_lines`: the line itself, or most of its tokens in runs the prompt
also has; HumanEval/50's `decode_shift` is the prompt's `encode_shift` with `+ 5` made `- 5`)
are not evidence; a canonical that is mostly such lines makes its task uninformative.

A name the prompt's words make natural is no detail either (`natural_name`: every part of
`is_prime`, `even_count`, `letter_grade` is a word of the prompt or a part any solver uses).
Code the docstring dictates is not evidence (`dictated_line`): a line that writes a literal the
prompt shows (HumanEval/81's grade ladder transcribes the table printed in its docstring, /63's
`fibfib(n - 1) + fibfib(n - 2) + fibfib(n - 3)` the recurrence) and nothing of the canonical's
own is left out of its own tokens, like a line the prompt shows.
"""

from __future__ import annotations

import builtins
import io
import keyword
import re
import tokenize
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from ..benchmarks import Benchmark, Task
from ..clones import Fragment, FragmentExtractor, SourceFile
from ..clones.fragment import is_compared
from ..clones.normalize import BLIND
from ..clones.prompt_overlap import shown_lines

UNINFORMATIVE_PROMPT_SHARE = 0.5
"""A task whose canonical body tokens are at least this share prompt code is uninformative."""
COMMON_NAME_SHARE = 0.04
"""A name used by at least this share of the benchmark's other canonicals is generic."""
GENERIC_NAMES = frozenset(
    [
        "result",
        "results",
        "res",
        "ret",
        "ans",
        "answer",
        "out",
        "output",
        "count",
        "cnt",
        "total",
        "tmp",
        "temp",
        "val",
        "value",
        "values",
        "num",
        "nums",
        "number",
        "numbers",
        "item",
        "items",
        "elem",
        "word",
        "words",
        "char",
        "chars",
        "ch",
        "string",
        "strings",
        "lst",
        "arr",
        "array",
        "index",
        "key",
        "flag",
        "new_list",
        "new_string",
    ]
)
"""Names any solver writes, whatever the canonical: never a detail."""
GENERIC_PARTS = frozenset(
    [
        "is",
        "has",
        "get",
        "set",
        "new",
        "num",
        "number",
        "count",
        "cnt",
        "total",
        "sum",
        "max",
        "min",
        "list",
        "lst",
        "res",
        "result",
        "ret",
        "ans",
        "out",
        "tmp",
        "temp",
        "val",
        "value",
        "values",
        "idx",
        "index",
        "i",
        "j",
        "k",
        "n",
        "m",
        "x",
        "y",
        "z",
        "s",
        "c",
        "d",
        "cur",
        "curr",
        "prev",
        "next",
        "first",
        "last",
        "left",
        "right",
        "str",
        "string",
        "char",
        "len",
        "length",
        "arr",
        "array",
        "flag",
        "found",
        "valid",
        "key",
        "item",
        "items",
        "dict",
        "seen",
        "all",
        "end",
        "start",
        "pos",
        "word",
        "words",
        "digit",
        "digits",
        "to",
        "of",
        "in",
        "by",
        "and",
        "or",
        "not",
    ]
)
"""Parts of a compound name that any solver puts around the task's own words."""
KNOWN_NAMES = frozenset(dir(builtins)) | frozenset(keyword.kwlist) | {"self", "cls", "_"}
WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
NAME_PART = re.compile(r"[A-Z]?[a-z0-9]+|[A-Z]+(?![a-z])")
NUMBER = re.compile(r"(?<![\w.])\d+(?:\.\d+)?")
TRIVIAL_NUMBERS = frozenset({0.0, 1.0})


def _forms(word: str) -> set[str]:
    """The word in lower case, and without a plural `s` or `es`."""
    word = word.lower()
    forms = {word}
    if len(word) > 3 and word.endswith("s"):
        forms.add(word[:-1])
        if word.endswith("es"):
            forms.add(word[:-2])
    return forms


def prompt_stems(prompt: str) -> frozenset[str]:
    """Every word part of the prompt, singular and plural (`GPAs` -> `gpas`, `gpa`)."""
    return frozenset(
        form for word in WORD.findall(prompt) for part in NAME_PART.findall(word)
        for form in _forms(part)
    )  # fmt: skip


def natural_name(name: str, stems: frozenset[str]) -> bool:
    """A name every part of which is a word of the prompt or a generic part (`is_prime` when
    the prompt says prime, `even_count`, `letter_grade`), with at least one prompt word."""
    parts = [part.lower() for part in NAME_PART.findall(name)]
    if not parts:
        return False
    from_prompt = [p for p in parts if _forms(p) & stems]
    return bool(from_prompt) and all(_forms(p) & stems or p in GENERIC_PARTS for p in parts)


def prompt_statement(prompt: str) -> str:
    """The prompt's text less its examples (`>>>` lines and the output after them, lines that
    show a result with `==>`, `=>` or `->`); `fibfib(2) == 1` stays: it states the task."""
    kept, after_call = [], False
    for line in prompt.splitlines():
        example = ">>>" in line or any(arrow in line for arrow in ("==>", "=>", "->"))
        if example or (after_call and line.strip()):
            after_call = example
            continue
        after_call = False
        kept.append(line)
    return "\n".join(kept)


def prompt_numbers(statement: str) -> frozenset[float]:
    """Numbers the prompt's statement shows."""
    return frozenset(float(n) for n in NUMBER.findall(statement))


def shown_literal(kind: str, text: str, statement: str, numbers: frozenset[float]) -> bool:
    """A literal the prompt's statement shows: a number (other than 0 and 1) it states, or a
    string whose text stands in it as a word of its own."""
    if kind in ("int", "float"):
        try:
            value = float(text.rstrip("jJlL").replace("_", ""))
        except ValueError:
            return False
        return value not in TRIVIAL_NUMBERS and value in numbers
    if kind in ("str", "char"):
        content = text.lstrip("rbuRBUfF").strip("'\"")
        if not content.strip():
            return False
        alone = rf"(?<![A-Za-z0-9]){re.escape(content)}(?![A-Za-z0-9])"
        return re.search(alone, statement) is not None
    return False


def body_tokens(fragment: Fragment) -> list[tuple[str, str]]:
    """(kind, text) of every compared body token (signature and closing braces left out)."""
    return [
        token
        for line in fragment.lines[fragment.body_start :]
        if is_compared(line)
        for token in line
    ]


def comments_of(code: str) -> list[str]:
    """Comment texts of `code` (without `#`, whitespace collapsed, lower case)."""
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(code).readline))
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return []
    return [
        " ".join(t.string.lstrip("#").split()).lower()
        for t in tokens
        if t.type == tokenize.COMMENT and t.string.lstrip("#").strip()
    ]


@dataclass(frozen=True)
class CanonicalProfile:
    """One task's canonical, seen for evidence."""

    task_id: str
    entry_point: str
    tokens: tuple[str, ...]
    """Body token texts, unrenamed, of the lines that do not repeat prompt code."""
    blind: tuple[str, ...]
    """Every body token, blind-renamed (structure only)."""
    details: tuple[str, ...]
    """The canonical's own names and literals, in body order (repeats kept)."""
    dictated_tokens: int
    """Body tokens on lines that transcribe literals the prompt shows (`dictated_line`)."""
    own_names: tuple[str, ...]
    own_literals: tuple[str, ...]
    comments: tuple[str, ...]
    """Comments of the canonical solution of three words or more."""
    body_token_count: int
    prompt_share: float
    """Share of the body's tokens on lines that repeat the prompt's own code."""

    @property
    def own_token_count(self) -> int:
        return len(self.tokens)

    @property
    def informative(self) -> bool:
        return self.body_token_count > 0 and self.prompt_share < UNINFORMATIVE_PROMPT_SHARE


def name_usage(benchmark: Benchmark, fragments_of) -> Counter:
    """How many canonicals of the benchmark use each name in their body."""
    usage: Counter = Counter()
    for task in benchmark:
        names = set()
        for fragment in fragments_of(task.task_id):
            names |= {text for kind, text in body_tokens(fragment) if kind == "id"}
        usage.update(names)
    return usage


def library_names(tokens: Sequence[tuple[str, str]]) -> set[int]:
    """Positions of names a library defines, not the canonical: attributes (`.join`) and
    keyword arguments (`key=` inside brackets)."""
    positions, depth = set(), 0
    for index, (kind, text) in enumerate(tokens):
        if text in "([{":
            depth += 1
        elif text in ")]}":
            depth = max(0, depth - 1)
        elif kind == "id":
            after = tokens[index + 1][1] if index + 1 < len(tokens) else ""
            before = tokens[index - 1][1] if index else ""
            if before == "." or (depth and after == "="):
                positions.add(index)
    return positions


def imported_names(fragment: Fragment) -> set[str]:
    """Names an `import` or `from ... import` line of the fragment brings in (a library's)."""
    return {
        text
        for line in fragment.lines
        if line and line[0][1] in ("import", "from")
        for kind, text in line
        if kind == "id"
    }


def build_profile(
    task: Task,
    canonical: Fragment,
    extractor: FragmentExtractor,
    usage: Counter,
    canonicals: int,
) -> CanonicalProfile:
    """The evidence view of `task`'s canonical fragment; `usage` counts names over the
    benchmark's `canonicals` canonicals (this one included)."""
    prompt = extractor.extract(SourceFile("prompt", task.prompt), "files")[0]
    prompt_words = set(WORD.findall(task.prompt))
    stems = prompt_stems(task.prompt)
    statement = prompt_statement(task.prompt)
    numbers = prompt_numbers(statement)
    body = [line for line in canonical.lines[canonical.body_start :] if is_compared(line)]
    shown = shown_lines(canonical, prompt, "none", header=False)
    others = max(1, canonicals - 1)

    def own_name(text: str) -> bool:
        return (
            len(text) > 1
            and text not in KNOWN_NAMES
            and text not in GENERIC_NAMES
            and text not in prompt_words
            and not natural_name(text, stems)
            and text not in imported
            and (usage[text] - 1) / others < COMMON_NAME_SHARE
        )

    def own_literal(kind: str, text: str) -> bool:
        content = text.strip("'\"")
        return kind in ("str", "char") and len(content.strip()) > 1 and content not in task.prompt

    imported = imported_names(canonical)

    def dictated_line(line) -> bool:
        """The line writes a literal the prompt shows and nothing of the canonical's own."""
        return any(shown_literal(k, t, statement, numbers) for k, t in line) and not any(
            (k == "id" and own_name(t)) or own_literal(k, t) for k, t in line
        )

    kept: list[tuple[str, str]] = []
    total = prompt_tokens = dictated = 0
    for line, line_shown in zip(body, shown, strict=True):
        total += len(line)
        if line_shown:
            prompt_tokens += len(line)
        elif dictated_line(line):
            dictated += len(line)
        else:
            kept += line
    library = library_names(kept)
    details = tuple(
        text for position, (kind, text) in enumerate(kept)
        if (kind == "id" and position not in library and own_name(text)) or own_literal(kind, text)
    )  # fmt: skip
    names = tuple(
        dict.fromkeys(
            t for i, (k, t) in enumerate(kept) if k == "id" and i not in library and own_name(t)
        )
    )
    literals = tuple(dict.fromkeys(t for k, t in kept if own_literal(k, t)))
    blind = tuple(BLIND.get(kind, text) for kind, text in body_tokens(canonical))
    return CanonicalProfile(
        task_id=task.task_id,
        entry_point=task.entry_point,
        tokens=tuple(text for _, text in kept),
        blind=blind,
        details=details,
        dictated_tokens=dictated,
        own_names=names,
        own_literals=literals,
        comments=tuple(c for c in comments_of(task.canonical_solution) if len(c.split()) >= 3),
        body_token_count=total,
        prompt_share=prompt_tokens / total if total else 0.0,
    )
