"""`cloneprobe report`: the stored results again, in any format."""

from __future__ import annotations

from pathlib import Path

import click

from ..generation.store import DEFAULT_STORE
from .options import detection_settings, detector_options, report_options


@click.command("report")
@click.option("--store", "store_path", type=click.Path(path_type=Path, dir_okay=False),
              default=DEFAULT_STORE, show_default=True)  # fmt: skip
@click.option("--model", "models", multiple=True, help="Only this model (repeat).")
@click.option("--prompt-set", "prompt_sets", multiple=True, help="Only this prompt set (repeat).")
@click.option("--benchmark", "benchmark_spec", default="humaneval", show_default=True)
@detector_options
@report_options
def report_command(store_path, models, prompt_sets, benchmark_spec, **options) -> None:
    """Render the stored results again, in any format (detecting what is not yet judged
    under the chosen detector settings).

    \b
      cloneprobe report --report out/
      cloneprobe report --profile nicad --json > nicad.json
    """
    import sqlite3

    from ..benchmarks import load_benchmark
    from ..generation import GenerationError, SampleStore
    from ..pipeline import detect_and_report, select_samples
    from .console import BarReporter, emit_report, error_console

    if not store_path.exists():
        raise GenerationError(f"{store_path}: no such store; run cloneprobe audit first")
    benchmark = load_benchmark(benchmark_spec)
    detection = detection_settings(options)
    try:
        with SampleStore(store_path) as store:
            samples = select_samples(store, list(models), list(prompt_sets))
            if not samples:
                raise GenerationError(f"{store_path}: no samples match")
            report = detect_and_report(
                store, benchmark, detection, samples, BarReporter(error_console())
            )
    except sqlite3.DatabaseError as error:
        raise GenerationError(f"{store_path}: {error}") from error
    emit_report(report, options)
