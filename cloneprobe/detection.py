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
from pathlib import Path

from .benchmarks import Benchmark, canonical_source, nicad_min_lines
from .clones import (
    DetectorConfig,
    Fragment,
    FragmentExtractor,
    Layout,
    SourceFile,
    compare_systems,
    get_language,
    rank_of,
)
from .clones.docstrings import blank_docstrings
from .evidence.canonical_profile import CanonicalProfile, build_profile, comments_of, name_usage
from .evidence.strength import answer_fragments, best_answer_features, features_of

SCHEMA = """
CREATE TABLE IF NOT EXISTS detections (
    sample_id INTEGER NOT NULL,
    detector_key TEXT NOT NULL,
    clone_type TEXT,
    similarity INTEGER,
    trivial_type TEXT,
    pairs TEXT NOT NULL,
    answer TEXT,
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
    """Each pair's canonical and sample locations, type and similarity; `in_answer` (the
    sample function is part of the answer to the task) and `features` (evidence.strength)."""
    answer: dict | None = None
    """The sample's answer function against its own task's canonical (evidence.strength
    features, `entry_point_found`), whether or not it is a clone: what other solutions of the
    task are measured by."""


@dataclass(frozen=True)
class DetectionSettings:
    config: DetectorConfig
    cross_task: bool = False
    study_min_lines: bool = True
    """With the nicad profile, use the study's settings: its per-task minimum size (half the
    canonical's lines, never below 5) unless --min-lines is given, and samples with their
    docstrings removed."""
    reference_solutions: Path | None = None
    """Independent solutions of the tasks (JSONL), the evidence's null model; verdicts do not
    depend on it, so it is not part of the key."""

    @property
    def key(self) -> str:
        payload = {
            **self.config.settings(),
            "cross_task": self.cross_task,
            "study_min_lines": self.uses_study_min_lines,
            "study_samples": self.prepares_study_samples,
        }
        return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()[:12]

    @property
    def uses_study_min_lines(self) -> bool:
        return (
            self.study_min_lines
            and self.config.profile.name == "nicad"
            and self.config.min_lines is None
        )

    @property
    def prepares_study_samples(self) -> bool:
        """With the nicad profile, samples are judged as the study prepared them: docstrings
        removed (NiCad's own grammar drops only a leading triple-double-quoted one)."""
        return self.study_min_lines and self.config.profile.name == "nicad"

    def sample_text(self, program: str, language: str = "python") -> str:
        """The sample's text as the detector sees it (line numbers unchanged)."""
        return blank_docstrings(program, language) if self.prepares_study_samples else program

    def describe(self) -> dict:
        settings = self.config.settings()
        if self.uses_study_min_lines:
            settings["min_lines"] = "per task: max(5, canonical lines // 2)"
        if self.prepares_study_samples:
            settings["samples"] = "docstrings removed, as the study prepared them"
        return {**settings, "cross_task": self.cross_task, "detector_key": self.key}


class CanonicalFragments:
    """Each task's canonical fragment, extracted once per layout (the profile's)."""

    def __init__(self, benchmark: Benchmark) -> None:
        self.benchmark = benchmark
        self.extractors: dict[tuple[str, Layout], FragmentExtractor] = {}
        self.cache: dict[tuple[str, Layout], list[Fragment]] = {}
        self.profiles: dict[str, CanonicalProfile | None] = {}
        self.usage = None

    def extractor(self, language: str, layout: Layout = "statements") -> FragmentExtractor:
        if (language, layout) not in self.extractors:
            self.extractors[language, layout] = FragmentExtractor(get_language(language), layout)
        return self.extractors[language, layout]

    def of(self, task_id: str, layout: Layout = "statements") -> list[Fragment]:
        if (task_id, layout) not in self.cache:
            task = self.benchmark.get(task_id)
            if task is None:
                self.cache[task_id, layout] = []
            else:
                source = SourceFile(f"canonical/{task_id}", canonical_source(task))
                fragments = self.extractor(task.language, layout).extract(source)
                self.cache[task_id, layout] = [
                    f for f in fragments if f.name == task.entry_point
                ] or fragments
        return self.cache[task_id, layout]

    def entry(self, task_id: str, layout: Layout = "statements") -> Fragment | None:
        """The canonical's entry-point fragment."""
        task = self.benchmark.get(task_id)
        fragments = self.of(task_id, layout)
        named = [f for f in fragments if task and f.name == task.entry_point]
        return (named or fragments or [None])[-1]

    def profile(self, task_id: str) -> CanonicalProfile | None:
        """The task's canonical as evidence sees it (None: no canonical function)."""
        if task_id not in self.profiles:
            task, fragment = self.benchmark.get(task_id), self.entry(task_id)
            if task is None or fragment is None:
                self.profiles[task_id] = None
            else:
                if self.usage is None:
                    self.usage = name_usage(self.benchmark, self.of)
                self.profiles[task_id] = build_profile(
                    task, fragment, self.extractor(task.language), self.usage, len(self.benchmark)
                )
        return self.profiles[task_id]


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
    layout = settings.config.profile.layout
    extractor = canonicals.extractor(language, layout)
    fragments_b: list[Fragment] = []
    by_sample: dict[int, list[Fragment]] = {}
    for sample in samples:
        text = settings.sample_text(sample.program or "", language)
        by_sample[sample.sample_id] = extractor.extract(
            SourceFile(f"sample/{sample.sample_id}", text)
        )
        fragments_b += by_sample[sample.sample_id]
    own_profile = canonicals.profile(task_id)
    entry_point = task.entry_point if task else ""
    answers = {sid: answer_fragments(frags, entry_point) for sid, frags in by_sample.items()}
    programs = {s.sample_id: s.program or "" for s in samples}
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
        report = compare_systems(canonicals.of(target, layout), fragments_b, config)
        for pair in report.pairs:
            sample_id = int(pair.b.file.split("/", 1)[1])
            answer, _ = answers[sample_id]
            profile = canonicals.profile(target)
            comments = comments_of(programs[sample_id]) if profile and profile.comments else ()
            features = features_of(profile, pair.b, comments) if profile else None
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
                    "in_answer": any(f is pair.b for f in answer),
                    "features": features.as_dict() if features else None,
                }
            )
    verdicts = []
    for sample_id, pairs in pairs_by_sample.items():
        summary = None
        if own_profile is not None:
            best, found = best_answer_features(own_profile, answers[sample_id][0],
                                               programs[sample_id])  # fmt: skip
            summary = {**best.as_dict(), "entry_point_found": found} if best else {
                "entry_point_found": found}  # fmt: skip
        verdicts.append(_verdict(sample_id, pairs, summary))
    return verdicts


def _verdict(sample_id: int, pairs: list[dict], answer: dict | None = None) -> Verdict:
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
        answer=answer,
    )


class DetectionStore:
    """The `detections` table, in the same SQLite file as the samples."""

    def __init__(self, db: sqlite3.Connection) -> None:
        self.db = db
        self.db.executescript(SCHEMA)
        columns = {row[1] for row in self.db.execute("PRAGMA table_info(detections)")}
        if "answer" not in columns:  # a store written before evidence: judged again
            with self.db:
                self.db.execute("ALTER TABLE detections ADD COLUMN answer TEXT")

    def done(self, detector_key: str) -> set[int]:
        """Samples judged under these settings, with their evidence features."""
        cursor = self.db.execute(
            "SELECT sample_id FROM detections WHERE detector_key = ? AND answer IS NOT NULL",
            (detector_key,),
        )
        return {row[0] for row in cursor}

    def add(self, detector_key: str, verdicts: Iterable[Verdict]) -> None:
        rows = [
            (v.sample_id, detector_key, v.clone_type, v.similarity, v.trivial_type,
             json.dumps(list(v.pairs)), json.dumps(v.answer or {}))
            for v in verdicts
        ]  # fmt: skip
        with self.db:
            self.db.executemany(
                "INSERT OR REPLACE INTO detections (sample_id, detector_key, clone_type, "
                "similarity, trivial_type, pairs, answer) VALUES (?, ?, ?, ?, ?, ?, ?)",
                rows,
            )

    def verdicts(self, detector_key: str) -> dict[int, Verdict]:
        cursor = self.db.execute(
            "SELECT sample_id, clone_type, similarity, trivial_type, pairs, answer "
            "FROM detections WHERE detector_key = ?",
            (detector_key,),
        )
        return {
            row[0]: Verdict(row[0], row[1], row[2], row[3], tuple(json.loads(row[4])),
                            json.loads(row[5]) if row[5] else None)
            for row in cursor
        }  # fmt: skip


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
