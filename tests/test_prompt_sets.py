"""Prompt sets: built-in original and fixed, the study's folder layout, and JSONL files."""

from __future__ import annotations

import json
import logging

import pytest

from cloneprobe.benchmarks import (
    BenchmarkError,
    export_jsonl,
    load_humaneval,
    load_prompt_set,
    load_prompt_sets,
)


@pytest.fixture(scope="module")
def humaneval():
    return load_humaneval()


def test_built_in_sets_have_every_task(humaneval):
    original, fixed = load_prompt_sets("original,fixed", humaneval)
    assert original.variants() == {"original": 164}
    assert fixed.variants() == {"fixed": 164}
    assert original.for_task("HumanEval/3")[0].text == humaneval.get("HumanEval/3").prompt


def _study_folder(tmp_path, humaneval):
    folder = tmp_path / "study"
    folder.mkdir()
    for index in (0, 1):
        prompt = humaneval.get(f"HumanEval/{index}").prompt
        (folder / f"{index}.py").write_text(prompt)
        (folder / f"{index}_all.py").write_text(prompt.replace('"""', '"""Fixed. ', 1))
    (folder / "1_P3.py").write_text(humaneval.get("HumanEval/1").prompt)
    return folder


def test_study_folder_loads_variants_original_all_and_p(tmp_path, humaneval):
    prompts = load_prompt_set(str(_study_folder(tmp_path, humaneval)), humaneval)
    assert prompts.variants() == {"original": 2, "all": 2, "P3": 1}
    assert [(p.task_id, p.variant) for p in prompts.prompts] == [
        ("HumanEval/0", "original"),
        ("HumanEval/0", "all"),
        ("HumanEval/1", "original"),
        ("HumanEval/1", "all"),
        ("HumanEval/1", "P3"),
    ]
    assert prompts.skipped == ()


def test_files_outside_the_layout_are_skipped_with_a_counted_warning(tmp_path, humaneval, caplog):
    folder = _study_folder(tmp_path, humaneval)
    (folder / "README.md").write_text("notes")
    (folder / "helper.py").write_text("x = 1\n")
    with caplog.at_level(logging.WARNING):
        prompts = load_prompt_set(str(folder), humaneval)
    assert prompts.skipped == ("README.md", "helper.py")
    assert "skipped 2 file(s)" in caplog.text


@pytest.mark.parametrize(
    ("name", "text", "message"),
    [
        ("164.py", "def f():\n    pass\n", "index 164 names no task"),
        ("2.py", "def nothing_here():\n    pass\n", "does not define the entry point"),
        ("2.py", "def truncate_number(x:\n", "does not parse"),
    ],
)
def test_bad_study_files_are_named_in_one_error(tmp_path, humaneval, name, text, message):
    folder = tmp_path / "bad"
    folder.mkdir()
    (folder / name).write_text(text)
    with pytest.raises(BenchmarkError, match=message) as error:
        load_prompt_set(str(folder), humaneval)
    assert name in str(error.value)


def test_jsonl_prompt_set_with_and_without_variant(tmp_path, humaneval):
    path = tmp_path / "mine.jsonl"
    prompt = humaneval.get("HumanEval/2").prompt
    path.write_text(
        json.dumps({"task_id": "HumanEval/2", "prompt": prompt})
        + "\n"
        + json.dumps({"task_id": "HumanEval/2", "prompt": prompt, "variant": "terse"})
        + "\n"
    )
    prompts = load_prompt_set(str(path), humaneval)
    assert prompts.variants() == {"mine": 1, "terse": 1}


@pytest.mark.parametrize(
    ("record", "message"),
    [
        ({"task_id": "HumanEval/999", "prompt": "def f():\n    pass\n"}, "not a task"),
        ({"task_id": "HumanEval/2"}, "task_id and prompt"),
        ({"task_id": "HumanEval/2", "prompt": "def other():\n    pass\n"}, "entry point"),
    ],
)
def test_bad_jsonl_prompts_name_file_and_line(tmp_path, humaneval, record, message):
    path = tmp_path / "bad.jsonl"
    path.write_text(json.dumps(record) + "\n")
    with pytest.raises(BenchmarkError, match=message) as error:
        load_prompt_set(str(path), humaneval)
    assert f"{path}:1" in str(error.value)


def test_unknown_prompt_set_name_is_an_error(humaneval):
    with pytest.raises(BenchmarkError, match="not a built-in set"):
        load_prompt_set("fixxed", humaneval)


def test_export_round_trips_through_jsonl(tmp_path, humaneval):
    fixed = load_prompt_set("fixed", humaneval)
    path = tmp_path / "fixed.jsonl"
    assert export_jsonl(fixed, path) == 164
    again = load_prompt_set(str(path), humaneval)
    assert again.variants() == {"fixed": 164}
    assert [p.text for p in again.prompts] == [p.text for p in fixed.prompts]
