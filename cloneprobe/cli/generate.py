"""`cloneprobe generate`: sample into the store."""

from __future__ import annotations

import click

from .options import config_option, generation_options, generation_settings


@click.command("generate")
@config_option
@generation_options
def generate_command(**options) -> None:
    """Sample n completions per task, prompt variant, model and temperature into the store.

    Re-running the same plan fills only what is missing, so an interrupted run resumes.

    \b
      cloneprobe generate --limit 5 -n 2                    # embedded model, no network
      cloneprobe generate --model openai:gpt-3.5-turbo-instruct --temperature 0.2 \\
          --temperature 0.8 -n 20 --prompts original,fixed
      cloneprobe generate --model openai:qwen --base-url http://localhost:8000/v1
      cloneprobe generate --model hf:./my-checkpoint --batch-size 32
    """
    from cloneprobe.reports.safe_text import terminal_text

    from ..pipeline import generate
    from .console import error_console, generation_table, output_console, progress_reporter
    from .plan import generation_plan_lines, print_plan

    settings = generation_settings(options)
    reporter = progress_reporter()
    print_plan(error_console(), "generate", generation_plan_lines(settings, None, reporter))
    generated = generate(settings, reporter)
    output_console().print(generation_table(generated.summaries))
    output_console().print(terminal_text(f"store: {settings.store}"), highlight=False,
                           soft_wrap=True)  # fmt: skip
