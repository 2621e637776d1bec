"""The store records its schema version, migrates a store of the previous schema in place,
is opened read-only by `report` and `export`, and never shows a cached verdict or pass/fail
result reached on other inputs (another benchmark's canonical or tests)."""

from __future__ import annotations

import hashlib
import json
import sqlite3
from contextlib import closing
from pathlib import Path

import pytest
from click.testing import CliRunner

from cloneprobe.cli import main
from cloneprobe.execution import Execution, ExecutionStore, execution_key
from cloneprobe.generation import SampleStore

ENV = {"OPENAI_API_KEY": "", "HF_HUB_OFFLINE": "1"}

VERSION_1 = """
CREATE TABLE runs (id INTEGER PRIMARY KEY, model TEXT NOT NULL, settings TEXT NOT NULL,
    versions TEXT NOT NULL, started_at REAL NOT NULL, ended_at REAL,
    status TEXT NOT NULL DEFAULT 'running');
CREATE TABLE samples (id INTEGER PRIMARY KEY, run_id INTEGER REFERENCES runs(id),
    model TEXT NOT NULL, settings_key TEXT NOT NULL, prompt_set TEXT NOT NULL,
    variant TEXT NOT NULL, task_id TEXT NOT NULL, temperature REAL NOT NULL,
    sample_index INTEGER NOT NULL, mode TEXT, raw TEXT, completion TEXT, program TEXT, form TEXT,
    finish_reason TEXT, prompt_tokens INTEGER, completion_tokens INTEGER, latency REAL,
    error TEXT, created_at REAL NOT NULL,
    UNIQUE (model, settings_key, prompt_set, variant, task_id, temperature, sample_index));
CREATE TABLE detections (sample_id INTEGER NOT NULL, detector_key TEXT NOT NULL,
    clone_type TEXT, similarity INTEGER, trivial_type TEXT, pairs TEXT NOT NULL,
    PRIMARY KEY (sample_id, detector_key));
CREATE TABLE executions (sample_id INTEGER PRIMARY KEY, passed INTEGER NOT NULL,
    reason TEXT NOT NULL, seconds REAL);
"""
"""The schema the store had before `meta` (cloneprobe up to this change), verbatim."""


def task(canonical: str) -> dict:
    return {"task_id": "B/0", "prompt": "def add(a, b):\n", "canonical_solution": canonical,
            "entry_point": "add", "test": "def check(f):\n    assert f(1, 2) == 3\n"}  # fmt: skip


COPY = "    total = a + b\n    if total > 100:\n        return total\n    return total\n"
OTHER = "    result = 0\n    for value in (a, b):\n        result += value\n    return result\n"


def jsonl(path: Path, *records: dict) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def invoke(*args):
    result = CliRunner().invoke(main, [str(a) for a in args], env=ENV)
    assert result.exit_code == 0, result.output
    return result


@pytest.fixture
def version_1_store(tmp_path) -> Path:
    path = tmp_path / "old.sqlite"
    with closing(sqlite3.connect(path)) as db:
        db.executescript(VERSION_1)
        db.execute("INSERT INTO runs VALUES (1, 'm', '{}', '{}', 1.0, NULL, 'running')")
        db.execute(
            "INSERT INTO samples (run_id, model, settings_key, prompt_set, variant, task_id, "
            "temperature, sample_index, completion, program, created_at) VALUES "
            "(1, 'm', 'imported', 'original', 'original', 'B/0', 0.2, 0, ?, ?, 1.0)",
            (COPY, "def add(a, b):\n" + COPY),
        )
        db.execute("INSERT INTO detections VALUES (1, 'k', '1', 100, NULL, '[]')")
        db.execute("INSERT INTO executions VALUES (1, 1, 'passed', 0.1)")
        db.commit()
    return path


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_a_version_1_store_is_reported_read_only_unchanged(tmp_path, version_1_store):
    bench = jsonl(tmp_path / "b.jsonl", task(COPY))
    before = digest(version_1_store)
    report = json.loads(invoke("report", "--store", version_1_store, "--benchmark", bench,
                               "--json").stdout)  # fmt: skip
    assert report["groups"][0]["tasks_with_clone"]["1"] == 1
    assert report["groups"][0]["correctness"] is None  # a result without its inputs: not trusted
    assert report["settings"]["sampling"][0]["status"] == "interrupted"
    assert digest(version_1_store) == before


def test_a_version_1_store_is_migrated_in_place_when_opened_for_writing(version_1_store):
    with SampleStore(version_1_store) as store:
        assert store.version == 2
        assert [(s.task_id, s.completion) for s in store.samples()] == [("B/0", COPY)]
        assert [r["status"] for r in store.runs()] == ["interrupted"]
        ExecutionStore(store.db)
    with closing(sqlite3.connect(version_1_store)) as db:
        assert dict(db.execute("SELECT key, value FROM meta")) == {
            "application": "cloneprobe", "schema_version": "2"}  # fmt: skip
        assert db.execute("SELECT status FROM runs").fetchall() == [("interrupted",)]
        columns = {row[1] for row in db.execute("PRAGMA table_info(executions)")}
        assert "inputs_key" in columns


def test_a_read_only_store_refuses_writes(tmp_path):
    SampleStore(tmp_path / "s.sqlite").close()
    with (SampleStore(tmp_path / "s.sqlite", read_only=True) as store,
          pytest.raises(sqlite3.OperationalError, match="readonly")):  # fmt: skip
        store.db.execute("INSERT INTO meta VALUES ('x', 'y')")


def test_verdicts_are_not_reused_against_another_benchmarks_canonical(tmp_path):
    samples = jsonl(tmp_path / "s.jsonl", {"task_id": "B/0", "completion": COPY})
    store = tmp_path / "s.sqlite"
    first, second = jsonl(tmp_path / "a.jsonl", task(COPY)), jsonl(tmp_path / "b.jsonl",
                                                                    task(OTHER))  # fmt: skip
    detect = ["detect", samples, "--model", "m", "--temperature", "0.2", "--store", store,
              "--json"]  # fmt: skip
    cloned = json.loads(invoke(*detect, "--benchmark", first).stdout)
    assert cloned["groups"][0]["tasks_with_clone"]["1"] == 1
    other = json.loads(invoke("report", "--store", store, "--benchmark", second,
                              "--json").stdout)  # fmt: skip
    assert other["groups"][0]["tasks_with_clone"] == {"1": 0, "2": 0, "3": 0}


def test_pass_fail_results_count_only_for_the_program_and_tests_they_were_run_on(tmp_path):
    with SampleStore(tmp_path / "s.sqlite") as store:
        executions = ExecutionStore(store.db)
        run_on = execution_key("def add(a, b): return a + b", "assert add(1, 2) == 3", "add")
        executions.add([Execution(7, True, "passed", 0.1, "namespaces", run_on)])
        assert executions.matching({7: run_on})[7].passed
        other_tests = execution_key("def add(a, b): return a + b", "assert add(1, 1) == 3", "add")
        assert executions.matching({7: other_tests}) == {}
