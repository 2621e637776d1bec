"""Bad inputs found by a held-out probe (docs/development.md lists all of them, with what each
did before): through the CLI, each ends with a non-zero exit and one error line that names
the input, says what is wrong and what to do, and none writes over a device, a FIFO or a
store. (The earlier ones are in test_bad_inputs.py and test_bad_inputs_more.py.)"""

from __future__ import annotations

import json
import os
import sqlite3
import stat
from contextlib import closing
from pathlib import Path

import pytest
from openai_test_server import OpenAITestServer
from test_bad_inputs import GOOD, folder_with, jsonl, run, write
from test_bad_inputs_more import check_case, filled_store, one_error_line

CLOSED = "http://127.0.0.1:9/v1"
DET = ["--model", "m", "--temperature", "0.2"]
GEN = ["generate", "--model", "openai:m", "--base-url", CLOSED, "--limit", "1", "-n", "1",
       "--prompts", "original"]  # fmt: skip


def fifo(tmp: Path, name: str = "pipe.jsonl") -> Path:
    path = tmp / name
    os.mkfifo(path)
    return path


def config(tmp: Path, line: str) -> Path:
    return write(tmp / "c.toml", f"[generate]\n{line}\n")


def edited_store(tmp: Path, *statements: str) -> Path:
    store = filled_store(tmp)
    with closing(sqlite3.connect(store)) as db:
        for statement in statements:
            db.execute(statement)
        db.commit()
    return store


def corpus(tmp: Path, record: dict | None = None) -> Path:
    folder = tmp / "corpus"
    folder.mkdir()
    write(folder / "a.jsonl", json.dumps(record or {"id": 1, "text": "x = 1"}) + "\n")
    return folder


def parquet(tmp: Path) -> Path:
    path = write(tmp / "s.parquet", b"PAR1" + b"\x00" * 40 + b"PAR1")
    return path


def prompt_folder(tmp: Path, *files: str) -> Path:
    return folder_with(tmp / "prompts", files, "def f():\n    pass\n")


CASES = {
    # --- outputs and stores that are not regular files: refused before any write ---
    "export --out a FIFO": (lambda t: ["export", "--store", filled_store(t), "--out", fifo(t)],
                            "pipe.jsonl", "FIFO"),
    "prompts --export a FIFO": (lambda t: ["prompts", "--export", fifo(t)], "pipe.jsonl",
                                "FIFO"),
    "import --store a FIFO": (lambda t: ["import", jsonl(t / "s.jsonl", GOOD), *DET, "--store",
                              fifo(t, "s.sqlite")], "s.sqlite", "FIFO"),
    "--config a FIFO (read forever)": (lambda t: ["generate", "--config", fifo(t, "c.toml")],
                                       "c.toml", "FIFO"),
    "--api-key-file a FIFO (read forever)": (lambda t: [*GEN, "--store", t / "s.sqlite",
                                                        "--api-key-file", fifo(t, "key")],
                                             "key", "FIFO"),
    # --- config values the option would refuse name the file and the key ---
    "config limit = -1": (lambda t: ["generate", "--config", config(t, "limit = -1")],
                          "c.toml: setting 'limit' = -1", "range"),
    "config temperature = nan": (lambda t: ["generate", "--config", config(t, "temperature = nan")],
                                 "c.toml: setting 'temperature'", "not a finite"),
    "config store = ''": (lambda t: ["generate", "--config", config(t, "store = ''")],
                          "c.toml: setting 'store'", "empty path"),
    "config mode = 'poem'": (lambda t: ["generate", "--config", config(t, "mode = 'poem'")],
                             "c.toml: setting 'mode' = 'poem'", "not one of"),
    "config model = []": (lambda t: ["generate", "--config", config(t, "model = []")],
                          "c.toml: setting 'model'", "empty list"),
    # --- option values ---
    "-n 10**9": (lambda t: [*GEN[:-4], "--prompts", "original", "-n", str(10**9)], "'-n'",
                 "range"),
    "--prompts ''": (lambda t: [*GEN[:-2], "--prompts", "", "--store", t / "s.sqlite"],
                     "--prompts ''", "names no prompt set"),
    "--stop ''": (lambda t: [*GEN, "--stop", "", "--store", t / "s.sqlite"], "--stop ''",
                  "empty stop"),
    "--signals ','": (lambda t: ["signals", "--store", filled_store(t), "--signals", ","],
                      "--signals ','", "names no signal"),
    "--base-url not a URL": (lambda t: ["generate", "--model", "openai:m", "--base-url",
                                        "localhost:8000", "--store", t / "s.sqlite"],
                             "'localhost:8000'", "not an http(s) URL"),
    "--base-url with no openai model": (lambda t: ["generate", "--model", "embedded",
                                                   "--base-url", CLOSED, "--store",
                                                   t / "s.sqlite"],
                                        "--base-url", "no --model is openai"),
    "--family twice for one model": (lambda t: ["report", "--store", filled_store(t), "--family",
                                                "m=a", "--family", "m=b"], "--family 'm=b'",
                                     "also named family 'a'"),
    "--model ''": (lambda t: ["generate", "--model", "", "--store", t / "s.sqlite"],
                   "--model ''", "not a model spec"),
    "--min-lines over --max-lines": (lambda t: ["report", "--store", filled_store(t),
                                                "--min-lines", "5", "--max-lines", "3"],
                                     "--min-lines 5 --max-lines 3", "no fragment size"),
    "--benchmark ''": (lambda t: [*GEN, "--benchmark", "", "--store", t / "s.sqlite"],
                       "--benchmark ''", "empty name"),
    "--benchmark a FIFO": (lambda t: [*GEN, "--benchmark", fifo(t), "--store", t / "s.sqlite"],
                           "pipe.jsonl", "FIFO"),
    "--benchmark test a number": (
        lambda t: [*GEN, "--store", t / "s.sqlite", "--benchmark",
                   jsonl(t / "b.jsonl", {"task_id": "B/0", "prompt": "def f(x):\n", "test": 5,
                                         "canonical_solution": "    return x\n",
                                         "entry_point": "f"})],
        "b.jsonl:1", "`test` must be a string"),
    # --- stores damaged by hand ---
    "schema_version -1": (lambda t: ["report", "--store", edited_store(
        t, "UPDATE meta SET value = '-1' WHERE key = 'schema_version'")], "s.sqlite",
                          "below 1"),
    "samples table dropped": (lambda t: ["report", "--store", edited_store(
        t, "DROP TABLE samples")], "s.sqlite", "lacks table samples"),
    "a column dropped": (lambda t: ["import", jsonl(t / "n.jsonl", GOOD), *DET, "--store",
                                    edited_store(t, "ALTER TABLE samples DROP COLUMN program")],
                         "s.sqlite", "lacks column(s) program"),
    # --- report filters that match nothing ---
    "report --model unknown": (lambda t: ["report", "--store", filled_store(t), "--model",
                                          "nosuch"], "--model nosuch", "it holds m"),
    "report --prompts unknown": (lambda t: ["report", "--store", filled_store(t), "--prompts",
                                            "nosuch"], "--prompts nosuch", "it holds original"),
    # --- sample files ---
    "a store given as a sample file": (lambda t: ["import", filled_store(t, "in.db"), *DET,
                                                  "--store", t / "s.sqlite"], "in.db",
                                       "a SQLite database"),
    "a Parquet file given as a sample file": (lambda t: ["import", parquet(t), *DET, "--store",
                                                         t / "o.sqlite"], "s.parquet",
                                              "a Parquet file"),
    "variant a number": (lambda t: ["import", jsonl(t / "v.jsonl", {**GOOD, "variant": 5}),
                                    *DET, "--store", t / "s.sqlite"], "v.jsonl:1",
                         "no variant '5'"),
    "result a number": (lambda t: ["import", jsonl(t / "r.jsonl", {**GOOD, "result": 5}), *DET,
                                   "--store", t / "s.sqlite"], "r.jsonl:1", "`result` is 5"),
    "--reference-solutions empty": (lambda t: ["report", "--store", filled_store(t),
                                               "--reference-solutions", write(t / "r.jsonl", "")],
                                    "r.jsonl", "empty"),
    "--reference-solutions binary": (lambda t: ["report", "--store", filled_store(t),
                                                "--reference-solutions",
                                                write(t / "r.jsonl", b"\x83\xff\x00")],
                                     "r.jsonl", "cannot read"),
    # --- prompt sets ---
    "prompts folder without prompt files": (lambda t: ["prompts", "--prompts",
                                                       str(prompt_folder(t, "x.py"))],
                                            "prompts", "no prompt files"),
    "prompts folder with 999.py": (lambda t: ["prompts", "--prompts",
                                              str(prompt_folder(t, "999.py"))], "999.py",
                                   "names no task"),
    "prompts JSONL prompt null": (lambda t: ["prompts", "--prompts", str(jsonl(
        t / "p.jsonl", {"task_id": "HumanEval/0", "prompt": None}))], "p.jsonl:1",
                                  "string fields"),
    "prompts --show ''": (lambda t: ["prompts", "--show", ""], "--show ''", "names no task"),
    "prompts --show and --diff": (lambda t: ["prompts", "--show", "1", "--diff", "2"],
                                  "--show and --diff", "only one"),
    # --- control: checked before any model is loaded ---
    "control --dose twice": (lambda t: ["control", "--dose", "a=1", "--dose", "a=2", "--output",
                                        t / "out"], "--dose 'a=2'", "given twice"),
    "control --dose 10**9 epochs": (lambda t: ["control", "--dose", f"a={10**9}", "--output",
                                               t / "out"], "--dose", "1 to 1000 epochs"),
    # --- scan ---
    "scan --output ''": (lambda t: ["scan", corpus(t), "--output", ""], "--output ''",
                         "empty path"),
    "scan --output a store": (lambda t: ["scan", corpus(t), "--output", filled_store(t)],
                              "s.sqlite", "is a file"),
    "scan --output inside the corpus": (lambda t: ["scan", corpus(t), "--output",
                                                   t / "corpus" / "out"], "corpus/out",
                                        "inside the corpus"),
    "scan --max-docs 0": (lambda t: ["scan", corpus(t), "--output", t / "o", "--max-docs", "0"],
                          "--max-docs 0", "at least 1"),
    "scan --max-docs -5": (lambda t: ["scan", corpus(t), "--output", t / "o", "--max-docs",
                                      "-5"], "--max-docs -5", "-1 for all"),
    "scan a FIFO": (lambda t: ["scan", fifo(t), "--output", t / "o"], "pipe.jsonl",
                    "FIFO, device or socket"),
    "scan a text field that is a number": (lambda t: ["scan", corpus(t, {"id": 1, "text": 5}),
                                                      "--output", t / "o"], "a.jsonl",
                                           "'text' field is int"),
    # --- clones ---
    "clones: a FIFO": (lambda t: ["clones", fifo(t, "a.py"), write(t / "b.py", "x = 1\n")],
                       "a.py", "is a FIFO"),
    "clones: a dangling symlink": (
        lambda t: ["clones", _dangling(t), write(t / "b.py", "x = 1\n")], "gone.py",
        "leads nowhere"),
}


def _dangling(tmp: Path) -> Path:
    link = tmp / "gone.py"
    link.symlink_to(tmp / "missing.py")
    return link


@pytest.mark.parametrize("name", list(CASES))
def test_a_held_out_bad_input_gets_one_error_line_naming_it(tmp_path, name):
    check_case(tmp_path, CASES[name])


@pytest.mark.parametrize("command", [
    lambda t, f: ["export", "--store", filled_store(t), "--out", f],
    lambda t, f: ["prompts", "--export", f],
    lambda t, f: ["import", jsonl(t / "s.jsonl", GOOD), *DET, "--store", f],
])  # fmt: skip
def test_a_fifo_named_as_an_output_is_left_a_fifo_and_nothing_is_written_beside_it(
    tmp_path, command
):
    target = fifo(tmp_path, "target")
    before = sorted(p.name for p in tmp_path.iterdir())
    one_error_line(run(*command(tmp_path, target)))
    assert stat.S_ISFIFO(target.stat().st_mode)  # not replaced by a file renamed over it
    after = sorted(p.name for p in tmp_path.iterdir())
    assert [n for n in after if n not in before and not n.startswith("s.")] == []


@pytest.mark.slow(reason="about 6 s: a generate against the test server")
def test_a_repeated_prompt_set_is_sampled_once(tmp_path):
    with OpenAITestServer() as server:
        result = run("generate", "--model", "openai:m", "--base-url", server.base_url,
                     "--limit", "1", "-n", "1", "--prompts", "original,original", "--store",
                     tmp_path / "s.sqlite")  # fmt: skip
        assert result.exit_code == 0, result.output
        assert len(server.requests) == 1


def test_a_function_nested_thousands_deep_is_left_out_not_an_internal_error(tmp_path):
    deep = write(tmp_path / "a.py", "def f(x):\n    return " + "(" * 20_000 + "x" + ")" * 20_000
                 + "\n")  # fmt: skip
    result = run("clones", deep, write(tmp_path / "b.py", "def g(x):\n    y = x\n    return y\n"))
    assert result.exit_code == 0, result.output
    assert "internal error" not in result.output
    assert "system A: 1 files, 0 fragments" in result.stdout


def test_config_values_checked_before_any_work(tmp_path):
    one_error_line(run(*GEN, "--store", tmp_path / "s.sqlite", "--config",
                       config(tmp_path, "top_p = inf")))  # fmt: skip
    assert not (tmp_path / "s.sqlite").exists()


@pytest.mark.slow(reason="about 30 s: SQLite's busy timeout runs out before the store is refused")
def test_a_store_locked_by_another_program_is_refused_not_read_as_immutable(tmp_path):
    store = filled_store(tmp_path)
    with closing(sqlite3.connect(store, isolation_level=None)) as db:
        db.execute("PRAGMA journal_mode=DELETE")
        db.execute("BEGIN EXCLUSIVE")
        line = one_error_line(run("report", "--store", store, "--json"))
    assert "s.sqlite" in line and "busy" in line


def _can_mount_read_only() -> bool:
    import shutil
    import subprocess

    if shutil.which("unshare") is None:
        return False
    return subprocess.run(["unshare", "-rm", "true"], capture_output=True).returncode == 0


@pytest.mark.slow(reason="about 7 s: the CLI in a subprocess inside a mount namespace")
@pytest.mark.skipif(not _can_mount_read_only(), reason="no user and mount namespaces here "
                    "(unshare -rm) to make a read-only folder that root cannot write")
def test_a_store_in_a_read_only_folder_is_named_as_read_only(tmp_path):
    import subprocess
    import sys

    folder = tmp_path / "ro"
    folder.mkdir()
    store = filled_store(folder)
    samples = jsonl(tmp_path / "new.jsonl", {**GOOD, "task_id": "HumanEval/1"})
    before = store.read_bytes()
    script = ('mount --bind "$1" "$1" && mount -o remount,bind,ro "$1" && shift && exec "$@"')
    result = subprocess.run(
        ["unshare", "-rm", "sh", "-c", script, "sh", str(folder), sys.executable, "-m",
         "cloneprobe", "import", str(samples), *DET, "--store", str(store)],
        capture_output=True, text=True, timeout=120,
        env={**os.environ, "PYTHONPATH": str(Path(__file__).parents[1]), "COLUMNS": "200"},
    )  # fmt: skip
    assert result.returncode == 2, result.stderr
    (line,) = [x for x in result.stderr.splitlines() if x.startswith("error:")]
    assert str(store) in line and "read-only" in line and "copy it somewhere writable" in line
    assert store.read_bytes() == before


def test_export_never_writes_over_the_file_the_store_was_imported_from(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # the import names its file as given, relative to here
    store = filled_store(Path("."), "s.sqlite")
    source = Path("s.sqlite.jsonl")
    before = source.read_bytes()
    line = one_error_line(run("export", "--store", store, "--out", source))
    assert "imported from" in line and "s.sqlite.jsonl" in line
    assert source.read_bytes() == before


@pytest.mark.parametrize("side", ["-wal", "-shm", "-journal"])
def test_export_never_writes_over_a_side_file_of_a_store(tmp_path, side):
    store = filled_store(tmp_path)
    target = write(tmp_path / f"s.sqlite{side}", b"")
    line = one_error_line(run("export", "--store", store, "--out", target))
    assert f"{side[1:]} file of the store" in line
    assert target.read_bytes() == b""


@pytest.mark.parametrize("option", [["--limit", "1"], ["--tasks", "2"], ["-n", "2"]])
def test_audit_of_a_sample_file_refuses_options_that_choose_what_to_generate(tmp_path, option):
    """They were accepted and ignored: every sample of the file was audited anyway."""
    samples = jsonl(tmp_path / "s.jsonl", GOOD, {**GOOD, "task_id": "HumanEval/2"})
    line = one_error_line(run("audit", samples, "--model", "m", "--temperature", "0.2",
                              "--store", tmp_path / "s.sqlite", *option))  # fmt: skip
    assert option[0] in line and "every sample in them is audited" in line
    assert not (tmp_path / "s.sqlite").exists()
