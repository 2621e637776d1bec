"""The `cloneprobe` command line: one group, one module per command."""

from __future__ import annotations

import logging
import sys

import click
from rich.console import Console

from .audit_command import audit_command, detect_command, execute_command, report_command
from .benchmarks import BenchmarkError
from .clones import CloneDetectorError
from .clones_command import clones_command
from .generate_command import export_command, generate_command, import_command
from .generation import GenerationError
from .prompts_command import prompts_command

USER_ERRORS = (CloneDetectorError, BenchmarkError, GenerationError)
"""Exceptions whose message a user can act on: printed as one red line, exit code 2."""


class _Group(click.Group):
    """Turns user errors into one red line and exit code 2 (a traceback only with --debug)."""

    def invoke(self, ctx: click.Context):
        try:
            return super().invoke(ctx)
        except USER_ERRORS as error:
            if ctx.obj and ctx.obj.get("debug"):
                raise
            Console(stderr=True).print(
                f"[red]error:[/red] {error}", highlight=False, soft_wrap=True
            )
            sys.exit(2)
        except KeyboardInterrupt:
            Console(stderr=True).print(
                "[yellow]interrupted[/yellow]: what was stored is kept; run the same command "
                "again to resume",
                highlight=False,
                soft_wrap=True,
            )
            sys.exit(130)


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--debug", is_flag=True, help="Show tracebacks and debug logging.")
@click.version_option(package_name="cloneprobe")
@click.pass_context
def main(ctx: click.Context, debug: bool) -> None:
    """cloneprobe: has a code model memorized the benchmark it is scored on?

    It compares what a model writes with the benchmark's canonical solutions using a
    NiCad-style clone detector (Type-1 exact, Type-2 renamed, Type-3 near-miss).

    \b
    Try:  cloneprobe clones examples/canonical examples/samples
          cloneprobe clones examples/canonical examples/samples --explain
    """
    ctx.ensure_object(dict)
    ctx.obj["debug"] = debug
    logging.basicConfig(level=logging.DEBUG if debug else logging.WARNING)


main.add_command(clones_command)
main.add_command(prompts_command)
main.add_command(generate_command)
main.add_command(import_command)
main.add_command(export_command)
main.add_command(audit_command)
main.add_command(detect_command)
main.add_command(report_command)
main.add_command(execute_command)

if __name__ == "__main__":  # pragma: no cover
    main()
