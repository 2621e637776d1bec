"""`cloneprobe scan`: find the benchmark's canonical solutions and prompts in a corpus."""

from __future__ import annotations

from pathlib import Path

import click

from ..errors import UserError
from ..scan.executors import ExecutorSettings
from ..scan.readers import CorpusSettings
from .checks import FiniteFloat
from .options import benchmark_option, config_option, meaning, option

CORPUS = CorpusSettings(path="")
EXECUTOR = ExecutorSettings()
"""The scan's settings' own defaults, shown in --help."""


def check_scan_output(output: str, corpora) -> None:
    """An --output that can hold a scan's results: not empty, not an existing file (a store or
    a sample file), not a corpus folder or inside one (the results would be read as corpus)."""
    if not output.strip():
        raise UserError(f"--output {output!r} is an empty path; give a folder for the results")
    if "://" in output:
        return
    target = Path(output).resolve()
    if target.exists() and not target.is_dir():
        raise UserError(f"--output {output}: is a file; give a folder for the results (a new "
                        "path makes one)")  # fmt: skip
    for corpus in corpora:
        if "://" in corpus or not Path(corpus).is_dir():
            continue
        folder = Path(corpus).resolve()
        if target == folder or folder in target.parents:
            raise UserError(f"--output {output}: is inside the corpus {corpus}, so the results "
                            "would be read as corpus; give a folder outside it")  # fmt: skip


@click.command("scan")
@click.argument("corpora", nargs=-1, required=True)
@config_option
@click.option("--output", required=True,
              help=meaning("--output", " (or an fsspec URL, shared by every node on a "
                           "cluster): the ranks' results, the completion markers that make a "
                           "re-run resume, and summary.json."))
@click.option("--format", "corpus_format", default=CORPUS.format, show_default=True,
              type=click.Choice(["auto", "jsonl", "parquet", "hf", "files"]),
              help="jsonl (.gz/.zst too), parquet, hf (a dataset saved with save_to_disk) or "
              "files (a folder of source files); auto decides from what the folder holds.")
@click.option("--text-field", default=CORPUS.text_field, show_default=True,
              help="Field holding a document's text (jsonl, parquet, hf).")
@click.option("--id-field", default=CORPUS.id_field, show_default=True,
              help="Field holding a document's id (default: file and line).")
@click.option("--group-field",
              help="Field naming a document's repository, to report the repositories a task's "
              "matches come from (folders of files: their first folder).")
@click.option("--glob", "glob_pattern", help="Which files to read (files: **/*.py).")
@benchmark_option
@click.option("--executor", default=EXECUTOR.kind, show_default=True,
              type=click.Choice(["local", "slurm", "ray"]),
              help="local: processes on this machine; slurm: an sbatch array job; ray: a Ray "
              "cluster (--ray-address, or a local one).")
@click.option("--workers", type=click.IntRange(min=0), default=EXECUTOR.workers,
              help=meaning("--workers", ": ranks (default: this machine's cores; all on a "
                           "cluster)."))
@option("--ranks", "tasks", type=click.IntRange(min=0), default=EXECUTOR.tasks, old=("--tasks",),
        help="Ranks the corpus is cut into (default: 4 per worker, at most one per file).")
@option("--max-docs", "limit", type=int, default=-1, old=("--limit",),
        help="Documents per rank and corpus, to try a scan on a sample (-1: all).")
@click.option("--partition", help="Slurm partition.")
@click.option("--time", "time_limit", default=EXECUTOR.time, show_default=True,
              help="Slurm time limit per rank.")
@click.option("--cpus-per-task", type=click.IntRange(min=1), default=EXECUTOR.cpus_per_task,
              show_default=True,
              help="CPUs reserved per rank (slurm, ray).")
@click.option("--mem-per-cpu-gb", type=FiniteFloat(0.1),
              default=float(EXECUTOR.mem_per_cpu_gb),
              show_default=True, help="Memory reserved per CPU (slurm, ray).")
@click.option("--env-command",
              help="Shell line a Slurm job runs first, e.g. 'source venv/bin/activate'.")
@click.option("--ray-address", help="A running Ray cluster: auto, or ray://HOST:10001.")
@click.option("--json", "as_json", is_flag=True,
              help=meaning("--json", ": the summary (with its `matches` list) as one object."))
def scan_command(corpora, output, corpus_format, text_field, id_field, group_field,
                 glob_pattern, benchmark_spec, executor, workers, tasks, limit, partition,
                 time_limit, cpus_per_task, mem_per_cpu_gb, env_command, ray_address,
                 as_json) -> None:  # fmt: skip
    """Look for the benchmark's canonical solutions and prompts in CORPUS (jsonl, parquet,
    a saved Hugging Face dataset, or a folder of source files), on this machine or a
    cluster, with datatrove. Re-running the same command resumes: only unfinished ranks run.

    \b
      cloneprobe scan corpus/ --output scan-out/
      cloneprobe scan shards/ --text-field content --group-field repo_name --output out/ --json
      cloneprobe scan s3://bucket/stack/ --format parquet --executor slurm \\
          --partition cpu --output s3://bucket/scan/
    """
    import json
    import time

    from ..reports.scan_text import print_summary, progress_printer
    from ..scan.executors import ExecutorSettings
    from ..scan.readers import CorpusSettings
    from ..scan.runner import ScanSettings, run_scan
    from .console import error_console, output_console

    if glob_pattern is not None and not glob_pattern.strip():
        raise UserError(f"--glob {glob_pattern!r}: an empty pattern matches no file; give a "
                        "pattern such as **/*.jsonl, or leave --glob out for the format's own")
    if executor == "slurm" and not partition:
        raise UserError("--executor slurm needs --partition (the Slurm partition to use); give "
                        "--partition NAME")  # fmt: skip
    check_scan_output(output, corpora)
    if limit == 0 or limit < -1:
        raise UserError(f"--max-docs {limit}: give a number of documents of at least 1, or -1 "
                        "for all of them")  # fmt: skip
    settings = ScanSettings(
        corpora=tuple(
            CorpusSettings(path, corpus_format, text_field, id_field, glob_pattern)
            for path in corpora
        ),
        output=output,
        benchmark=benchmark_spec,
        group_field=group_field,
        executor=ExecutorSettings(
            kind=executor, workers=workers, tasks=tasks, partition=partition, time=time_limit,
            cpus_per_task=cpus_per_task, mem_per_cpu_gb=mem_per_cpu_gb,
            env_command=env_command, ray_address=ray_address,
        ),
        limit=limit,
    )
    import sys

    console = error_console()
    console.file = sys.stderr  # bound now: while workers run, sys.stderr goes to their log
    from .plan import print_plan

    print_plan(console, "scan", [
        f"corpora: {', '.join(corpora)} ({corpus_format}); benchmark {benchmark_spec}"
        + (f", the first {limit} documents" if limit > 0 else ""),
        f"executor: {executor}, {workers} workers, "
        + (f"{tasks} ranks" if tasks else "ranks as the executor chooses") + f"; output: {output}",
        "estimate: from the ranks finished (each an equal share of the corpus); the ETA "
        "follows once the first rank is done",
    ])  # fmt: skip
    with progress_printer(console) as progress:
        started = time.monotonic()
        summary = run_scan(settings, progress)
    if summary.get("status") == "submitted":
        console.print(f"submitted {summary['pending']} of {summary['ranks']} ranks to Slurm; "
                      f"{summary['next']} to merge them", highlight=False)  # fmt: skip
        if as_json:
            click.echo(json.dumps(summary, indent=1))
        return
    if as_json:
        click.echo(json.dumps(summary, indent=1))
    else:
        print_summary(summary, output_console())
    console.print(f"scan done in {time.monotonic() - started:.1f} s; summary: "
                  f"{output.rstrip('/')}/summary.json", highlight=False)  # fmt: skip
