"""Invariants of the shipped fixed HumanEval prompts and the fixer that makes them."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import pytest

from cloneprobe.benchmarks import ISSUE_KINDS, BenchmarkError, PromptEdit, load_humaneval
from cloneprobe.benchmarks.build_fixed import FIXED, build_fixed_records, render
from cloneprobe.benchmarks.docstrings import syntax_without_docstrings
from cloneprobe.benchmarks.edits import apply_edits, edit_for_substring
from cloneprobe.benchmarks.fixer import find_examples, fix_urls, mechanical_fixes
from cloneprobe.benchmarks.prompts import fixed_records
from cloneprobe.benchmarks.review import check_fixed_prompt
from cloneprobe.benchmarks.tasks import Task


@pytest.fixture(scope="module")
def humaneval():
    return load_humaneval()


@pytest.fixture(scope="module")
def records():
    return {r["task_id"]: r for r in fixed_records()}


def test_every_task_is_present_once(humaneval, records):
    assert list(records) == [t.task_id for t in humaneval]


def test_provenance_replayed_on_the_original_gives_the_fixed_prompt(humaneval, records):
    for task in humaneval:
        record = records[task.task_id]
        edits = [PromptEdit.from_dict(c) for c in record["changes"]]
        assert apply_edits(task.prompt, edits, task.task_id) == record["prompt"], task.task_id
        assert {e.kind for e in edits} <= set(record["found"]) <= set(ISSUE_KINDS)
        if not edits:
            assert record["prompt"] == task.prompt


def test_code_entry_point_and_signature_never_change(humaneval, records):
    for task in humaneval:
        fixed = records[task.task_id]["prompt"]
        same_code = syntax_without_docstrings(fixed) == syntax_without_docstrings(task.prompt)
        assert same_code, task.task_id
        assert f"def {task.entry_point}(" in fixed


@pytest.mark.slow(reason="about 5 s: every canonical against every fixed prompt")
def test_canonical_solution_passes_the_tests_after_every_fixed_prompt(humaneval, records):
    tasks = list(humaneval)
    with ThreadPoolExecutor(max_workers=2) as pool:
        problems = list(
            pool.map(
                lambda t: (t.task_id, check_fixed_prompt(t, records[t.task_id]["prompt"])), tasks
            )
        )
    assert [p for p in problems if p[1]] == []


@pytest.mark.slow(reason="about 10 s: rebuilds the fixed prompt set")
def test_shipped_file_is_what_the_review_and_fixer_build(humaneval):
    assert render(build_fixed_records(humaneval)) == FIXED.read_text(encoding="utf-8")


def test_known_wrong_examples_are_fixed_by_running_the_canonical_solution(records):
    median = records["HumanEval/47"]
    assert "    8.0\n" in median["prompt"] and "15.0" not in median["prompt"]
    (change,) = [c for c in median["changes"] if c["kind"] == "incorrect_example"]
    assert "returns 8.0" in change["why"]
    assert "== [1, 2, 4, 3, 5]" in records["HumanEval/116"]["prompt"]


def test_language_fixes_come_from_the_review(records):
    found = {kind for r in records.values() for kind in r["found"]}
    assert {"spelling_grammar", "unclear_description", "partial_sentence"} <= found
    edited = sum(1 for r in records.values() if r["changes"])
    assert 100 < edited < 164


def _task(prompt: str, solution: str, entry_point: str = "f") -> Task:
    return Task("T/0", prompt, solution, entry_point)


def test_example_forms_the_fixer_understands():
    prompt = (
        'def f(x):\n    """Double x.\n'
        "    >>> f(2)\n    4\n"
        "    >>> f(3) == 7\n"
        "    f(5) ==> 11\n"
        "    f(1) ➞ 2\n"
        "    f(6) should return 12.\n"
        '    """\n'
    )
    task = _task(prompt, "    return 2 * x\n")
    calls = [(e.call, e.expected) for e in find_examples(prompt, "f")]
    assert calls == [("f(2)", "4"), ("f(3)", "7"), ("f(5)", "11"), ("f(1)", "2"), ("f(6)", "12")]
    fixed, edits = mechanical_fixes(task, prompt)
    assert sorted(e.after.strip() for e in edits) == [">>> f(3) == 6", "f(5) ==> 10"]
    assert apply_edits(prompt, edits, "T/0") == fixed


def test_fixer_keeps_a_bare_equals_that_names_something_else():
    prompt = 'def tri(n):\n    """tri(1) = 3\n    tri(2) = [1, 3, 2]\n    """\n'
    task = _task(prompt, "    return [1, 3, 2][: n + 1]\n", "tri")
    assert mechanical_fixes(task, prompt)[1] == []


def test_float_examples_are_compared_to_the_stated_precision():
    prompt = 'def f():\n    """Third.\n    >>> f()\n    0.33\n    """\n'
    assert mechanical_fixes(_task(prompt, "    return 1 / 3\n"), prompt)[1] == []
    assert len(mechanical_fixes(_task(prompt, "    return 0.5\n"), prompt)[1]) == 1


def test_docstring_layout_and_urls_are_fixed_mechanically():
    prompt = (
        'def f(x):\n    """Return x.   \n\n\n    See https://example.org/spec for details.\n'
        '    """\n'
    )
    fixed, edits = mechanical_fixes(_task(prompt, "    return x\n"), prompt)
    assert fixed == 'def f(x):\n    """Return x.\n\n    See for details.\n    """\n'
    assert {e.kind for e in edits} == {"docstring_formatting", "url"}
    assert apply_edits(prompt, edits, "T/0") == fixed
    assert fix_urls("def f():\n    # http://x.org is a comment, not a docstring\n    pass\n") == []


def test_an_edit_must_name_text_that_occurs_exactly_once():
    with pytest.raises(BenchmarkError, match="found 2 times"):
        edit_for_substring("a a", "a", "b", "spelling_grammar", "", "T/0")
    with pytest.raises(BenchmarkError, match="unknown issue kind"):
        edit_for_substring("a", "a", "b", "typo", "", "T/0")


def test_replaying_an_edit_on_a_changed_prompt_is_refused():
    edit = edit_for_substring("x\ny\n", "y", "z", "spelling_grammar", "", "T/0")
    with pytest.raises(BenchmarkError, match="the prompt changed"):
        apply_edits("x\nq\n", [edit], "T/0")
