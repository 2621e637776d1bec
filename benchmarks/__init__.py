"""cloneprobe.benchmarks: tasks, prompt sets and the canonical fragments samples are compared with.

Knows nothing of models or clone detection.

Names are imported on first use (lazy_loader), so importing the package for one name
does not import all of it.
"""

import lazy_loader

__getattr__, __dir__, __all__ = lazy_loader.attach(
    __name__,
    submod_attrs={
        "canonical": ["canonical_source", "nicad_min_lines"],
        "edits": ["ISSUE_KINDS", "PromptEdit"],
        "entry_points": ["alias_original_name", "prompt_entry_point", "rename_identifier"],
        "errors": ["BenchmarkError"],
        "registry": ["BENCHMARKS", "DEFAULT_BENCHMARK", "BenchmarkEntry", "benchmark_choices",
                     "register_benchmark"],
        "prompts": ["Prompt", "PromptSet", "export_jsonl", "load_prompt_set", "load_prompt_sets"],
        "selection": ["id_prefix", "resolve_task_id", "select_tasks"],
        "tasks": ["Benchmark", "Task", "load_benchmark", "load_benchmark_jsonl", "load_humaneval"],
    },
)
