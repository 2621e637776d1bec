"""Detecting clones of canonical solutions in stored samples, and keeping the verdicts.

Each sample's program is cut into fragments and compared with its task's canonical fragment
(or, with cross-task detection, with every task's canonical). The verdict per sample is the
most specific clone type found (trivial pairs kept apart), with the pairs as evidence. Verdicts
live in a `detections` table next to the samples, keyed by the detector settings, so `detect`
and `report` can run again without repeating work.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace

from .benchmarks import Benchmark, canonical_source, nicad_min_lines
from .clones import (
    DetectorConfig,
    Fragment,
    FragmentExtractor,
    SourceFile,
    compare_systems,
    get_language,
    rank_of,
)

SCHEMA = """
CREATE TABLE IF NOT EXISTS detections (
    sample_id INTEGER NOT NULL,
    detector_key TEXT NOT NULL,
    clone_type TEXT,
    similarity INTEGER,
    trivial_type TEXT,
    pairs TEXT NOT NULL,
    PRIMARY KEY (sample_id, detector_key)
);
"""


@dataclass(frozen=True)
class Verdict:
    sample_id: int
    clone_type: str | None
    """Most specific clone type of any non-trivial pair, or None."""
    similarity: int | None
    trivial_type: str | None
    """Most specific type among trivial pairs (canonicals under the token floor)."""
    pairs: tuple[dict, ...]


@dataclass(frozen=True)
class DetectionSettings:
    config: DetectorConfig
    cross_task: bool = False
    study_min_lines: bool = True
    """With the nicad profile, use the study's per-task minimum size (half the canonical's
    lines, never below 5) unless --min-lines is given."""

    @property
    def key(self) -> str:
        payload = {
            **self.config.settings(),
            "cross_task": self.cross_task,
            "study_min_lines": self.uses_study_min_lines,
        }
        return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()[:12]

    @property
    def uses_study_min_lines(self) -> bool:
        return (
            self.study_min_lines
            and self.config.profile.name == "nicad"
            and self.config.min_lines is None
        )

    def describe(self) -> dict:
        settings = self.config.settings()
        if self.uses_study_min_lines:
            settings["min_lines"] = "per task: max(5, canonical lines // 2)"
        return {**settings, "cross_task": self.cross_task, "detector_key": self.key}


class CanonicalFragments:
    """Each task's canonical fragment, extracted once."""

    def __init__(self, benchmark: Benchmark) -> None:
        self.benchmark = benchmark
        self.extractors: dict[str, FragmentExtractor] = {}
        self.cache: dict[str, list[Fragment]] = {}

    def extractor(self, language: str) -> FragmentExtractor:
        if language not in self.extractors:
            self.extractors[language] = FragmentExtractor(get_language(language))
        return self.extractors[language]

    def of(self, task_id: str) -> list[Fragment]:
        if task_id not in self.cache:
            task = self.benchmark.get(task_id)
            if task is None:
                self.cache[task_id] = []
            else:
                source = SourceFile(f"canonical/{task_id}", canonical_source(task))
                fragments = self.extractor(task.language).extract(source)
                self.cache[task_id] = [
                    f for f in fragments if f.name == task.entry_point
                ] or fragments
        return self.cache[task_id]


@dataclass(frozen=True)
class SampleProgram:
    sample_id: int
    task_id: str
    program: str


def detect_task(
    canonicals: CanonicalFragments,
    settings: DetectionSettings,
    task_id: str,
    samples: list[SampleProgram],
) -> list[Verdict]:
    """Verdicts for one task's samples against its canonical (or every canonical)."""
    task = canonicals.benchmark.get(task_id)
    language = task.language if task else "python"
    extractor = canonicals.extractor(language)
    fragments_b: list[Fragment] = []
    for sample in samples:
        fragments_b += extractor.extract(
            SourceFile(f"sample/{sample.sample_id}", sample.program or "")
        )
    targets = (
        [t.task_id for t in canonicals.benchmark if t.language == language]
        if settings.cross_task
        else [task_id]
    )
    pairs_by_sample: dict[int, list[dict]] = {s.sample_id: [] for s in samples}
    for target in targets:
        config = settings.config
        target_task = canonicals.benchmark.get(target)
        if settings.uses_study_min_lines and target_task is not None:
            config = replace(config, min_lines=nicad_min_lines(target_task))
        report = compare_systems(canonicals.of(target), fragments_b, config)
        for pair in report.pairs:
            sample_id = int(pair.b.file.split("/", 1)[1])
            pairs_by_sample[sample_id].append(
                {
                    "canonical_task": target,
                    "canonical_lines": [pair.a.start_line, pair.a.end_line],
                    "sample_function": pair.b.name,
                    "sample_lines": [pair.b.start_line, pair.b.end_line],
                    "type": pair.clone_type.name,
                    "similarity": pair.similarity,
                    "trivial": pair.trivial,
                    "has_errors": pair.b.has_errors,
                }
            )
    return [_verdict(sample_id, pairs) for sample_id, pairs in pairs_by_sample.items()]


def _verdict(sample_id: int, pairs: list[dict]) -> Verdict:
    def best(candidates: list[dict]) -> dict | None:
        return min(candidates, key=lambda p: (rank_of(p["type"]), -p["similarity"]), default=None)

    real = best([p for p in pairs if not p["trivial"]])
    trivial = best([p for p in pairs if p["trivial"]])
    return Verdict(
        sample_id=sample_id,
        clone_type=real["type"] if real else None,
        similarity=real["similarity"] if real else None,
        trivial_type=trivial["type"] if trivial else None,
        pairs=tuple(pairs),
    )


class DetectionStore:
    """The `detections` table, in the same SQLite file as the samples."""

    def __init__(self, db: sqlite3.Connection) -> None:
        self.db = db
        self.db.executescript(SCHEMA)

    def done(self, detector_key: str) -> set[int]:
        cursor = self.db.execute(
            "SELECT sample_id FROM detections WHERE detector_key = ?", (detector_key,)
        )
        return {row[0] for row in cursor}

    def add(self, detector_key: str, verdicts: Iterable[Verdict]) -> None:
        rows = [
            (v.sample_id, detector_key, v.clone_type, v.similarity, v.trivial_type,
             json.dumps(list(v.pairs)))
            for v in verdicts
        ]  # fmt: skip
        with self.db:
            self.db.executemany("INSERT OR REPLACE INTO detections VALUES (?, ?, ?, ?, ?, ?)", rows)

    def verdicts(self, detector_key: str) -> dict[int, Verdict]:
        cursor = self.db.execute(
            "SELECT sample_id, clone_type, similarity, trivial_type, pairs FROM detections "
            "WHERE detector_key = ?",
            (detector_key,),
        )
        return {
            row[0]: Verdict(row[0], row[1], row[2], row[3], tuple(json.loads(row[4])))
            for row in cursor
        }


def detect_samples(
    db: sqlite3.Connection,
    benchmark: Benchmark,
    settings: DetectionSettings,
    samples: list[SampleProgram],
    progress: Callable[[int], None] | None = None,
) -> int:
    """Detect every sample not yet judged under these settings; returns how many were."""
    store = DetectionStore(db)
    done = store.done(settings.key)
    todo: dict[str, list[SampleProgram]] = {}
    for sample in samples:
        if sample.sample_id not in done:
            todo.setdefault(sample.task_id, []).append(sample)
    canonicals = CanonicalFragments(benchmark)
    judged = 0
    for task_id, task_samples in todo.items():
        store.add(settings.key, detect_task(canonicals, settings, task_id, task_samples))
        judged += len(task_samples)
        if progress:
            progress(len(task_samples))
    return judged
