"""`cloneprobe audit`: plan, generate, detect (and execute), report."""

from __future__ import annotations

import click

from .options import (
    audit_signal_options,
    config_option,
    detection_settings,
    detector_options,
    execution_options,
    execution_settings,
    generation_options,
    generation_settings,
    report_options,
    signal_settings,
)


@click.command("audit")
@config_option
@generation_options
@detector_options
@report_options
@execution_options
@audit_signal_options
def audit_command(**options) -> None:
    """Plan, generate (resuming what the store has), detect clones of the canonical
    solutions, aggregate and report.

    With no model, audits the embedded SmolLM2-135M-Instruct offline.

    \b
      cloneprobe audit --limit 10 -n 2
      cloneprobe audit -n 1 --max-new-tokens 128 --report report/
      cloneprobe audit --model openai:gpt-3.5-turbo-instruct -n 20 --temperature 0.2 \\
          --temperature 0.8 --profile nicad --report report/
      cloneprobe audit --config audit.toml
      cloneprobe audit --model hf:./my-model --signals --json
    """
    from ..benchmarks import load_benchmark
    from ..generation import SampleStore
    from ..pipeline import complete_report, detect_and_report, generate, generated_samples
    from .checks import check_outputs
    from .console import (
        emit_report,
        error_console,
        generation_table,
        output_console,
        progress_reporter,
        report_sections,
    )

    check_outputs(options)
    settings = generation_settings(options)
    detection = detection_settings(options)
    signals = signal_settings(options)
    reporter = progress_reporter()
    generated = generate(settings, reporter)
    error_console().print(generation_table(generated.summaries))
    benchmark = load_benchmark(settings.benchmark)
    with SampleStore(settings.store) as store:
        samples = generated_samples(store, settings, generated)
        report = detect_and_report(
            store, benchmark, detection, samples, reporter, execution_settings(options)
        )
        if signals is not None:
            from ..benchmarks import load_prompt_sets
            from ..pipeline import attach_signals

            prompt_sets = load_prompt_sets(settings.prompts, benchmark)
            report = attach_signals(report, store, benchmark, samples, prompt_sets, signals,
                                    reporter)
        report = complete_report(report, report_sections(options))
        emit_report(report, options)
    if signals is not None and not options.get("as_json"):
        from ..reports.signals_text import print_signal_groups, print_verdicts

        print_signal_groups(report, output_console())
        print_verdicts(report, output_console())
