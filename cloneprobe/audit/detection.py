"""Detecting clones of canonical solutions in stored samples, and keeping the verdicts.

Each sample's program is cut into fragments and compared with its task's canonical fragment
(or, with cross-task detection, with every task's canonical). The verdict per sample is the
most specific clone type found (trivial pairs kept apart), with the pairs as evidence. Verdicts
live in a `detections` table next to the samples, keyed by the detector (name, version,
profile and settings) and by a hash of everything else that decides them (the canonical source
compared against, the sample's prompt set and program), so `detect` and `report` can run again
without repeating work and never show a verdict reached on other inputs.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from collections.abc import Callable, Iterable
from dataclasses import dataclass, fields, replace
from pathlib import Path

from cloneprobe.benchmarks import Benchmark, Task, canonical_source, nicad_min_lines
from cloneprobe.benchmarks.disguise import map_back
from cloneprobe.benchmarks.prompts import disguise_renames
from cloneprobe.clones import (
    DetectorConfig,
    Fragment,
    FragmentExtractor,
    Layout,
    SourceFile,
    compare_systems,
    get_language,
    rank_of,
)
from cloneprobe.clones.docstrings import blank_docstrings
from cloneprobe.content_cache import ContentCache, code_fingerprint, content_key
from cloneprobe.evidence.canonical_profile import (
    CanonicalProfile,
    build_profile,
    comments_of,
    name_usage,
)
from cloneprobe.evidence.panel.convergence import DEFAULT_CONVERGENCE, ConvergenceRule
from cloneprobe.evidence.strength import best_answer_features, features_of
from cloneprobe.execution.inputs_cache import rows_with_current_inputs

from .version import DETECTOR, DETECTOR_VERSION

SCHEMA = """
CREATE TABLE IF NOT EXISTS detections (
    sample_id INTEGER NOT NULL,
    detector_key TEXT NOT NULL,
    clone_type TEXT,
    similarity INTEGER,
    trivial_type TEXT,
    pairs TEXT NOT NULL,
    inputs_key TEXT,
    answer TEXT,
    PRIMARY KEY (sample_id, detector_key)
);
"""
MAX_PROGRAM_BYTES = 1_000_000
"""Samples larger than this are not parsed (a 22 MB sample took 46 s and 3.4 GB)."""


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
    canonical solution's lines, never below 5) unless --min-lines is given, and samples with their
    docstrings removed."""
    reference_solutions: Path | None = None
    """Independent solutions of the tasks (JSONL), the evidence's null model; verdicts do not
    depend on it, so it is not part of the key."""
    panel_files: tuple[Path, ...] = ()
    """Sample files of other solvers (--panel), for the convergence null; not part of the key."""
    families: tuple[tuple[str, str], ...] = ()
    """(model, family) the user named (--family); not part of the key."""
    convergence: ConvergenceRule = DEFAULT_CONVERGENCE
    """The same-task convergence rule that judges evidence (margin, FDR level); it decides
    verdicts, not clones, so it is part of the calibration key, not of this key. Only the
    calibration scripts change it (`calibrate.margin_sweep`)."""

    @property
    def key(self) -> str:
        payload = {
            "detector": DETECTOR,
            "version": DETECTOR_VERSION,
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
            settings["min_lines"] = "per task: max(5, canonical solution lines // 2)"
        if self.prepares_study_samples:
            settings["samples"] = "docstrings removed, as the study prepared them"
        return {**settings, "cross_task": self.cross_task, "detector_key": self.key}


class CanonicalFragments:
    """Each task's canonical fragment, extracted once per layout (the profile's), and its
    evidence profile. With the content cache on (`disk`, by default the user's: see
    `content_cache`), every task's fragments of a layout, every task's profile and every task's
    content hash are read from one entry each, keyed by the benchmark's content and the code,
    or computed and written there."""

    def __init__(self, benchmark: Benchmark, disk: ContentCache | None = None) -> None:
        self.benchmark = benchmark
        self.disk = ContentCache.from_environment() if disk is None else disk
        self.extractors: dict[tuple[str, Layout], FragmentExtractor] = {}
        self.cache: dict[tuple[str, ...], list[Fragment]] = {}
        self.hashes: dict[tuple[str, bool], str] = {}
        self.hashed: set[bool] = set()
        """The cross-task modes whose hashes were read from the content cache (or written)."""
        self.profiles: dict[str, CanonicalProfile | None] = {}
        self.usage = None
        self.loaded_layouts: set[str] = set()
        self._benchmark_key: str | None = None

    @property
    def benchmark_key(self) -> str:
        """A hash of the benchmark's whole content (every field of every task) and the code."""
        if self._benchmark_key is None:
            parts = [self.benchmark.name]
            for task in self.benchmark:
                parts += [task.task_id, task.prompt, task.canonical_solution, task.entry_point,
                          task.test, task.language]  # fmt: skip
            self._benchmark_key = content_key(code_fingerprint(), *parts)
        return self._benchmark_key

    def load_layout(self, layout: Layout) -> None:
        """Every task's canonical fragments in `layout`, from the content cache or extracted
        (and written there); nothing with the cache off (each is then extracted when asked)."""
        if layout in self.loaded_layouts or not self.disk.enabled:
            return
        self.loaded_layouts.add(layout)
        key = content_key(self.benchmark_key, layout)

        def compute() -> dict[str, list[Fragment]]:
            return {task.task_id: self.extracted(task.task_id, layout) for task in self.benchmark}

        found = self.disk.get("canonical-fragments", key, compute, encode_fragments,
                              decode_fragments)  # fmt: skip
        for task_id, fragments in found.items():
            self.cache.setdefault((task_id, layout), fragments)

    def content_hash(self, task_id: str, cross_task: bool = False) -> str:
        """Hash of the canonical source(s) a sample of `task_id` is compared against (every
        canonical of its language with cross-task detection); '-' for a task not in the
        benchmark. With the content cache on, every task's at once, read from one entry keyed
        by the benchmark's content and the code, or computed and written there (otherwise the
        canonical sources are tokenized for nothing but these hashes, about 0.2 s a run)."""
        key = (task_id, cross_task)
        if key not in self.hashes and self.disk.enabled and cross_task not in self.hashed:
            self.hashed.add(cross_task)
            found = self.disk.get(
                "canonical-hashes", content_key(self.benchmark_key, "hashes", str(cross_task)),
                lambda: self.computed_hashes(cross_task), dict, self._decode_hashes,
            )  # fmt: skip
            self.hashes.update({(task, cross_task): value for task, value in found.items()})
        if key not in self.hashes:
            task = self.benchmark.get(task_id)
            self.hashes[key] = "-" if task is None else self.computed_hashes(
                cross_task, [task])[task_id]  # fmt: skip
        return self.hashes[key]

    def computed_hashes(self, cross_task: bool, tasks: list[Task] | None = None,
                        ) -> dict[str, str]:  # fmt: skip
        """`content_hash` of `tasks` (None: every task of the benchmark) computed now."""
        by_language: dict[str, str] = {}
        found = {}
        for task in self.benchmark if tasks is None else tasks:
            if cross_task and task.language in by_language:
                found[task.task_id] = by_language[task.language]
                continue
            targets = [t for t in self.benchmark if t.language == task.language] if (
                cross_task) else [task]  # fmt: skip
            digest = hashlib.sha256()
            for target in targets:
                for part in (target.task_id, target.language, canonical_source(target)):
                    digest.update(part.encode("utf-8", "surrogatepass") + b"\0")
            found[task.task_id] = by_language[task.language] = digest.hexdigest()[:24]
        return found

    def _decode_hashes(self, data: dict) -> dict[str, str]:
        hashes = {str(task_id): str(value) for task_id, value in data.items()}
        if set(hashes) != {task.task_id for task in self.benchmark}:
            raise ValueError("hashes of other tasks")
        return hashes

    def extractor(self, language: str, layout: Layout = "statements") -> FragmentExtractor:
        if (language, layout) not in self.extractors:
            self.extractors[language, layout] = FragmentExtractor(get_language(language), layout)
        return self.extractors[language, layout]

    def of(
        self, task_id: str, layout: Layout = "statements", entry_point: str | None = None
    ) -> list[Fragment]:
        """The task's canonical fragment; under `entry_point` when the sample's prompt renamed
        the task's function (the study's _P6 prompts), so a verbatim copy stays Type-1."""
        task = self.benchmark.get(task_id)
        if task is not None and entry_point == task.entry_point:
            entry_point = None
        key = (task_id, layout) if entry_point is None else (task_id, layout, entry_point)
        if key not in self.cache and entry_point is None:
            self.load_layout(layout)
        if key not in self.cache:
            self.cache[key] = self.extracted(task_id, layout, entry_point)
        return self.cache[key]

    def extracted(self, task_id: str, layout: Layout, entry_point: str | None = None,
                  ) -> list[Fragment]:  # fmt: skip
        """The task's canonical fragment extracted now (see `of`)."""
        task = self.benchmark.get(task_id)
        if task is None:
            return []
        source = SourceFile(f"canonical/{task_id}", canonical_source(task, entry_point))
        fragments = self.extractor(task.language, layout).extract(source)
        name = entry_point or task.entry_point
        return [f for f in fragments if f.name == name] or fragments

    def entry(self, task_id: str, layout: Layout = "statements") -> Fragment | None:
        """The canonical's entry-point fragment."""
        task = self.benchmark.get(task_id)
        fragments = self.of(task_id, layout)
        named = [f for f in fragments if task and f.name == task.entry_point]
        return (named or fragments or [None])[-1]

    def profile(self, task_id: str) -> CanonicalProfile | None:
        """The task's canonical as evidence sees it (None: no canonical function)."""
        if not self.profiles and self.disk.enabled:
            key = content_key(self.benchmark_key, "profiles")

            def compute() -> dict[str, CanonicalProfile | None]:
                return {task.task_id: self.built_profile(task.task_id) for task in self.benchmark}

            self.profiles.update(self.disk.get("canonical-profiles", key, compute,
                                               encode_profiles, decode_profiles))  # fmt: skip
        if task_id not in self.profiles:
            self.profiles[task_id] = self.built_profile(task_id)
        return self.profiles[task_id]

    def built_profile(self, task_id: str) -> CanonicalProfile | None:
        """The task's profile computed now (see `profile`)."""
        task, fragment = self.benchmark.get(task_id), self.entry(task_id)
        if task is None or fragment is None:
            return None
        if self.usage is None:
            self.usage = name_usage(self.benchmark, self.of)
        return build_profile(task, fragment, self.extractor(task.language), self.usage,
                             len(self.benchmark))  # fmt: skip


FRAGMENT_FIELDS = tuple(f.name for f in fields(Fragment))


def encode_fragments(found: dict[str, list[Fragment]]) -> dict:
    """Fragments per task as JSON (`decode_fragments` reads them back)."""
    return {task_id: [[getattr(f, name) for name in FRAGMENT_FIELDS] for f in fragments]
            for task_id, fragments in found.items()}  # fmt: skip


def decode_fragments(data: dict) -> dict[str, list[Fragment]]:
    def fragment(values: list) -> Fragment:
        if len(values) != len(FRAGMENT_FIELDS):
            raise ValueError("a fragment of another shape")
        named = dict(zip(FRAGMENT_FIELDS, values, strict=True))
        named["lines"] = tuple(tuple(map(tuple, tokens)) for tokens in named["lines"])
        return Fragment(**named)  # lines: (kind, text) tokens, as tuples again

    return {str(task_id): [fragment(f) for f in fragments] for task_id, fragments in data.items()}


PROFILE_FIELDS = tuple(f.name for f in fields(CanonicalProfile))


def encode_profiles(found: dict[str, CanonicalProfile | None]) -> dict:
    return {task_id: None if p is None else [getattr(p, name) for name in PROFILE_FIELDS]
            for task_id, p in found.items()}  # fmt: skip


def decode_profiles(data: dict) -> dict[str, CanonicalProfile | None]:
    def profile(values: list | None) -> CanonicalProfile | None:
        if values is None:
            return None
        if len(values) != len(PROFILE_FIELDS):
            raise ValueError("a profile of another shape")
        return CanonicalProfile(**{name: tuple(v) if isinstance(v, list) else v
                                   for name, v in zip(PROFILE_FIELDS, values, strict=True)})
    return {str(task_id): profile(values) for task_id, values in data.items()}


@dataclass(frozen=True)
class SampleProgram:
    sample_id: int
    task_id: str
    program: str
    prompt_set: str = ""
    entry_point: str | None = None
    """The function the sample's prompt asked for (None: the task's own)."""


def inputs_key(canonicals: CanonicalFragments, settings: DetectionSettings,
               sample: SampleProgram) -> str:  # fmt: skip
    """What decides a verdict besides the detector: the canonical compared against, the
    sample's prompt set, the entry point its prompt asked for and its program (content
    hashes)."""
    digest = hashlib.sha256()
    for part in (canonicals.content_hash(sample.task_id, settings.cross_task),
                 sample.prompt_set, sample.entry_point or "", sample.program):  # fmt: skip
        digest.update(part.encode("utf-8", "surrogatepass") + b"\0")
    return digest.hexdigest()[:24]


def too_large(sample: SampleProgram, limit: int = MAX_PROGRAM_BYTES) -> bool:
    text = sample.program
    return len(text) > limit // 4 and len(text.encode("utf-8", "replace")) > limit


def detect_task(
    canonicals: CanonicalFragments,
    settings: DetectionSettings,
    task_id: str,
    samples: list[SampleProgram],
    entry_point: str | None = None,
) -> list[Verdict]:
    """Verdicts for one task's samples against its canonical (or every canonical); the own
    task's canonical under `entry_point` when the samples' prompt renamed it."""
    task = canonicals.benchmark.get(task_id)
    language = task.language if task else "python"
    layout = settings.config.profile.layout
    extractor = canonicals.extractor(language, layout)
    answer_name = entry_point or (task.entry_point if task else "")
    fragments_b: list[Fragment] = []
    answers: dict[int, tuple[list[Fragment], bool]] = {}
    for sample in samples:
        if too_large(sample):
            continue  # refused before parsing; counted by the caller
        source = SourceFile(f"sample/{sample.sample_id}", settings.sample_text(
            sample.program or "", language))  # fmt: skip
        # the answer, not the context: only the entry point's function, what it nests and the
        # helpers it uses are candidates; a sample without the entry point offers every function
        answer, scope = extractor.extract_answer(source, answer_name)
        if scope is None:
            answer = extractor.extract(source)
        answers[sample.sample_id] = (answer, scope is not None)
        fragments_b += answer
    own_profile = canonicals.profile(task_id)
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
        renamed = entry_point if target == task_id else None
        report = compare_systems(canonicals.of(target, layout, renamed), fragments_b, config)
        for pair in report.pairs:
            sample_id = int(pair.b.file.split("/", 1)[1])
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
                    "in_answer": True,  # only the answer is a candidate (or every function
                    # of a sample without the entry point)
                    "features": features.as_dict() if features else None,
                }
            )
    verdicts = []
    for sample_id, pairs in pairs_by_sample.items():
        summary = None
        if own_profile is not None:
            answer, found = answers.get(sample_id, ([], False))
            best = best_answer_features(own_profile, answer, programs[sample_id])
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
    """The `detections` table, in the same SQLite file as the samples; with `read_only`,
    verdicts are computed but not kept."""

    def __init__(self, db: sqlite3.Connection, read_only: bool = False) -> None:
        self.db, self.read_only = db, read_only
        columns = {row[1] for row in db.execute("PRAGMA table_info(detections)")}
        self.usable = {"inputs_key", "answer"} <= columns
        if not read_only:
            if columns and not self.usable:
                # verdicts of an older store were keyed by the detector settings only (or
                # lack the evidence's answer features): they are redone
                with db:
                    db.execute("DROP TABLE detections")
            db.executescript(SCHEMA)
            self.usable = True

    def matching(self, detector_key: str, keys: dict[int, str]) -> dict[int, Verdict]:
        """Stored verdicts of these samples reached on these inputs (sample id -> key)."""
        if not self.usable or not keys:
            return {}
        rows = rows_with_current_inputs(
            self.db,
            "SELECT sample_id, clone_type, similarity, trivial_type, pairs, answer, inputs_key "
            "FROM detections WHERE detector_key = ? AND sample_id IN ({ids})",
            keys, (detector_key,),
        )  # fmt: skip
        return {row[0]: _stored_verdict(row) for row in rows}

    def verdicts(self, detector_key: str) -> dict[int, Verdict]:
        """Every stored verdict under these detector settings (whatever inputs reached it)."""
        if not self.usable:
            return {}
        cursor = self.db.execute(
            "SELECT sample_id, clone_type, similarity, trivial_type, pairs, answer "
            "FROM detections WHERE detector_key = ?",
            (detector_key,),
        )
        return {row[0]: _stored_verdict(row) for row in cursor}

    def add(self, detector_key: str, verdicts: Iterable[Verdict], keys: dict[int, str]) -> None:
        if self.read_only:
            return
        rows = [
            (v.sample_id, detector_key, v.clone_type, v.similarity, v.trivial_type,
             json.dumps(list(v.pairs)), keys[v.sample_id], json.dumps(v.answer or {}))
            for v in verdicts
        ]  # fmt: skip
        with self.db:
            self.db.executemany(
                "INSERT OR REPLACE INTO detections (sample_id, detector_key, clone_type, "
                "similarity, trivial_type, pairs, inputs_key, answer) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                rows,
            )


def _stored_verdict(row: tuple) -> Verdict:
    return Verdict(row[0], row[1], row[2], row[3], tuple(json.loads(row[4])),
                   json.loads(row[5]) if row[5] else None)  # fmt: skip


def as_compared(sample: SampleProgram) -> SampleProgram:
    """A disguised-prompt sample mapped back through the disguise's renaming (its entry point,
    parameters and docstring names given their original names again), so it is compared with
    the canonical as if written for the original prompt; any other sample as it is."""
    renames = disguise_renames(sample.prompt_set, sample.task_id)
    if not renames:
        return sample
    return replace(sample, program=map_back(sample.program, renames), entry_point=None)


def judge(
    store: DetectionStore,
    canonicals: CanonicalFragments,
    settings: DetectionSettings,
    samples: list[SampleProgram],
) -> dict[int, Verdict]:
    """Verdicts for samples (of any tasks): stored ones reached on the same inputs, the rest
    detected now (and stored unless the store is read-only)."""
    keys = {s.sample_id: inputs_key(canonicals, settings, s) for s in samples}
    verdicts = store.matching(settings.key, keys)
    todo: dict[tuple[str, str | None], list[SampleProgram]] = {}
    for sample in samples:
        if sample.sample_id not in verdicts:
            compared = as_compared(sample)
            todo.setdefault((compared.task_id, compared.entry_point), []).append(compared)
    for (task_id, entry_point), task_samples in todo.items():
        fresh = detect_task(canonicals, settings, task_id, task_samples, entry_point)
        store.add(settings.key, fresh, keys)
        verdicts.update((v.sample_id, v) for v in fresh)
    return verdicts


def detect_samples(
    db: sqlite3.Connection,
    benchmark: Benchmark,
    settings: DetectionSettings,
    samples: list[SampleProgram],
    progress: Callable[[int], None] | None = None,
) -> dict[int, Verdict]:
    """Verdicts for every sample, detecting those not yet judged on the same inputs."""
    store, canonicals = DetectionStore(db), CanonicalFragments(benchmark)
    verdicts: dict[int, Verdict] = {}
    by_task: dict[str, list[SampleProgram]] = {}
    for sample in samples:
        by_task.setdefault(sample.task_id, []).append(sample)
    for task_samples in by_task.values():
        verdicts.update(judge(store, canonicals, settings, task_samples))
        if progress:
            progress(len(task_samples))
    return verdicts
