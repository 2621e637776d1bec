"""`cloneprobe signals`: memorization signals per task on stored samples."""

from __future__ import annotations

import click

from .options import (
    config_option,
    detection_settings,
    detector_options,
    report_options,
    sample_source,
    sample_source_options,
    signal_command_options,
    signal_settings,
)


@click.command("signals")
@config_option
@sample_source_options
@signal_command_options
@detector_options
@report_options
def signals_command(**options) -> None:
    """Memorization signals per task on stored samples (or sample files), beside each task's
    clone evidence: likelihood of the canonical solution (perplexity, zlib, Min-K%,
    Min-K%++; local models, or servers that return prompt log-probs), CDD peakedness and
    surface similarity (from samples alone).

    Scores are stored next to the samples, so a re-run computes only what is missing.

    \b
      cloneprobe signals                                  # the default store, every signal
      cloneprobe signals runs.sqlite --signals min_k,cdd --json
      cloneprobe signals --reference-model hf:./base-model
    """
    from ..pipeline import complete_report, signals_on_source
    from .checks import check_outputs
    from .console import emit_report, output_console, progress_reporter, report_sections

    signals = signal_settings(options)  # names checked before anything is opened
    check_outputs(options)
    report = signals_on_source(
        sample_source(options), detection_settings(options), signals, progress_reporter()
    )
    report = complete_report(report, report_sections(options))
    if options.get("as_json") or options.get("report_dir"):
        emit_report(report, options)
    if not options.get("as_json"):
        from ..reports.signals_text import print_signal_groups, print_signal_tasks, print_verdicts

        print_signal_tasks(report, output_console())
        print_signal_groups(report, output_console())
        print_verdicts(report, output_console())
