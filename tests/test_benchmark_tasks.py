"""HumanEval and user benchmarks load offline; canonical fragments are built as the study did."""

from __future__ import annotations

import json

import pytest

from cloneprobe.benchmarks import (
    BenchmarkError,
    canonical_source,
    load_benchmark,
    load_benchmark_jsonl,
    load_humaneval,
    nicad_min_lines,
)
from cloneprobe.execution import run_python


@pytest.fixture(scope="module")
def humaneval():
    return load_humaneval()


def test_humaneval_has_164_tasks_with_every_field(humaneval):
    assert len(humaneval) == 164
    task = humaneval.get("HumanEval/0")
    assert task.entry_point == "has_close_elements"
    assert task.prompt.rstrip().endswith('"""')
    assert "def check(candidate)" in task.test
    assert task.language == "python"
    assert [t.task_id for t in humaneval][-1] == "HumanEval/163"


def test_canonical_fragment_is_signature_plus_body_without_docstring_or_comments(humaneval):
    source = canonical_source(humaneval.get("HumanEval/0"))
    assert source.splitlines()[0] == (
        "def has_close_elements(numbers: List[float], threshold: float) -> bool:"
    )
    assert '"""' not in source and ">>>" not in source
    assert source.splitlines()[-1] == "    return False"


def test_canonical_fragment_drops_helpers_and_comments(humaneval):
    source = canonical_source(humaneval.get("HumanEval/10"))
    assert source.startswith("def make_palindrome(string: str) -> str:\n")
    assert "def is_palindrome" not in source
    assert "#" not in source


def test_every_canonical_fragment_is_valid_python(humaneval):
    import ast

    for task in humaneval:
        ast.parse(canonical_source(task))


def test_nicad_min_lines_is_half_the_canonical_solutions_lines_never_below_5(humaneval):
    short = humaneval.get("HumanEval/23")  # `    return len(string)\n`: 2 pieces
    assert nicad_min_lines(short) == 5
    # the minimum sizes the study's own NiCad reports print for these tasks
    study = {"HumanEval/1": 9, "HumanEval/126": 6, "HumanEval/3": 5, "HumanEval/81": 16}
    assert {t: nicad_min_lines(humaneval.get(t)) for t in study} == study


def test_canonical_solutions_pass_their_tests_in_a_separate_process(humaneval):
    task = humaneval.get("HumanEval/47")
    program = f"{task.prompt}{task.canonical_solution}\n{task.test}\ncheck({task.entry_point})\n"
    assert run_python(program).ok
    broken = program.replace("return (l[len(l) // 2 - 1] + l[len(l) // 2]) / 2.0", "return 0")
    assert broken != program
    assert run_python(broken).reason.startswith("failed: AssertionError")


def test_run_python_times_out_instead_of_hanging():
    result = run_python("while True:\n    pass\n", timeout=1)
    assert (result.ok, result.reason) == (False, "timeout")


def _write_jsonl(path, records):
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def test_user_benchmark_jsonl_loads_python_and_java(tmp_path):
    path = _write_jsonl(
        tmp_path / "mine.jsonl",
        [
            {
                "task_id": "Mine/0",
                "prompt": "def f(x):\n",
                "canonical_solution": "    return x\n",
                "entry_point": "f",
            },
            {
                "task_id": "Mine/1",
                "prompt": "class S { int g(int a) {",
                "canonical_solution": " return a; } }",
                "entry_point": "g",
                "language": "java",
                "test": "assert",
            },
        ],
    )
    benchmark = load_benchmark(str(path))
    assert benchmark.name == "mine"
    assert [(t.task_id, t.language, t.test) for t in benchmark] == [
        ("Mine/0", "python", ""),
        ("Mine/1", "java", "assert"),
    ]
    assert canonical_source(benchmark.get("Mine/1")) == "class S { int g(int a) { return a; } }"


@pytest.mark.parametrize(
    ("records", "message"),
    [
        ([{"task_id": "A/0", "prompt": "def f():\n", "entry_point": "f"}], "canonical_solution"),
        (
            [
                {
                    "task_id": "A/0",
                    "prompt": "p",
                    "canonical_solution": "c",
                    "entry_point": "f",
                    "language": "cobol",
                }
            ],
            "cobol",
        ),
        (
            [{"task_id": "A/0", "prompt": "def f():\n", "canonical_solution": "c",
              "entry_point": "f"}] * 2,
            "appears twice",
        ),
        ([], "no tasks"),
    ],
)
def test_bad_user_benchmark_names_the_file_and_line(tmp_path, records, message):
    path = _write_jsonl(tmp_path / "bad.jsonl", records)
    with pytest.raises(BenchmarkError, match=message) as error:
        load_benchmark_jsonl(path)
    assert str(path) in str(error.value)


def test_benchmark_line_that_is_not_json_is_reported_with_its_number(tmp_path):
    path = tmp_path / "broken.jsonl"
    path.write_text('{"task_id": "A/0"}\n{not json\n')
    with pytest.raises(BenchmarkError, match=r"broken.jsonl:1: missing"):
        load_benchmark_jsonl(path)
    path.write_text("{not json\n")
    with pytest.raises(BenchmarkError, match=r"broken.jsonl:1: not valid JSON"):
        load_benchmark_jsonl(path)


def test_unknown_benchmark_is_an_error():
    with pytest.raises(BenchmarkError, match="no such file"):
        load_benchmark("mbpp-does-not-exist")
