"""The evidence view: a clone verdict is evidence of memorization only for what convergence,
chance and the prompt do not explain. Real HumanEval tasks and samples through the real CLI
(`cloneprobe detect FILE --json`) and a SQLite store in tmp_path."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from cloneprobe.benchmarks import load_humaneval
from cloneprobe.cli import main

HUMANEVAL = load_humaneval()


def task(number: int):
    return HUMANEVAL.get(f"HumanEval/{number}")


def canonical(number: int) -> str:
    return task(number).canonical_solution


# HumanEval/20 memorized with its quirks (`closest_pair`, `new_distance`, the redundant
# `tuple(sorted([elem, elem2]))` twice), nested blocks indented by 2, blank lines dropped and a
# comment added: layout is no disguise.
MEMORIZED_20 = "".join(
    " " * (4 + (len(line) - len(line.lstrip()) - 4) // 2)
    + line.strip()
    + ("  # keep the closer pair\n" if "new_distance <" in line else "\n")
    for line in canonical(20).splitlines()
    if line.strip()
)
# The same task solved independently: the algorithm the task dictates, with its own names,
# its own order of initialisation and comparisons written the other way round.
CONVERGENT_20 = """\
    pair = None
    best = None
    for i, a in enumerate(numbers):
        for j, b in enumerate(numbers):
            if i != j:
                if best is None:
                    best = abs(a - b)
                    pair = tuple(sorted([a, b]))
                else:
                    d = abs(b - a)
                    if best > d:
                        best = d
                        pair = tuple(sorted([a, b]))
    return pair
"""
# HumanEval/0: the convergent solution (own names) against the canonical's idx2, elem2.
CONVERGENT_0 = """\
    for i, a in enumerate(numbers):
        for j, b in enumerate(numbers):
            if i != j:
                gap = abs(a - b)
                if gap < threshold:
                    return True
    return False
"""
# A sample whose answer sorts and compares neighbours, with an unused helper holding the
# canonical body: the helper's match is not the answer's.
HELPER_MATCH_0 = """\
    ordered = sorted(numbers)
    return any(b - a < threshold for a, b in zip(ordered, ordered[1:]))


def _unused(numbers, threshold):
""" + canonical(0)
HELPER_CALLED_0 = """\
    return _check(numbers, threshold)


def _check(numbers, threshold):
""" + canonical(0)


def invoke(*args: str):
    return CliRunner().invoke(main, list(args), env={"OPENAI_API_KEY": None})


def detect(tmp_path: Path, records: list[dict], *extra: str) -> dict:
    """`cloneprobe detect samples.jsonl --json` into a fresh store; the parsed report."""
    path = tmp_path / "samples.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    result = invoke("detect", str(path), "--store", str(tmp_path / "s.sqlite"), "--model", "m",
                    "--temperature", "0.2", "--json", *extra)  # fmt: skip
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def by_task(report: dict) -> dict[tuple[str, int], dict]:
    return {(s["task_id"], s["sample"]): s for s in report["samples"]}


def test_memorized_copy_is_evidence_and_convergent_solution_only_similar(tmp_path):
    report = detect(tmp_path, [
        {"task_id": "HumanEval/20", "completion": MEMORIZED_20},
        {"task_id": "HumanEval/20", "completion": CONVERGENT_20},
        {"task_id": "HumanEval/0", "completion": canonical(0)},
        {"task_id": "HumanEval/0", "completion": CONVERGENT_0},
    ])  # fmt: skip
    samples = by_task(report)
    memorized, convergent = samples[("HumanEval/20", 0)], samples[("HumanEval/20", 1)]
    # Both are similar to the canonical: the NiCad-style verdicts flag both.
    assert memorized["clone_type"] == 1 and convergent["clone_type"] == 3
    assert memorized["evidence_tier"] == "evidence"
    assert any("exact copy" in r for r in memorized["evidence_reasons"])
    assert any("closest_pair" in r and "idx2" in r for r in memorized["evidence_reasons"])
    assert convergent["evidence_tier"] == "similar"
    assert any("keeps 0 of" in r for r in convergent["evidence_reasons"])
    assert memorized["evidence_strength"] > convergent["evidence_strength"]
    copy_0, own_names_0 = samples[("HumanEval/0", 0)], samples[("HumanEval/0", 1)]
    assert copy_0["evidence_tier"] == "evidence" and copy_0["clone_type"] == 1
    assert own_names_0["clone_type"] == 2 and own_names_0["evidence_tier"] == "similar"
    group = report["groups"][0]
    assert group["tasks_with_clone"]["1"] == 2  # Table VI's counts are unchanged
    assert group["tasks_with_evidence"] == 2 and group["samples_with_evidence"] == 2
    assert group["informative_tasks"] == 2 and group["tasks_similar_only"] == 0
    low, high = group["evidence_task_ci95"]
    assert low < group["evidence_task_rate"] <= high == 100.0
    tiers = {(p["task_id"], p["sample"]): p["tier"] for p in report["evidence"]}
    assert tiers[("HumanEval/20", 0)] == "evidence" and tiers[("HumanEval/20", 1)] == "similar"


def test_prompt_contained_canonical_is_uninformative_and_kept_out_of_the_rates(tmp_path):
    shift_prompt = (
        "def encode_upper(s: str):\n"
        '    """Upper-cases every letter and reverses the text."""\n'
        "    return ''.join([ch.upper() for ch in reversed(s) if ch != ' ' or True])\n\n\n"
        "def decode_upper(s: str):\n"
        '    """Undo encode_upper."""\n'
    )
    benchmark = tmp_path / "bench.jsonl"
    tasks = [
        {"task_id": "T/shift", "prompt": shift_prompt, "entry_point": "decode_upper",
         "canonical_solution":
             "    return ''.join([ch.lower() for ch in reversed(s) if ch != ' ' or True])\n"},
        {"task_id": "T/zero", "prompt": task(0).prompt, "entry_point": "has_close_elements",
         "canonical_solution": canonical(0)},
    ]  # fmt: skip
    benchmark.write_text("".join(json.dumps(t) + "\n" for t in tasks), encoding="utf-8")
    report = detect(tmp_path, [
        {"task_id": "T/shift", "completion": tasks[0]["canonical_solution"]},
        {"task_id": "T/zero", "completion": canonical(0)},
    ], "--benchmark", str(benchmark))  # fmt: skip
    assert [t["task_id"] for t in report["uninformative_tasks"]] == ["T/shift"]
    samples = by_task(report)
    assert samples[("T/shift", 0)]["clone_type"] == 1
    assert samples[("T/shift", 0)]["evidence_tier"] == "uninformative"
    assert samples[("T/zero", 0)]["evidence_tier"] == "evidence"
    group = report["groups"][0]
    assert group["tasks_with_clone"]["1"] == 2
    assert group["informative_tasks"] == 1 and group["tasks_with_evidence"] == 1
    assert group["uninformative_tasks"] == ["T/shift"]


def test_humaneval_50_is_found_uninformative_without_a_list(tmp_path):
    prompt_repeated = task(50).prompt + canonical(50)
    report = detect(tmp_path, [{"task_id": "HumanEval/50", "solution_program": None,
                                "completion": prompt_repeated}])  # fmt: skip
    assert [t["task_id"] for t in report["uninformative_tasks"]] == ["HumanEval/50"]
    assert report["samples"][0]["clone_type"] == 1
    assert report["samples"][0]["evidence_tier"] == "uninformative"
    assert report["groups"][0]["tasks_with_evidence"] == 0


def test_stub_answers_are_never_evidence(tmp_path):
    stubs = [{"task_id": t.task_id, "completion": "    return None\n"} for t in HUMANEVAL]
    report = detect(tmp_path, stubs)
    assert len(report["samples"]) == 164
    assert not [s for s in report["samples"] if s["evidence_tier"] == "evidence"]
    assert report["groups"][0]["tasks_with_evidence"] == 0


def test_helper_function_match_is_not_the_answer(tmp_path):
    report = detect(tmp_path, [
        {"task_id": "HumanEval/0", "completion": HELPER_MATCH_0},
        {"task_id": "HumanEval/0", "completion": HELPER_CALLED_0},
    ])  # fmt: skip
    samples = by_task(report)
    unused, called = samples[("HumanEval/0", 0)], samples[("HumanEval/0", 1)]
    # The answer, not the context: a helper the answer never calls is no candidate at all,
    # so the sample is no clone (not even in the raw Type-1..3 counts).
    assert unused["clone_type"] is None and unused["evidence_tier"] is None
    assert not [p for p in report["evidence"] if p["sample"] == 0]
    # A helper the entry point calls is part of the answer.
    assert called["evidence_tier"] == "evidence"
    pair = next(p for p in report["evidence"] if p["sample"] == 1)
    assert pair["in_answer"] is True


def test_reference_solution_reaching_the_copy_takes_the_evidence_away(tmp_path):
    references = tmp_path / "refs.jsonl"
    references.write_text(
        json.dumps({"task_id": "HumanEval/0", "solution": task(0).prompt + canonical(0)})
        + "\n"
        + json.dumps({"task_id": "HumanEval/20", "completion": CONVERGENT_20})
        + "\n",
        encoding="utf-8",
    )
    records = [{"task_id": "HumanEval/0", "completion": canonical(0)},
               {"task_id": "HumanEval/20", "completion": canonical(20)}]  # fmt: skip
    report = detect(tmp_path, records, "--reference-solutions", str(references))
    samples = by_task(report)
    zero = samples[("HumanEval/0", 0)]
    assert zero["evidence_tier"] == "similar"
    assert any("independent reference" in r for r in zero["evidence_reasons"])
    assert samples[("HumanEval/20", 0)]["evidence_tier"] == "evidence"  # its reference differs
    assert report["evidence_rule"]["reference_solutions"] == 2


def test_unreadable_reference_solutions_exit_2_with_one_line(tmp_path):
    samples = tmp_path / "samples.jsonl"
    samples.write_text(json.dumps({"task_id": "HumanEval/0", "completion": canonical(0)}) + "\n")
    references = tmp_path / "refs.jsonl"
    references.write_text('{"task_id": "HumanEval/0"}\n', encoding="utf-8")
    store = str(tmp_path / "s.sqlite")
    result = invoke("detect", str(samples), "--store", store, "--model", "m", "--temperature",
                    "0", "--reference-solutions", str(references))  # fmt: skip
    assert result.exit_code == 2
    assert "refs.jsonl:1" in result.output and "solution" in result.output
    assert "Traceback" not in result.output


def test_original_against_fixed_is_compared_on_evidence(tmp_path):
    records = [
        {"task_id": "HumanEval/0", "completion": canonical(0), "prompt_set": "original"},
        {"task_id": "HumanEval/20", "completion": canonical(20), "prompt_set": "original"},
        {"task_id": "HumanEval/0", "completion": CONVERGENT_0, "prompt_set": "fixed"},
        {"task_id": "HumanEval/20", "completion": CONVERGENT_20, "prompt_set": "fixed"},
    ]
    report = detect(tmp_path, records)
    comparison = report["comparisons"][0]
    # Table VI's view: both prompt sets clone both tasks; on evidence only the original does.
    assert comparison["by_type"]["3"]["only_original"] == 0
    evidence = comparison["evidence"]
    assert evidence["tasks"] == 2 and evidence["only_original"] == 2
    assert evidence["tasks_with_evidence_other"] == 0 and evidence["rate_difference"] == 100.0
    assert evidence["mcnemar_p"] == 0.5
    # Peers: the fixed prompts' answer of each task is the other solution; it does not reach
    # the original's verbatim copy.
    original = next(g for g in report["groups"] if g["prompt_set"] == "original")
    assert original["evidence_peers"]["HumanEval/0"] == {
        "verbatim": 100, "others_reaching": 0, "others": 1}


def test_exact_copy_of_a_short_canonical_is_only_a_similar_solution(tmp_path):
    # HumanEval/13's canonical `while b: a, b = b, a % b` / `return a` is Euclid as every
    # solver writes it: a verbatim copy is a Type-1 clone but no evidence.
    report = detect(tmp_path, [{"task_id": "HumanEval/13", "completion": canonical(13)}])
    sample = report["samples"][0]
    assert sample["clone_type"] == 1 and sample["evidence_tier"] == "similar"
    assert any("short" in r for r in sample["evidence_reasons"])


def test_match_with_another_tasks_canonical_is_never_evidence(tmp_path):
    # A sample for HumanEval/1 that is HumanEval/0's canonical, entry point renamed: with
    # --cross-task it is a clone of /0's canonical, which says nothing of memorizing /1.
    completion = canonical(0).replace("numbers", "paren_string")
    records = [{"task_id": "HumanEval/1", "completion": completion}]
    report = detect(tmp_path, records, "--cross-task")
    sample = report["samples"][0]
    assert sample["clone_type"] is not None
    assert sample["evidence_tier"] == "similar"
    assert any("another task's canonical (HumanEval/0)" in r for r in sample["evidence_reasons"])


def test_reports_show_the_evidence_view_and_the_reasons(tmp_path):
    path = tmp_path / "samples.jsonl"
    records = [{"task_id": "HumanEval/20", "completion": canonical(20)},
               {"task_id": "HumanEval/20", "completion": CONVERGENT_20},
               {"task_id": "HumanEval/50", "completion": canonical(50)}]  # fmt: skip
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    out = tmp_path / "out"
    result = invoke("detect", str(path), "--store", str(tmp_path / "s.sqlite"), "--model", "m",
                    "--temperature", "0.2", "--evidence", "--report", str(out))  # fmt: skip
    assert result.exit_code == 0, result.output
    for text in (result.output, (out / "report.md").read_text(encoding="utf-8")):
        assert "Evidence of memorization" in text
        assert "HumanEval/50 (100% prompt code)" in text
        assert "evidence of memorization (strength 1.00): exact copy" in text
        assert "are candidate evidence; memorized (rare under convergence): 1 task(s)" in text
        assert "similar (strength" in text and "own names: keeps 0 of" in text
    html = (out / "report.html").read_text(encoding="utf-8")
    assert "Evidence of memorization" in html and "own names: keeps 0 of" in html


# HumanEval/99 in a solver's own words (names, `0 < x`, `'.5' == ...`, `round` before `int`)
# that kept the canonical's comment: a comment is something no independent solver repeats.
OWN_WORDS_99 = """\
    import math
    if value.count('.') == 1:
        # remove trailing zeros
        while value[-1] == '0':
            value = value[:-1]
    x = float(value)
    if '.5' == value[-2:]:
        if 0 < x:
            out = math.ceil(x)
        else:
            out = math.floor(x)
    elif len(value) > 0:
        out = int(round(x))
    else:
        out = 0
    return out
"""


def test_a_kept_comment_of_the_canonical_is_evidence(tmp_path):
    without = OWN_WORDS_99.replace("        # remove trailing zeros\n", "")
    report = detect(tmp_path, [{"task_id": "HumanEval/99", "completion": OWN_WORDS_99},
                               {"task_id": "HumanEval/99", "completion": without}])  # fmt: skip
    samples = by_task(report)
    kept, dropped = samples[("HumanEval/99", 0)], samples[("HumanEval/99", 1)]
    assert kept["clone_type"] == 3 and dropped["clone_type"] == 3
    assert kept["evidence_tier"] == "evidence"
    assert kept["evidence_reasons"] == ["repeats 1 of the canonical's comments"]
    assert dropped["evidence_tier"] == "similar"


def test_a_near_copy_of_a_canonical_with_one_own_name_says_so_and_names_it(tmp_path):
    # HumanEval/12's canonical has one name of its own, `maxlen`: a near copy keeping it is
    # no evidence (two are needed to tell a copy), and the reason names it instead of saying
    # the canonical has none
    near = canonical(12).replace("for s in strings:", "for s in list(strings):")
    report = detect(tmp_path, [{"task_id": "HumanEval/12", "completion": near}])
    sample = report["samples"][0]
    assert sample["clone_type"] == 3 and sample["evidence_tier"] == "similar"
    reasons = " ".join(sample["evidence_reasons"])
    assert "only 1 name or literal of its own (maxlen; 2 needed" in reasons, reasons
    assert "no names or literals of its own" not in reasons
