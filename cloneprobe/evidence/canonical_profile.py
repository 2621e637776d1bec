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
KNOWN_NAMES = frozenset(dir(builtins)) | frozenset(keyword.kwlist) | {"self", "cls", "_"}
WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


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
    body = [line for line in canonical.lines[canonical.body_start :] if is_compared(line)]
    shown = shown_lines(canonical, prompt, "none", header=False)
    kept: list[tuple[str, str]] = []
    total = prompt_tokens = 0
    for line, line_shown in zip(body, shown, strict=True):
        total += len(line)
        if line_shown:
            prompt_tokens += len(line)
        else:
            kept += line
    others = max(1, canonicals - 1)

    def own_name(text: str) -> bool:
        return (
            len(text) > 1
            and text not in KNOWN_NAMES
            and text not in GENERIC_NAMES
            and text not in prompt_words
            and text not in imported
            and (usage[text] - 1) / others < COMMON_NAME_SHARE
        )

    def own_literal(kind: str, text: str) -> bool:
        content = text.strip("'\"")
        return kind in ("str", "char") and len(content.strip()) > 1 and content not in task.prompt

    library = library_names(kept)
    imported = imported_names(canonical)
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
        own_names=names,
        own_literals=literals,
        comments=tuple(c for c in comments_of(task.canonical_solution) if len(c.split()) >= 3),
        body_token_count=total,
        prompt_share=prompt_tokens / total if total else 0.0,
    )
