"""Detection done ahead, in a thread of its own beside the sandbox's runs (`execute` on a
machine with an idle core): a real SQLite store written by both, real sandboxed runs, and the
same evidence and verdicts as detection done after the runs."""

from __future__ import annotations

import json
import sqlite3
from contextlib import closing

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
