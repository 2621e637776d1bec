"""The caches that make detection fast change nothing it finds: a program extracted again, a
body whose evidence features were computed before, a canonical's source asked for twice."""

from __future__ import annotations

import pytest

from cloneprobe.audit.detection import CanonicalFragments
from cloneprobe.benchmarks import canonical_source, load_humaneval
from cloneprobe.clones import FragmentExtractor, SourceFile, get_language
from cloneprobe.evidence.strength import features_of

PROGRAM = '''def helper(xs):
    total = 0
    for x in xs:
        total += x * 2
    return total


def below_zero(operations):
    """Doc."""
    balance = 0
    for op in operations:
        balance += op
        if balance < 0:
            return True
    return helper(operations) < 0
'''


def fragment_record(fragment) -> tuple:
    f = fragment
    return (f.file, f.start_line, f.end_line, f.name, f.lines, f.body_start, f.has_errors,
            f.one_liner)  # fmt: skip


@pytest.mark.parametrize("layout", ["source", "statements"])
def test_a_program_seen_again_gets_its_own_fragments_named_after_its_file(layout):
    extractor = FragmentExtractor(get_language("python"), layout)
    first = extractor.extract(SourceFile("a.py", PROGRAM))
    second = extractor.extract(SourceFile("b.py", PROGRAM))
    fresh = FragmentExtractor(get_language("python"), layout, memo=False)
    plain = fresh.extract(SourceFile("b.py", PROGRAM))
    assert [f.file for f in first] == ["a.py", "a.py"]
    assert [fragment_record(f) for f in second] == [fragment_record(f) for f in plain]
    assert not {id(f) for f in first} & {id(f) for f in second}  # compared by identity


def test_the_answer_of_a_program_seen_again_is_the_same_answer():
    extractor = FragmentExtractor(get_language("python"), "source")
    extractor.extract_answer(SourceFile("a.py", PROGRAM), "helper")
    answer, scope = extractor.extract_answer(SourceFile("b.py", PROGRAM), "below_zero")
    plain, plain_scope = FragmentExtractor(get_language("python"), "source", memo=False
                                           ).extract_answer(SourceFile("b.py", PROGRAM),
                                                            "below_zero")  # fmt: skip
    assert scope == plain_scope and scope.helpers == ("helper",)
    assert [fragment_record(f) for f in answer] == [fragment_record(f) for f in plain]


def test_features_of_one_body_against_two_canonicals_are_each_canonicals_own():
    benchmark = load_humaneval()
    canonicals = CanonicalFragments(benchmark)
    own, other = canonicals.profile("HumanEval/3"), canonicals.profile("HumanEval/0")
    sample = FragmentExtractor(get_language("python")).extract(
        SourceFile("s.py", canonical_source(benchmark.get("HumanEval/3"))))[0]  # fmt: skip
    against_own = features_of(own, sample)
    against_other = features_of(other, sample)
    assert against_own.verbatim == 1.0
    assert against_other.verbatim < 0.5
    assert features_of(own, sample) == against_own


def test_features_of_a_copied_body_keep_their_own_function_and_lines():
    benchmark = load_humaneval()
    profile = CanonicalFragments(benchmark).profile("HumanEval/3")
    source = canonical_source(benchmark.get("HumanEval/3"))
    extractor = FragmentExtractor(get_language("python"))
    first = extractor.extract(SourceFile("s1.py", source))[0]
    moved = extractor.extract(SourceFile("s2.py", "import os\n\n\n" + source))[0]
    a, b = features_of(profile, first), features_of(profile, moved)
    assert a.lines != b.lines and b.lines[0] == first.start_line + 3
    assert (a.verbatim, a.structure, a.names_kept) == (b.verbatim, b.structure, b.names_kept)


def test_canonical_source_is_the_same_asked_again_and_under_a_new_name():
    task = load_humaneval().get("HumanEval/3")
    assert canonical_source(task) == canonical_source(task)
    renamed = canonical_source(task, "went_below")
    assert "def went_below" in renamed and "below_zero" not in renamed
    assert canonical_source(task, task.entry_point) == canonical_source(task)
