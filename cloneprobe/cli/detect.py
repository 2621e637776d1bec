"""`cloneprobe detect`: clones in a store or in sample files."""

from __future__ import annotations

import click

from .options import (
    as_written_option,
    config_option,
    detection_settings,
    detector_options,
    execution_options,
    execution_settings,
    report_options,
    sample_source,
    sample_source_options,
)


@click.command("detect")
@config_option
@sample_source_options
@detector_options
@report_options
@execution_options
@as_written_option
def detect_command(**options) -> None:
    """Detect clones in a store, or directly in sample files (human-eval JSONL, bigcode JSON).

    \b
      cloneprobe detect                                   # the default store
      cloneprobe detect runs.sqlite --profile nicad
      cloneprobe detect samples.jsonl --model codex --temperature 0.8 --report out/
    """
    from ..pipeline import complete_report, report_on_source
    from .checks import check_outputs
    from .console import emit_report, progress_reporter, report_sections

    check_outputs(options)
    from dataclasses import replace

    source = replace(sample_source(options), as_written=options["as_written"])
    report = report_on_source(
        source, detection_settings(options), progress_reporter(),
        execution_settings(options),
    )  # fmt: skip
    report = complete_report(report, report_sections(options))
    emit_report(report, options)
