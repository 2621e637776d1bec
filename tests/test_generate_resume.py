"""`cloneprobe generate` as a user runs it: killed with SIGKILL mid-run and resumed, the summary
table, the API key from the environment, and a bad model spec."""

from __future__ import annotations

import contextlib
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner
from openai_test_server import OpenAITestServer, counting_responder

from cloneprobe.benchmarks import load_humaneval
from cloneprobe.cli import main

SECRET = "sk-test-SECRET-CLI-456"
TASKS, N = 10, 4


def generate_args(server, store: Path, *extra: str) -> list[str]:
    return [
        "generate", "--model", "openai:test-model", "--base-url", server.base_url,
        "--store", str(store), "--prompts", "original", "--temperature", "0.2", *extra,
    ]  # fmt: skip


def cli_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENAI_")}
    return {**env, "OPENAI_API_KEY": SECRET, "COLUMNS": "200"}


def runner_env() -> dict[str, str | None]:
    """`cli_env()` for an in-process run (CliRunner): every other OPENAI_ variable unset."""
    unset = {k: None for k in os.environ if k.startswith("OPENAI_")}
    return {**unset, "OPENAI_API_KEY": SECRET, "COLUMNS": "200"}


def count_rows(path: Path) -> int:
    """Samples committed so far, read through a read-only connection (0 before the schema)."""
    if not path.exists():
        return 0
    try:
        db = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=5)
        with contextlib.closing(db):
            return db.execute("SELECT COUNT(*) FROM samples").fetchone()[0]
    except sqlite3.OperationalError:  # not created yet
        return 0


def stored_rows(path: Path) -> dict[tuple[str, int], tuple]:
    """(task, index) -> (id, raw, created_at, run_id), asserting no key is stored twice."""
    with contextlib.closing(sqlite3.connect(path, timeout=5)) as db:
        rows = db.execute(
            "SELECT task_id, sample_index, id, raw, created_at, run_id, error FROM samples"
        ).fetchall()
    keyed = {(r[0], r[1]): r[2:6] for r in rows}
    assert len(keyed) == len(rows), "a (task, index) sample is stored twice"
    assert all(r[6] is None for r in rows)
    return keyed


def summary_row(stdout: str) -> dict[str, str]:
    """The summary table's header and its one model row, as {column: cell}."""
    lines = [line for line in stdout.splitlines() if line.startswith(("┃", "│"))]
    header, row = ([c.strip() for c in line.strip("┃│").split(sep)] for line, sep in
                   ((lines[0], "┃"), (lines[1], "│")))  # fmt: skip
    return dict(zip(header, row, strict=True))


def test_killed_generate_resumes_with_only_the_missing_samples(tmp_path):
    store = tmp_path / "s.sqlite"
    prompts = {t.task_id: t.prompt for t in load_humaneval().tasks[:TASKS]}
    with OpenAITestServer(counting_responder(), latency=0.15) as server:
        args = generate_args(server, store, "--limit", str(TASKS), "-n", str(N),
                             "--concurrency", "2")  # fmt: skip
        command = [sys.executable, "-m", "cloneprobe", *args]
        first = subprocess.Popen(
            command, env=cli_env(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        try:
            for _ in range(6000):  # up to about 30 s for the first stored sample
                if count_rows(store) or first.poll() is not None:
                    break
                time.sleep(0.005)
            else:
                pytest.fail("no sample was stored")
            first.send_signal(signal.SIGKILL)
            assert first.wait(timeout=10) == -signal.SIGKILL, "the run ended before the kill"
        finally:
            if first.poll() is None:
                first.kill()
                first.wait()
        server.wait_idle()  # the killed process's connections are closed and handled
        asked = len(server.requests)
        before = stored_rows(store)
        assert 0 < len(before) < TASKS * N
        assert len(before) % N == 0  # a request's samples are committed together

        # the resuming run in-process (the kill needs a process; a resume does not)
        second = CliRunner().invoke(main, args, env=runner_env())
        assert second.exit_code == 0, second.output
        resumed = server.requests[asked:]

    after = stored_rows(store)
    assert set(after) == {(task, i) for task in prompts for i in range(N)}
    assert {key: after[key] for key in before} == before  # same id, raw, created_at, run
    done_tasks = {task for task, _ in before}
    missing_tasks = set(prompts) - done_tasks
    assert sorted(r["json"]["prompt"] for r in resumed) == sorted(prompts[t] for t in missing_tasks)
    assert all(r["json"]["n"] == N for r in resumed)
    assert all(r["headers"]["Authorization"] == f"Bearer {SECRET}" for r in resumed)
    summary = summary_row(second.stdout)
    assert summary["planned"] == str(TASKS * N)
    assert summary["already stored"] == str(len(before))
    assert summary["generated"] == str(TASKS * N - len(before))
    assert summary["failed"] == "0"
    with contextlib.closing(sqlite3.connect(store, timeout=5)) as db:
        statuses = [s for (s,) in db.execute("SELECT status FROM runs ORDER BY id")]
    assert len(statuses) == 2 and statuses[-1] == "finished"


def test_generate_prints_planned_already_stored_and_generated_counts(tmp_path):
    store = tmp_path / "s.sqlite"
    runner = CliRunner()
    with OpenAITestServer(counting_responder()) as server:
        args = generate_args(server, store, "--limit", "3", "-n", "2")
        first = runner.invoke(main, args, env={"COLUMNS": "200"})
        second = runner.invoke(main, args, env={"COLUMNS": "200"})
        assert len(server.requests) == 3
    assert first.exit_code == 0 and second.exit_code == 0, first.output + second.output
    assert "Generation" in first.stdout and f"store: {store}" in first.stdout
    one, two = summary_row(first.stdout), summary_row(second.stdout)
    assert list(one)[:5] == ["model", "planned", "already stored", "generated", "failed"]
    assert (one["model"], one["planned"], one["already stored"], one["generated"]) == (
        "openai:test-model",
        "6",
        "0",
        "6",
    )
    assert (two["planned"], two["already stored"], two["generated"]) == ("6", "6", "0")
    # the token column says which counts it adds: 6 samples of `return N` (2 words each)
    assert one["tokens (prompt + completion)"].endswith(" + 12"), one


def test_the_generation_tables_token_column_is_named_and_whole_at_80_columns(tmp_path):
    """The column was headed "tokens" over cells like "1234+567": nothing said what the two
    numbers count."""
    with OpenAITestServer(counting_responder()) as server:
        result = CliRunner().invoke(main, generate_args(server, tmp_path / "s.sqlite", "--limit",
                                                        "2", "-n", "1"), env={"COLUMNS": "80"})
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    top = next(n for n, line in enumerate(lines) if line.startswith("┏"))
    rule = next(n for n, line in enumerate(lines) if line.startswith("┡"))
    header = " ".join(lines[top + 1:rule]).split()
    assert {"tokens", "(prompt", "completion)"} <= set(header), header
    assert all(len(line) <= 80 for line in lines), result.stdout


def test_generate_sends_the_api_key_from_the_environment_and_never_stores_it(tmp_path):
    store = tmp_path / "s.sqlite"
    with OpenAITestServer(counting_responder()) as server:
        result = CliRunner().invoke(
            main,
            generate_args(server, store, "--limit", "2", "-n", "2"),
            env={"OPENAI_API_KEY": SECRET, "COLUMNS": "200"},
        )
        assert result.exit_code == 0, result.output
        headers = {r["headers"].get("Authorization") for r in server.requests}
    assert headers == {f"Bearer {SECRET}"}
    files = [p for p in tmp_path.iterdir() if p.name.startswith("s.sqlite")]
    assert store in files
    assert not [p.name for p in files if SECRET.encode() in p.read_bytes()]


def test_bad_model_spec_exits_2_with_one_error_line(tmp_path):
    result = subprocess.run(
        [sys.executable, "-m", "cloneprobe", "generate", "--model", "gpt4", "--limit", "2"],
        cwd=tmp_path,
        env=cli_env(),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("error:") and "'gpt4'" in lines[0] and "openai:<model>" in lines[0]
    assert "Traceback" not in result.stderr and result.stdout == ""
    assert list(tmp_path.iterdir()) == []  # no store was created


def test_a_rerun_with_every_sample_stored_does_not_load_the_local_model(tmp_path, model_path):
    """A re-run whose samples were all in the store still loaded the local model (minutes for a
    large one) to generate nothing. Its weights are removed after the first run: a re-run that
    loaded them would fail."""
    import shutil

    model = tmp_path / "model"
    shutil.copytree(model_path, model)
    common = ["--model", f"hf:{model}", "--limit", "1", "-n", "2", "--max-new-tokens", "4",
              "--prompts", "original", "--temperature", "0.2", "--store",
              str(tmp_path / "s.sqlite")]  # fmt: skip
    env = {"COLUMNS": "200", "HF_HUB_OFFLINE": "1"}
    first = CliRunner().invoke(main, ["generate", *common], env=env)
    assert first.exit_code == 0, first.output
    assert "loading" in first.stderr
    for weights in model.glob("*.safetensors"):
        weights.unlink()
    again = CliRunner().invoke(main, ["generate", *common], env=env)
    assert again.exit_code == 0, again.output
    assert "loading" not in again.stderr
    row = summary_row(again.stdout)
    assert (row["planned"], row["already stored"], row["generated"]) == ("2", "2", "0")
    audit = CliRunner().invoke(main, ["audit", *common, "--json"], env=env)
    assert audit.exit_code == 0, audit.output
    # a sample more must be generated: the model is loaded, and its missing weights said
    more = CliRunner().invoke(main, ["generate", *common, "-n", "3"], env=env)
    assert more.exit_code == 2 and f"hf:{model}: cannot load a model" in more.stderr
