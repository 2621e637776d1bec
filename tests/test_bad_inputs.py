"""Every bad input gets one clear error line through the CLI: exit code not 0, the line names
the input and what is wrong and says what to do, and no traceback."""

from __future__ import annotations

import json
import re
import sqlite3
from contextlib import closing
from pathlib import Path

import pytest
from click.testing import CliRunner

from cloneprobe.cli import main
from cloneprobe.generation import SampleStore

ENV = {"OPENAI_API_KEY": "", "OPENAI_BASE_URL": "", "HF_HUB_OFFLINE": "1"}
WHAT_TO_DO = re.compile(r"; |\bgive\b|\buse\b|\bsee\b|\bcheck\b|\braise\b")
GOOD = {"task_id": "HumanEval/0", "completion": "    return True\n"}


def run(*args: str):
    return CliRunner().invoke(main, [str(a) for a in args], env=ENV)


def write(path: Path, text: str | bytes) -> Path:
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


def folder_with(path: Path, files, text: str) -> Path:
    """A new folder holding `files`, each with `text`."""
    path.mkdir()
    for name in files:
        write(path / name, text)
    return path


def jsonl(path: Path, *records) -> Path:
    lines = [r if isinstance(r, str) else json.dumps(r) for r in records]
    return write(path, "\n".join(lines) + "\n")


def detect(path: Path, tmp: Path, *extra: str) -> list:
    return ["detect", path, "--model", "m", "--temperature", "0.2", "--store",
            tmp / "s.sqlite", *extra]  # fmt: skip


def store_with(tmp: Path, version: int | None = None, foreign: bool = False) -> Path:
    path = tmp / "store.sqlite"
    if foreign:
        with closing(sqlite3.connect(path)) as db:
            db.execute("CREATE TABLE songs (title TEXT)")
            db.commit()
        return path
    SampleStore(path).close()
    if version is not None:
        with closing(sqlite3.connect(path)) as db:
            db.execute("UPDATE meta SET value = ? WHERE key = 'schema_version'", (str(version),))
            db.commit()
    return path


def benchmark(tmp: Path, **fields) -> Path:
    record = {"task_id": "B/0", "prompt": "def f(x):\n", "canonical_solution": "    return x\n",
              "entry_point": "f", **fields}  # fmt: skip
    return jsonl(tmp / "bench.jsonl", {k: v for k, v in record.items() if v is not None})


GEN = ["generate", "--limit", "1", "-n", "1"]

CASES = {
    # --- sample files ---
    "missing sample file": (lambda t: detect(t / "nope.jsonl", t), "nope.jsonl", "no such"),
    "empty sample file": (lambda t: detect(write(t / "e.jsonl", ""), t), "e.jsonl", "no samples"),
    "blank-lines-only file": (lambda t: detect(write(t / "b.jsonl", "\n\n \n"), t), "b.jsonl",
                              "no samples"),
    "truncated JSONL": (lambda t: detect(jsonl(t / "t.jsonl", GOOD, '{"task_id": "Hum'), t),
                        "t.jsonl:2", "not valid JSON"),
    "binary file": (lambda t: detect(write(t / "x.jsonl", b"\x89PNG\r\n\x1a\n\xff\xfe\x00"), t),
                    "x.jsonl", "not UTF-8"),
    "latin-1 file": (lambda t: detect(write(t / "l.jsonl", json.dumps(GOOD).encode()[:-2]
                                            + b'\xe9"}\n'), t), "l.jsonl", "not UTF-8"),
    "huge line": (lambda t: detect(jsonl(t / "h.jsonl", {**GOOD, "completion": "x" * 1_200_000}),
                                   t), "h.jsonl:1", "byte cap"),
    "line is a list": (lambda t: detect(jsonl(t / "a.jsonl", GOOD, "[1, 2]"), t), "a.jsonl:2",
                       "not a JSON object"),
    "completion missing": (lambda t: detect(jsonl(t / "c.jsonl", {"task_id": "HumanEval/0"}), t),
                           "c.jsonl:1", "completion"),
    "completion a number": (lambda t: detect(jsonl(t / "n.jsonl", {**GOOD, "completion": 5}), t),
                            "n.jsonl:1", "completion"),
    "unknown task id in file": (lambda t: detect(jsonl(t / "u.jsonl", {**GOOD, "task_id": "X/1"}),
                                                 t), "X/1", "not in humaneval"),
    "file temperature a word": (
        lambda t: detect(jsonl(t / "w.jsonl", {**GOOD, "temperature": "hot"}), t),
        "w.jsonl:1", "not a number"),
    "file temperature -5": (lambda t: detect(jsonl(t / "m.jsonl", {**GOOD, "temperature": -5}), t),
                       "m.jsonl:1", "outside [0, 2]"),
    "file temperature Infinity": (
        lambda t: detect(jsonl(t / "i.jsonl", '{"task_id": "HumanEval/0", "completion": "x", '
                               '"temperature": Infinity}'), t), "i.jsonl:1", "outside [0, 2]"),
    "file temperature NaN": (lambda t: detect(jsonl(t / "q.jsonl", '{"task_id": "HumanEval/0", '
                        '"completion": "x", "temperature": NaN}'), t), "q.jsonl:1", "not finite"),
    "huge sample index": (lambda t: detect(jsonl(t / "k.jsonl", {**GOOD, "sample": 10**30}), t),
                          "k.jsonl:1", "outside 0.."),
    "negative sample index": (lambda t: detect(jsonl(t / "g.jsonl", {**GOOD, "sample": -1}), t),
                              "g.jsonl:1", "outside 0.."),
    "sample index a word": (lambda t: detect(jsonl(t / "s.jsonl", {**GOOD, "sample": "one"}), t),
                            "s.jsonl:1", "not a whole number"),
    "duplicate sample index": (lambda t: detect(jsonl(t / "d.jsonl", {**GOOD, "sample": 0},
                               {**GOOD, "sample": 0}), t), "d.jsonl:2", "appears twice"),
    "lone surrogate": (lambda t: detect(jsonl(t / "z.jsonl", '{"task_id": "HumanEval/0", '
                       '"completion": "x = \'\\ud800\'"}'), t), "z.jsonl:1", "lone surrogate"),
    "model not a string": (lambda t: detect(jsonl(t / "o.jsonl", {**GOOD, "model": 5}), t),
                           "o.jsonl:1", "model"),
    "bigcode not lists": (lambda t: detect(write(t / "b.json", '["def f(): pass"]'), t),
                          "b.json", "list (per task) of lists"),
    "no model or temperature": (lambda t: ["detect", jsonl(t / "v.jsonl", GOOD), "--store",
                                t / "s.sqlite"], "v.jsonl:1", "give --model and --temperature"),
    "a path that is markup": (lambda t: detect(t / "a[/x][red]\x1b[31m.jsonl", t),
                              "a[/x][red]\\x1b", "no such"),
    "import of a missing file": (lambda t: ["import", t / "gone.jsonl", "--model", "m",
                                 "--temperature", "0.2", "--store", t / "s.sqlite"], "gone.jsonl",
                                 "no such"),
    # --- benchmarks ---
    "missing benchmark": (lambda t: [*GEN, "--benchmark", t / "b.jsonl"], "b.jsonl", "no such"),
    "benchmark missing fields": (lambda t: [*GEN, "--benchmark", benchmark(t, prompt=None)],
                                 "bench.jsonl:1", "prompt"),
    "benchmark unknown language": (lambda t: [*GEN, "--benchmark", benchmark(t, language="cobol")],
                                   "cobol", "not supported"),
    "entry point not in prompt": (lambda t: [*GEN, "--benchmark", benchmark(t, entry_point="g")],
                                  "'g'", "not declared"),
    "empty benchmark": (lambda t: [*GEN, "--benchmark", write(t / "e.jsonl", "")], "e.jsonl",
                        "no tasks"),
    "prompts --diff on a user benchmark": (lambda t: ["prompts", "--diff", "0", "--benchmark",
                                           benchmark(t)], "--diff 0", "no built-in fixed"),
    # --- tasks, models, languages ---
    "--tasks ,,,": (lambda t: [*GEN[:1], "--tasks", ",,,", "--store", t / "s"], "--tasks ',,,'",
                    "names no task"),
    "unknown task": (lambda t: ["generate", "--tasks", "9999", "--store", t / "s"], "9999",
                     "not in humaneval"),
    "unknown model kind": (lambda t: [*GEN, "--model", "gpt4", "--store", t / "s"], "gpt4",
                           "model spec"),
    "unknown prompt set": (lambda t: [*GEN, "--prompts", "nosuch", "--store", t / "s"], "nosuch",
                           ""),
    "unknown language": (lambda t: ["clones", t, t, "--lang", "cobol"], "--lang", "cobol"),
    "unknown profile": (lambda t: ["detect", "--profile", "fast"], "--profile", "fast"),
    "unknown command": (lambda t: ["audti"], "audti", "No such command"),
    # --- numbers ---
    "temperature -5": (lambda t: [*GEN, "--temperature", "-5"], "--temperature", "outside"),
    "temperature nan": (lambda t: [*GEN, "--temperature", "nan"], "--temperature", "not a finite"),
    "temperature inf": (lambda t: [*GEN, "--temperature", "inf"], "--temperature", "not a finite"),
    "temperature word": (lambda t: [*GEN, "--temperature", "warm"], "--temperature",
                         "not a number"),
    "top-p 0": (lambda t: [*GEN, "--top-p", "0"], "--top-p", "outside"),
    "top-p nan": (lambda t: [*GEN, "--top-p", "nan"], "--top-p", "not a finite"),
    "top-p 1.5": (lambda t: [*GEN, "--top-p", "1.5"], "--top-p", "outside"),
    "timeout -1": (lambda t: [*GEN, "--timeout", "-1"], "--timeout", "outside"),
    "timeout 0": (lambda t: [*GEN, "--timeout", "0"], "--timeout", "outside"),
    "timeout nan": (lambda t: [*GEN, "--timeout", "nan"], "--timeout", "not a finite"),
    "timeout inf": (lambda t: [*GEN, "--timeout", "inf"], "--timeout", "not a finite"),
    "exec-timeout nan": (lambda t: ["execute", "--exec-timeout", "nan"], "--exec-timeout",
                         "not a finite"),
    "exec-timeout 0": (lambda t: ["execute", "--exec-timeout", "0"], "--exec-timeout", "outside"),
    "exec-timeout -3": (lambda t: ["audit", "--exec-timeout", "-3"], "--exec-timeout", "outside"),
    "limit 0": (lambda t: ["generate", "--limit", "0"], "--limit", "0"),
    "limit -3": (lambda t: ["generate", "--limit", "-3"], "--limit", "-3"),
    "n 0": (lambda t: ["generate", "-n", "0"], "'-n'", "0"),
    "max-new-tokens 0": (lambda t: [*GEN, "--max-new-tokens", "0"], "--max-new-tokens", "0"),
    "concurrency 0": (lambda t: [*GEN, "--concurrency", "0"], "--concurrency", "0"),
    "batch-size -1": (lambda t: [*GEN, "--batch-size", "-1"], "--batch-size", "-1"),
    "seed -1": (lambda t: [*GEN, "--seed", "-1"], "--seed", "-1"),
    "workers 0": (lambda t: ["execute", "--workers", "0"], "--workers", "0"),
    "threshold nan": (lambda t: ["detect", "--threshold", "nan"], "--threshold", "not a finite"),
    "threshold 1.5": (lambda t: ["report", "--threshold", "1.5"], "--threshold", "outside"),
    "threshold -0.1": (lambda t: ["detect", "--threshold", "-0.1"], "--threshold", "outside"),
    "min-lines -1": (lambda t: ["detect", "--min-lines", "-1"], "--min-lines", "-1"),
    "max-sample-bytes 0": (lambda t: ["detect", "--max-sample-bytes", "0"], "--max-sample-bytes",
                           "0"),
    "import temperature nan": (lambda t: ["import", jsonl(t / "f.jsonl", GOOD), "--temperature",
                               "nan"], "--temperature", "not a finite"),
    # --- stores ---
    "missing store for report": (lambda t: ["report", "--store", t / "none.sqlite"],
                                 "none.sqlite", "no such store"),
    "missing store for export": (lambda t: ["export", "--store", t / "none.sqlite", "--out",
                                 t / "o.jsonl"], "none.sqlite", "no such store"),
    "missing store for detect": (lambda t: ["detect", t / "none.sqlite"], "none.sqlite",
                                 "no such store"),
    "store is a text file": (lambda t: ["report", "--store", write(t / "s.db", "hello")], "s.db",
                             "not a SQLite file"),
    "store is an empty file": (lambda t: ["report", "--store", write(t / "s.sqlite", "")],
                               "s.sqlite", "empty file"),
    "store from another tool": (lambda t: ["report", "--store", store_with(t, foreign=True)],
                                "store.sqlite", "another tool"),
    "store from another tool, writing": (lambda t: [*GEN, "--store", store_with(t, foreign=True)],
                                         "store.sqlite", "another tool"),
    "store from a newer schema": (lambda t: ["report", "--store", store_with(t, version=99)],
                                  "store.sqlite", "newer cloneprobe"),
    "newer store, writing": (lambda t: [*GEN, "--store", store_with(t, version=99)],
                             "store.sqlite", "newer cloneprobe"),
    "store in a missing folder": (lambda t: [*GEN, "--store", t / "no" / "s.sqlite"],
                                  "s.sqlite", "does not exist"),
    "store is a folder": (lambda t: [*GEN, "--store", t], "is a folder", "file path"),
    "store without matching samples": (lambda t: ["report", "--store", store_with(t)],
                                       "store.sqlite", "no samples"),
    # --- outputs, checked before the work ---
    "report path is a file": (lambda t: ["report", "--store", store_with(t), "--report",
                              write(t / "r.txt", "")], "r.txt", "is a file"),
    "export into a missing folder": (lambda t: ["export", "--store", store_with(t), "--out",
                                     t / "no" / "o.jsonl"], "o.jsonl", "does not exist"),
    "export onto a folder": (lambda t: ["export", "--store", store_with(t), "--out", t], "--out",
                             "is a folder"),
    "api key file missing": (lambda t: [*GEN, "--api-key-file", t / "key.txt", "--store",
                             t / "s"], "key.txt", "cannot read"),
    "api key file empty": (lambda t: [*GEN, "--api-key-file", write(t / "key.txt", ""),
                           "--store", t / "s"], "key.txt", "empty"),
}


@pytest.mark.parametrize("name", list(CASES))
def test_a_bad_input_gets_one_error_line_naming_it(tmp_path, name):
    build, names, wrong = CASES[name]
    args = build(tmp_path)
    result = run(*args)
    assert result.exit_code not in (0, None), (name, result.output)
    assert isinstance(result.exception, SystemExit), repr(result.exception)
    assert "Traceback" not in result.output
    errors = [line for line in result.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1, result.stderr
    line = errors[0]
    assert names in line, line
    assert wrong.lower() in line.lower(), line
    assert WHAT_TO_DO.search(line.split(":", 1)[1]), line


def test_a_report_folder_that_cannot_be_made_is_refused_before_any_work(tmp_path):
    blocker = write(tmp_path / "file", "")
    result = run("audit", "--limit", "1", "-n", "1", "--store", tmp_path / "s.sqlite",
                 "--report", blocker / "sub")  # fmt: skip
    assert result.exit_code == 2
    assert "cannot write there" in result.stderr
    assert not (tmp_path / "s.sqlite").exists()  # nothing was generated


def test_java_tasks_given_to_execute_are_refused_with_a_reason(tmp_path):
    bench = jsonl(tmp_path / "java.jsonl", {
        "task_id": "J/0", "prompt": "class S { int f(int a) {", "language": "java",
        "canonical_solution": " return a; } }", "entry_point": "f"})  # fmt: skip
    samples = jsonl(tmp_path / "s.jsonl", {"task_id": "J/0", "completion": " return a; } }"})
    result = run("execute", samples, "--benchmark", bench, "--model", "m", "--temperature", "0",
                 "--store", tmp_path / "s.sqlite")  # fmt: skip
    assert result.exit_code == 2
    assert "no Python tests" in result.stderr and "Traceback" not in result.output


def test_samples_of_tasks_the_benchmark_lacks_are_counted_not_silently_judged(tmp_path):
    samples = jsonl(tmp_path / "s.jsonl", GOOD)
    store = tmp_path / "s.sqlite"
    assert run("import", samples, "--model", "m", "--temperature", "0.2", "--store",
               store).exit_code == 0  # fmt: skip
    result = run("report", "--store", store, "--benchmark", benchmark(tmp_path))
    assert result.exit_code == 2
    assert "task not in bench" in result.stderr


@pytest.mark.slow(reason="a few seconds: a whole audit against an unreachable server")
def test_an_audit_against_an_unreachable_server_exits_non_zero(tmp_path):
    result = run("audit", "--model", "openai:m", "--base-url", "http://127.0.0.1:9/v1",
                 "--limit", "1", "-n", "1", "--prompts", "original", "--timeout", "2",
                 "--store", tmp_path / "s.sqlite")  # fmt: skip
    assert result.exit_code == 2
    (line,) = [x for x in result.stderr.splitlines() if x.startswith("error:")]
    assert "all 1 requested samples failed" in line and "--base-url" in line
