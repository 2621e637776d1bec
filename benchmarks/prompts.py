"""Prompt sets: the prompts a model is sampled on, in one or more variants per task.

Built in: `original` (the benchmark's own prompts), `fixed` (our quality-fixed HumanEval
prompts, with provenance) and `disguised` (HumanEval prompts refactored so that memory of the
original is not triggered: `disguise.py`, data built by `build_disguised`). From files: a
folder in the reference study's layout (`<index>.py` original, `<index>_all.py` all issues
fixed, `<index>_P<k>.py` one issue kind fixed), or a JSONL with `task_id`, `prompt` and
optional `variant`.
"""

from __future__ import annotations

import ast
import json
import logging
import re
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from pathlib import Path

from ..atomic import atomic_text_file
from .entry_points import prompt_entry_point
from .errors import BenchmarkError
from .selection import id_prefix
from .tasks import Benchmark, Task, _jsonl_records

log = logging.getLogger(__name__)

BUILT_IN = ("original", "fixed", "disguised")
STUDY_FILE = re.compile(r"^(\d+)(?:_(all|P\d+))?\.py$")


@dataclass(frozen=True)
class Prompt:
    task_id: str
    variant: str
    text: str
    entry_point: str | None = None
    """The function this prompt asks for when it renames the task's entry point (the study's
    `_P6` files); None: the task's own."""

    def entry_point_of(self, task: Task) -> str:
        return self.entry_point or task.entry_point


@dataclass(frozen=True)
class PromptSet:
    name: str
    source: str
    """`built-in` or the path it was loaded from."""
    prompts: tuple[Prompt, ...]
    skipped: tuple[str, ...] = field(default=())
    """Files passed over because their names do not follow the layout (a warning names them)."""

    def variants(self) -> dict[str, int]:
        """Variant name -> number of tasks, in order of first appearance."""
        counts: dict[str, int] = {}
        for prompt in self.prompts:
            counts[prompt.variant] = counts.get(prompt.variant, 0) + 1
        return counts

    def for_task(self, task_id: str) -> list[Prompt]:
        return [p for p in self.prompts if p.task_id == task_id]


def fixed_records() -> list[dict]:
    """The shipped fixed HumanEval prompts with their provenance (one record per task)."""
    data = resources.files("cloneprobe.benchmarks").joinpath("data/humaneval_fixed.jsonl")
    return [json.loads(line) for line in data.read_text(encoding="utf-8").splitlines() if line]


def disguised_records() -> list[dict]:
    """The shipped disguised HumanEval prompts: prompt, entry point and renames per task."""
    data = resources.files("cloneprobe.benchmarks").joinpath("data/humaneval_disguised.jsonl")
    return [json.loads(line) for line in data.read_text(encoding="utf-8").splitlines() if line]


def disguise_renames(prompt_set: str, task_id: str) -> dict[str, str]:
    """Original name -> disguised name of a task's prompt in `prompt_set` (empty: none)."""
    if prompt_set != "disguised":
        return {}
    return dict(_renames().get(task_id, {}))


def disguised_prompt(task_id: str) -> str | None:
    """The shipped disguised prompt of a HumanEval task (None: none)."""
    return _prompts().get(task_id)


@lru_cache(maxsize=1)
def _prompts() -> dict[str, str]:
    return {r["task_id"]: r["prompt"] for r in disguised_records()}


@lru_cache(maxsize=1)
def _renames() -> dict[str, dict[str, str]]:
    return {r["task_id"]: r["renames"] for r in disguised_records()}


def load_prompt_set(spec: str, benchmark: Benchmark) -> PromptSet:
    """A built-in set by name, or a folder or JSONL file by path."""
    if spec == "original":
        prompts = tuple(Prompt(t.task_id, "original", t.prompt) for t in benchmark)
        return PromptSet("original", "built-in", prompts)
    if spec == "fixed":
        if "fixed" not in benchmark.prompt_sets:
            raise BenchmarkError(
                f"prompt set 'fixed' exists for HumanEval only, not for {benchmark.name!r}; "
                "give a folder or JSONL of fixed prompts instead"
            )
        prompts = tuple(Prompt(r["task_id"], "fixed", r["prompt"]) for r in fixed_records())
        return PromptSet("fixed", "built-in", prompts)
    if spec == "disguised":
        if "disguised" not in benchmark.prompt_sets:
            raise BenchmarkError(
                f"prompt set 'disguised' exists for HumanEval only, not for {benchmark.name!r}; "
                "give a folder or JSONL of prompts instead"
            )
        prompts = tuple(Prompt(r["task_id"], "disguised", r["prompt"], r["entry_point"])
                        for r in disguised_records())  # fmt: skip
        return PromptSet("disguised", "built-in", prompts)
    path = Path(spec)
    if path.is_dir():
        return _load_study_folder(path, benchmark)
    if path.is_file() and path.suffix == ".py":
        raise BenchmarkError(
            f"prompt set {spec!r}: one Python file, not a set; a prompt set is a folder of "
            "<index>.py files (the reference study's layout) or a JSONL of task_id and prompt; "
            f"give the folder that holds it, {path.parent}"
        )
    if path.is_file():
        return _load_prompt_jsonl(path, benchmark)
    raise BenchmarkError(
        f"prompt set {spec!r}: not a built-in set ({', '.join(BUILT_IN)}) "
        "and no such file or folder; give a built-in set or the path of a prompts folder or JSONL"
    )


def load_prompt_sets(specs: str, benchmark: Benchmark) -> list[PromptSet]:
    """Comma-separated prompt sets, e.g. `original,fixed` or `original,prompts/fixed.jsonl`."""
    names = list(dict.fromkeys(s.strip() for s in specs.split(",") if s.strip()))
    if not names:
        raise BenchmarkError("no prompt set given: use e.g. --prompts original,fixed")
    return [load_prompt_set(name, benchmark) for name in names]


def _check_prompt(text: str, task: Task, where: str) -> str | None:
    """The prompt must parse (Python) and define the task's entry point, or one function that
    renames it; returns the new name (None: not renamed)."""
    if task.language != "python":
        if f"{task.entry_point}(" not in text:
            raise BenchmarkError(f"{where}: does not define the entry point {task.entry_point}")
        return None
    try:
        ast.parse(text)
    except SyntaxError as error:
        raise BenchmarkError(
            f"{where}: does not parse as Python (line {error.lineno}: {error.msg})"
        ) from error
    entry_point = prompt_entry_point(text, task, where)
    return None if entry_point == task.entry_point else entry_point


def _task_for_index(index: int, benchmark: Benchmark, where: Path) -> Task:
    prefix = id_prefix(benchmark)
    task = benchmark.get(f"{prefix}/{index}")
    if task is None:
        raise BenchmarkError(
            f"{where}: index {index} names no task of {benchmark.name} "
            f"({prefix}/0..{prefix}/{len(benchmark) - 1}); rename or remove the file, or give "
            "the --benchmark it belongs to"
        )
    return task


def _load_study_folder(path: Path, benchmark: Benchmark) -> PromptSet:
    prompts, skipped = [], []
    for file in sorted(path.iterdir()):
        match = STUDY_FILE.match(file.name)
        if not file.is_file() or match is None:
            skipped.append(file.name)
            continue
        task = _task_for_index(int(match.group(1)), benchmark, file)
        variant = match.group(2) or "original"
        try:
            # a byte-order mark or Windows line ends (files edited by hand) are not the prompt's
            text = file.read_text(encoding="utf-8-sig").replace("\r\n", "\n")
        except (OSError, UnicodeDecodeError) as error:
            raise BenchmarkError(f"{file}: cannot read as UTF-8 text ({error})") from error
        renamed = _check_prompt(text, task, str(file))
        prompts.append(Prompt(task.task_id, variant, text, renamed))
    if skipped:
        log.warning(
            "%s: skipped %d file(s) not named <index>.py, <index>_all.py or <index>_P<k>.py: %s",
            path,
            len(skipped),
            ", ".join(skipped[:5]) + (" ..." if len(skipped) > 5 else ""),
        )
    if not prompts:
        raise BenchmarkError(
            f"{path}: no prompt files named <index>.py, <index>_all.py or <index>_P<k>.py; "
            "give a folder in that layout, or a JSONL of task_id and prompt"
        )
    order = {t.task_id: i for i, t in enumerate(benchmark)}
    prompts.sort(key=lambda p: (order[p.task_id], _variant_order(p.variant)))
    return PromptSet(path.name, str(path), tuple(prompts), tuple(skipped))


def _variant_order(variant: str) -> tuple[int, int]:
    if variant == "original":
        return (0, 0)
    if variant == "all":
        return (1, 0)
    return (2, int(variant[1:])) if variant[1:].isdecimal() else (3, 0)


def _load_prompt_jsonl(path: Path, benchmark: Benchmark) -> PromptSet:
    prompts, seen = [], set()
    for number, record in _jsonl_records(path):
        where = f"{path}:{number}"
        task_id, text = record.get("task_id"), record.get("prompt")
        if not isinstance(task_id, str) or not isinstance(text, str):
            raise BenchmarkError(f"{where}: each line needs string fields task_id and prompt; "
                                 "give both as text")  # fmt: skip
        task = benchmark.get(task_id)
        if task is None:
            raise BenchmarkError(f"{where}: task_id {task_id!r} is not a task of {benchmark.name}")
        variant = record.get("variant") or path.stem
        if (task_id, variant) in seen:
            raise BenchmarkError(f"{where}: a second prompt for {task_id} variant {variant!r}")
        seen.add((task_id, variant))
        renamed = _check_prompt(text, task, where)
        prompts.append(Prompt(task_id, str(variant), text, renamed))
    if not prompts:
        raise BenchmarkError(f"{path}: no prompts in the file")
    return PromptSet(path.stem, str(path), tuple(prompts))


def export_jsonl(prompt_set: PromptSet, path: Path) -> int:
    """Write `task_id`, `variant`, `prompt` per line, whole or not at all; returns the number
    written."""
    with atomic_text_file(path) as out:
        for prompt in prompt_set.prompts:
            record = {"task_id": prompt.task_id, "variant": prompt.variant, "prompt": prompt.text}
            out.write(json.dumps(record) + "\n")
    return len(prompt_set.prompts)
