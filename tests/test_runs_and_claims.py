"""Runs killed mid-way are recognised as interrupted, SIGTERM ends a run like Ctrl-C, and
generate commands running one plan on one store never generate a sample twice."""

from __future__ import annotations

import contextlib
import itertools
import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from click.testing import CliRunner
from openai_test_server import OpenAITestServer, counting_responder

from cloneprobe.cli import main
from cloneprobe.generation import SampleStore

TASKS, N = 6, 2


def arguments(server, store: Path, *extra: str) -> list[str]:
    return ["generate", "--model", "openai:test-model", "--base-url", server.base_url,
            "--store", str(store), "--prompts", "original", "--limit", str(TASKS), "-n", str(N),
            "--concurrency", "1", *extra]  # fmt: skip


def command(server, store: Path, *extra: str) -> list[str]:
    return [sys.executable, "-m", "cloneprobe", *arguments(server, store, *extra)]


def in_process(server, store: Path):
    """The same generate through CliRunner: for the runs that are never killed or signalled
    (a process start costs about 1.6 s of CPU; the kill and the signal need a process)."""
    unset = {k: None for k in os.environ if k.startswith("OPENAI_")}
    environment = {**unset, "OPENAI_API_KEY": "test"}
    return CliRunner().invoke(main, arguments(server, store), env=environment)


def env() -> dict[str, str]:
    return {**{k: v for k, v in os.environ.items() if not k.startswith("OPENAI_")},
            "OPENAI_API_KEY": "test"}  # fmt: skip


def raw_statuses(store: Path) -> list[str]:
    with contextlib.closing(sqlite3.connect(store, timeout=10)) as db:
        return [s for (s,) in db.execute("SELECT status FROM runs ORDER BY id")]


def wait_for_a_sample(store: Path, process: subprocess.Popen) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and process.poll() is None:
        with contextlib.suppress(sqlite3.Error):
            db = sqlite3.connect(f"file:{store}?mode=ro", uri=True, timeout=5)
            with contextlib.closing(db):
                if db.execute("SELECT COUNT(*) FROM samples").fetchone()[0]:
                    return
        time.sleep(0.01)
    raise AssertionError("no sample was stored in time")


def test_a_run_killed_with_sigkill_is_interrupted_not_running_and_resumes(tmp_path):
    store = tmp_path / "s.sqlite"
    with OpenAITestServer(counting_responder(), latency=0.2) as server:
        first = subprocess.Popen(command(server, store), env=env(), stdout=subprocess.DEVNULL,
                                 stderr=subprocess.DEVNULL)  # fmt: skip
        try:
            wait_for_a_sample(store, first)
            first.send_signal(signal.SIGKILL)
            assert first.wait(timeout=10) == -signal.SIGKILL
        finally:
            if first.poll() is None:
                first.kill()
        assert raw_statuses(store) == ["running"]  # what the killed process left
        with SampleStore(store, read_only=True) as opened:  # `report` sees it interrupted
            assert [r["status"] for r in opened.runs()] == ["interrupted"]
        assert raw_statuses(store) == ["running"]  # ... without writing
        second = in_process(server, store)
        assert second.exit_code == 0, second.output
    assert raw_statuses(store) == ["interrupted", "finished"]
    with contextlib.closing(sqlite3.connect(store)) as db:
        assert db.execute("SELECT COUNT(*) FROM samples WHERE error IS NULL").fetchone()[0] == (
            TASKS * N
        )
        assert db.execute("SELECT COUNT(*) FROM claims").fetchone()[0] == 0


def test_sigterm_ends_a_run_like_ctrl_c(tmp_path):
    store = tmp_path / "s.sqlite"
    with OpenAITestServer(counting_responder(), latency=0.2) as server:
        process = subprocess.Popen(command(server, store), env=env(), stdout=subprocess.PIPE,
                                   stderr=subprocess.PIPE, text=True)  # fmt: skip
        try:
            wait_for_a_sample(store, process)
            process.send_signal(signal.SIGTERM)
            _, stderr = process.communicate(timeout=30)
        finally:
            if process.poll() is None:
                process.kill()
    assert process.returncode == 130, stderr
    assert "interrupted" in stderr and "Traceback" not in stderr
    assert raw_statuses(store) == ["interrupted"]


def held_after_the_first_request(release: threading.Event):
    """A responder that answers the first request at once and holds the others until
    `release` is set (so a run stays in the middle of its plan as long as the test needs)."""
    count, texts = itertools.count(), itertools.count()

    def respond(kind, prompt, index, body):
        if index == 0 and next(count) > 0:
            release.wait(timeout=120)
        return f"    return {next(texts)}\n"

    return respond


def test_concurrent_generates_of_one_plan_never_generate_a_sample_twice(tmp_path):
    store = tmp_path / "s.sqlite"
    release = threading.Event()
    with OpenAITestServer(held_after_the_first_request(release)) as server:
        first = subprocess.Popen(command(server, store), env=env(), stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, text=True)  # fmt: skip
        try:
            wait_for_a_sample(store, first)  # the first run is now holding its other claims
            second = in_process(server, store)  # beside the first run's process
        finally:
            release.set()
        out = first.communicate(timeout=120)
        assert (first.returncode, second.exit_code) == (0, 0), (out, second.output)
        assert f"{TASKS * N - N} samples were being generated by another run" in second.stderr
        asked = sum(r["json"]["n"] for r in server.requests if r["json"])
        again = in_process(server, store)
        assert again.exit_code == 0, again.output
        assert sum(r["json"]["n"] for r in server.requests if r["json"]) == asked
    assert asked == TASKS * N  # each sample asked for once, all by the first run
    with contextlib.closing(sqlite3.connect(store)) as db:
        assert db.execute("SELECT COUNT(*) FROM samples").fetchone()[0] == TASKS * N
        assert raw_statuses(store) == ["finished", "finished", "finished"]


@pytest.mark.slow(reason="about 5 s: three generate processes in a row")
def test_three_identical_generates_in_a_row_generate_once(tmp_path):
    store = tmp_path / "s.sqlite"
    with OpenAITestServer(counting_responder()) as server:
        for _ in range(3):
            done = subprocess.run(command(server, store), env=env(), capture_output=True,
                                  text=True, timeout=120)  # fmt: skip
            assert done.returncode == 0, done.stderr
        assert sum(r["json"]["n"] for r in server.requests if r["json"]) == TASKS * N
