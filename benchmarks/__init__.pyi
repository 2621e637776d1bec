"""Names of the package, loaded on first use (lazy_loader reads this stub at run time;
type checkers read it as the package's interface)."""

from .canonical import canonical_source as canonical_source
from .canonical import nicad_min_lines as nicad_min_lines
from .edits import ISSUE_KINDS as ISSUE_KINDS
from .edits import PromptEdit as PromptEdit
from .entry_points import (
    alias_original_name as alias_original_name,
)
from .entry_points import (
    prompt_entry_point as prompt_entry_point,
)
from .entry_points import (
    rename_identifier as rename_identifier,
)
from .errors import BenchmarkError as BenchmarkError
from .prompts import (
    Prompt as Prompt,
)
from .prompts import (
    PromptSet as PromptSet,
)
from .prompts import (
    export_jsonl as export_jsonl,
)
from .prompts import (
    load_prompt_set as load_prompt_set,
)
from .prompts import (
    load_prompt_sets as load_prompt_sets,
)
from .registry import BENCHMARKS as BENCHMARKS
from .registry import DEFAULT_BENCHMARK as DEFAULT_BENCHMARK
from .registry import BenchmarkEntry as BenchmarkEntry
from .registry import benchmark_choices as benchmark_choices
from .registry import load_benchmark as load_benchmark
from .registry import register_benchmark as register_benchmark
from .selection import (
    id_prefix as id_prefix,
)
from .selection import (
    resolve_task_id as resolve_task_id,
)
from .selection import (
    select_tasks as select_tasks,
)
from .tasks import (
    Benchmark as Benchmark,
)
from .tasks import (
    Task as Task,
)
from .tasks import (
    load_benchmark_jsonl as load_benchmark_jsonl,
)
from .tasks import (
    load_humaneval as load_humaneval,
)

__all__ = [
    "BENCHMARKS",
    "DEFAULT_BENCHMARK",
    "ISSUE_KINDS",
    "Benchmark",
    "BenchmarkEntry",
    "BenchmarkError",
    "Prompt",
    "PromptEdit",
    "PromptSet",
    "Task",
    "alias_original_name",
    "benchmark_choices",
    "canonical_source",
    "export_jsonl",
    "id_prefix",
    "load_benchmark",
    "load_benchmark_jsonl",
    "load_humaneval",
    "load_prompt_set",
    "load_prompt_sets",
    "nicad_min_lines",
    "prompt_entry_point",
    "register_benchmark",
    "rename_identifier",
    "resolve_task_id",
    "select_tasks",
]
