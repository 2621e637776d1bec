"""What a match is evidence of: a copy, an idiom, or nothing one could tell from chance.

Measured on this machine's standard library (no HumanEval in it): a short canonical
(`return string.swapcase()`) matched 79 unrelated files and a handful of small ones matched
5 to 31; each was the same common idiom, not a copy. So:
- strong: the document also carries the prompt's docstring or the task's test code;
- short: the canonical body is under MIN_BODY_TOKENS tokens: any such match is convergence;
- idiom: a Type-2/3 match of a task whose Type-2/3 matches came from IDIOM_DOCUMENTS or more
  documents across the corpus (reported with that count);
- copy: any other match (a Type-1 copy of a canonical that is not short, or a Type-2/3 copy
  of a canonical that few documents resemble).
A rank keeps at most WEAK_KEPT Type-2/3 matches without strong evidence per task (and counts
the rest), so memory and output stay bounded on any corpus.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field

from .results import Match
from .verify import EVIDENCE_FRACTION, MIN_BODY_TOKENS

IDIOM_DOCUMENTS = 5
WEAK_KEPT = 25
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
                "unlisted": self.unlisted, "groups": dict(self.groups.most_common(GROUPS_KEPT))}  # fmt: skip

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
    """A rank's matches, with Type-2/3 matches without evidence capped per task."""

    def __init__(self) -> None:
        self.matches: list[Match] = []
        self.tallies: dict[str, TaskTally] = defaultdict(TaskTally)
        self._weak_kept: Counter = Counter()

    def add(self, match: Match) -> None:
        tally = self.tallies[match.task_id]
        tally.documents += 1
        if match.group is not None:
            tally.groups[match.group] += 1
        if is_weak(match):
            tally.weak_documents += 1
            if self._weak_kept[match.task_id] >= WEAK_KEPT:
                tally.unlisted += 1
                return
            self._weak_kept[match.task_id] += 1
        self.matches.append(match)


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
        else:
            label = "copy"
        judged.append(match.judged(label))
    return judged


def is_idiom(tally: TaskTally | None) -> bool:
    return tally is not None and tally.weak_documents >= IDIOM_DOCUMENTS
