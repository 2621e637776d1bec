"""`cloneprobe prompts`: list, show, diff and export prompt sets."""

from __future__ import annotations

from pathlib import Path

import click

from .checks import FilePath
from .options import benchmark_option, meaning, option


@click.command("prompts")
@option(
    "--prompts",
    "set_spec",
    old=("--set",),
    metavar="original|fixed|PATH",
    help=meaning("--prompts", ": a built-in set or a folder (<index>.py, <index>_all.py, "
                 "<index>_P<k>.py) or JSONL (task_id, prompt[, variant]). Default: the "
                 "benchmark's built-in sets."),
)
@benchmark_option
@click.option("--show", "show_task", metavar="TASK", help="Print TASK's prompt in each variant.")
@click.option(
    "--diff",
    "diff_task",
    metavar="TASK",
    help="Diff TASK's original prompt against "
    "the fixed one (or each variant of --prompts), with what was changed and why.",
)
@click.option(
    "--json", "as_json", is_flag=True,
    help=meaning("--json", ": the sets, variants and task counts."),
)  # fmt: skip
@click.option(
    "--export",
    "--out",
    "export_path",
    type=FilePath(path_type=Path),
    metavar="FILE.jsonl",
    help=meaning("--out", ": the set (--prompts, default fixed), one line per prompt: task_id, "
                 "variant, prompt. --out is the name `export --out` uses; --export is the same "
                 "option."),
)
def prompts_command(
    set_spec: str | None,
    benchmark_spec: str,
    show_task: str | None,
    diff_task: str | None,
    as_json: bool,
    export_path: Path | None,
) -> None:
    """List prompt sets and their variants; show, diff or export prompts.

    \b
      cloneprobe prompts                         # sets, variants, issue kinds fixed
      cloneprobe prompts --show 47 --prompts fixed   # one task's prompt
      cloneprobe prompts --diff 116                  # what the fixed set changed, and why
      cloneprobe prompts --prompts study_prompts/ --json
      cloneprobe prompts --prompts fixed --out fixed.jsonl  # or --export fixed.jsonl
    """
    import json

    from rich.text import Text

    from cloneprobe.reports.safe_text import terminal_text

    from ..benchmarks import (
        ISSUE_KINDS,
        BenchmarkError,
        export_jsonl,
        load_benchmark,
        load_prompt_set,
        resolve_task_id,
    )
    from ..benchmarks.prompts import fixed_records
    from ..reports.prompts_text import issues_table, print_diff, print_prompt, sets_table
    from .checks import check_output_file
    from .console import error_console, output_console

    for flag, value in (("--show", show_task), ("--diff", diff_task)):
        if value is not None and not value.strip():
            raise BenchmarkError(f"{flag} {value!r} names no task; give a task id or number, "
                                 f"e.g. {flag} 0")  # fmt: skip
    actions = [flag for flag, value in (("--show", show_task), ("--diff", diff_task),
                                        ("--export", export_path), ("--json", as_json or None))
               if value is not None]  # fmt: skip
    if len(actions) > 1:
        raise BenchmarkError(f"{' and '.join(actions)} ask for different things, and only one "
                             "would be done; give one of them per command")  # fmt: skip
    if export_path is not None:
        check_output_file(export_path, "--export")  # never the benchmark or --prompts file
    benchmark = load_benchmark(benchmark_spec)
    if diff_task and not set_spec and "fixed" not in benchmark.prompt_sets:
        raise BenchmarkError(
            f"--diff {diff_task}: {benchmark.name} has no built-in fixed prompts to diff "
            "against; give the variants with --prompts FOLDER|FILE.jsonl"
        )
    console = output_console()
    if set_spec:
        sets = [load_prompt_set(set_spec, benchmark)]
    else:
        sets = [load_prompt_set(name, benchmark) for name in benchmark.prompt_sets]
    for prompt_set in sets:
        if prompt_set.skipped:
            error_console().print(
                Text("warning: ", style="yellow").append(terminal_text(
                    f"{prompt_set.source}: skipped {len(prompt_set.skipped)} file(s) not in "
                    "the <index>[_all|_P<k>].py layout")),
                highlight=False,
            )  # fmt: skip
    if export_path is not None:
        chosen = sets[0] if set_spec else load_prompt_set("fixed", benchmark)
        count = export_jsonl(chosen, export_path)
        error_console().print(terminal_text(f"wrote {count} prompts of {chosen.name} to "
                                            f"{export_path}"))  # fmt: skip
        return
    if as_json:
        data = {
            "benchmark": benchmark.name,
            "sets": [
                {
                    "name": s.name,
                    "source": s.source,
                    "variants": s.variants(),
                    "renamed_entry_points": [
                        {"task_id": p.task_id, "variant": p.variant, "entry_point": p.entry_point}
                        for p in s.prompts
                        if p.entry_point
                    ],
                }
                for s in sets
            ],
        }
        click.echo(json.dumps(data, indent=2))
        return
    if show_task:
        task_id = resolve_task_id(benchmark, show_task)
        for prompt_set in sets:
            for prompt in prompt_set.for_task(task_id):
                console.print(Text(task_id, style="bold").append(
                    terminal_text(f" {prompt_set.name}/{prompt.variant}")))
                print_prompt(console, prompt.text)  # wide lines cut, marked as --diff does
        return
    if diff_task:
        task_id = resolve_task_id(benchmark, diff_task)
        original = benchmark.get(task_id).prompt  # type: ignore[union-attr]
        if set_spec:
            task = benchmark.get(task_id)
            for prompt in sets[0].for_task(task_id):
                if prompt.variant != "original":
                    print_diff(console, task_id, original, prompt.text, prompt.variant)
                if prompt.entry_point:
                    console.print(
                        f"  entry point renamed: {task.entry_point} -> {prompt.entry_point} "  # type: ignore[union-attr]
                        "(tests call the new name)",
                        highlight=False,
                    )
            return
        record = next(r for r in fixed_records() if r["task_id"] == task_id)
        print_diff(console, task_id, original, record["prompt"], "fixed")
        for change in sorted(record["changes"], key=lambda c: (c["start"], c["end"])):
            start, end = change["start"], change["end"]
            where = f"line {start}" if start == end else f"lines {start}-{end}"
            console.print(
                f"  {ISSUE_KINDS[change['kind']]} ({where}): "
                f"{change['why']}",
                highlight=False,
                soft_wrap=True,
            )
        if not record["changes"]:
            console.print("  no change: " + (", ".join(record["found"]) or "no issue found"))
        return
    console.print(sets_table(sets))
    if "fixed" in benchmark.prompt_sets and not set_spec:
        console.print(issues_table())
