"""`cloneprobe audit`: plan, generate, detect (and execute), report."""

from __future__ import annotations

from pathlib import Path

import click

from .options import (
    as_written_option,
    audit_signal_options,
    check_servers_score,
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
@click.argument("sample_files", nargs=-1, type=click.Path(path_type=Path))
@config_option
@generation_options
@detector_options
@report_options
@execution_options
@audit_signal_options
@as_written_option
def audit_command(**options) -> None:
    """Plan, generate (resuming what the store has), detect clones of the canonical
    solutions, aggregate and report.

    With no model, audits the embedded SmolLM2-135M-Instruct offline. Bare, it is a quick
    first look (the first 8 tasks, 1 sample per prompt, 128 new tokens; the report says so);
    the reference study's scale is `--limit 164 -n 20 --max-new-tokens 512`.

    \b
      cloneprobe audit --limit 10 -n 2
      cloneprobe audit -n 1 --max-new-tokens 128 --report report/
      cloneprobe audit --model openai:gpt-3.5-turbo-instruct -n 20 --temperature 0.2 \\
          --temperature 0.8 --profile nicad --report report/
      cloneprobe audit --config audit.toml
      cloneprobe audit --model hf:./my-model --signals --json
      cloneprobe audit samples.jsonl --model codex --temperature 0.8 --execute --as-written

    Sample files (human-eval, EvalPlus, lm-evaluation-harness --log_samples, bigcode) are
    imported into --store and audited instead of generating; --model and --temperature then
    name what the file does not say, --prompts the one prompt set they answer.
    """
    from ..benchmarks import load_benchmark
    from ..generation import SampleStore
    from ..pipeline import complete_report, detect_and_report, generate, generated_samples
    from .checks import check_outputs
    from .console import (
        emit_report,
        error_console,
        generation_table,
        print_signal_sections,
        progress_reporter,
        report_sections,
    )
    from .plan import apply_quick_defaults, generation_plan_lines, print_plan

    check_outputs(options)
    if options["sample_files"]:
        return _audit_files(options)
    if options["as_written"]:
        from ..generation import GenerationError

        raise GenerationError("--as-written scores sample files as given: name the files "
                              "(cloneprobe audit FILE ... --as-written), or drop it")  # fmt: skip
    scope = apply_quick_defaults(options)
    if scope is not None:  # kept with the run, so that `report` says it as the audit did
        options["quick_scope"] = scope
    settings = generation_settings(options)
    detection = detection_settings(options)
    signals = signal_settings(options)
    check_servers_score(signals, list(settings.models))
    reporter = progress_reporter()
    print_plan(error_console(), "audit", generation_plan_lines(settings, scope, reporter))
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
        if scope is not None:
            report = report.with_sections(scope=scope)
        emit_report(report, options)
    print_signal_sections(report, options)


def _audit_files(options: dict) -> None:
    """`audit FILES`: the files imported (as written, or repaired), then the audit as for
    generated samples, with the files' own verdicts compared when they were executed."""
    from ..benchmarks import load_benchmark, load_prompt_sets
    from ..generation import GenerationError, SampleStore
    from ..generation.samplefiles import check_sample_files
    from ..pipeline import (
        add_file_verdicts,
        attach_signals,
        complete_report,
        detect_and_report,
        source_samples,
    )
    from ..settings import SampleSource
    from .checks import check_store_path
    from .console import emit_report, print_signal_sections, progress_reporter, report_sections

    generating = [flag for flag, key in (("--limit", "limit"), ("--tasks", "tasks"), ("-n", "n"))
                  if options.get(key)]  # fmt: skip
    if generating:
        raise GenerationError(
            f"{', '.join(generating)}: with sample files every sample in them is audited "
            "(these options choose what to generate); keep only the tasks you want in the "
            "file, or drop the option"
        )
    if len(options["models"]) > 1 or len(options["temperatures"]) > 1:
        raise GenerationError(
            "with sample files, --model and --temperature name the file's model and "
            "temperature once each; import files of several models one at a time"
        )
    prompt_set = options["prompts_spec"] or "original"
    if "," in prompt_set:
        raise GenerationError(
            f"--prompts {prompt_set!r}: sample files answer one prompt set; give it alone "
            "(or a `prompt_set` key on each line)"
        )
    source = SampleSource(
        store=Path(options["store_path"]), files=tuple(options["sample_files"]),
        model=(options["models"] or (None,))[0],
        temperature=(options["temperatures"] or (None,))[0], prompt_set=prompt_set,
        benchmark=options["benchmark_spec"], as_written=options["as_written"],
    )  # fmt: skip
    check_sample_files(source.files)
    check_store_path(source.store, "--store", inputs=source.files)
    detection, signals, reporter = (detection_settings(options), signal_settings(options),
                                    progress_reporter())  # fmt: skip
    benchmark = load_benchmark(source.benchmark)
    with SampleStore(source.store) as store:
        claims: dict = {}
        samples = source_samples(store, source, benchmark, claims)
        report = detect_and_report(store, benchmark, detection, samples, reporter,
                                   execution_settings(options))  # fmt: skip
        report = add_file_verdicts(report, store, benchmark, samples, claims)
        if signals is not None:
            prompt_sets = load_prompt_sets(prompt_set, benchmark)
            report = attach_signals(report, store, benchmark, samples, prompt_sets, signals,
                                    reporter)  # fmt: skip
        report = complete_report(report, report_sections(options))
        emit_report(report, options)
    print_signal_sections(report, options)


def _show_quick_defaults(command: click.Command) -> None:
    """`audit --help` shows what a bare audit uses (the quick look's 8 tasks, 1 sample, 128
    tokens), not the study's values that `generate` defaults to and a bare audit never uses."""
    from .plan import QUICK_LIMIT, QUICK_MAX_NEW_TOKENS, QUICK_N

    quick = {"limit": f"{QUICK_LIMIT} for a quick look, 164 for the study",
             "n": f"{QUICK_N} for a quick look, 20 for the study",
             "max_new_tokens": f"{QUICK_MAX_NEW_TOKENS} for a quick look, 512 for the study"}
    for param in command.params:
        if isinstance(param, click.Option) and param.name in quick:
            param.show_default = quick[param.name]


_show_quick_defaults(audit_command)
