"""Detection done ahead, in a thread of its own beside the sandbox's runs (`execute` on a
machine with an idle core): a real SQLite store written by both, real sandboxed runs, and the
same evidence and verdicts as detection done after the runs."""

from __future__ import annotations

import json
import os
import sqlite3
import threading
from contextlib import closing

import pytest

from cloneprobe.audit.ahead import IdleCores
from cloneprobe.audit.detection import CanonicalFragments, DetectionSettings
from cloneprobe.benchmarks import load_humaneval
from cloneprobe.clones import DetectorConfig
from cloneprobe.evidence.stream import StreamedEvidence
from cloneprobe.generation import SampleStore
from cloneprobe.pipeline import SilentReporter, execute_and_detect_ahead, source_samples
from cloneprobe.settings import ExecutionSettings, SampleSource

HUMANEVAL = load_humaneval()


def _store_with_samples(tmp_path):
    # the canonicals of 24 tasks and a wrong answer: enough runs that results are stored
    # while the detection reads the samples and writes its verdicts
    lines = [(task.task_id, task.canonical_solution) for task in HUMANEVAL.tasks[:24]]
    lines.append(("HumanEval/0", "    return False\n"))
    samples = tmp_path / "samples.jsonl"
    samples.write_text("".join(json.dumps({"task_id": t, "completion": c}) + "\n"
                               for t, c in lines))  # fmt: skip
    return SampleSource(store=tmp_path / "store.sqlite", files=(samples,), model="m",
                        temperature=0.0)  # fmt: skip


def test_detection_ahead_stores_every_verdict_beside_the_executions(tmp_path):
    source = _store_with_samples(tmp_path)
    settings = DetectionSettings(DetectorConfig())
    with SampleStore(source.store) as store:
        samples = source_samples(store, source, HUMANEVAL)
        canonicals = CanonicalFragments(HUMANEVAL)
        view = execute_and_detect_ahead(
            store, HUMANEVAL, settings, samples, canonicals, ExecutionSettings(timeout=5),
            SilentReporter(), ahead=True,
        )  # fmt: skip
        after = StreamedEvidence(CanonicalFragments(HUMANEVAL), settings, samples)
    assert view is not None
    assert view.chance == after.chance
    with closing(sqlite3.connect(source.store)) as db:
        executed = dict(db.execute("SELECT sample_id, passed FROM executions").fetchall())
        detected = {row[0] for row in db.execute("SELECT sample_id FROM detections")}
    assert sorted(executed.values()) == [0] + [1] * 24
    assert detected == set(executed)


def test_without_an_idle_core_nothing_is_detected_ahead(tmp_path):
    source = _store_with_samples(tmp_path)
    settings = DetectionSettings(DetectorConfig())
    with SampleStore(source.store) as store:
        samples = source_samples(store, source, HUMANEVAL)
        view = execute_and_detect_ahead(
            store, HUMANEVAL, settings, samples, CanonicalFragments(HUMANEVAL),
            ExecutionSettings(timeout=5), SilentReporter(), ahead=False,
        )  # fmt: skip
    assert view is None
    with closing(sqlite3.connect(source.store)) as db:
        assert db.execute("SELECT COUNT(*) FROM executions").fetchone() == (25,)
        tables = {row[0] for row in db.execute("SELECT name FROM sqlite_master")}
        assert "detections" not in tables or db.execute(
            "SELECT COUNT(*) FROM detections").fetchone() == (0,)  # fmt: skip


def _stat(path, idle_by_cpu: dict[int, int], busy: int = 0) -> None:
    """A /proc/stat of the CPUs given: user, nice, system, idle, iowait, irq, softirq, steal."""
    lines = ["cpu  1 2 3 4 5 6 7 8 0 0"]  # the all-CPU line: never read
    lines += [f"cpu{n} {busy} 0 0 {idle} 0 0 0 0 0 0" for n, idle in idle_by_cpu.items()]
    path.write_text("\n".join([*lines, "intr 1", "ctxt 2"]) + "\n")


def test_idle_cores_are_read_from_the_per_cpu_times_of_this_process_cpus(tmp_path):
    stat = tmp_path / "stat"
    mine = sorted(os.sched_getaffinity(0))
    other = max(mine) + 1  # a CPU this process may not run on: its idle time is not ours
    _stat(stat, {**{n: 1000 for n in mine}, other: 1000})
    cores = IdleCores(str(stat))
    # every CPU of ours half idle over the window (100 idle ticks, 100 busy), the other idle
    _stat(stat, {**{n: 1100 for n in mine}, other: 1200}, busy=100)
    assert cores.since_last() == pytest.approx(len(mine) / 2)
    _stat(stat, {**{n: 1100 for n in mine}, other: 1400}, busy=200)
    assert cores.since_last() == 0.0
    # the detection's own CPU seconds count as idle: it does not wait for the core it takes
    _stat(stat, {**{n: 1100 for n in mine}, other: 1600}, busy=300)
    cores.read_at -= 2.0
    assert cores.since_last(own=1.0) == pytest.approx(0.5, abs=0.05)


def _waiter(tmp_path):
    """A fake /proc/stat at rest, and a waiter on it with a short window: (stat file, this
    process's CPUs, the event that says the runs ended, the waiter)."""
    stat = tmp_path / "stat"
    mine = sorted(os.sched_getaffinity(0))
    _stat(stat, dict.fromkeys(mine, 1000))
    cores, finished = IdleCores(str(stat)), threading.Event()
    cores.WINDOW = 0.05
    return stat, mine, finished, cores.waiter(finished)


def test_detection_waits_while_no_core_is_idle_and_gives_up_when_the_runs_end(tmp_path):
    stat, mine, finished, wait = _waiter(tmp_path)
    _stat(stat, dict.fromkeys(mine, 1000), busy=500)  # every CPU busy
    answer: list[bool] = []
    waiting = threading.Thread(target=lambda: answer.append(wait()))
    waiting.start()
    waiting.join(0.5)
    assert waiting.is_alive() and not answer  # still waiting for a core
    finished.set()
    waiting.join()
    assert answer == [False]


def test_detection_goes_ahead_once_a_core_is_idle(tmp_path):
    stat, mine, finished, wait = _waiter(tmp_path)
    _stat(stat, dict.fromkeys(mine, 1000), busy=500)
    assert not finished.wait(0.1)
    _stat(stat, dict.fromkeys(mine, 1500), busy=500)  # then 500 idle ticks on every CPU
    assert wait() is True
