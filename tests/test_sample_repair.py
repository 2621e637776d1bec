"""Imported samples are the programs their models meant: EvalPlus `solution` files import, the
reference study's flattened-docstring CodeGen completions, tab and odd indentation, and chat
answers without the prompt's imports or helpers are repaired; what cannot be repaired is
stored with the reason.

The measurement: tests/data/import_samples.jsonl (every HumanEval task, its canonical and a
realistic wrong answer in those shapes; built by tests/data/build_import_samples.py) passes
exactly as often as the programs meant (import_samples_intended.jsonl), run here on a slice
through `cloneprobe execute`.
"""

from __future__ import annotations

import ast
import json
import sqlite3
from contextlib import closing
from pathlib import Path

import pytest
from click.testing import CliRunner

from cloneprobe.benchmarks import load_humaneval, load_prompt_set
from cloneprobe.cli import main
from cloneprobe.generation import ImportDefaults, SampleStore, read_sample_file, understand

HUMANEVAL = load_humaneval()
DATA = Path(__file__).parent / "data"
ENV = {"OPENAI_API_KEY": "sk-test", "OPENAI_BASE_URL": None}
CLOSE = HUMANEVAL.get("HumanEval/0")
CYCLIC = HUMANEVAL.get("HumanEval/38")

# One completion of the study's CodeGen-2B-mono file, in its shape: the prompt repeated with
# the docstring's line breaks lost, a body indented by 6, more functions, the last cut off.
FLATTENED = (
    "from typing import List\n\n\n"
    "def has_close_elements(numbers: List[float], threshold: float) -> bool:      "
    '""" Check if in given list of numbers, are any two numbers closer to each other than      '
    "given threshold.      >>> has_close_elements([1.0, 2.0, 3.0], 0.5)      False      "
    '>>> has_close_elements([1.0, 2.8, 3.0, 4.0, 5.0, 2.0], 0.3)      True      """\n'
    "      for i in range(len(numbers)):\n"
    "          for j in range(i + 1, len(numbers)):\n"
    "              if abs(numbers[i] - numbers[j]) < threshold:\n"
    "                  return True\n"
    "      return False\n\n\n"
    "def has_close_elements_v2(numbers: List[float], threshold: float) -> bool:\n"
    '      """ Same. """\n'
    "      return False\n\n\n"
    "def has_close_elements_v3(numbers: List[float], threshold: float) -> bool\n"
)


def cli(*args: str):
    result = CliRunner().invoke(main, list(args), env=ENV)
    assert result.exit_code == 0, result.output
    return result


def function_names(program: str) -> list[str]:
    return [n.name for n in ast.parse(program).body if isinstance(n, ast.FunctionDef)]


def test_the_flattened_docstring_style_is_an_indentation_error_as_written():
    with pytest.raises(SyntaxError):
        ast.parse(FLATTENED)


def test_a_flattened_docstring_completion_becomes_the_prompt_and_its_body():
    understood = understand(FLATTENED, CLOSE.prompt, CLOSE.entry_point)
    assert understood.form == "full"
    assert understood.unrepairable is None
    assert understood.program.startswith(CLOSE.prompt)  # the prompt as given, line breaks back
    assert function_names(understood.program) == ["has_close_elements"]
    assert "    for i in range(len(numbers)):\n        for j" in understood.program
    assert "repeated prompt with lost line breaks restored from the prompt" in understood.repairs


def test_a_flattened_docstring_without_the_prompt_repeated_exactly_is_split_off():
    text = FLATTENED.replace("Check if", "Checks if")  # not the prompt: split the header instead
    understood = understand(text, CLOSE.prompt, CLOSE.entry_point)
    function = ast.parse(understood.program).body[1]
    assert isinstance(function, ast.FunctionDef) and function.name == "has_close_elements"
    assert ast.get_docstring(function).startswith("Checks if")
    assert "docstring flattened onto the def line split off" in understood.repairs


@pytest.mark.parametrize(
    ("body", "repair"),
    [
        (CLOSE.canonical_solution.replace("    ", "\t"), "tab indentation expanded"),
        (CLOSE.canonical_solution.replace("    ", "  "), "indentation renumbered"),
        (CLOSE.canonical_solution.replace("    ", "      "), "indentation renumbered"),
    ],
    ids=["tabs", "two-spaces", "six-spaces"],
)
def test_continuations_with_other_indentation_are_renumbered(body, repair):
    with pytest.raises(SyntaxError):
        ast.parse(CLOSE.prompt + body)
    understood = understand(body, CLOSE.prompt, CLOSE.entry_point)
    assert understood.program == CLOSE.prompt + CLOSE.canonical_solution
    assert any(r.startswith(repair) for r in understood.repairs)


def test_a_chat_answer_without_the_prompts_helper_and_import_gets_them_back():
    answer = (
        "```python\ndef decode_cyclic(s: str):\n    return encode_cyclic(encode_cyclic(s))\n```"
    )
    understood = understand(answer, CYCLIC.prompt, CYCLIC.entry_point)
    assert function_names(understood.program) == ["encode_cyclic", "decode_cyclic"]
    assert understood.repairs == ("the prompt's encode_cyclic put back",)
    answer = "```python\ndef has_close_elements(numbers: List[float], t: float) -> bool:\n"
    answer += "    return False\n```"
    program = understand(answer, CLOSE.prompt, CLOSE.entry_point).program
    assert program.startswith("from typing import List\n")


def test_a_chat_answer_keeps_its_own_constant_used_by_the_function():
    answer = (
        "```python\nLIMIT = 0.5\n\n\ndef has_close_elements(numbers, threshold):\n"
        "    return threshold > LIMIT\n\n\nprint(has_close_elements([], 1))\n```"
    )
    program = understand(answer, CLOSE.prompt, CLOSE.entry_point).program
    assert "LIMIT = 0.5" in program and "print(" not in program


# --- whole program or continuation ----------------------------------------------------------


def test_a_completion_with_the_full_function_and_the_imports_is_its_own_program():
    text = CLOSE.prompt + CLOSE.canonical_solution
    understood = understand(text, CLOSE.prompt, CLOSE.entry_point)
    assert (understood.form, understood.program, understood.repairs) == ("full", text, ())


def test_a_continuation_that_goes_on_to_redefine_the_entry_point_stays_a_continuation():
    text = CLOSE.canonical_solution + "\n\ndef has_close_elements(numbers, threshold):\n"
    text += "    return False\n"
    understood = understand(text, CLOSE.prompt, CLOSE.entry_point)
    assert understood.form == "continuation"
    assert understood.program.startswith(CLOSE.prompt + CLOSE.canonical_solution)


def test_a_body_only_repeating_the_prompt_is_stored_as_unrepairable_with_the_reason():
    understood = understand(CLOSE.prompt, CLOSE.prompt, CLOSE.entry_point)
    assert understood.unrepairable == "no body: has_close_elements() is left as the prompt gave it"
    cut = CLOSE.prompt + "    for i in range(len(numbers)):\n        if abs(numbers[i] -"
    assert understand(cut, CLOSE.prompt, CLOSE.entry_point).unrepairable.startswith(
        "does not parse even after repair"
    )


# --- sample files ----------------------------------------------------------------------------


def test_evalplus_solution_files_import_as_whole_programs(tmp_path):
    path = tmp_path / "evalplus.jsonl"
    records = [
        {"task_id": "HumanEval/0", "solution": CLOSE.prompt + CLOSE.canonical_solution},
        {"task_id": "HumanEval/38", "solution": "def decode_cyclic(s):\n    return s[::-1]\n"},
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    samples = read_sample_file(
        path, HUMANEVAL, lambda name: load_prompt_set(name, HUMANEVAL), ImportDefaults("m", 0.0)
    )
    assert [s.form for s in samples] == ["full", "full"]
    assert samples[0].program == CLOSE.prompt + CLOSE.canonical_solution
    assert function_names(samples[1].program) == ["encode_cyclic", "decode_cyclic"]
    assert samples[1].repairs == "the prompt's encode_cyclic put back"


def test_an_old_store_gains_the_repair_columns_when_opened(tmp_path):
    path = tmp_path / "old.sqlite"
    with closing(sqlite3.connect(path)) as db:  # a store as cloneprobe's first schema made it
        db.execute(
            "CREATE TABLE runs (id INTEGER PRIMARY KEY, model TEXT NOT NULL, settings TEXT NOT "
            "NULL, versions TEXT NOT NULL, started_at REAL NOT NULL, ended_at REAL, status TEXT "
            "NOT NULL DEFAULT 'running')"
        )
        db.execute(
            "CREATE TABLE samples (id INTEGER PRIMARY KEY, run_id INTEGER, model TEXT NOT NULL, "
            "settings_key TEXT NOT NULL, prompt_set TEXT NOT NULL, variant TEXT NOT NULL, "
            "task_id TEXT NOT NULL, temperature REAL NOT NULL, sample_index INTEGER NOT NULL, "
            "mode TEXT, raw TEXT, completion TEXT, program TEXT, form TEXT, finish_reason TEXT, "
            "prompt_tokens INTEGER, completion_tokens INTEGER, latency REAL, error TEXT, "
            "created_at REAL NOT NULL, UNIQUE (model, settings_key, prompt_set, variant, "
            "task_id, temperature, sample_index))"
        )
        db.commit()
    with SampleStore(path) as store:
        columns = {row[1] for row in store.db.execute("PRAGMA table_info(samples)")}
        assert {"entry_point", "repairs", "unrepairable"} <= columns


def test_import_stores_the_repairs_and_the_reason_a_sample_cannot_run(tmp_path):
    path = tmp_path / "samples.jsonl"
    records = [
        {"task_id": "HumanEval/0", "completion": FLATTENED},
        {"task_id": "HumanEval/0", "completion": CLOSE.prompt},
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    store = tmp_path / "store.sqlite"
    cli("import", str(path), "--model", "m", "--temperature", "0.8", "--store", str(store))
    with SampleStore(store) as opened:
        samples = list(opened.samples())
    assert samples[0].repairs.startswith("repeated prompt with lost line breaks restored")
    assert samples[0].unrepairable is None
    assert samples[1].unrepairable.startswith("no body")


def pass_counts(store: Path) -> tuple[int, int]:
    with closing(sqlite3.connect(store)) as db:
        return db.execute("SELECT SUM(passed), COUNT(*) FROM executions").fetchone()


def test_a_flattened_docstring_completion_passes_its_tests_in_the_sandbox(tmp_path):
    path = tmp_path / "codegen.jsonl"
    path.write_text(json.dumps({"task_id": "HumanEval/0", "completion": FLATTENED}) + "\n")
    store = tmp_path / "store.sqlite"
    cli("execute", str(path), "--model", "m", "--temperature", "0.8", "--store", str(store))
    assert pass_counts(store) == (1, 1)


@pytest.mark.slow(reason="about 2 s plus the sandbox: runs every repaired sample's tests")
def test_pass_at_1_of_damaged_samples_equals_that_of_the_programs_meant(tmp_path):
    """Tasks 0-7 of the fixture: four samples each, every shape of damage; as written (before
    the repairs) only the EvalPlus and some chat samples could run."""
    counts = []
    for name in ("import_samples", "import_samples_intended"):
        lines = (DATA / f"{name}.jsonl").read_text().splitlines()[:32]
        path = tmp_path / f"{name}.jsonl"
        path.write_text("\n".join(lines) + "\n")
        store = tmp_path / f"{name}.sqlite"
        cli("execute", str(path), "--model", "m", "--temperature", "0.8", "--store", str(store))
        counts.append(pass_counts(store))
    damaged, meant = counts
    assert damaged == meant
    assert meant[0] >= 16  # every canonical passes; some mutants pass too


def test_code_before_a_flattened_docstring_is_split_into_its_own_statement():
    """HumanEval/115's prompt imports inside the function before its docstring."""
    task = HUMANEVAL.get("HumanEval/115")
    text = (
        'def max_fill(grid, capacity):      import math      """ Empty the wells.      """\n'
        "      return sum([math.ceil(sum(arr)/capacity) for arr in grid])\n"
    )
    understood = understand(text, task.prompt, task.entry_point)
    function = ast.parse(understood.program).body[0]
    assert isinstance(function.body[0], ast.Import)
    assert ast.get_source_segment(understood.program, function.body[1]).startswith('"""')
    assert understood.unrepairable is None


@pytest.mark.parametrize("number", [0, 4, 12])
def test_a_completion_stripped_of_its_first_indent_keeps_its_body(tmp_path, number):
    """Sample files that store `completion.strip()` lose the first line's indentation; that
    line at column 0 used to end the body, so the whole answer was dropped and the import said
    0 repaired. It is the canonical again, with the repair named."""
    task = HUMANEVAL.get(f"HumanEval/{number}")
    stripped = task.canonical_solution.lstrip()
    with pytest.raises(SyntaxError):  # as written: no body, and code that cannot compile
        compile(task.prompt + stripped, "sample", "exec")
    understood = understand(stripped, task.prompt, task.entry_point)
    assert understood.program == task.prompt + task.canonical_solution
    assert understood.repairs == ("the first line's indentation restored (the text was stripped)",)
    # through the CLI: imported, counted as repaired, and the copy is found as a Type-1 clone
    path = tmp_path / "stripped.jsonl"
    path.write_text(json.dumps({"task_id": task.task_id, "completion": stripped}) + "\n")
    store = tmp_path / "s.sqlite"
    cli("import", str(path), "--model", "m", "--temperature", "0.2", "--store", str(store))
    with SampleStore(store) as opened:
        (sample,) = list(opened.samples())
    assert sample.program == task.prompt + task.canonical_solution
    assert sample.repairs.startswith("the first line's indentation restored")
    result = CliRunner().invoke(main, ["detect", "--store", str(store), "--json"], env=ENV)
    assert result.exit_code == 0, result.output
    (detected,) = json.loads(result.stdout)["samples"]
    assert detected["clone_type"] == 1


def test_a_definition_or_prose_at_column_0_is_not_taken_for_a_stripped_body():
    task = HUMANEVAL.get("HumanEval/2")
    for text in ("def helper(x):\n    return x\n", "Here is the answer:\n    return 1\n"):
        understood = understand(text, task.prompt, task.entry_point)
        assert "the first line's indentation restored (the text was stripped)" not in (
            understood.repairs)
