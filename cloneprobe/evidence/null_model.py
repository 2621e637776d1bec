"""How often solutions that did not copy a canonical reach it.

- Chance across tasks: answers written for *other* tasks (a bounded pool drawn evenly from the
  report's samples), their entry point renamed to the canonical's, compared with each canonical
  by the same detector. A canonical matched by many of them is generic code.
- Other solutions of the same task: samples in the store from other models, temperatures and
  prompt sets (their stored answer features), counted as how many reach a sample's similarity.
- Reference solutions the user supplies (`--reference-solutions FILE.jsonl`: `task_id` and the
  whole program as `solution`, or `completion` continuing the prompt): independent by
  construction, so one reaching a sample's similarity takes the evidence away.
"""

from __future__ import annotations

from bisect import bisect_left
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import replace
from pathlib import Path

from ..benchmarks import Benchmark, nicad_min_lines
from ..benchmarks.errors import BenchmarkError
from ..clones import Fragment, SourceFile, compare_systems
from ..content_cache import content_key
from .strength import AnswerFeatures, best_answer_features

CHANCE_POOL = 256
"""Answers of other tasks compared with every canonical for the chance rate."""
ENTRY = "__entry_point__"


class ReferencesError(BenchmarkError):
    """A reference-solutions file that cannot be read (the CLI prints it and exits 2)."""


def _renamed(fragment: Fragment, entry_point: str) -> Fragment:
    """The fragment with its task's entry point renamed to a common placeholder."""
    lines = tuple(
        tuple((kind, ENTRY) if kind == "id" and text == entry_point else (kind, text)
              for kind, text in line)
        for line in fragment.lines
    )  # fmt: skip
    return replace(fragment, lines=lines)


def chance_pool(samples: Sequence[tuple[str, str]], size: int = CHANCE_POOL) -> list[int]:
    """Indices of up to `size` samples (task_id, program), spread evenly over tasks."""
    by_task: dict[str, list[int]] = defaultdict(list)
    for index, (task_id, _) in enumerate(samples):
        by_task[task_id].append(index)
    chosen: list[int] = []
    round_ = 0
    while len(chosen) < size and any(round_ < len(v) for v in by_task.values()):
        for task_id in sorted(by_task):
            members = by_task[task_id]
            if round_ < len(members) and len(chosen) < size:
                chosen.append(members[round_])
        round_ += 1
    return chosen


def chance_rates(
    canonicals, settings, samples: Sequence[tuple[str, str]]
) -> dict[str, tuple[int, int]]:
    """Per canonical task: (other tasks' pooled answers that are non-trivial clones of it,
    pooled answers of other tasks compared). From the content cache when the same pool was
    compared with the same canonicals under the same settings and code (`canonicals.disk`)."""
    if not canonicals.disk.enabled:
        return compared_chance(canonicals, settings, samples)
    # settings.key holds the detector, its settings and the study flags
    key = content_key(canonicals.benchmark_key, repr(settings.config), settings.key,
                      *(part for sample in samples for part in sample))  # fmt: skip

    def decode(data: dict) -> dict[str, tuple[int, int]]:
        rates = {str(task_id): (int(hits), int(compared)) for task_id, (hits, compared)
                 in data.items()}  # fmt: skip
        if set(rates) != {task.task_id for task in canonicals.benchmark}:
            raise ValueError("rates of other tasks")
        return rates

    return canonicals.disk.get("chance-rates", key,
                               lambda: compared_chance(canonicals, settings, samples),
                               lambda rates: {t: list(r) for t, r in rates.items()},
                               decode)  # fmt: skip


def compared_chance(
    canonicals, settings, samples: Sequence[tuple[str, str]]
) -> dict[str, tuple[int, int]]:
    """`chance_rates` computed now: the pool's answers compared with every canonical."""
    benchmark: Benchmark = canonicals.benchmark
    pool = [samples[i] for i in chance_pool(samples)]
    layout = settings.config.profile.layout
    answers: list[Fragment] = []
    for number, (task_id, program) in enumerate(pool):
        task = benchmark.get(task_id)
        if task is None:
            continue
        extractor = canonicals.extractor(task.language, layout)
        text = settings.sample_text(program, task.language)
        answer, scope = extractor.extract_answer(SourceFile(f"pool/{number}", text),
                                                 task.entry_point)  # fmt: skip
        if scope is not None:
            answers += [_renamed(f, task.entry_point) for f in answer]
    owner = {f"pool/{n}": task_id for n, (task_id, _) in enumerate(pool)}
    per_task_pool: dict[str, int] = defaultdict(int)
    for task_id, _ in pool:
        per_task_pool[task_id] += 1
    hits: dict[str, set[str]] = defaultdict(set)
    groups: dict[int | None, list[Fragment]] = defaultdict(list)
    origin: dict[int, str] = {}
    for task in benchmark:
        entry = canonicals.entry(task.task_id, layout)
        if entry is None:
            continue
        size = nicad_min_lines(task) if settings.uses_study_min_lines else None
        renamed = _renamed(entry, task.entry_point)
        origin[id(renamed)] = task.task_id
        groups[size].append(renamed)
    for size, fragments in groups.items():
        config = settings.config if size is None else replace(settings.config, min_lines=size)
        report = compare_systems(fragments, answers, config)
        for pair in report.pairs:
            target, source = origin[id(pair.a)], owner[pair.b.file]
            if not pair.trivial and target != source:
                hits[target].add(pair.b.file)
    total = len(pool)
    return {
        task.task_id: (len(hits[task.task_id]), total - per_task_pool.get(task.task_id, 0))
        for task in benchmark
    }


def load_reference_solutions(path: Path, benchmark: Benchmark) -> dict[str, list[str]]:
    """Programs per task from a JSONL file of `task_id` with `solution` (a whole program) or
    `completion` (continuing the task's prompt)."""
    import stat

    try:
        mode = path.stat().st_mode
    except OSError as error:
        raise ReferencesError(f"--reference-solutions {path}: cannot read it ({error.strerror}); "
                              "give a JSONL file of task_id and solution") from None
    if not stat.S_ISREG(mode):
        raise ReferencesError(f"--reference-solutions {path}: not a regular file (a folder, FIFO "
                              "or device); give a JSONL file of task_id and solution")
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise ReferencesError(f"--reference-solutions {path}: cannot read the reference "
                              f"solutions ({error}); give a UTF-8 JSONL file of task_id and "
                              "solution") from error  # fmt: skip
    if not text.strip():
        raise ReferencesError(f"--reference-solutions {path}: the file is empty; give one "
                              "line of task_id and solution per reference solution")
    from ..benchmarks.tasks import parse_jsonl

    programs: dict[str, list[str]] = defaultdict(list)
    try:
        records = list(parse_jsonl(text, str(path)))  # nested too deep, a key twice: named
    except BenchmarkError as error:
        raise ReferencesError(f"--reference-solutions {error}") from None
    for number, record in records:
        task = benchmark.get(str(record.get("task_id")))
        if task is None:
            raise ReferencesError(f"{path}:{number}: unknown or missing task_id; give a task "
                                 f"of {benchmark.name}")  # fmt: skip
        if isinstance(record.get("solution"), str):
            programs[task.task_id].append(record["solution"])
        elif isinstance(record.get("completion"), str):
            programs[task.task_id].append(task.prompt + record["completion"])
        else:
            raise ReferencesError(f"{path}:{number}: needs a string `solution` (whole program) "
                                 "or `completion` (continuing the prompt); give one of "
                                 "them")  # fmt: skip
    return dict(programs)


def reference_features(canonicals, programs: dict[str, list[str]]) -> dict[str, tuple]:
    """Answer features of each reference solution against its task's canonical."""
    result: dict[str, tuple] = {}
    for task_id, sources in programs.items():
        profile = canonicals.profile(task_id)
        task = canonicals.benchmark.get(task_id)
        if profile is None or task is None:
            continue
        extractor = canonicals.extractor(task.language)
        found = []
        for number, program in enumerate(sources):
            source = SourceFile(f"reference/{number}", program)
            answer, scope = extractor.extract_answer(source, profile.entry_point)
            if scope is None:  # no function of that name: every function may be the answer
                answer = extractor.extract(source)
            features = best_answer_features(profile, answer, program)
            if features is not None:
                found.append(features)
        result[task_id] = tuple(found)
    return result


class PeerIndex:
    """Verbatim similarities of every sample's answer, per task and per group, to count how many
    solutions of the task outside a sample's group reach its similarity."""

    def __init__(self, entries: Iterable[tuple[str, tuple, float]]) -> None:
        by_task: dict[str, list[float]] = defaultdict(list)
        by_group: dict[tuple[str, tuple], list[float]] = defaultdict(list)
        for task_id, group, verbatim in entries:
            by_task[task_id].append(verbatim)
            by_group[(task_id, group)].append(verbatim)
        self.by_task = {k: sorted(v) for k, v in by_task.items()}
        self.by_group = {k: sorted(v) for k, v in by_group.items()}

    def reaching(self, task_id: str, group: tuple, verbatim: float) -> tuple[int, int]:
        """(solutions of the task in other groups at or above `verbatim`, all of them)."""
        everyone = self.by_task.get(task_id, [])
        own = self.by_group.get((task_id, group), [])
        above = (len(everyone) - bisect_left(everyone, verbatim)) - (
            len(own) - bisect_left(own, verbatim)
        )
        return above, len(everyone) - len(own)


def features_or_none(data: dict | None) -> AnswerFeatures | None:
    return AnswerFeatures.from_dict(data) if data and "verbatim" in data else None
