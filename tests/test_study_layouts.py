"""The reference study's fixed-prompt folder loads whole: `_P6` prompts rename the entry point
(HumanEval/106's `f` becomes `fact_sum`), and samples answering them are tested and compared
under the new name.

Uses the committed folder tests/data/study_prompts (five tasks in the study's layout, three
of them renamed in `_P6` and `_all`), the real CLI, a SQLite store in tmp_path and the sandbox.
"""

from __future__ import annotations

import json
import re
import sqlite3
from contextlib import closing
from pathlib import Path

import pytest
from click.testing import CliRunner
from openai_test_server import OpenAITestServer

from cloneprobe.benchmarks import (
    BenchmarkError,
    canonical_source,
    load_humaneval,
    load_prompt_set,
    prompt_entry_point,
)
from cloneprobe.cli import main

HUMANEVAL = load_humaneval()
STUDY = Path(__file__).parent / "data" / "study_prompts"
ENV = {"OPENAI_API_KEY": "sk-test", "OPENAI_BASE_URL": None}


def body(task: int) -> str:
    return HUMANEVAL.get(f"HumanEval/{task}").canonical_solution


def cli(*args: str):
    result = CliRunner().invoke(main, list(args), env=ENV)
    assert result.exit_code == 0, result.output
    return result


@pytest.fixture(scope="module")
def study():
    return load_prompt_set(str(STUDY), HUMANEVAL)


def test_the_study_folder_loads_every_file_with_its_variant(study):
    assert study.skipped == ()
    assert study.variants() == {"original": 5, "all": 5, "P2": 2, "P6": 3, "P7": 1}


def test_renamed_entry_points_are_recorded_per_task_and_variant(study):
    renamed = {(p.task_id, p.variant): p.entry_point for p in study.prompts if p.entry_point}
    assert renamed == {
        ("HumanEval/33", "all"): "sort_every_third",
        ("HumanEval/33", "P6"): "sort_every_third",
        ("HumanEval/55", "all"): "fibonacci",
        ("HumanEval/55", "P6"): "fibonacci",
        ("HumanEval/106", "all"): "fact_sum",
        ("HumanEval/106", "P6"): "fact_sum",
    }
    task = HUMANEVAL.get("HumanEval/106")
    by_variant = {p.variant: p for p in study.for_task("HumanEval/106")}
    assert by_variant["original"].entry_point_of(task) == "f"
    assert by_variant["P6"].entry_point_of(task) == "fact_sum"


def test_a_prompt_whose_new_function_takes_other_parameters_is_not_a_rename():
    task = HUMANEVAL.get("HumanEval/106")
    with pytest.raises(BenchmarkError, match="does not define the entry point f"):
        prompt_entry_point('def fact_sum(n, m):\n    """Doc."""\n', task, "106_P6.py")
    with pytest.raises(BenchmarkError, match="more than one new function"):
        prompt_entry_point('def a(n):\n    """A."""\n\n\ndef b(n):\n    """B."""\n', task, "x")


def test_a_rename_may_rename_the_parameters_too():
    task = HUMANEVAL.get("HumanEval/106")
    assert prompt_entry_point('def fact_sum(count):\n    """Doc."""\n', task) == "fact_sum"


def test_a_study_file_saved_with_a_byte_order_mark_and_windows_line_ends_loads(tmp_path):
    folder = tmp_path / "study"
    folder.mkdir()
    text = (STUDY / "106_P6.py").read_text().replace("\n", "\r\n")
    (folder / "106_P6.py").write_bytes(b"\xef\xbb\xbf" + text.encode())
    [prompt] = load_prompt_set(str(folder), HUMANEVAL).prompts
    assert prompt.entry_point == "fact_sum"
    assert prompt.text == (STUDY / "106_P6.py").read_text()


def test_the_canonical_fragment_carries_the_new_name_and_its_recursive_calls():
    fib = HUMANEVAL.get("HumanEval/55")
    source = canonical_source(fib, "fibonacci")
    assert source.startswith("def fibonacci(n: int):")
    assert "fibonacci(n - 1) + fibonacci(n - 2)" in source
    assert "fib(" not in source
    assert canonical_source(fib) == canonical_source(fib, "fib")


def test_prompts_diff_names_the_rename():
    output = cli("prompts", "--prompts", str(STUDY), "--diff", "106").output
    assert "+def fact_sum(n):" in output
    assert "entry point renamed: f -> fact_sum" in output


def test_prompts_json_lists_the_renames():
    data = json.loads(cli("prompts", "--prompts", str(STUDY), "--json").output)
    renamed = data["sets"][0]["renamed_entry_points"]
    assert {"task_id": "HumanEval/106", "variant": "P6", "entry_point": "fact_sum"} in renamed


# --- samples answering renamed prompts -----------------------------------------------------

FIB_RENAMED = (
    "    if n == 0:\n        return 0\n    if n == 1:\n        return 1\n"
    "    return fibonacci(n - 1) + fibonacci(n - 2)\n"
)
# (task, variant, completion, passes): continuations of the study's prompts
SAMPLES = [
    (106, "P6", body(106), True),
    (106, "P6", "    return [1] * n\n", False),
    (106, "original", body(106), True),
    (55, "P6", FIB_RENAMED, True),
    (33, "P6", body(33), True),  # HumanEval/33's test calls sort_third by name as well
]


@pytest.fixture(scope="module")
def executed(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("study")
    samples = folder / "samples.jsonl"
    samples.write_text(
        "".join(
            json.dumps({"task_id": f"HumanEval/{task}", "variant": variant, "completion": text})
            + "\n"
            for task, variant, text, _ in SAMPLES
        )
    )
    store = folder / "store.sqlite"
    cli(
        "execute", str(samples), "--model", "m", "--temperature", "0.2",
        "--prompts", str(STUDY), "--profile", "nicad", "--store", str(store),
    )  # fmt: skip
    return store


def rows(store: Path) -> list[tuple]:
    with closing(sqlite3.connect(store)) as db:
        return db.execute(
            "SELECT s.task_id, s.variant, s.entry_point, e.passed, e.reason, d.clone_type "
            "FROM samples s JOIN executions e ON e.sample_id = s.id "
            "JOIN detections d ON d.sample_id = s.id ORDER BY s.id"
        ).fetchall()


def test_tests_call_the_renamed_entry_point(executed):
    results = rows(executed)
    assert [(r[0], r[1], r[2]) for r in results] == [
        (f"HumanEval/{task}", variant, HUMANEVAL.get(f"HumanEval/{task}").entry_point)
        if variant == "original"
        else (
            f"HumanEval/{task}",
            variant,
            {106: "fact_sum", 55: "fibonacci", 33: "sort_every_third"}[task],
        )
        for task, variant, _, _ in SAMPLES
    ]
    assert [(bool(r[3]), r[4]) for r in results] == [
        (passes, "passed" if passes else "failed: AssertionError") for *_, passes in SAMPLES
    ]


def test_a_verbatim_canonical_under_the_new_name_is_type_1(executed):
    """The nicad profile compares the header, so the canonical must carry the new name."""
    verdicts = {(r[0], r[1], r[3]): r[5] for r in rows(executed) if r[3]}
    assert verdicts[("HumanEval/106", "P6", 1)] == "1"
    assert verdicts[("HumanEval/106", "original", 1)] == "1"
    assert verdicts[("HumanEval/55", "P6", 1)] == "1"


def answer_under_the_prompts_name(kind: str, prompt, index: int, body: dict) -> str:
    """A chat answer: HumanEval/106's canonical under whatever name the prompt gives it."""
    text = prompt if isinstance(prompt, str) else str(prompt)
    name = re.findall(r"def (\w+)\(n\)", text)[-1]
    return f"```python\ndef {name}(n):\n{body_106}```\n"


body_106 = body(106)


def test_generated_answers_to_a_renamed_prompt_run_under_the_new_name(tmp_path):
    store = tmp_path / "store.sqlite"
    with OpenAITestServer(answer_under_the_prompts_name) as server:
        cli(
            "audit", "--model", "openai:test", "--base-url", server.base_url, "--mode", "chat",
            "--prompts", str(STUDY), "--tasks", "106", "-n", "1", "--execute",
            "--store", str(store), "--json",
        )  # fmt: skip
    with closing(sqlite3.connect(store)) as db:
        found = db.execute(
            "SELECT s.variant, s.entry_point, e.passed FROM samples s "
            "JOIN executions e ON e.sample_id = s.id ORDER BY s.variant"
        ).fetchall()
    assert found == [("P6", "fact_sum", 1), ("all", "fact_sum", 1), ("original", "f", 1)]
