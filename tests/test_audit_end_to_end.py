"""`cloneprobe audit` end to end: the real CLI, the local OpenAI-compatible server, a SQLite store.

The server answers the first 12 HumanEval tasks (completion mode: the prompt is the code to
continue) with the canonical body verbatim (Type-1), consistently renamed (Type-2), with one
statement added or removed (Type-3), or with unrelated code; some tasks are answered differently
under the original and the fixed prompts. Every count below was worked out by hand from that
table, not computed with the code under test.
"""

from __future__ import annotations

import ast
import json
import re
from math import comb

import pytest
from click.testing import CliRunner
from openai_test_server import OpenAITestServer

from cloneprobe.benchmarks import load_humaneval, load_prompt_set
from cloneprobe.cli import main

TASKS, N = 12, 3
JUNK = "    return None\n"
XOR_BY_INDEX = (  # HumanEval/11 by another algorithm: no clone of the canonical
    "    out = []\n"
    "    for i in range(len(a)):\n"
    "        out.append('1' if a[i] != b[i] else '0')\n"
    "    return ''.join(out)\n"
)
HUMANEVAL = load_humaneval()
TASK = {i: HUMANEVAL.get(f"HumanEval/{i}") for i in range(TASKS)}


def canonical(i: int) -> str:
    return TASK[i].canonical_solution


def renamed(i: int, names: dict[str, str]) -> str:
    """The canonical body with local names replaced consistently (whole words only)."""
    text = canonical(i)
    for old, new in names.items():
        assert re.search(rf"\b{old}\b", text), (i, old)
        text = re.sub(rf"\b{old}\b", new, text)
    return text


def without_line(i: int, line: str) -> str:
    assert canonical(i).count(line) == 1, (i, line)
    return canonical(i).replace(line, "")


def with_line_after(i: int, anchor: str, line: str) -> str:
    assert canonical(i).count(anchor) == 1, (i, anchor)
    return canonical(i).replace(anchor, anchor + line)


def answer(task: int, prompt_set: str, index: int) -> str:
    """What the model writes for a task under a prompt set, for choice `index` (0..N-1)."""
    original = prompt_set == "original"
    answers = {
        0: canonical(0),  # Type-1 under both sets
        1: without_line(1, "                current_string.clear()\n") if original else JUNK,
        2: canonical(2),  # `return number % 1.0`: 4 body tokens, trivial
        3: renamed(3, {"balance": "total", "op": "amount"}) if original else canonical(3),
        4: canonical(4),  # Type-1 for the default profile; 3 lines, so nicad cannot see it
        5: (
            [canonical(5), renamed(5, {"result": "out", "n": "item"}), JUNK][index]
            if original
            else JUNK
        ),
        6: JUNK if original else canonical(6),
        7: canonical(7),  # 12 body tokens: just over the trivial floor; 2 lines for nicad
        8: with_line_after(8, "    prod_value = 1\n", "    count = 0\n"),  # Type-3 under both
        9: renamed(9, {"running_max": "best", "result": "acc", "n": "value"}),  # Type-2
        10: JUNK,
        11: canonical(11) if original else XOR_BY_INDEX,
    }
    return answers[task]


ANSWERED_DIFFERENTLY = (1, 3, 5, 6, 11)
"""Tasks whose answer depends on the prompt set (their fixed prompt differs from the original)."""


def responder(kind, prompt, index, body):
    assert kind == "completion", kind
    for i, task in TASK.items():
        if f"def {task.entry_point}(" in prompt:
            return answer(i, "original" if prompt == task.prompt else "fixed", index)
    raise AssertionError(f"no task of the first {TASKS} in prompt {prompt[:80]!r}")


# Expected most specific clone type of each sample, (original samples, fixed samples) per task,
# default profile. None: no (non-trivial) clone.
NONE3 = (None, None, None)
ONE3, TWO3, THREE3 = (1, 1, 1), (2, 2, 2), (3, 3, 3)
DEFAULT_VERDICTS = {
    0: (ONE3, ONE3),
    1: (THREE3, NONE3),
    2: (NONE3, NONE3),  # trivial: reported apart, never counted
    3: (TWO3, ONE3),
    4: (ONE3, ONE3),
    5: ((1, 2, None), NONE3),
    6: (NONE3, ONE3),
    7: (ONE3, ONE3),
    8: (THREE3, THREE3),
    9: (TWO3, TWO3),
    10: (NONE3, NONE3),
    11: (ONE3, NONE3),
}
SHORT_CANONICALS = (2, 4, 7)
"""Canonicals of 2 or 3 pretty-printed lines: under NiCad's floor of 5 lines."""
NICAD_VERDICTS = {
    task: ((NONE3, NONE3) if task in SHORT_CANONICALS else verdicts)
    for task, verdicts in DEFAULT_VERDICTS.items()
}


def run_audit(server, store, *extra: str) -> dict:
    args = [
        "audit", "--model", "openai:test", "--base-url", server.base_url, "--store", str(store),
        "--limit", str(TASKS), "-n", str(N), "--prompts", "original,fixed",
        "--temperature", "0.2", "--json", *extra,
    ]  # fmt: skip
    result = CliRunner().invoke(
        main, args, env={"OPENAI_API_KEY": "sk-test", "OPENAI_BASE_URL": None}
    )
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


@pytest.fixture(scope="module")
def audits(tmp_path_factory):
    """The default audit, the same audit again, and the same audit with --profile nicad, on one
    store; with the server's request log after each."""
    store = tmp_path_factory.mktemp("audit") / "store.sqlite"
    with OpenAITestServer(responder) as server:
        first = run_audit(server, store)
        first_requests = server.requests
        again = run_audit(server, store)
        after_again = len(server.requests)
        nicad = run_audit(server, store, "--profile", "nicad")
        after_nicad = len(server.requests)
    return {
        "default": first,
        "requests": first_requests,
        "again": again,
        "requests_after_again": after_again,
        "nicad": nicad,
        "requests_after_nicad": after_nicad,
    }


def group(report: dict, prompt_set: str) -> dict:
    (found,) = [g for g in report["groups"] if g["prompt_set"] == prompt_set]
    return found


def sample_types(report: dict) -> dict[tuple[str, int, int], int | None]:
    """(prompt set, task number, sample index) -> clone_type."""
    return {
        (s["prompt_set"], int(s["task_id"].split("/")[1]), s["sample"]): s["clone_type"]
        for s in report["samples"]
    }


def expected_types(verdicts: dict) -> dict[tuple[str, int, int], int | None]:
    return {
        (prompt_set, task, index): types[index]
        for task, both in verdicts.items()
        for prompt_set, types in zip(("original", "fixed"), both, strict=True)
        for index in range(N)
    }


def hand_mcnemar(only_first: int, only_second: int) -> float:
    m = only_first + only_second
    return min(1.0, 2 * sum(comb(m, i) for i in range(min(only_first, only_second) + 1)) / 2**m)


# --- the responses are what the table says ----------------------------------------------------


def test_tasks_answered_differently_have_different_original_and_fixed_prompts():
    fixed = load_prompt_set("fixed", HUMANEVAL)
    for i in ANSWERED_DIFFERENTLY:
        (prompt,) = fixed.for_task(f"HumanEval/{i}")
        assert prompt.text != TASK[i].prompt
        assert f"def {TASK[i].entry_point}(" in prompt.text


def test_every_answer_continues_its_prompt_into_valid_python():
    fixed = load_prompt_set("fixed", HUMANEVAL)
    for i in range(TASKS):
        (fixed_prompt,) = fixed.for_task(f"HumanEval/{i}")
        for prompt_set, prompt in (("original", TASK[i].prompt), ("fixed", fixed_prompt.text)):
            for index in range(N):
                ast.parse(prompt + answer(i, prompt_set, index))


def test_renamed_and_edited_answers_differ_from_the_canonical():
    assert answer(3, "original", 0) != canonical(3)
    assert answer(5, "original", 1) != canonical(5)
    assert answer(9, "original", 0) != canonical(9)
    assert len(answer(1, "original", 0).splitlines()) == len(canonical(1).splitlines()) - 1
    assert len(answer(8, "original", 0).splitlines()) == len(canonical(8).splitlines()) + 1


# --- the audit --------------------------------------------------------------------------------


def test_audit_asks_the_server_once_per_task_and_prompt_set_for_n_samples(audits):
    requests = audits["requests"]
    assert len(requests) == TASKS * 2
    assert {r["path"] for r in requests} == {"/v1/completions"}
    assert {(r["json"]["n"], r["json"]["temperature"], r["json"]["model"]) for r in requests} == {
        (N, 0.2, "test")
    }
    prompts = sorted(r["json"]["prompt"] for r in requests)
    fixed = load_prompt_set("fixed", HUMANEVAL)
    expected = [TASK[i].prompt for i in range(TASKS)]
    expected += [fixed.for_task(f"HumanEval/{i}")[0].text for i in range(TASKS)]
    assert prompts == sorted(expected)


def test_audit_reports_exact_task_counts_per_type_and_prompt_set(audits):
    report = audits["default"]
    assert report["profile"] == "default"
    assert [g["prompt_set"] for g in report["groups"]] == ["original", "fixed"]
    original, fixed = group(report, "original"), group(report, "fixed")
    assert (original["model"], original["temperature"]) == ("openai:test", 0.2)
    assert (original["tasks"], original["samples"]) == (12, 36)
    assert (fixed["tasks"], fixed["samples"]) == (12, 36)
    # original: Type-1 tasks 0 4 5 7 11; Type-2 adds 3 9; Type-3 adds 1 8
    assert original["tasks_with_clone"] == {"1": 5, "2": 7, "3": 9}
    assert original["tasks_with_clone_exclusive"] == {"1": 5, "2": 2, "3": 2}
    # fixed: Type-1 tasks 0 3 4 6 7; Type-2 adds 9; Type-3 adds 8
    assert fixed["tasks_with_clone"] == {"1": 5, "2": 6, "3": 7}
    assert fixed["tasks_with_clone_exclusive"] == {"1": 5, "2": 1, "3": 1}
    assert original["task_rate"] == {"1": 41.67, "2": 58.33, "3": 75.0}
    assert fixed["task_rate"] == {"1": 41.67, "2": 50.0, "3": 58.33}


def test_audit_reports_exact_sample_counts_per_type_and_prompt_set(audits):
    original, fixed = group(audits["default"], "original"), group(audits["default"], "fixed")
    # original: Type-1 3+3+1+3+3 (tasks 0 4 5 7 11), Type-2 3+1+3 (3 5 9), Type-3 3+3 (1 8)
    assert original["samples_with_clone_exclusive"] == {"1": 13, "2": 7, "3": 6}
    assert original["samples_with_clone"] == {"1": 13, "2": 20, "3": 26}
    # fixed: Type-1 5 tasks x 3, Type-2 task 9, Type-3 task 8
    assert fixed["samples_with_clone_exclusive"] == {"1": 15, "2": 3, "3": 3}
    assert fixed["samples_with_clone"] == {"1": 15, "2": 18, "3": 21}
    assert original["sample_rate"] == {"1": 36.11, "2": 55.56, "3": 72.22}


def test_a_verbatim_trivial_canonical_is_reported_apart_not_counted(audits):
    report = audits["default"]
    assert group(report, "original")["tasks_trivial_only"] == 1
    assert group(report, "fixed")["tasks_trivial_only"] == 1
    trivial = {(s["prompt_set"], s["task_id"]) for s in report["samples"] if s["trivial_type"]}
    assert trivial == {("original", "HumanEval/2"), ("fixed", "HumanEval/2")}
    assert all(s["clone_type"] is None for s in report["samples"] if s["task_id"] == "HumanEval/2")


def test_audit_gives_each_sample_its_most_specific_clone_type(audits):
    report = audits["default"]
    assert len(report["samples"]) == TASKS * 2 * N
    assert sample_types(report) == expected_types(DEFAULT_VERDICTS)
    for s in report["samples"]:
        assert (s["model"], s["temperature"], s["variant"]) == ("openai:test", 0.2, s["prompt_set"])
        if s["clone_type"] in (1, 2):
            assert s["similarity"] == 100
        elif s["clone_type"] == 3:
            assert 70 <= s["similarity"] < 100
        else:
            assert s["similarity"] is None


def test_evidence_has_one_pair_per_cloned_sample_with_the_compared_lines(audits):
    report = audits["default"]
    cloned = [s for s in report["samples"] if s["clone_type"] is not None]
    assert len(report["evidence"]) == len(cloned) == 26 + 21
    by_key = {(e["prompt_set"], e["task_id"], e["sample"]): e for e in report["evidence"]}
    assert set(by_key) == {(s["prompt_set"], s["task_id"], s["sample"]) for s in cloned}
    verbatim = by_key[("original", "HumanEval/0", 0)]
    assert verbatim["type"] == "1" and verbatim["canonical_task"] == "HumanEval/0"
    assert verbatim["compared"]["canonical"] == verbatim["compared"]["sample"] != []
    edited = by_key[("original", "HumanEval/1", 0)]
    assert edited["type"] == "3"
    assert len(edited["compared"]["sample"]) == len(edited["compared"]["canonical"]) - 1


def test_comparison_counts_tasks_cloned_under_one_prompt_set_only(audits):
    (comparison,) = audits["default"]["comparisons"]
    assert (comparison["original"], comparison["other"], comparison["tasks"]) == (
        "original",
        "fixed",
        12,
    )
    by_type = comparison["by_type"]
    # Type-1: only original 5 11, only fixed 3 6; Type-2: only original 5 11, only fixed 6;
    # Type-3: only original 1 5 11, only fixed 6.
    expected = {"1": (5, 5, 2, 2), "2": (7, 6, 2, 1), "3": (9, 7, 3, 1)}
    for t, (cloned_original, cloned_other, only_original, only_other) in expected.items():
        s = by_type[t]
        assert (
            s["tasks_cloned_original"],
            s["tasks_cloned_other"],
            s["only_original"],
            s["only_other"],
        ) == (cloned_original, cloned_other, only_original, only_other)
        assert s["rate_difference"] == round(100 * (cloned_original - cloned_other) / 12, 2)
        assert s["ci95"][0] <= s["rate_difference"] <= s["ci95"][1]
    assert by_type["1"]["mcnemar_p"] == 1.0  # 2 * (1 + 4 + 6) / 16, capped at 1
    assert by_type["2"]["mcnemar_p"] == 1.0  # 2 * (1 + 3) / 8
    assert by_type["3"]["mcnemar_p"] == pytest.approx(0.625)  # 2 * (1 + 4) / 16
    assert by_type["3"]["mcnemar_p"] == pytest.approx(hand_mcnemar(3, 1))
    assert by_type["3"]["rate_difference"] == 16.67


def test_rerunning_the_audit_asks_the_server_nothing_and_reports_the_same(audits):
    assert audits["requests_after_again"] == len(audits["requests"])
    first, again = audits["default"], audits["again"]
    assert again["groups"] == first["groups"]
    assert again["comparisons"] == first["comparisons"]
    assert again["samples"] == first["samples"]
    assert again["settings"]["detector_key"] == first["settings"]["detector_key"]


def test_nicad_profile_on_the_same_store_asks_the_server_nothing(audits):
    assert audits["requests_after_nicad"] == len(audits["requests"])


def test_nicad_profile_cannot_see_the_short_canonicals(audits):
    report = audits["nicad"]
    assert report["profile"] == "nicad"
    assert report["settings"]["detector_key"] != audits["default"]["settings"]["detector_key"]
    assert sample_types(report) == expected_types(NICAD_VERDICTS)
    original, fixed = group(report, "original"), group(report, "fixed")
    # tasks 4 and 7 (verbatim, 3 and 2 lines) drop out of Type-1; task 2 is not even trivial
    assert original["tasks_with_clone"] == {"1": 3, "2": 5, "3": 7}
    assert original["samples_with_clone"] == {"1": 7, "2": 14, "3": 20}
    assert original["samples_with_clone_exclusive"] == {"1": 7, "2": 7, "3": 6}
    assert fixed["tasks_with_clone"] == {"1": 3, "2": 4, "3": 5}
    assert fixed["samples_with_clone"] == {"1": 9, "2": 12, "3": 15}
    assert original["tasks_trivial_only"] == fixed["tasks_trivial_only"] == 0
    assert not any(s["trivial_type"] for s in report["samples"])


def test_profiles_agree_on_every_task_with_a_long_canonical(audits):
    default, nicad = sample_types(audits["default"]), sample_types(audits["nicad"])
    assert set(default) == set(nicad)
    assert {key[1] for key in default if default[key] != nicad[key]} == {4, 7}
