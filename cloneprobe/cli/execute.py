"""`cloneprobe execute`: samples against their tests in the sandbox, and pass@k."""

from __future__ import annotations

import click

from .options import (
    always_execution_options,
    as_written_option,
    config_option,
    detection_settings,
    detector_options,
    execution_settings,
    report_options,
    sample_source,
    sample_source_options,
)


@click.command("execute")
@config_option
@sample_source_options
@detector_options
@report_options
@always_execution_options
@as_written_option
def execute_command(**options) -> None:
    """Run samples (a store, or sample files) against their tasks' tests in the sandbox and
    report pass@k beside the clone counts.

    Each sample runs in its own process, in kernel namespaces where the machine allows them
    (no network, a fresh root holding only the standard library, a private /tmp, its own
    process space, a seccomp filter), with a timeout and CPU, memory, output and process
    limits (a control group per sample where possible); the tests run in a separate harness
    process, which alone decides passed. Results are stored, so a re-run executes only what is
    missing; the report names the isolation the samples ran under (docs/sandbox.md).

    \b
      cloneprobe execute                                  # the default store
      cloneprobe execute samples.jsonl --model codex --temperature 0.8 --workers 2
    """
    from ..execution.sandbox import start_in_background

    start_in_background()  # the fork server and the probe start while the pipeline loads
    from ..pipeline import complete_report, report_on_source
    from .checks import check_outputs
    from .console import emit_report, progress_reporter, report_sections

    check_outputs(options)
    from dataclasses import replace

    source = replace(sample_source(options), as_written=options["as_written"])
    report = report_on_source(
        source, detection_settings(options), progress_reporter(),
        execution_settings(options, always=True),
    )  # fmt: skip
    report = complete_report(report, report_sections(options))
    emit_report(report, options)
