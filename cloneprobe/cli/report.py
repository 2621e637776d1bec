"""`cloneprobe report`: the stored results again, in any format."""

from __future__ import annotations

from pathlib import Path

import click

from .checks import CheckedPath
from .options import (
    benchmark_option,
    config_option,
    detection_settings,
    detector_options,
    models_filter_option,
    prompts_filter_option,
    report_options,
    split_names,
    store_option,
)


@click.command("report")
@config_option
@store_option(": the one to read.", dir_okay=False)
@models_filter_option()
@prompts_filter_option()
@benchmark_option
@click.option("--control", "control_dir", type=CheckedPath(path_type=Path, file_okay=False),
              help="A finished `cloneprobe control --output` folder: its section (separation, "
              "the verdict's error rates, plots) joins report.html and report.json (default: "
              "the store's folder when the store is a control's control.sqlite).")  # fmt: skip
@detector_options
@report_options
def report_command(store_path, models, prompt_sets, benchmark_spec, control_dir,
                   **options) -> None:  # fmt: skip
    """Render the stored results again, in any format (detecting what is not yet judged
    under the chosen detector settings). The store is opened read-only: verdicts not stored
    yet are computed for this report only (`detect` stores them).

    \b
      cloneprobe report --report out/
      cloneprobe report --profile nicad --json > nicad.json
      cloneprobe report --control cloneprobe-control/ --report out/
    """
    from ..benchmarks import load_benchmark
    from ..generation import SampleStore
    from ..pipeline import ReportSections, report_store
    from .checks import check_not_being_written, check_outputs, check_store_path
    from .console import emit_report, print_signal_sections, progress_reporter

    check_outputs(options)
    check_store_path(store_path)
    if (
        control_dir is None
        and (store_path.parent / "control.json").is_file()
        and store_path.name == "control.sqlite"
    ):  # a control's own store: its section too
        control_dir = store_path.parent
    if control_dir is not None:
        from ..control.saved import load_control

        load_control(control_dir)  # checked before the store is read
    sections = ReportSections(options.get("contamination_dir"), control_dir)
    benchmark = load_benchmark(benchmark_spec)
    detection = detection_settings(options)
    with SampleStore(store_path, read_only=True) as store:
        check_not_being_written(store, store_path)
        report = report_store(store, benchmark, detection, progress_reporter(), list(models),
                              split_names(prompt_sets), sections)
        emit_report(report, options)
    print_signal_sections(report, options)
