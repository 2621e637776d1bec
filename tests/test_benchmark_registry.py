"""Benchmarks by name from one registry (HumanEval built in), any other as a JSONL path; what a
benchmark ships (its prompt sets) is said by the benchmark, not by comparing names."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from cloneprobe.benchmarks import BenchmarkError, load_benchmark, load_prompt_set
from cloneprobe.benchmarks.registry import BENCHMARKS, BenchmarkEntry, register_benchmark
from cloneprobe.benchmarks.tasks import Benchmark, Task
from cloneprobe.cli import main

TASK = {"task_id": "B/0", "prompt": "def f(x):\n", "canonical_solution": "    return x\n",
        "entry_point": "f"}  # fmt: skip


def test_the_built_in_name_in_any_case():
    assert load_benchmark("HumanEval").name == "humaneval"
    assert load_benchmark(None).prompt_sets == ("original", "fixed", "disguised")


def test_a_user_file_named_humaneval_is_not_humaneval(tmp_path):
    path = tmp_path / "humaneval.jsonl"
    path.write_text(json.dumps(TASK) + "\n", encoding="utf-8")
    benchmark = load_benchmark(str(path))
    assert benchmark.name == "humaneval" and benchmark.prompt_sets == ("original",)
    for name in ("fixed", "disguised"):  # the name alone does not make it HumanEval
        with pytest.raises(BenchmarkError, match="HumanEval only"):
            load_prompt_set(name, benchmark)
    listed = CliRunner().invoke(main, ["prompts", "--benchmark", str(path), "--json"])
    assert listed.exit_code == 0, listed.output
    assert [s["name"] for s in json.loads(listed.stdout)["sets"]] == ["original"]


def test_a_registered_benchmark_loads_by_name():
    toy = Benchmark("toy", (Task(**TASK),))
    register_benchmark(BenchmarkEntry("toy", "one task", lambda: toy))
    try:
        assert load_benchmark("toy") is toy
    finally:
        del BENCHMARKS["toy"]


def test_a_folder_as_benchmark_is_named_as_one(tmp_path):
    with pytest.raises(BenchmarkError, match="is a folder"):
        load_benchmark(str(tmp_path))


def test_every_command_shares_one_benchmark_option():
    declared = {id(p) for c in main.commands.values() for p in c.params
                if "--benchmark" in getattr(p, "opts", ())}  # fmt: skip
    helps = {p.help for c in main.commands.values() for p in c.params
             if "--benchmark" in getattr(p, "opts", ())}  # fmt: skip
    assert len(declared) >= 9 and len(helps) == 1  # one declaration, one meaning
