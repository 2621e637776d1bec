"""What a match is evidence of: a copy, an idiom, or nothing one could tell from chance.

Measured on this machine's standard library (no HumanEval in it): a short canonical
(`return string.swapcase()`) matched 79 unrelated files and a handful of small ones matched
5 to 31; each was the same common idiom, not a copy. So:
- strong: the document also carries the prompt's docstring or the task's test code;
- short: the canonical body is under MIN_BODY_TOKENS tokens: any such match is convergence;
- idiom: a Type-2/3 match of a task whose Type-2/3 matches came from IDIOM_DOCUMENTS or more
  documents across the corpus (reported with that count);
- similar: a Type-3 match of the body alone, or below COPY_SIMILARITY, or a Type-2/3 match
  that keeps under COPY_LITERALS of the canonical's literals: measured on the same library,
  real code reaches the canonicals this way (0.71-0.92, a comprehension or a loop that any
  solver writes; `[t + 1 for t in fut.wait()]` for `[n + 2*i for i in range(n)]`), so it is
  listed but is not evidence;
- copy: any other match (a Type-1 or Type-2 copy of a canonical that is neither short nor an
  idiom, or a Type-3 copy of signature and body at COPY_SIMILARITY or more; a planted
  canonical with a line added measures 0.85-0.97).
A rank lists at most WEAK_KEPT Type-2/3 matches without strong evidence per task, the most
similar ones (and counts the rest), so memory and output stay bounded on any corpus; for a
short task it lists only those that keep the canonical's builtins, attribute names and
literals (`def f(s: str) -> int: return s.count(x)` is not `return len(string)`).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field

from .results import Match
from .verify import EVIDENCE_FRACTION, MIN_BODY_TOKENS

IDIOM_DOCUMENTS = 5
COPY_SIMILARITY = 0.8
COPY_LITERALS = 0.8
WEAK_KEPT = 10
GROUPS_KEPT = 100


def is_strong(match: Match) -> bool:
    return match.docstring >= EVIDENCE_FRACTION or match.test >= EVIDENCE_FRACTION


def is_weak(match: Match) -> bool:
    """A renamed or near-miss solution match with nothing else of the task beside it."""
    return match.clone_type in ("2", "3") and not is_strong(match)


@dataclass
class TaskTally:
    """Per task, what one rank (or, merged, the corpus) saw."""

    documents: int = 0
    weak_documents: int = 0
    unlisted: int = 0
    groups: Counter = field(default_factory=Counter)

    def to_dict(self) -> dict:
        return {"documents": self.documents, "weak_documents": self.weak_documents,
                "unlisted": self.unlisted,
                "groups": dict(self.groups.most_common(GROUPS_KEPT))}  # fmt: skip

    @classmethod
    def from_dict(cls, record: dict) -> TaskTally:
        return cls(record["documents"], record["weak_documents"], record["unlisted"],
                   Counter(record["groups"]))  # fmt: skip

    def add(self, other: TaskTally) -> None:
        self.documents += other.documents
        self.weak_documents += other.weak_documents
        self.unlisted += other.unlisted
        self.groups.update(other.groups)


class RankCollector:
    """A rank's matches, with the Type-2/3 matches without evidence capped per task: the
    WEAK_KEPT most similar are listed, the rest only counted."""

    def __init__(self, short_tasks: frozenset[str] = frozenset()) -> None:
        self.short_tasks = short_tasks
        self._listed: list[Match] = []
        self._weak: dict[str, list[Match]] = defaultdict(list)
        self.tallies: dict[str, TaskTally] = defaultdict(TaskTally)

    def add(self, match: Match) -> None:
        tally = self.tallies[match.task_id]
        tally.documents += 1
        if match.group is not None:
            tally.groups[match.group] += 1
        if not is_weak(match):
            self._listed.append(match)
            return
        tally.weak_documents += 1
        if match.task_id in self.short_tasks and (
            match.names < COPY_LITERALS or match.literals < COPY_LITERALS
        ):
            tally.unlisted += 1  # a short canonical's shape with other builtins or values
            return
        kept = self._weak[match.task_id]
        kept.append(match)
        if len(kept) > 2 * WEAK_KEPT:
            self._trim(match.task_id)

    def _trim(self, task_id: str) -> None:
        kept = sorted(self._weak[task_id], key=_most_similar_first)
        self.tallies[task_id].unlisted += max(0, len(kept) - WEAK_KEPT)
        self._weak[task_id] = kept[:WEAK_KEPT]

    @property
    def matches(self) -> list[Match]:
        for task_id in list(self._weak):
            self._trim(task_id)
        return self._listed + [m for kept in self._weak.values() for m in kept]


def _most_similar_first(match: Match):
    return (-match.similarity, match.clone_type or "9", match.document, match.span)


def judge(
    matches: Iterable[Match], tallies: dict[str, TaskTally], body_sizes: dict[str, int]
) -> list[Match]:
    """Every match with its evidence label, given the corpus-wide tallies."""
    judged = []
    for match in matches:
        if is_strong(match):
            label = "strong"
        elif body_sizes.get(match.task_id, MIN_BODY_TOKENS) < MIN_BODY_TOKENS:
            label = "short"
        elif is_weak(match) and is_idiom(tallies.get(match.task_id)):
            label = "idiom"
        elif (match.clone_type == "3" and (
            not match.signature or match.similarity < COPY_SIMILARITY
        )) or (match.clone_type in ("2", "3") and match.literals < COPY_LITERALS):
            label = "similar"
        else:
            label = "copy"
        judged.append(match.judged(label))
    return judged


def is_idiom(tally: TaskTally | None) -> bool:
    return tally is not None and tally.weak_documents >= IDIOM_DOCUMENTS
