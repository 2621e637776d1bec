"""The answer in a program: the entry point's function, what it nests, and the helpers it uses.

A sample is judged on the function the task asks for, not on whatever else it holds (a test
function, a second attempt, an unrelated helper). `answer_scope` finds, in a parsed program,
the function named `entry_point` (the last one defined outside any function, as Python binds
it), and then, transitively, every function defined outside any function whose name the
answer mentions (called, or passed as `key=helper`; the last definition of a name, as Python
binds it). Functions nested in the answer belong to
it. `AnswerScope.contains` tells whether a fragment lies inside the answer;
`FragmentExtractor.extract_answer` returns only those fragments.
"""

from __future__ import annotations

from dataclasses import dataclass

import tree_sitter

from .fragment import Fragment
from .languages.base import LanguageSpec


@dataclass(frozen=True)
class FunctionSpan:
    """A function of the answer: its name and 1-based inclusive source lines."""

    name: str
    start_line: int
    end_line: int


@dataclass(frozen=True)
class AnswerScope:
    """The functions that make up a program's answer; the entry point first."""

    entry_point: str
    functions: tuple[FunctionSpan, ...]

    @property
    def helpers(self) -> tuple[str, ...]:
        return tuple(f.name for f in self.functions[1:])

    def contains(self, fragment: Fragment) -> bool:
        """The fragment starts inside one of the answer's functions (nested ones included; a
        nicad fragment may run on past the function's end, see `FragmentExtractor.tail`)."""
        return any(
            span.start_line <= fragment.start_line <= span.end_line for span in self.functions
        )


def _name(node: tree_sitter.Node) -> str | None:
    name = node.child_by_field_name("name")
    return name.text.decode("utf-8", "replace") if name is not None and name.text else None


def _inside_function(node: tree_sitter.Node, spec: LanguageSpec) -> bool:
    parent = node.parent
    while parent is not None:
        if parent.type in spec.function_types:
            return True
        parent = parent.parent
    return False


def _mentioned_names(node: tree_sitter.Node, spec: LanguageSpec) -> set[str]:
    """Texts of the identifiers in `node`'s subtree."""
    names: set[str] = set()
    stack = [node]
    while stack:
        current = stack.pop()
        if current.child_count == 0:
            if spec.token_kinds.get(current.type) == "id" and current.text:
                names.add(current.text.decode("utf-8", "replace"))
        else:
            stack.extend(current.children)
    return names


def _span(node: tree_sitter.Node, name: str) -> FunctionSpan:
    return FunctionSpan(name, node.start_point.row + 1, node.end_point.row + 1)


def answer_scope(
    spec: LanguageSpec, functions: list[tree_sitter.Node], entry_point: str
) -> AnswerScope | None:
    """The answer among a program's function nodes (all of them, in source order); None when
    no function is named `entry_point`."""
    outer = [(node, _name(node)) for node in functions if not _inside_function(node, spec)]
    named = [node for node, name in outer if name == entry_point]
    if not named:
        named = [node for node in functions if _name(node) == entry_point]
    if not named:
        return None
    entry = named[-1]
    bound = {name: node for node, name in outer if name is not None}  # the last binding wins
    bound.pop(entry_point, None)  # a recursive call is the entry point itself
    chosen = [entry]
    index = 0
    while index < len(chosen):
        mentioned = _mentioned_names(chosen[index], spec)
        index += 1
        for name in sorted(mentioned & bound.keys()):
            chosen.append(bound.pop(name))
    return AnswerScope(entry_point, tuple(_span(node, _name(node) or "?") for node in chosen))
