"""More bad inputs, through the CLI: each ends with a non-zero exit and one error line that
names the input, says what is wrong and what to do; none loses data, hangs or is silently
wrong. (The first 87 are in test_bad_inputs.py.)"""

from __future__ import annotations

import gzip
import json
import os
import sqlite3
from contextlib import closing
from pathlib import Path

import pytest
from click.testing import CliRunner
from openai_test_server import OpenAITestServer
from test_bad_inputs import ENV, GOOD, WHAT_TO_DO, jsonl, run, store_with, write

from cloneprobe.cli import main
from cloneprobe.generation import SampleStore


def one_error_line(result) -> str:
    """The single `error:` line of a failed command (asserting there is exactly one)."""
    assert result.exit_code not in (0, None), result.output
    assert isinstance(result.exception, SystemExit), repr(result.exception)
    assert "Traceback" not in result.output
    errors = [line for line in result.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1, result.stderr
    assert WHAT_TO_DO.search(errors[0].split(":", 1)[1]), errors[0]
    return errors[0]


def filled_store(tmp: Path, name: str = "s.sqlite", completion: str = "    return True\n"):
    path = tmp / name
    result = run("import", jsonl(tmp / f"{name}.jsonl", {**GOOD, "completion": completion}),
                 "--model", "m", "--temperature", "0.2", "--store", path)  # fmt: skip
    assert result.exit_code == 0, result.output
    return path


def bench(tmp: Path) -> Path:
    return jsonl(tmp / "bench.jsonl", {"task_id": "B/0", "prompt": "def f(x):\n",
                                       "canonical_solution": "    return x\n", "entry_point": "f"})


def config(tmp: Path, *lines: str) -> Path:
    return write(tmp / "c.toml", "\n".join(["[generate]", *lines]) + "\n")


def fifo(tmp: Path) -> Path:
    path = tmp / "pipe.jsonl"
    os.mkfifo(path)
    return path


def folder(tmp: Path) -> Path:
    (tmp / "samples").mkdir()
    return tmp / "samples"


def symlink_loop(tmp: Path) -> Path:
    path = tmp / "loop.sqlite"
    path.symlink_to(path)
    return path


def deep_line(tmp: Path) -> Path:
    return write(tmp / "deep.jsonl", '{"task_id": ' + "[" * 100_000 + "]" * 100_000 + "}\n")


def deep_bigcode(tmp: Path) -> Path:
    return write(tmp / "deep.json", "[" * 100_000 + "]" * 100_000)


def damaged_version(tmp: Path) -> Path:
    path = store_with(tmp)
    with closing(sqlite3.connect(path)) as db:
        db.execute("UPDATE meta SET value = 'abc' WHERE key = 'schema_version'")
        db.commit()
    return path


GEN = ["generate", "--limit", "1", "-n", "1"]
DETECT = ["--model", "m", "--temperature", "0.2"]

CASES = {
    # --- outputs never destroy a store or an input ---
    "export over its own store": (lambda t: ["export", "--store", filled_store(t), "--out",
                                  t / "s.sqlite"], "--out", "also this command's input"),
    "export over another store": (lambda t: ["export", "--store", filled_store(t), "--out",
                                  filled_store(t, "other.db")], "other.db", "is a sample store"),
    "prompts export over a store": (lambda t: ["prompts", "--prompts", "fixed", "--export",
                                    filled_store(t, "s.db")], "s.db", "is a sample store"),
    "prompts export (old --set) over a store": (
        lambda t: ["prompts", "--set", "fixed", "--export", store_with(t)], "store.sqlite",
        "is a sample store"),
    "prompts export over its benchmark": (
        lambda t: ["prompts", "--benchmark", bench(t), "--export", t / "bench.jsonl"],
        "bench.jsonl", "also this command's input"),
    "--report ''": (lambda t: ["report", "--store", store_with(t), "--report", ""], "--report",
                    "empty path"),
    "--out ''": (lambda t: ["export", "--store", store_with(t), "--out", ""], "--out",
                 "empty path"),
    "--store newdir/": (lambda t: [*GEN, "--store", f"{t}/newdir/"], "newdir/", "names a folder"),
    "--out newdir/": (lambda t: ["export", "--store", filled_store(t), "--out", f"{t}/newdir/"],
                      "newdir/", "names a folder"),
    "prompts --export newdir/": (lambda t: ["prompts", "--export", f"{t}/newdir/"], "newdir/",
                                 "names a folder"),
    # --- config values of the wrong type ---
    "config store = 5": (lambda t: [*GEN, "--config", config(t, "store = 5")], "'store' is 5",
                         "a string"),
    "config limit = true": (lambda t: ["generate", "--config", config(t, "limit = true")],
                            "'limit' is True", "a whole number"),
    "config n = 2.5": (lambda t: ["generate", "--config", config(t, "n = 2.5")], "'n' is 2.5",
                       "a whole number"),
    "config temperature = 'hot'": (lambda t: ["generate", "--config",
                                   config(t, 'temperature = "hot"')], "'temperature'",
                                   "a number"),
    "config a table": (lambda t: ["generate", "--config", config(t, "[generate.store]", "x = 1")],
                       "'store' is a table", "give a value"),
    # --- sample files that are not files, or not plain JSON ---
    "a folder as sample file": (lambda t: ["detect", folder(t), *DETECT, "--store",
                                t / "s.sqlite"], "samples", "is a folder, not a sample file"),
    "a FIFO as sample file": (lambda t: ["import", fifo(t), *DETECT, "--store", t / "s.sqlite"],
                              "pipe.jsonl", "FIFO"),
    "/dev/zero as sample file": (lambda t: ["detect", "/dev/zero", *DETECT, "--store",
                                 t / "s.sqlite"], "/dev/zero", "a device"),
    "a zstd file": (lambda t: ["detect", write(t / "s.jsonl.zst", b"\x28\xb5\x2f\xfd" + b"0" * 20),
                    *DETECT, "--store", t / "s.sqlite"], "s.jsonl.zst", "zstd archive"),
    "a broken gzip file": (lambda t: ["detect", write(t / "s.jsonl.gz", b"\x1f\x8b\x08" + b"0" * 9),
                           *DETECT, "--store", t / "s.sqlite"], "s.jsonl.gz", "gzip"),
    "JSON nested 100,000 deep (JSONL)": (lambda t: ["detect", deep_line(t), *DETECT, "--store",
                                         t / "s.sqlite"], "deep.jsonl:1", "nested too deep"),
    "JSON nested 100,000 deep (bigcode)": (lambda t: ["detect", deep_bigcode(t), *DETECT,
                                           "--store", t / "s.sqlite"], "deep.json",
                                           "nested too deep"),
    "task id HumanEval/0x": (lambda t: ["detect", jsonl(t / "x.jsonl", {**GOOD,
                             "task_id": "HumanEval/0x"}), *DETECT, "--store", t / "s.sqlite"],
                             "HumanEval/0x", "ids run HumanEval/0 .. HumanEval/163"),
    # --- stores ---
    "schema_version 'abc'": (lambda t: ["report", "--store", damaged_version(t)], "store.sqlite",
                             "schema_version 'abc'"),
    "schema_version 'abc', writing": (lambda t: [*GEN, "--store", damaged_version(t)],
                                      "store.sqlite", "not a number"),
    "a symlink loop as store (report)": (lambda t: ["report", "--store", symlink_loop(t)],
                                         "loop.sqlite", "leads nowhere"),
    "a symlink loop as store (generate)": (lambda t: [*GEN, "--store", symlink_loop(t)],
                                           "loop.sqlite", "leads nowhere"),
    # --- numbers and settings ---
    "--exec-timeout 1e308": (lambda t: ["execute", "--exec-timeout", "1e308"], "--exec-timeout",
                             "outside"),
    "--timeout 1e308": (lambda t: [*GEN, "--timeout", "1e308"], "--timeout", "outside"),
    "--type 1 --threshold 0.3": (lambda t: ["report", "--store", filled_store(t), "--type", "1",
                                 "--threshold", "0.3"], "--type 1", "--threshold 0.3 says"),
    "--type 2 --rename none": (lambda t: ["report", "--store", filled_store(t), "--type", "2",
                               "--rename", "none"], "--type 2", "--rename none says"),
    "an API key holding a newline": (
        lambda t: [*GEN, "--model", "openai:m", "--base-url", "http://127.0.0.1:9/v1",
                   "--store", t / "s.sqlite", "--api-key-file", write(t / "k", "\n")],
        "k", "empty"),
    "an API key file of two lines": (
        lambda t: [*GEN, "--model", "openai:m", "--base-url", "http://127.0.0.1:9/v1",
                   "--store", t / "s.sqlite", "--api-key-file", write(t / "k", "sk-a\nsk-b\n")],
        "--api-key-file", "2 lines"),
}


def check_case(tmp_path: Path, case: tuple) -> None:
    """A case (build the arguments, what the line must name, what it must call wrong) run
    through the CLI: one error line that names the input and says what is wrong."""
    build, names, wrong = case
    line = one_error_line(run(*build(tmp_path)))
    assert names in line, line
    assert wrong.lower() in line.lower(), line


@pytest.mark.parametrize("name", list(CASES))
def test_a_bad_input_gets_one_error_line_naming_it(tmp_path, name):
    check_case(tmp_path, CASES[name])


def test_export_onto_its_store_leaves_the_store_whole(tmp_path):
    store = filled_store(tmp_path, "cloneprobe.sqlite")
    before = store.read_bytes()
    one_error_line(run("export", "--store", store, "--out", store))
    assert store.read_bytes() == before
    with SampleStore(store, read_only=True) as opened:
        assert len(list(opened.samples())) == 1


def test_prompt_export_onto_a_store_leaves_it_whole(tmp_path):
    store = filled_store(tmp_path, "s.db")
    before = store.read_bytes()
    one_error_line(run("prompts", "--prompts", "fixed", "--export", store))
    assert store.read_bytes() == before


def test_an_interrupted_export_leaves_no_partial_file_and_the_old_one_whole(tmp_path):
    from cloneprobe.generation import write_humaneval_jsonl

    store = filled_store(tmp_path)
    out = tmp_path / "o.jsonl"
    assert run("export", "--store", store, "--out", out).exit_code == 0
    before = out.read_bytes()

    def interrupted(samples):
        yield from samples
        raise KeyboardInterrupt  # Ctrl-C after the last sample, before the file is complete

    with SampleStore(store, read_only=True) as opened, pytest.raises(KeyboardInterrupt):
        write_humaneval_jsonl(interrupted(list(opened.samples()) * 50), out)
    assert out.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir() if "o.jsonl" in p.name) == ["o.jsonl"]


def test_a_store_path_with_a_trailing_slash_makes_no_file(tmp_path):
    one_error_line(run(*GEN, "--store", f"{tmp_path}/newdir/"))
    assert not (tmp_path / "newdir").exists()


def test_a_gzip_sample_file_is_read(tmp_path):
    path = tmp_path / "samples.jsonl.gz"
    path.write_bytes(gzip.compress((json.dumps(GOOD) + "\n").encode()))
    result = run("import", path, *DETECT, "--store", tmp_path / "s.sqlite")
    assert result.exit_code == 0, result.output
    with SampleStore(tmp_path / "s.sqlite", read_only=True) as store:
        assert [s.raw for s in store.samples()] == [GOOD["completion"]]


@pytest.mark.parametrize("task_id", ["HumanEval/0 ", "humaneval/0", "0", 0, "HumanEval/000",
                                     " HumanEval/0"])  # fmt: skip
def test_task_ids_written_loosely_name_the_task(tmp_path, task_id):
    path = jsonl(tmp_path / "s.jsonl", {**GOOD, "task_id": task_id})
    result = run("import", path, *DETECT, "--store", tmp_path / "s.sqlite")
    assert result.exit_code == 0, result.output
    with SampleStore(tmp_path / "s.sqlite", read_only=True) as store:
        assert [s.task_id for s in store.samples()] == ["HumanEval/0"]


def test_task_ids_on_the_command_line_are_read_the_same_way():
    result = run("prompts", "--show", "humaneval/007")
    assert result.exit_code == 0, result.output
    assert "HumanEval/7 original" in result.stdout


def test_reimporting_a_corrected_completion_is_refused_not_ignored(tmp_path):
    store = filled_store(tmp_path)
    corrected = jsonl(tmp_path / "fixed.jsonl", {**GOOD, "completion": "    return False\n"})
    line = one_error_line(run("import", corrected, *DETECT, "--store", store))
    assert "fixed.jsonl" in line and "different code" in line and "new --store" in line
    with SampleStore(store, read_only=True) as opened:  # nothing half-changed
        assert [s.raw for s in opened.samples()] == [GOOD["completion"]]
    same = run("import", jsonl(tmp_path / "same.jsonl", GOOD), *DETECT, "--store", store)
    assert same.exit_code == 0, same.output  # the same text again is fine


def test_two_files_with_one_sample_key_and_different_code_are_refused(tmp_path):
    first = jsonl(tmp_path / "a.jsonl", GOOD)
    second = jsonl(tmp_path / "b.jsonl", {**GOOD, "completion": "    return 1\n"})
    line = one_error_line(run("detect", first, second, *DETECT, "--store", tmp_path / "s.sqlite"))
    assert "b.jsonl" in line and "a.jsonl" in line and "sample 0 of HumanEval/0" in line


def test_report_while_a_run_is_writing_the_store_is_refused(tmp_path):
    store = filled_store(tmp_path)
    with SampleStore(store) as writing:
        run_id = writing.start_run("m", {}, {})  # this process: alive, still writing
        line = one_error_line(run("report", "--store", store, "--json"))
        assert f"run {run_id} (m, process {os.getpid()})" in line and "still writing" in line
        writing.end_run(run_id)
    assert run("report", "--store", store, "--json").exit_code == 0


# --- servers that misbehave: the real test server, the real openai backend -----------------

NULL_TEXT = json.dumps({"id": "x", "object": "text_completion", "created": 1, "model": "m",
                        "choices": [{"index": 0, "text": None, "finish_reason": "stop",
                                     "logprobs": None}],
                        "usage": {"prompt_tokens": 1, "completion_tokens": 1,
                                  "total_tokens": 2}}).encode()  # fmt: skip
SERVER_CASES = {
    "an HTML page": (lambda s: s.answer_next(200, b"<html><body>Sign in</body></html>",
                                             "text/html"), "no completion"),
    "null": (lambda s: s.answer_next(200, b"null"), "no completion"),
    "text: null": (lambda s: s.answer_next(200, NULL_TEXT), "text is null"),
    "429 with Retry-After: 100000": (lambda s: s.fail_next(429, retry_after=100000),
                                     "retry in 100000 s"),
    "a 5xx it is no use retrying": (lambda s: s.fail_next(501), "answered HTTP 501"),
    "a 404 (a wrong path)": (lambda s: s.fail_next(404), "answered HTTP 404"),
    "a 400 (bad request)": (lambda s: s.fail_next(400), "answered HTTP 400"),
    "a redirect to a closed port": (lambda s: s.answer_next(
        307, b"", headers={"Location": "http://127.0.0.1:9/v1/completions"}),
        "redirected to http://127.0.0.1:9/v1/completions"),
}


def generate_against(url: str, tmp: Path, *extra: str):
    return CliRunner().invoke(main, ["generate", "--model", "openai:m", "--base-url", url,
                                     "--limit", "1", "-n", "1", "--prompts", "original",
                                     "--store", str(tmp / "s.sqlite"), *extra],
                              env=ENV)  # fmt: skip


@pytest.mark.parametrize("name", list(SERVER_CASES))
def test_a_server_answering_badly_gets_one_line_naming_it(tmp_path, name):
    setup, wrong = SERVER_CASES[name]
    with OpenAITestServer() as server:
        setup(server)
        url = server.base_url
        line = one_error_line(generate_against(url, tmp_path))
        assert len(server.requests) == 1  # refused at once, not retried for minutes
    assert url in line, line  # the server by its address, not only the model's name
    assert wrong in line, line


def test_a_closed_port_is_named_at_once(tmp_path):
    line = one_error_line(generate_against("http://127.0.0.1:9/v1", tmp_path))
    assert "Connection to the server http://127.0.0.1:9/v1 failed" in line
    assert "check that the server runs there" in line


def test_a_server_that_streams_forever_is_cut_off_and_retried(tmp_path):
    with OpenAITestServer() as server:
        server.trickle_next(interval=0.02)
        result = generate_against(server.base_url, tmp_path, "--timeout", "1")
        assert result.exit_code == 0, result.output
        assert len(server.requests) == 2  # the endless answer, then a retry that completed
    with SampleStore(tmp_path / "s.sqlite", read_only=True) as store:
        assert len(list(store.samples())) == 1


def test_a_server_that_streams_forever_ends_with_a_line_naming_it():
    from cloneprobe.generation.backends.base import GenerationRequest
    from cloneprobe.generation.backends.openai_backend import OpenAIBackend

    with OpenAITestServer() as server:
        server.trickle_next(interval=0.02)
        url = server.base_url
        backend = OpenAIBackend("m", url, "k", timeout=0.5, max_retries=0)
        results = []
        request = GenerationRequest("key", "def f():\n", 1, 0.2, 0.95, 16, (), "completion")
        backend.generate([request], results.append)
    assert results[0].error.startswith(f"the server {url} sent no complete answer "
                                       "within --timeout 0.5 s")  # fmt: skip


def test_an_api_key_with_a_line_break_is_refused_before_any_request(tmp_path):
    with OpenAITestServer() as server:
        result = CliRunner().invoke(main, ["generate", "--model", "openai:m", "--base-url",
                                           server.base_url, "--limit", "1", "-n", "1",
                                           "--store", str(tmp_path / "s.sqlite")],
                                    env={**ENV, "OPENAI_API_KEY": "sk-abc\nsk-def"})  # fmt: skip
        line = one_error_line(result)
        assert server.requests == []
    assert "API key" in line and "line break" in line


@pytest.mark.slow(reason="about a minute on a busy machine: two audits in subprocesses")
def test_two_audits_on_one_store_at_once_both_work_and_say_so(tmp_path):
    import subprocess
    import sys
    import threading

    from test_runs_and_claims import env, held_after_the_first_request, wait_for_a_sample

    store = tmp_path / "s.sqlite"
    release = threading.Event()
    with OpenAITestServer(held_after_the_first_request(release)) as server:
        audit = [sys.executable, "-m", "cloneprobe", "audit", "--model", "openai:m",
                 "--base-url", server.base_url, "--store", str(store), "--prompts", "original",
                 "--limit", "3", "-n", "1", "--concurrency", "1", "--json"]  # fmt: skip
        first = subprocess.Popen(audit, env=env(), stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, text=True)  # fmt: skip
        try:
            wait_for_a_sample(store, first)
            second = subprocess.run(audit, env=env(), capture_output=True, text=True,
                                    timeout=300)  # fmt: skip
        finally:
            release.set()
        out, err = first.communicate(timeout=300)
        asked = sum(r["json"]["n"] for r in server.requests if r["json"])
    assert (first.returncode, second.returncode) == (0, 0), (err, second.stderr)
    assert "samples were being generated by another run" in second.stderr
    assert json.loads(out)["samples"] and json.loads(second.stdout)["samples"]
    assert asked == 3  # no sample asked for twice


def test_a_server_that_never_answers_fails_the_rest_at_once():
    from cloneprobe.generation.backends.base import GenerationRequest
    from cloneprobe.generation.backends.openai_backend import OpenAIBackend

    with OpenAITestServer() as server:
        server.slow_next(5.0, times=50)
        url = server.base_url
        backend = OpenAIBackend("m", url, "k", timeout=0.3, max_retries=1, concurrency=1)
        requests = [GenerationRequest(f"r{i}", "def f():\n", 1, 0.2, 0.95, 16, (), "completion")
                    for i in range(10)]  # fmt: skip
        results = []
        backend.generate(requests, results.append)
        asked = len(server.requests)
    assert asked == 2  # one request and its retry; the other nine were not sent
    assert len(results) == 10
    assert {r.error for r in results} == {f"the server {url} sent no complete answer within "
                                          "--timeout 0.3 s (it may stream forever); check the "
                                          "server, or raise --timeout"}  # fmt: skip
