"""Compare the answer, not the context.

A sample is judged on its entry point's function, what it nests and the helpers it uses; other
functions in the sample are not candidates. Canonical code that the prompt already shows is
marked, so it does not count toward a match.
"""

from __future__ import annotations

import pytest

from cloneprobe.benchmarks import canonical_source, load_humaneval
from cloneprobe.clones import (
    DEFAULT,
    NICAD,
    DetectorConfig,
    FragmentExtractor,
    SourceFile,
    compare_systems,
    get_language,
)
from cloneprobe.clones.prompt_overlap import prompt_overlap, unshown_similarity

PYTHON = get_language("python")
EXTRACTOR = FragmentExtractor(PYTHON)

CANONICAL = """\
def count_evens(xs):
    total = 0
    for x in xs:
        if x % 2 == 0:
            total += 1
    return total
"""
# The entry point written its own way, plus a leftover function that is the canonical renamed.
HELPER_MATCH = """\
def count_evens(xs):
    return len([x for x in xs if not x & 1])


def tally(values):
    count = 0
    for v in values:
        if v % 2 == 0:
            count += 1
    return count
"""


def pairs(canonical: str, sample_fragments) -> list[str]:
    canonical_fragments = EXTRACTOR.extract(SourceFile("canonical.py", canonical))
    report = compare_systems(canonical_fragments, sample_fragments, DetectorConfig())
    return [p.b.name for p in report.pairs]


# --- the answer's scope -------------------------------------------------------------------------


def test_a_function_the_entry_point_does_not_use_no_longer_matches():
    sample = SourceFile("sample.py", HELPER_MATCH)
    assert pairs(CANONICAL, EXTRACTOR.extract(sample)) == ["tally"]  # the false match
    fragments, scope = EXTRACTOR.extract_answer(sample, "count_evens")
    assert [f.name for f in fragments] == ["count_evens"]
    assert scope.helpers == ()
    assert pairs(CANONICAL, fragments) == []


def test_a_helper_the_entry_point_calls_is_part_of_the_answer():
    calling = HELPER_MATCH.replace("return len([x for x in xs if not x & 1])", "return tally(xs)")
    fragments, scope = EXTRACTOR.extract_answer(SourceFile("s.py", calling), "count_evens")
    assert scope.helpers == ("tally",)
    assert pairs(CANONICAL, fragments) == ["tally"]


def test_helpers_are_followed_transitively_and_passed_functions_count():
    program = (
        "def unused(a):\n    return a\n\n"
        "def leaf(a):\n    return a + 1\n\n"
        "def middle(a):\n    return sorted(a, key=leaf)\n\n"
        "def solve(xs):\n    def inner(v):\n        return middle(v)\n    return inner(xs)\n"
    )
    fragments, scope = EXTRACTOR.extract_answer(SourceFile("p.py", program), "solve")
    assert scope.functions[0].name == "solve"
    assert set(scope.helpers) == {"middle", "leaf"}
    assert sorted(f.name for f in fragments) == ["inner", "leaf", "middle", "solve"]


def test_the_last_module_level_definition_of_the_entry_point_is_the_answer():
    program = "def f(a):\n    return a\n\ndef f(a):\n    b = a * 2\n    return b\n"
    fragments, scope = EXTRACTOR.extract_answer(SourceFile("p.py", program), "f")
    assert [(f.start_line, f.end_line) for f in fragments] == [(4, 6)]
    assert (scope.functions[0].start_line, scope.functions[0].end_line) == (4, 6)


def test_a_program_without_the_entry_point_has_no_answer():
    fragments, scope = EXTRACTOR.extract_answer(SourceFile("p.py", HELPER_MATCH), "missing")
    assert (fragments, scope) == ([], None)


def test_answer_extraction_keeps_the_profile_layout():
    nicad = FragmentExtractor(PYTHON, NICAD.layout)
    fragments, _ = nicad.extract_answer(SourceFile("p.py", HELPER_MATCH), "count_evens")
    assert [f.layout for f in fragments] == ["source"]


# --- code the prompt already shows --------------------------------------------------------------

SHIFT_PROMPT = '''\
def encode(s: str):
    """Shift every letter by three."""
    return "".join([chr(((ord(ch) + 3 - ord("a")) % 26) + ord("a")) for ch in s])


def decode(s: str):
    """Undo encode."""
'''
SHIFT_CANONICAL = (
    "def decode(s: str):\n"
    '    return "".join([chr(((ord(ch) - 3 - ord("a")) % 26) + ord("a")) for ch in s])\n'
)
OWN_CANONICAL = (
    "def decode(s: str):\n"
    "    out = []\n"
    "    for ch in s:\n"
    "        out.append(chr((ord(ch) - 100) % 26 + 97))\n"
    '    return "".join(out)\n'
)


def overlap_of(canonical: str, prompt: str, profile, rename):
    extractor = FragmentExtractor(PYTHON, profile.layout)
    (fragment,) = extractor.extract(SourceFile("c.py", canonical))
    (prompt_fragment,) = extractor.extract(SourceFile("p.py", prompt), "files")
    return fragment, overlap(fragment, prompt_fragment, profile, rename)


def overlap(fragment, prompt_fragment, profile, rename):
    return prompt_overlap(fragment, prompt_fragment, profile, rename)


@pytest.mark.parametrize("profile", [DEFAULT, NICAD], ids=lambda p: p.name)
@pytest.mark.parametrize("rename", ["none", "blind"])
def test_a_canonical_that_is_the_prompts_own_code_is_uninformative(profile, rename):
    _, marks = overlap_of(SHIFT_CANONICAL, SHIFT_PROMPT, profile, rename)
    assert marks.shown_share >= 0.9
    assert not marks.informative()
    if profile is DEFAULT:
        assert marks.own_items == ("-",)  # only the flipped operator is the canonical's own


@pytest.mark.parametrize("profile", [DEFAULT, NICAD], ids=lambda p: p.name)
def test_a_canonical_with_its_own_code_is_informative(profile):
    _, marks = overlap_of(OWN_CANONICAL, SHIFT_PROMPT, profile, "blind")
    assert marks.informative()
    assert marks.shown_share <= 0.4  # the signature, and generic runs like `x ( x ) )`


def test_the_prompt_repeated_is_a_detector_match_to_a_prompt_code_canonical():
    # A sample that repeats the prompt and writes `decode` its own way: the detector calls it a
    # Type-3 clone through the prompt's `encode`; the overlap says the canonical is prompt code.
    repeated = SHIFT_PROMPT + "    return encode(encode(encode(s)))\n"
    assert pairs(SHIFT_CANONICAL, EXTRACTOR.extract(SourceFile("s.py", repeated))) == ["encode"]
    _, marks = overlap_of(SHIFT_CANONICAL, SHIFT_PROMPT, DEFAULT, "blind")
    assert not marks.informative()


def test_lines_the_prompt_shows_do_not_count_toward_a_match():
    canonical = SHIFT_CANONICAL.replace("str):\n", "str):\n    s = s.lower()\n")
    fragment, marks = overlap_of(canonical, SHIFT_PROMPT, NICAD, "none")
    assert marks.own_items == ("s = s . lower ( )",)  # signature and shifted return are shown
    nicad = FragmentExtractor(PYTHON, NICAD.layout)
    repeated = nicad.extract(SourceFile("s.py", SHIFT_PROMPT + "    return encode(s)\n"))
    assert [unshown_similarity(marks, f, NICAD, "none") for f in repeated] == [0, 0]
    assert unshown_similarity(marks, fragment, NICAD, "none") == 100


def test_humaneval_50_canonical_is_found_to_be_prompt_code_and_0_is_not():
    humaneval = load_humaneval()
    shares = {}
    for task_id in ("HumanEval/50", "HumanEval/0"):
        task = humaneval.get(task_id)
        canonical = next(
            f
            for f in EXTRACTOR.extract(SourceFile("c.py", canonical_source(task)))
            if f.name == task.entry_point
        )
        (prompt,) = EXTRACTOR.extract(SourceFile("p.py", task.prompt), "files")
        shares[task_id] = overlap(canonical, prompt, DEFAULT, "blind")
    assert not shares["HumanEval/50"].informative()
    assert shares["HumanEval/50"].shown_share > 0.9
    assert shares["HumanEval/0"].informative()
    assert shares["HumanEval/0"].shown_share < 0.1
