"""cloneprobe.benchmarks: tasks, prompt sets and the canonical fragments samples are compared with.

Knows nothing of models or clone detection.
"""

from .canonical import canonical_source, nicad_min_lines
from .edits import ISSUE_KINDS, PromptEdit
from .errors import BenchmarkError
from .prompts import Prompt, PromptSet, export_jsonl, load_prompt_set, load_prompt_sets
from .tasks import Benchmark, Task, load_benchmark_jsonl, load_humaneval

__all__ = [
    "ISSUE_KINDS",
    "Benchmark",
    "BenchmarkError",
    "Prompt",
    "PromptEdit",
    "PromptSet",
    "Task",
    "canonical_source",
    "export_jsonl",
    "load_benchmark",
    "load_benchmark_jsonl",
    "load_humaneval",
    "load_prompt_set",
    "load_prompt_sets",
    "nicad_min_lines",
]


def load_benchmark(spec: str | None = None) -> Benchmark:
    """`humaneval` (the default) or a path to a benchmark JSONL."""
    from pathlib import Path

    if spec in (None, "", "humaneval"):
        return load_humaneval()
    path = Path(spec)
    if not path.is_file():
        raise BenchmarkError(f"benchmark {spec!r}: not 'humaneval' and no such file")
    return load_benchmark_jsonl(path)
