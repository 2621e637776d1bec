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
    under the chosen detector settings). The store is opened read-only: verdicts not stored
    yet are computed for this report only (`detect` stores them).

    \b
      cloneprobe report --report out/
      cloneprobe report --profile nicad --json > nicad.json
    """
    from ..benchmarks import load_benchmark
    from ..generation import SampleStore
    from ..pipeline import detect_and_report, select_samples
    from .checks import check_outputs
    from .console import emit_report, progress_reporter

    check_outputs(options)
    benchmark = load_benchmark(benchmark_spec)
    detection = detection_settings(options)
    with SampleStore(store_path, read_only=True) as store:
        samples = select_samples(store, list(models), list(prompt_sets))
        report = detect_and_report(
            store, benchmark, detection, samples, progress_reporter()
        )
        emit_report(report, options)
