"""The evidence features' memos (by lines tuple, then by body content) give the features of
a fresh computation: for a fragment asked for again, for copies of one program (which share
their lines tuple), and for fragments that share a lines tuple but not their body start."""

from __future__ import annotations

from dataclasses import replace

import pytest

import cloneprobe.evidence.strength as strength
from cloneprobe.audit.detection import CanonicalFragments
from cloneprobe.benchmarks import load_humaneval
from cloneprobe.clones import FragmentExtractor, SourceFile, get_language

HUMANEVAL = load_humaneval()
CANONICALS = CanonicalFragments(HUMANEVAL)


def fresh(profile, fragment):
    """The features with both memos empty (computed, not remembered)."""
    strength._SAME_LINES_MEMO.clear()
    strength._CONTENT_MEMO.clear()
    return strength.features_of(profile, fragment)


@pytest.mark.parametrize("layout", ["source", "statements"])
def test_remembered_features_are_the_computed_ones(layout):
    extractor = FragmentExtractor(get_language("python"), layout)
    tasks = [HUMANEVAL.get(f"HumanEval/{n}") for n in (0, 12, 98)]
    cases = []
    for task in tasks:
        program = task.prompt + task.canonical_solution
        first = extractor.extract(SourceFile("a.py", program))
        again = extractor.extract(SourceFile("b.py", program))  # the same lines tuples
        assert first[-1].lines is again[-1].lines
        for fragment in (*first, *again):
            for other in tasks:  # its own canonical and others'
                cases.append((CANONICALS.profile(other.task_id), fragment))
    expected = [fresh(profile, fragment) for profile, fragment in cases]
    strength._SAME_LINES_MEMO.clear()
    strength._CONTENT_MEMO.clear()
    assert [strength.features_of(p, f) for p, f in cases] == expected
    assert [strength.features_of(p, f) for p, f in cases] == expected  # all remembered now


def test_a_shared_lines_tuple_with_another_body_start_is_not_taken_for_the_same_body():
    extractor = FragmentExtractor(get_language("python"), "source")
    task = HUMANEVAL.get("HumanEval/12")
    profile = CANONICALS.profile(task.task_id)
    fragment = extractor.extract(SourceFile("a.py", task.prompt + task.canonical_solution))[-1]
    shifted = replace(fragment, body_start=fragment.body_start + 2)
    assert shifted.lines is fragment.lines
    expected = fresh(profile, shifted)
    strength._SAME_LINES_MEMO.clear()
    strength._CONTENT_MEMO.clear()
    assert strength.features_of(profile, fragment) != expected
    assert strength.features_of(profile, shifted) == expected
