"""The `disguised` prompt set: the task unchanged, its surface refactored; samples mapped back
through the renaming before detection; the model's own disguised samples as a null; original
names leaking into a disguised sample as evidence by itself. Real HumanEval tasks, a real
SQLite store, the real CLI; example outputs recomputed in a separate interpreter."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from cloneprobe.benchmarks import load_humaneval, load_prompt_set
from cloneprobe.benchmarks.build_disguised import main as build_disguised
from cloneprobe.benchmarks.disguise import disguise_task, leaked_names, map_back
from cloneprobe.benchmarks.entry_points import rename_identifier
from cloneprobe.benchmarks.prompts import disguise_renames
from cloneprobe.benchmarks.reference_run import evaluate_calls
from cloneprobe.cli import main
from cloneprobe.evidence.verdict import task_verdict

HUMANEVAL = load_humaneval()
DISGUISED = load_prompt_set("disguised", HUMANEVAL)


def canonical(number: int) -> str:
    return HUMANEVAL.get(f"HumanEval/{number}").canonical_solution


def disguised_body(number: int) -> str:
    """The canonical written for the disguised prompt (its names renamed forward)."""
    body = canonical(number)
    for old, new in disguise_renames("disguised", f"HumanEval/{number}").items():
        body = rename_identifier(body, old, new)
    return body


def run(*args: str) -> dict:
    result = CliRunner().invoke(main, list(args), env={"OPENAI_API_KEY": None})
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout) if "--json" in args else {}


def write(path: Path, completions: list[str], number: int, first: int = 0) -> Path:
    path.write_text("".join(json.dumps({"task_id": f"HumanEval/{number}", "completion": c,
                                        "sample": first + i}) + "\n"
                            for i, c in enumerate(completions)), encoding="utf-8")  # fmt: skip
    return path


def test_every_prompt_is_the_same_task_under_other_names():
    assert len(DISGUISED.prompts) == 164
    for prompt in DISGUISED.prompts:
        task = HUMANEVAL.get(prompt.task_id)
        renames = disguise_renames("disguised", task.task_id)
        assert prompt.entry_point == renames[task.entry_point] != task.entry_point
        tree = ast.parse(prompt.text)
        function = next(n for n in tree.body if getattr(n, "name", None) == prompt.entry_point)
        assert function.args.vararg.arg == "args" and function.args.kwarg.arg == "kwargs"
        assert [d.id for d in function.decorator_list] == ["_as_given"]
        names = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
        assert task.entry_point not in names  # the original name is gone from the code
        params = [a.arg for a in function.args.args]
        assert all(p not in renames for p in params)


def test_changed_examples_show_what_the_canonical_computes():
    # HumanEval/63: fibfib(5) and fibfib(8) become fibfib(6) and fibfib(9), outputs recomputed
    # by running the canonical in a separate interpreter
    prompt = next(p for p in DISGUISED.prompts if p.task_id == "HumanEval/63").text
    assert ">>> compute_fibfib(6)\n    7\n" in prompt and "44" in prompt
    source = HUMANEVAL.get("HumanEval/63").prompt + canonical(63)
    assert evaluate_calls(source, ["fibfib(6)", "fibfib(9)"]) == ["7", "44"]
    # a string inside an example is a value, not a name: HumanEval/93's 'This is a message'
    text = next(p for p in DISGUISED.prompts if p.task_id == "HumanEval/93").text
    assert "encipher('This is a message')" in text


def test_map_back_restores_the_original_names():
    renames = disguise_renames("disguised", "HumanEval/20")
    assert map_back(disguised_body(20), renames) == canonical(20)
    assert disguise_task(HUMANEVAL.get("HumanEval/20")).renames == renames


def test_disguised_copy_is_mapped_back_and_the_disguise_is_a_null(tmp_path):
    store = str(tmp_path / "s.sqlite")
    own = ("    ordered = sorted(values)\n"
           "    return min(zip(ordered, ordered[1:]), key=lambda p: p[1] - p[0])\n")  # fmt: skip
    original = write(tmp_path / "o.jsonl", [canonical(20)] * 2, 20)
    disguised = write(tmp_path / "d.jsonl", [own, own], 20)
    run("import", str(original), "--store", store, "--model", "m", "--temperature", "0.2")
    run("import", str(disguised), "--store", store, "--model", "m", "--temperature", "0.2",
        "--prompt-set", "disguised")  # fmt: skip
    report = run("detect", store, "--json")
    groups = {g["prompt_set"]: g for g in report["groups"]}
    null = groups["original"]["convergence"]["HumanEval/20"]
    assert null["disguised"] == 2 and null["disguised_reaching"] == 0
    assert null["memorized"]
    assert "0 of 2 disguised-prompt samples" in null["figure"]
    assert any(c["other"] == "disguised" for c in report["comparisons"])
    # executed under the disguised name (`locate_nearest_items(values, *args, **kwargs)`):
    # pass@1 original against disguised is in the comparison
    executed = run("detect", store, "--execute", "--json")
    comparison = next(c for c in executed["comparisons"] if c["other"] == "disguised")
    assert comparison["pass@1"] == {"tasks": 1, "original": 100.0, "other": 100.0,
                                    "difference": 0.0}  # fmt: skip
    # the same model writing the canonical under the disguise too: convergence, not memory
    copy = write(tmp_path / "c.jsonl", [disguised_body(20)], 20, first=2)
    run("import", str(copy), "--store", store, "--model", "m", "--temperature", "0.2",
        "--prompt-set", "disguised")  # fmt: skip
    samples = run("detect", store, "--json")["samples"]
    mapped = [s for s in samples if s["prompt_set"] == "disguised" and s["clone_type"] == 1]
    assert len(mapped) == 1  # compared after mapping back: a Type-1 copy
    report = run("detect", store, "--json")
    null = {g["prompt_set"]: g for g in report["groups"]}["original"]["convergence"]
    assert null["HumanEval/20"]["disguised_reaching"] == 1


def test_original_names_in_a_disguised_sample_are_evidence_by_themselves(tmp_path):
    leak = ("    return find_closest_elements(values)\n\n\n"
            "def find_closest_elements(items):\n"
            "    ordered = sorted(items)\n"
            "    return min(zip(ordered, ordered[1:]), key=lambda p: p[1] - p[0])\n")  # fmt: skip
    path = write(tmp_path / "l.jsonl", [leak], 20)
    report = run("detect", str(path), "--store", str(tmp_path / "s.sqlite"), "--model", "q",
                 "--temperature", "0.2", "--prompt-set", "disguised", "--json")  # fmt: skip
    sample = report["samples"][0]
    assert sample["evidence_tier"] == "evidence"
    assert "find_closest_elements" in sample["evidence_reasons"][0]
    null = report["groups"][0]["convergence"]["HumanEval/20"]
    assert null["memorized"] and null["leaked"] == ["find_closest_elements"]


@pytest.mark.slow(reason="about 4 s: rebuilds the disguised prompt set")
def test_shipped_disguised_data_is_what_the_builder_makes():
    assert build_disguised(["--check"]) == 0


@pytest.mark.slow(reason="about 9 s: every disguised prompt against the tests in the sandbox")
def test_every_disguised_prompt_with_the_canonical_passes_the_tasks_tests():
    # the task is unchanged: the canonical under the disguised names, run in a separate
    # interpreter (trusted reference code), passes the task's own tests called by the new name
    from cloneprobe.benchmarks.reference_run import run_reference

    failed = []
    for prompt in DISGUISED.prompts:
        task = HUMANEVAL.get(prompt.task_id)
        number = int(task.task_id.split("/")[1])
        program = (f"{prompt.text}{disguised_body(number)}\n\n{task.entry_point} = "
                   f"{prompt.entry_point}\n{task.test}\ncheck({prompt.entry_point})\n"
                   "print('passed')\n")  # fmt: skip
        run = run_reference(program, timeout=30)
        if not run.ok or "passed" not in run.stdout:
            failed.append(task.task_id)
    assert failed == []


def test_a_short_canonical_copied_only_under_the_original_prompt_rests_on_the_disguise(
        tmp_path):  # fmt: skip
    # HumanEval/33's canonical (`l = list(l)`, `l[::3] = sorted(l[::3])`) is short: an exact
    # copy is no evidence by itself (any solver may write it). The panel's families do not
    # write it; when the model's own disguised samples do not either, the copy is memorized,
    # and the figure says it rests on the disguise; when they do, it is convergence.
    store = str(tmp_path / "s.sqlite")
    own = "    return [x if i % 3 else sorted(l[::3])[i // 3] for i, x in enumerate(l)]\n"
    imported = ("--store", store, "--model", "m", "--temperature", "0.2")
    run("import", str(write(tmp_path / "o.jsonl", [canonical(33)] * 2, 33)), *imported)
    alone = run("detect", store, "--json")
    assert "HumanEval/33" not in alone["groups"][0]["convergence"]  # no disguise: not tested
    assert alone["samples"][0]["evidence_tier"] == "similar"
    run("import", str(write(tmp_path / "d.jsonl", [own, own], 33)), *imported,
        "--prompt-set", "disguised")  # fmt: skip
    report = run("detect", store, "--json")
    null = {g["prompt_set"]: g for g in report["groups"]}["original"]["convergence"]
    null = null["HumanEval/33"]
    assert null["basis"] == "disguise" and null["memorized"]
    assert null["disguised"] == 2 and null["disguised_reaching"] == 0
    assert "resting on the disguise" in null["figure"]
    # a disguised sample cut before its answer is no solver's answer: not counted
    cut = write(tmp_path / "x.jsonl", ['    """Sorts every third item, keeping'], 33, first=9)
    run("import", str(cut), *imported, "--prompt-set", "disguised")
    report = run("detect", store, "--json")
    null = {g["prompt_set"]: g for g in report["groups"]}["original"]["convergence"]
    assert null["HumanEval/33"]["disguised"] == 2
    null = null["HumanEval/33"]
    verdict = task_verdict("similar", True, {}, clone_reasons=("exact copy",), convergence=null)
    assert verdict.verdict == "memorized"
    assert "disguised prompts" in verdict.reasons[1]
    # the model writes it under the disguise too: it converges on it, nothing is claimed
    copy = write(tmp_path / "c.jsonl", [disguised_body(33)] * 2, 33, first=2)
    run("import", str(copy), *imported, "--prompt-set", "disguised")
    report = run("detect", store, "--json")
    null = {g["prompt_set"]: g for g in report["groups"]}["original"]["convergence"]
    assert null["HumanEval/33"]["disguised_reaching"] == 2
    assert null["HumanEval/33"]["convergent"] and not null["HumanEval/33"]["memorized"]
    assert "the model itself under the disguised prompts" in null["HumanEval/33"]["figure"]


def test_a_sample_cut_inside_its_docstring_leaks_no_word_of_its_prose():
    # the embedded model, cut at its token budget while restating HumanEval/2's disguised
    # prompt: "number" is a word of its docstring, not a name it writes (it was a "leak" when
    # a sample that did not tokenize was read word by word)
    renames = disguise_renames("disguised", "HumanEval/2")
    prompt = next(p.text for p in DISGUISED.prompts if p.task_id == "HumanEval/2")
    cut = (f"{prompt.split('def truncate_value')[0]}def truncate_value(value: float, *args, "
           '**kwargs) -> float:\n    """\n    Truncates a positive value to a decimal number.\n'
           "    If the input is a float,\n")  # fmt: skip
    assert "number" in renames and leaked_names(cut, renames, prompt) == []
    written = cut + '    """\n    return number % 1.0\n'
    assert leaked_names(written, renames, prompt) == ["number"]


def test_a_one_word_original_name_under_the_disguise_is_no_leak(tmp_path):
    # `fib` for a Fibonacci function: the untrained base model of the positive control wrote it
    # under HumanEval/55's disguised prompt (`fibo`), as any solver may; a compound original
    # name (`find_closest_elements`, above) still is a leak
    helper = ("    return fib(k)\n\n\n"
              "def fib(k):\n"
              "    return k if k < 2 else fib(k - 1) + fib(k - 2)\n")  # fmt: skip
    path = write(tmp_path / "f.jsonl", [helper], 55)
    report = run("detect", str(path), "--store", str(tmp_path / "s.sqlite"), "--model", "q",
                 "--temperature", "0.2", "--prompt-set", "disguised", "--json")  # fmt: skip
    assert not any("fib`" in r for r in report["samples"][0]["evidence_reasons"])
    assert not (report["groups"][0].get("convergence") or {}).get("HumanEval/55", {}).get("leaked")
