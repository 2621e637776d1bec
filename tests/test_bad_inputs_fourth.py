"""Bad inputs a fourth held-out probe found (docs/development.md lists them with what each did
before): through the CLI, each ends with a non-zero exit and one error line that names the
input, says what is wrong and what to do; none writes over an input, a store or a config.
(The earlier ones are in test_bad_inputs.py, test_bad_inputs_more.py and
test_bad_inputs_heldout.py.)"""

from __future__ import annotations

import sqlite3
from contextlib import closing
from pathlib import Path

import pytest
from test_bad_inputs import GOOD, jsonl, run, write
from test_bad_inputs_more import check_case, filled_store, one_error_line

DET = ["--model", "m", "--temperature", "0.2"]


def config(tmp: Path, text: str) -> Path:
    return write(tmp / "c.toml", text)


def corpus(tmp: Path) -> Path:
    folder = tmp / "corpus"
    folder.mkdir()
    jsonl(folder / "a.jsonl", {"id": 1, "text": "x = 1"})
    return folder


def folder_holding_folder(tmp: Path, name: str) -> Path:
    (tmp / "r" / name).mkdir(parents=True)
    return tmp / "r"


def write_py(tmp: Path) -> Path:
    folder = tmp / "sources"
    folder.mkdir()
    write(folder / "a.py", "def f():\n    return 1\n")
    return folder


def blob_in_program(tmp: Path) -> Path:
    store = filled_store(tmp)
    with closing(sqlite3.connect(store)) as db:
        db.execute("UPDATE samples SET program = x'00ff'")
        db.commit()
    return store


DEEP = '{"a": ' + "[" * 100_000 + "]" * 100_000 + "}"


def folder_holding(tmp: Path, name: str, text: str) -> Path:
    folder = tmp / "out"
    folder.mkdir()
    write(folder / name, text)
    return folder


def dangling(tmp: Path, name: str) -> Path:
    link = tmp / name
    link.symlink_to(tmp / "gone")
    return link


CASES = {
    # --- outputs that would write over an input or the store ---
    "export --out the --config file": (
        lambda t: ["export", "--store", filled_store(t), "--config", config(t, "[export]\n"),
                   "--out", t / "c.toml"], "--out", "also this command's input"),
    "detect a file named report.json --report its folder": (
        lambda t: ["detect", jsonl(t / "report.json", GOOD), *DET, "--store", t / "s.sqlite",
                   "--report", t], "writing report.json there would write over", "report.json"),
    "detect a file named evidence.jsonl --report its folder": (
        lambda t: ["detect", jsonl(t / "evidence.jsonl", GOOD), *DET, "--store",
                   t / "s.sqlite", "--report", t], "writing evidence.jsonl there", "write over"),
    "report of a store named report.json into its folder": (
        lambda t: ["report", "--store", filled_store(t, "report.json"), "--report", t],
        "writing report.json there would write over", "reads or writes"),
    "audit --report the --store path": (
        lambda t: ["audit", "--model", "openai:m", "--base-url", "http://127.0.0.1:9/v1",
                   "--limit", "1", "-n", "1", "--store", t / "out", "--report", t / "out"],
        "--report", "is also the --store"),
    "--report a dangling symlink": (
        lambda t: ["report", "--store", filled_store(t), "--report", dangling(t, "r")], "r:",
        "leads nowhere"),
    # --- config files ---
    "config top-level key beside the command's table": (
        lambda t: ["report", "--store", filled_store(t), "--config",
                   config(t, "min_lines = 3\n[report]\nmin_lines = 4\n")],
        "c.toml: setting 'min_lines' is at the top", "move it into [report]"),
    "config family without '='": (
        lambda t: ["report", "--store", filled_store(t), "--config",
                   config(t, "[report]\nfamily = 'm'\n")],
        "c.toml: setting 'family' = 'm'", "MODEL=FAMILY"),
    "config dose without '='": (
        lambda t: ["control", "--output", t / "o", "--config",
                   config(t, "[control]\ndose = 'x'\n")],
        "c.toml: setting 'dose' = 'x'", "NAME=EPOCHS"),
    # --- numbers the option took in silence ---
    "control --learning-rate inf": (lambda t: ["control", "--learning-rate", "inf", "--output",
                                               t / "o"], "--learning-rate", "not a finite"),
    "control --seed -1": (lambda t: ["control", "--seed", "-1", "--output", t / "o"], "--seed",
                          "not in the range"),
    "scan --mem-per-cpu-gb nan": (lambda t: ["scan", corpus(t), "--output", t / "o",
                                             "--mem-per-cpu-gb", "nan"], "--mem-per-cpu-gb",
                                  "not a finite"),
    "scan --glob ''": (lambda t: ["scan", corpus(t), "--output", t / "o", "--glob", ""],
                       "--glob ''", "matches no file"),
    "a report folder holding a folder named as a report file": (
        lambda t: ["report", "--store", filled_store(t), "--report",
                   folder_holding_folder(t, "evidence.jsonl")],
        "holds a folder named evidence.jsonl", "move that folder"),
    "scan --text-field with --format files": (
        lambda t: ["scan", corpus(t), "--output", t / "o", "--format", "files", "--text-field",
                   "content"], "--text-field 'content' with a folder of source files",
        "leave them out"),
    "scan --text-field on a folder of source files (format auto)": (
        lambda t: ["scan", write_py(t), "--output", t / "o", "--id-field", "path"],
        "--id-field 'path' with a folder of source files", "leave them out"),
    "scan --executor slurm without --partition": (
        lambda t: ["scan", corpus(t), "--output", t / "o", "--executor", "slurm"],
        "--executor slurm", "--partition NAME"),
    # --- sample files ---
    "a key twice in one sample object": (
        lambda t: ["import", jsonl(t / "d.jsonl", '{"task_id": "HumanEval/0", "completion": '
                                   '"    return 1\\n", "completion": "    return 2\\n"}'),
                   *DET, "--store", t / "s.sqlite"], "d.jsonl:1: key 'completion'",
        "appears twice"),
    "a sample without task_id": (
        lambda t: ["import", jsonl(t / "m.jsonl", {"completion": "x"}), *DET, "--store",
                   t / "s.sqlite"], "m.jsonl:1: no task_id", "give each sample its task_id"),
    "a sample whose task_id is null": (
        lambda t: ["import", jsonl(t / "m.jsonl", {"task_id": None, "completion": "x"}), *DET,
                   "--store", t / "s.sqlite"], "m.jsonl:1: its task_id is null", "task_id"),
    "a bigcode file of 165 task lists": (
        lambda t: ["import", write(t / "b.json", "[" + ",".join(['["x"]'] * 165) + "]"), *DET,
                   "--store", t / "s.sqlite"], "b.json: 165 task lists", "give the --benchmark"),
    # --- names that matched nothing, or the wrong kind of thing ---
    "report --family for a model the store lacks": (
        lambda t: ["report", "--store", filled_store(t), "--family", "zz=x"], "--family zz=x",
        "models there: m"),
    "control --model of a served model": (
        lambda t: ["control", "--model", "openai:m", "--output", t / "o"], "--model 'openai:m'",
        "needs a local model"),
    "prompts --prompts one Python file": (
        lambda t: ["prompts", "--prompts", write(t / "0.py", "def f():\n    pass\n")],
        "0.py", "one Python file, not a set"),
    "--reference-solutions nested 100,000 deep": (
        lambda t: ["report", "--store", filled_store(t), "--reference-solutions",
                   write(t / "r.jsonl", '{"task_id": ' + "[" * 100_000 + "]" * 100_000 + "}\n")],
        "--reference-solutions", "nested too deep"),
    "--reference-solutions with a key twice": (
        lambda t: ["report", "--store", filled_store(t), "--reference-solutions",
                   jsonl(t / "r.jsonl", '{"task_id": "HumanEval/0", "completion": "x", '
                         '"completion": "y"}')], "r.jsonl:1: key 'completion'", "appears twice"),
    "--control whose control.json is nested 100,000 deep": (
        lambda t: ["report", "--store", filled_store(t), "--control",
                   folder_holding(t, "control.json", DEEP)], "--control", "control.json"),
    "--contamination whose summary.json is nested 100,000 deep": (
        lambda t: ["report", "--store", filled_store(t), "--contamination",
                   folder_holding(t, "summary.json", DEEP)], "summary.json",
        "cannot read the scan summary"),
    "--contamination whose summary.json is a list": (
        lambda t: ["report", "--store", filled_store(t), "--contamination",
                   folder_holding(t, "summary.json", "[]")], "summary.json",
        "not a scan summary"),
    "--contamination whose summary.json has no tasks found": (
        lambda t: ["report", "--store", filled_store(t), "--contamination",
                   folder_holding(t, "summary.json", '{"x": 1}')], "summary.json",
        "not a scan summary"),
    "--benchmark a store": (lambda t: ["prompts", "--benchmark", filled_store(t)], "s.sqlite",
                            "a SQLite database (a sample store?), not a benchmark"),
    "--panel the sample file the command reads (detect)": (
        lambda t: ["detect", jsonl(t / "g.jsonl", GOOD), *DET, "--store", t / "s.sqlite",
                   "--panel", t / "g.jsonl"], "--panel", "vouch for themselves"),
    "--panel the sample file the command reads (audit)": (
        lambda t: ["audit", jsonl(t / "g.jsonl", GOOD), *DET, "--store", t / "s.sqlite",
                   "--panel", t / "g.jsonl"], "--panel", "vouch for themselves"),
    "clones of one folder against itself": (
        lambda t: ["clones", t, t], "is both SYSTEM_A and SYSTEM_B", "two different"),
    # --- stores ---
    "a store holding a blob where code belongs": (
        lambda t: ["report", "--store", blob_in_program(t)], "s.sqlite: sample 1 has a bytes",
        "column program"),
}


@pytest.mark.parametrize("name", list(CASES))
def test_a_fourth_held_out_bad_input_gets_one_error_line_naming_it(tmp_path, name):
    check_case(tmp_path, CASES[name])


def test_export_onto_its_config_file_leaves_the_config_whole(tmp_path):
    cfg = config(tmp_path, "[export]\n")
    one_error_line(run("export", "--store", filled_store(tmp_path), "--config", cfg, "--out",
                       cfg))  # fmt: skip
    assert cfg.read_text() == "[export]\n"


@pytest.mark.parametrize("name", ["report.json", "evidence.jsonl"])
def test_a_report_folder_never_writes_over_a_sample_file_it_reads(tmp_path, name):
    samples = jsonl(tmp_path / name, GOOD)
    before = samples.read_bytes()
    one_error_line(run("detect", samples, *DET, "--store", tmp_path / "s.sqlite", "--report",
                       tmp_path))  # fmt: skip
    assert samples.read_bytes() == before
    assert not (tmp_path / "report.html").exists()  # refused before any report was written


def test_a_report_folder_never_writes_over_the_store(tmp_path):
    store = filled_store(tmp_path, "report.json")
    before = store.read_bytes()
    one_error_line(run("report", "--store", store, "--report", tmp_path))
    assert store.read_bytes() == before


def test_a_config_file_with_a_byte_order_mark_is_read(tmp_path):
    cfg = write(tmp_path / "c.toml", "\ufeff[report]\nmin_lines = 4\n".encode())
    result = run("report", "--store", filled_store(tmp_path), "--json", "--config", cfg)
    assert result.exit_code == 0, result.output
    assert '"min_lines": 4' in result.stdout


def test_a_scan_refused_for_its_executor_leaves_no_output_folder(tmp_path):
    one_error_line(run("scan", corpus(tmp_path), "--output", tmp_path / "o", "--executor",
                       "slurm"))  # fmt: skip
    assert not (tmp_path / "o").exists()


# --- a server that cannot be reached leaves no store made only of its failures -----------------

CLOSED = "http://127.0.0.1:9/v1"


def leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.startswith("s.sqlite"))


@pytest.mark.parametrize("command", ["generate", "audit"])
def test_a_closed_port_leaves_no_new_store_of_failed_samples(tmp_path, command):
    line = one_error_line(run(command, "--model", "openai:m", "--base-url", CLOSED, "--limit",
                              "1", "-n", "1", "--prompts", "original", "--store",
                              tmp_path / "s.sqlite"))  # fmt: skip
    assert "failed" in line and CLOSED in line, line
    assert "which this command made, held nothing else and is removed" in line, line
    assert leftovers(tmp_path) == []


def test_a_closed_port_keeps_a_store_that_existed_with_its_samples(tmp_path):
    store = filled_store(tmp_path)
    line = one_error_line(run("generate", "--model", "openai:m", "--base-url", CLOSED,
                              "--limit", "1", "-n", "1", "--prompts", "original", "--store",
                              store))  # fmt: skip
    assert f"the failures are stored in {store} and retried" in line, line
    with closing(sqlite3.connect(store)) as db:
        assert db.execute("SELECT count(*) FROM samples WHERE error IS NULL").fetchone() == (1,)


def test_a_server_answering_no_choices_is_named_by_its_address(tmp_path):
    import json

    from openai_test_server import OpenAITestServer

    empty = json.dumps({"id": "x", "object": "text_completion", "created": 1, "model": "m",
                        "choices": []}).encode()  # fmt: skip
    with OpenAITestServer() as server:
        server.answer_next(200, empty)
        url = server.base_url
        line = one_error_line(run("generate", "--model", "openai:m", "--base-url", url,
                                  "--limit", "1", "-n", "1", "--prompts", "original", "--store",
                                  tmp_path / "s.sqlite"))  # fmt: skip
    assert f"the server {url} answered with no choices" in line, line


def test_a_server_answering_an_error_with_status_200_is_quoted(tmp_path):
    import json

    from openai_test_server import OpenAITestServer

    said = json.dumps({"error": {"message": "model m is not loaded", "type": "x"}}).encode()
    with OpenAITestServer() as server:
        server.answer_next(200, said)
        line = one_error_line(run("generate", "--model", "openai:m", "--base-url",
                                  server.base_url, "--limit", "1", "-n", "1", "--prompts",
                                  "original", "--store", tmp_path / "s.sqlite"))  # fmt: skip
        assert len(server.requests) == 1  # not retried: the server said what is wrong
    assert "an error, not a completion: 'model m is not loaded'" in line, line


def test_samples_a_server_withheld_are_counted_and_said(tmp_path):
    import json

    from openai_test_server import OpenAITestServer

    withheld = json.dumps({"id": "x", "object": "text_completion", "created": 1, "model": "m",
                           "choices": [{"index": 0, "text": "", "finish_reason":
                                        "content_filter"}]}).encode()  # fmt: skip
    store = tmp_path / "s.sqlite"
    with OpenAITestServer() as server:
        server.answer_next(200, withheld)
        result = run("generate", "--model", "openai:m", "--base-url", server.base_url,
                     "--limit", "2", "-n", "1", "--prompts", "original", "--store", store,
                     "--mode", "completion")  # fmt: skip
    assert result.exit_code == 0, result.output
    said = " ".join(result.output.split())
    assert "the server withheld 1 samples (finish reason content_filter)" in said, said
    with closing(sqlite3.connect(store)) as db:
        reasons = sorted(r for (r,) in db.execute("SELECT finish_reason FROM samples"))
    assert reasons == ["content_filter", "stop"]


# --- Ctrl-C while the commands load ------------------------------------------------------------

INTERRUPTED_IMPORT = """
import sys

class Interrupting:
    def find_spec(self, name, path=None, target=None):
        if name == "cloneprobe.cli.report":  # as if Ctrl-C came while it loads
            raise KeyboardInterrupt

sys.meta_path.insert(0, Interrupting())
from cloneprobe.cli import main
main()
"""


def test_ctrl_c_while_the_commands_load_is_one_line_not_a_traceback(tmp_path):
    import os
    import subprocess
    import sys

    result = subprocess.run(
        [sys.executable, "-c", INTERRUPTED_IMPORT, "prompts", "--export", str(tmp_path / "p")],
        capture_output=True, text=True, timeout=120,
        env={**os.environ, "PYTHONPATH": str(Path(__file__).parents[1])},
    )  # fmt: skip
    assert result.returncode == 130, result.stderr
    assert "Traceback" not in result.stderr, result.stderr
    assert result.stderr.startswith("interrupted: while starting"), result.stderr
    assert not (tmp_path / "p").exists()
