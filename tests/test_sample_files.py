"""Sample files from elsewhere: human-eval JSONL and bigcode JSON in, human-eval JSONL out.

Through `read_sample_file` / `write_humaneval_jsonl` and through `cloneprobe import` and
`cloneprobe export` on a real SQLite store in tmp_path.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from cloneprobe.benchmarks import load_humaneval, load_prompt_set
from cloneprobe.cli import main
from cloneprobe.generation import (
    IMPORTED,
    GenerationError,
    ImportDefaults,
    SampleStore,
    read_sample_file,
    write_humaneval_jsonl,
)

HUMANEVAL = load_humaneval()
TASKS = HUMANEVAL.tasks
_PROMPT_SETS: dict = {}


def prompts(name: str):
    if name not in _PROMPT_SETS:
        _PROMPT_SETS[name] = load_prompt_set(name, HUMANEVAL)
    return _PROMPT_SETS[name]


def write_jsonl(path: Path, records: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def read(path: Path, **defaults):
    return read_sample_file(path, HUMANEVAL, prompts, ImportDefaults(**defaults))


def cli(*args: str):
    return CliRunner().invoke(main, list(args))


def identity(sample) -> tuple:
    """What makes a stored sample unique, apart from its settings key."""
    return (sample.model, sample.temperature, sample.prompt_set, sample.variant,
            sample.task_id, sample.sample_index)  # fmt: skip


def triples(samples) -> set[tuple[str, int, str]]:
    return {(s.task_id, s.sample_index, s.completion) for s in samples}


# --- human-eval JSONL ----------------------------------------------------------------------


def test_jsonl_with_only_task_and_completion_takes_model_and_temperature_from_defaults(
    tmp_path,
):
    path = write_jsonl(
        tmp_path / "samples.jsonl",
        [
            {"task_id": "HumanEval/0", "completion": "    return True\n"},
            {"task_id": "HumanEval/2", "completion": "    return number % 1.0\n"},
            {"task_id": "HumanEval/0", "completion": "    return False\n"},
            {"task_id": "HumanEval/0", "completion": "    return None\n"},
        ],
    )
    samples = read(path, model="codex", temperature=0.8)
    assert [(s.task_id, s.sample_index) for s in samples] == [
        ("HumanEval/0", 0),
        ("HumanEval/2", 0),
        ("HumanEval/0", 1),
        ("HumanEval/0", 2),
    ]
    assert {(s.model, s.temperature, s.prompt_set, s.variant) for s in samples} == {
        ("codex", 0.8, "original", "original")
    }
    assert {s.settings_key for s in samples} == {IMPORTED}
    second = samples[1]
    assert second.raw == "    return number % 1.0\n"
    assert second.form == "continuation"
    assert second.program == TASKS[2].prompt + "    return number % 1.0\n"


def test_jsonl_keys_override_the_defaults(tmp_path):
    path = write_jsonl(
        tmp_path / "samples.jsonl",
        [
            {
                "task_id": "HumanEval/2",
                "completion": "    return number - int(number)\n",
                "model": "starcoder",
                "temperature": 0.2,
                "prompt_set": "fixed",
                "variant": "fixed",
                "sample": 7,
            },
            {
                "task_id": "HumanEval/2",
                "completion": "    return number % 1\n",
                "model": "starcoder",
                "temperature": 0.2,
                "prompt_set": "original",
                "variant": "original",
                "sample": 3,
            },
        ],
    )
    samples = read(path, model="ignored", temperature=1.5)
    got = [(s.model, s.temperature, s.prompt_set, s.variant, s.sample_index) for s in samples]
    assert got == [
        ("starcoder", 0.2, "fixed", "fixed", 7),
        ("starcoder", 0.2, "original", "original", 3),
    ]
    fixed_prompt = prompts("fixed").for_task("HumanEval/2")[0].text
    assert samples[0].program == fixed_prompt + "    return number - int(number)\n"


@pytest.mark.parametrize("missing", ["model", "temperature"])
def test_jsonl_without_model_or_temperature_is_an_error_naming_file_and_line(tmp_path, missing):
    complete = {"task_id": "HumanEval/0", "completion": "    return True\n", "model": "m",
                "temperature": 0.2}  # fmt: skip
    partial = {key: value for key, value in complete.items() if key != missing}
    path = write_jsonl(tmp_path / "samples.jsonl", [complete, partial])
    with pytest.raises(GenerationError) as error:
        read(path)
    assert f"{path}:2:" in str(error.value)
    assert "--model" in str(error.value) and "--temperature" in str(error.value)


def test_unknown_task_id_is_an_error_naming_file_and_line(tmp_path):
    path = write_jsonl(
        tmp_path / "samples.jsonl",
        [
            {"task_id": "HumanEval/0", "completion": "    return True\n"},
            {"task_id": "HumanEval/999", "completion": "    return True\n"},
        ],
    )
    with pytest.raises(GenerationError) as error:
        read(path, model="m", temperature=0.2)
    assert f"{path}:2:" in str(error.value)
    assert "HumanEval/999" in str(error.value)


def test_malformed_json_line_is_an_error_with_its_line_number(tmp_path):
    path = tmp_path / "samples.jsonl"
    good = json.dumps({"task_id": "HumanEval/0", "completion": "    return True\n"})
    path.write_text(f"{good}\n\n{good}\n{{'task_id': 'HumanEval/1'\n", encoding="utf-8")
    with pytest.raises(GenerationError) as error:
        read(path, model="m", temperature=0.2)
    assert f"{path}:4:" in str(error.value)
    assert "not valid JSON" in str(error.value)


def test_completion_that_is_not_a_string_is_an_error(tmp_path):
    path = write_jsonl(tmp_path / "s.jsonl", [{"task_id": "HumanEval/0", "completion": None}])
    with pytest.raises(GenerationError, match=r"s\.jsonl:1: .*completion"):
        read(path, model="m", temperature=0.2)


@pytest.mark.parametrize("key, value", [("temperature", "hot"), ("sample", "first")])
def test_non_numeric_temperature_or_sample_is_an_error_naming_file_and_line(tmp_path, key, value):
    record = {"task_id": "HumanEval/0", "completion": "    return True\n", "model": "m"}
    record |= {"temperature": 0.2, key: value}
    path = write_jsonl(tmp_path / "samples.jsonl", [record])
    with pytest.raises(GenerationError, match=f"{path}:1:"):
        read(path)


def test_empty_sample_file_is_an_error(tmp_path):
    path = tmp_path / "empty.jsonl"
    path.write_text("\n\n", encoding="utf-8")
    with pytest.raises(GenerationError, match="no samples"):
        read(path, model="m", temperature=0.2)


# --- bigcode JSON --------------------------------------------------------------------------


def test_bigcode_json_gives_full_samples_indexed_per_task_in_humaneval_order(tmp_path):
    programs = [
        [TASKS[0].prompt + TASKS[0].canonical_solution] * 3,
        [TASKS[1].prompt + TASKS[1].canonical_solution],
        [TASKS[2].prompt + "    return number % 1.0\n", TASKS[2].prompt + "    return 0.5\n"],
    ]
    path = tmp_path / "generations.json"
    path.write_text(json.dumps(programs), encoding="utf-8")
    samples = read(path, model="starcoder", temperature=0.2)
    assert [(s.task_id, s.sample_index) for s in samples] == [
        ("HumanEval/0", 0),
        ("HumanEval/0", 1),
        ("HumanEval/0", 2),
        ("HumanEval/1", 0),
        ("HumanEval/2", 0),
        ("HumanEval/2", 1),
    ]
    assert {s.form for s in samples} == {"full"}
    last = samples[-1]
    assert last.program == (TASKS[2].prompt + "    return 0.5\n").lstrip("\n")
    assert last.raw == TASKS[2].prompt + "    return 0.5\n"


def test_bigcode_json_with_more_task_lists_than_tasks_is_an_error(tmp_path):
    path = tmp_path / "generations.json"
    path.write_text(json.dumps([["def f():\n    pass\n"]] * (len(HUMANEVAL) + 1)))
    with pytest.raises(GenerationError) as error:
        read(path, model="m", temperature=0.2)
    assert str(path) in str(error.value)
    assert f"{len(HUMANEVAL) + 1} task lists" in str(error.value)


def test_bigcode_json_that_is_not_a_list_of_lists_is_an_error(tmp_path):
    path = tmp_path / "generations.json"
    path.write_text(json.dumps(["def f():\n    pass\n"]))
    with pytest.raises(GenerationError, match="list"):
        read(path, model="m", temperature=0.2)


# --- writing human-eval JSONL --------------------------------------------------------------


def test_write_humaneval_jsonl_writes_one_record_per_sample_with_every_key(tmp_path):
    path = write_jsonl(
        tmp_path / "in.jsonl",
        [
            {"task_id": "HumanEval/2", "completion": "    return number % 1.0\n"},
            {"task_id": "HumanEval/2", "completion": "    return 0.0\n"},
        ],
    )
    samples = read(path, model="codex", temperature=0.8)
    out = tmp_path / "out.jsonl"
    assert write_humaneval_jsonl(iter(samples), out) == 2
    records = [json.loads(line) for line in out.read_text().splitlines()]
    assert records[1] == {
        "task_id": "HumanEval/2",
        "completion": "    return 0.0\n",
        "model": "codex",
        "temperature": 0.8,
        "prompt_set": "original",
        "variant": "original",
        "sample": 1,
    }


# --- the CLI -------------------------------------------------------------------------------


@pytest.fixture
def mixed_samples(tmp_path) -> Path:
    """Continuations, a full completion and a chat answer for three tasks."""
    chat = (
        "Here it is:\n\n```python\ndef truncate_number(number: float) -> float:\n"
        "    return number - int(number)\n```\n\nHope this helps.\n"
    )
    return write_jsonl(
        tmp_path / "samples.jsonl",
        [
            {"task_id": "HumanEval/0", "completion": TASKS[0].canonical_solution},
            {"task_id": "HumanEval/0", "completion": "    return False\n\nprint(1)\n"},
            {"task_id": "HumanEval/1", "completion": TASKS[1].prompt + "    return []\n"},
            {"task_id": "HumanEval/2", "completion": chat},
        ],
    )


def test_cli_import_stores_the_samples(tmp_path, mixed_samples):
    store = tmp_path / "store.sqlite"
    result = cli("import", str(mixed_samples), "--model", "codex", "--temperature", "0.8",
                 "--store", str(store))  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "4 samples read, 4 stored" in result.output
    with SampleStore(store) as opened:
        samples = list(opened.samples())
        runs = opened.runs()
    assert [(s.task_id, s.sample_index, s.form) for s in samples] == [
        ("HumanEval/0", 0, "continuation"),
        ("HumanEval/0", 1, "continuation"),
        ("HumanEval/1", 0, "full"),
        ("HumanEval/2", 0, "fenced"),
    ]
    assert {s.model for s in samples} == {"codex"}
    assert {s.run_id for s in samples} == {runs[0]["id"]}
    assert runs[0]["settings"] == {"imported_from": str(mixed_samples)}


def test_cli_import_without_model_is_one_error_line_naming_file_and_line_and_exit_2(
    tmp_path, mixed_samples
):
    store = tmp_path / "store.sqlite"
    result = cli("import", str(mixed_samples), "--temperature", "0.8", "--store", str(store))
    assert result.exit_code == 2
    assert f"error: {mixed_samples}:1: " in result.output
    assert "--model" in result.output
    assert "Traceback" not in result.output
    with SampleStore(store) as opened:
        assert opened.count() == (0, 0)


def test_cli_import_of_an_unknown_task_is_exit_2_naming_file_and_line(tmp_path):
    path = write_jsonl(tmp_path / "s.jsonl", [{"task_id": "MBPP/1", "completion": "x"}])
    result = cli("import", str(path), "--model", "m", "--temperature", "0.2",
                 "--store", str(tmp_path / "store.sqlite"))  # fmt: skip
    assert result.exit_code == 2
    assert f"{path}:1:" in result.output and "MBPP/1" in result.output


def test_cli_importing_the_same_file_twice_stores_nothing_new(tmp_path, mixed_samples):
    store = tmp_path / "store.sqlite"
    args = ("import", str(mixed_samples), "--model", "codex", "--temperature", "0.8",
            "--store", str(store))  # fmt: skip
    assert cli(*args).exit_code == 0
    with SampleStore(store) as opened:
        before = [(s.task_id, s.sample_index, s.completion) for s in opened.samples()]
    again = cli(*args)
    assert again.exit_code == 0, again.output
    assert "4 samples read, 0 stored (4 already in" in again.output
    with SampleStore(store) as opened:
        assert opened.count() == (4, 0)
        assert [(s.task_id, s.sample_index, s.completion) for s in opened.samples()] == before


def test_cli_import_with_prompt_set_fixed_reads_against_the_fixed_prompts(tmp_path):
    path = write_jsonl(
        tmp_path / "s.jsonl", [{"task_id": "HumanEval/47", "completion": "    return 8.0\n"}]
    )
    store = tmp_path / "store.sqlite"
    result = cli("import", str(path), "--model", "m", "--temperature", "0.2",
                 "--prompts", "fixed", "--store", str(store))  # fmt: skip
    assert result.exit_code == 0, result.output
    with SampleStore(store) as opened:
        (sample,) = opened.samples()
    fixed = prompts("fixed").for_task("HumanEval/47")[0].text
    assert fixed != HUMANEVAL.get("HumanEval/47").prompt
    assert (sample.prompt_set, sample.variant) == ("fixed", "fixed")
    assert sample.program == fixed + "    return 8.0\n"


def test_cli_import_of_bigcode_json_stores_full_samples(tmp_path):
    path = tmp_path / "generations.json"
    path.write_text(json.dumps([[TASKS[0].prompt + TASKS[0].canonical_solution] * 2]))
    store = tmp_path / "store.sqlite"
    result = cli("import", str(path), "--model", "sc", "--temperature", "0.2",
                 "--store", str(store))  # fmt: skip
    assert result.exit_code == 0, result.output
    with SampleStore(store) as opened:
        assert [(s.sample_index, s.form) for s in opened.samples()] == [(0, "full"), (1, "full")]


def test_cli_export_writes_humaneval_jsonl_with_every_key(tmp_path, mixed_samples):
    store = tmp_path / "store.sqlite"
    cli("import", str(mixed_samples), "--model", "codex", "--temperature", "0.8",
        "--store", str(store))  # fmt: skip
    out = tmp_path / "export.jsonl"
    result = cli("export", "--store", str(store), "--out", str(out))
    assert result.exit_code == 0, result.output
    assert "wrote 4 samples" in result.output
    records = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(records) == 4
    for record in records:
        assert set(record) == {
            "task_id", "completion", "model", "temperature", "prompt_set", "variant", "sample",
        }  # fmt: skip
        assert (record["model"], record["temperature"]) == ("codex", 0.8)
        assert (record["prompt_set"], record["variant"]) == ("original", "original")


def test_cli_export_filters_by_model(tmp_path, mixed_samples):
    store = tmp_path / "store.sqlite"
    for model in ("a", "b"):
        cli("import", str(mixed_samples), "--model", model, "--temperature", "0.8",
            "--store", str(store))  # fmt: skip
    out = tmp_path / "export.jsonl"
    assert cli("export", "--store", str(store), "--out", str(out), "--model", "b").exit_code == 0
    assert {json.loads(line)["model"] for line in out.read_text().splitlines()} == {"b"}


def test_export_then_import_into_a_fresh_store_round_trips(tmp_path, mixed_samples):
    first = tmp_path / "first.sqlite"
    second = tmp_path / "second.sqlite"
    cli("import", str(mixed_samples), "--model", "codex", "--temperature", "0.8",
        "--store", str(first))  # fmt: skip
    fixed = write_jsonl(
        tmp_path / "fixed.jsonl",
        [{"task_id": "HumanEval/47", "completion": "    return 8.0\n", "sample": 5}],
    )
    cli("import", str(fixed), "--model", "codex", "--temperature", "0.2",
        "--prompts", "fixed", "--store", str(first))  # fmt: skip
    out = tmp_path / "export.jsonl"
    assert cli("export", "--store", str(first), "--out", str(out)).exit_code == 0
    # no --model/--temperature: the exported file says them itself
    result = cli("import", str(out), "--store", str(second))
    assert result.exit_code == 0, result.output
    assert "5 samples read, 5 stored" in result.output
    with SampleStore(first) as a, SampleStore(second) as b:
        original, again = list(a.samples()), list(b.samples())
    assert triples(again) == triples(original)
    assert sorted(map(identity, again)) == sorted(map(identity, original))
    assert {s.program for s in again} == {s.program for s in original}
